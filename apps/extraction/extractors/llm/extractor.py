import logging
import time
from collections.abc import Callable

from apps.extraction.extractors.base import Candidate, ConversationMessage, ExistingMemory
from apps.extraction.extractors.llm.config import LLMConfig, llm_config_from_settings
from apps.extraction.extractors.llm.providers import PROVIDER_CLASSES
from apps.extraction.extractors.llm.schema import candidates_from_output
from apps.extraction.extractors.prompts import EXTRACTION_SYSTEM_PROMPT, PROMPT_ROLES, extraction_user_prompt

logger = logging.getLogger(__name__)


class LLMExtractor:
    """Extraction by a chat model over HTTP (OpenAI-compatible or Anthropic), validated strictly."""

    name = "llm"

    def __init__(self, config: LLMConfig, *, sleep: Callable[[float], None] = time.sleep):
        self.config = config
        self._provider = PROVIDER_CLASSES[config.provider](config, sleep=sleep)

    def extract(
        self, *, messages: list[ConversationMessage], existing: list[ExistingMemory], user_name: str | None = None
    ) -> list[Candidate]:
        conversation = [message for message in messages if message.role in PROMPT_ROLES and message.text.strip()]
        if not conversation:
            return []  # nothing a model could extract from: no call, no cost
        user_prompt = extraction_user_prompt(messages=conversation, existing=existing, user_name=user_name)
        started = time.monotonic()
        output = self._provider.complete(system=EXTRACTION_SYSTEM_PROMPT, user=user_prompt)
        candidates = candidates_from_output(
            output,
            existing_ids={memory.id for memory in existing},
            message_seqs={message.seq for message in conversation},
        )
        logger.info(
            "%s extracted %d candidate(s) from %d message(s) in %.2fs",
            self._provider.label,
            len(candidates),
            len(conversation),
            time.monotonic() - started,
        )
        return candidates

    def close(self) -> None:
        self._provider.close()

    def __enter__(self) -> "LLMExtractor":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def llm_extractor_from_settings() -> LLMExtractor:
    """An LLMExtractor configured by the LLM_* settings."""
    return LLMExtractor(llm_config_from_settings())
