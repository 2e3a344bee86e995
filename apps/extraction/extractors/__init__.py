"""Extractors by name; each is built once per process."""

import functools

from apps.extraction.extractors.base import Extractor


@functools.cache
def get_extractor(name: str) -> Extractor:
    if name == "rules":
        from apps.extraction.extractors.rules import RulesExtractor

        return RulesExtractor()
    if name == "llm":
        from apps.extraction.extractors.llm import llm_extractor_from_settings

        return llm_extractor_from_settings()
    raise ValueError(f"Unknown extractor {name!r}")
