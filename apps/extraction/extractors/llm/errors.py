"""The ways a model's answer can fail that the extractor handles itself before giving up on an attempt."""

from apps.extraction.extractors.base import ExtractionError


class MalformedAnswer(ExtractionError):
    """The model answered, but not in the required form; asking again, saying what was wrong, may help."""


class TruncatedAnswer(ExtractionError):
    """The model ran out of output tokens; a smaller part of the conversation may fit."""


class PromptTooLong(ExtractionError):
    """The server refused the prompt as longer than the model's context; a smaller part may fit."""
