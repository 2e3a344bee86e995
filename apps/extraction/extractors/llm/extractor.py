import json
import logging
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime

from apps.extraction.extractors.base import Candidate, ConversationMessage, ExistingMemory
from apps.extraction.extractors.llm.budget import Window, estimate_tokens, plan_windows, split_window
from apps.extraction.extractors.llm.config import LLMConfig, llm_config_from_settings
from apps.extraction.extractors.llm.errors import MalformedAnswer, PromptTooLong, TruncatedAnswer
from apps.extraction.extractors.llm.providers import PROVIDER_CLASSES
from apps.extraction.extractors.llm.schema import MEMORIES_SCHEMA, AnswerScope, candidates_from_output
from apps.extraction.extractors.prompts import (
    PROMPT_ROLES,
    extraction_system_prompt,
    extraction_user_prompt,
    format_time,
    json_line,
    memory_fields,
    message_fields,
)

logger = logging.getLogger(__name__)

# The user prompt's headings, the user's name and a rejection note, over-estimated.
_FRAMING_TOKENS = 150
# A window whose answer was cut off (or whose prompt the server refused as too long) is split in two, at
# most this many times over: 8 requests for what was one.
_MAX_SPLIT_DEPTH = 3
_MIN_DATA_TOKENS = 1000  # a budget leaving less than this for the data is too small to be kept to
_SAMPLE_TIME = format_time(datetime(2026, 1, 1, tzinfo=UTC))


def message_cost(message: ConversationMessage) -> int:
    """Estimated tokens of a message's line in the prompt, with a time on it (shown on some lines only)."""
    return estimate_tokens(json_line(message_fields(message, _SAMPLE_TIME))) + 1


def memory_cost(memory: ExistingMemory) -> int:
    return estimate_tokens(json_line(memory_fields(memory))) + 1


class LLMExtractor:
    """Extraction by a chat model over HTTP (OpenAI-compatible or Anthropic), validated strictly.

    A batch longer than the context budget is extracted in consecutive windows (llm/budget.py); an answer
    in the wrong form is asked for once more with the reason; a cut-off answer splits its window in two.
    """

    name = "llm"

    def __init__(self, config: LLMConfig, *, sleep: Callable[[float], None] = time.sleep):
        self.config = config
        self._provider = PROVIDER_CLASSES[config.provider](config, sleep=sleep)
        self.system_prompt = extraction_system_prompt(examples=config.few_shot_examples)
        # The output schema travels with every request too (response_format or the tool definition).
        self.fixed_tokens = (
            estimate_tokens(self.system_prompt) + estimate_tokens(json.dumps(MEMORIES_SCHEMA)) + _FRAMING_TOKENS
        )
        if config.context_budget_tokens - self.fixed_tokens < _MIN_DATA_TOKENS:
            logger.warning(
                "LLM_CONTEXT_BUDGET_TOKENS=%d leaves %d estimated tokens for memories and messages after the "
                "instructions (%d); requests will exceed it: raise it, or set LLM_FEW_SHOT_EXAMPLES=false",
                config.context_budget_tokens, config.context_budget_tokens - self.fixed_tokens, self.fixed_tokens,
            )

    def extract(
        self, *, messages: list[ConversationMessage], existing: list[ExistingMemory], user_name: str | None = None
    ) -> list[Candidate]:
        conversation = [message for message in messages if message.role in PROMPT_ROLES and message.text.strip()]
        if not conversation:
            return []  # nothing a model could extract from: no call, no cost
        # Short ids ("m1") cost a few tokens where a UUID costs about twenty, and are copied without typos.
        shown = [replace(memory, id=f"m{number}") for number, memory in enumerate(existing, start=1)]
        real_ids = {memory.id: original.id for memory, original in zip(shown, existing, strict=True)}
        windows = plan_windows(
            messages=conversation,
            existing=shown,
            budget_tokens=self.config.context_budget_tokens,
            fixed_tokens=self.fixed_tokens,
            message_cost=message_cost,
            memory_cost=memory_cost,
        )
        started = time.monotonic()
        candidates: list[Candidate] = []
        for window in windows:
            candidates.extend(self._extract_window(window, user_name=user_name, real_ids=real_ids, depth=0))
        logger.info(
            "%s extracted %d candidate(s) from %d message(s) in %d window(s) in %.2fs",
            self._provider.label,
            len(candidates),
            len(conversation),
            len(windows),
            time.monotonic() - started,
        )
        return candidates

    def _extract_window(
        self, window: Window, *, user_name: str | None, real_ids: dict[str, str], depth: int
    ) -> list[Candidate]:
        try:
            return self._ask(window, user_name=user_name, real_ids=real_ids)
        except (TruncatedAnswer, PromptTooLong) as exc:
            if len(window.messages) < 2 or depth >= _MAX_SPLIT_DEPTH:
                raise
            logger.warning("%s; extracting its %d messages in two halves", exc, len(window.messages))
            halves = split_window(window, message_cost=message_cost)
            return [
                candidate
                for half in halves
                for candidate in self._extract_window(half, user_name=user_name, real_ids=real_ids, depth=depth + 1)
            ]

    def _ask(self, window: Window, *, user_name: str | None, real_ids: dict[str, str]) -> list[Candidate]:
        shown_ids = {memory.id: real_ids[memory.id] for memory in window.existing}
        scope = AnswerScope(
            # The model may also copy a full id it saw in a memory's content or an earlier answer.
            memory_ids={**shown_ids, **{real: real for real in shown_ids.values()}},
            message_seqs=frozenset(message.seq for message in window.messages),
            context_seqs=frozenset(message.seq for message in window.context),
        )
        arguments = {"messages": window.messages, "existing": window.existing, "user_name": user_name,
                     "context": window.context}

        def attempt(rejected: str | None = None) -> list[Candidate]:
            prompt = extraction_user_prompt(**arguments, rejected=rejected)
            return candidates_from_output(self._provider.complete(system=self.system_prompt, user=prompt), scope)

        try:
            return attempt()
        except MalformedAnswer as exc:
            # Asked again with the reason, the model reads a different prompt: at temperature 0 the same
            # prompt would most likely bring the same answer back.
            logger.warning("%s; asking once more", exc)
            return attempt(rejected=str(exc).removeprefix(self._provider.label + " "))

    def close(self) -> None:
        self._provider.close()

    def __enter__(self) -> "LLMExtractor":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def llm_extractor_from_settings() -> LLMExtractor:
    """An LLMExtractor configured by the LLM_* settings."""
    return LLMExtractor(llm_config_from_settings())
