"""LLMExtractor: the extractor contract (extractors.base) answered by a chat model over HTTP."""

from apps.extraction.extractors.llm.config import LLMConfig, llm_config_from_settings
from apps.extraction.extractors.llm.extractor import LLMExtractor, llm_extractor_from_settings

__all__ = ["LLMConfig", "LLMExtractor", "llm_config_from_settings", "llm_extractor_from_settings"]
