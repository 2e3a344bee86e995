"""Fitting a batch into the model's context budget: consecutive windows of messages, each with a little
preceding context, and the existing memories most related to each window.

Token counts are estimates (no tokenizer is a dependency): about 3.5 ASCII characters a token, which
overestimates English prose a little and JSON punctuation hardly at all, and one token for every other
character, which is close for Chinese or Japanese and overestimates accented or Cyrillic text. An
overestimate only makes windows smaller.
"""

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from apps.extraction.extractors.base import ConversationMessage, ExistingMemory

MEMORY_SHARE = 0.3  # of what is left after the instructions: existing memories get at most this much
CONTEXT_SHARE = 0.15  # of a window's message budget: earlier messages shown for context
CONTEXT_MESSAGES = 3  # at most this many earlier messages
_CUT_MARKER = " [… {count} characters cut …] "
_WORD = re.compile(r"\w{3,}")


def estimate_tokens(text: str) -> int:
    ascii_chars = len(text.encode("ascii", "ignore"))
    return math.ceil(ascii_chars / 3.5 + (len(text) - ascii_chars))


@dataclass(frozen=True)
class Window:
    messages: list[ConversationMessage]  # to extract from
    context: list[ConversationMessage]  # the messages just before, shown for context only
    existing: list[ExistingMemory]


def plan_windows(
    *,
    messages: list[ConversationMessage],
    existing: list[ExistingMemory],
    budget_tokens: int,
    fixed_tokens: int,
    message_cost: Callable[[ConversationMessage], int],
    memory_cost: Callable[[ExistingMemory], int],
) -> list[Window]:
    """Windows that partition `messages` in order, each costing at most `budget_tokens` with `fixed_tokens`
    (instructions, examples, framing) included; a message too long for a window on its own is cut."""
    available = max(budget_tokens - fixed_tokens, 200)  # a budget below the instructions still extracts
    memory_budget = min(sum(memory_cost(memory) for memory in existing), int(available * MEMORY_SHARE))
    message_budget = available - memory_budget
    if sum(message_cost(message) for message in messages) <= message_budget:
        windows = [(list(messages), [])]
    else:
        context_budget = int(message_budget * CONTEXT_SHARE)
        own_budget = message_budget - context_budget
        fitted = [fit_message(message, own_budget, message_cost) for message in messages]
        windows = [
            (fitted[start:end], _context_before(fitted[:start], context_budget, message_cost))
            for start, end in _consecutive_ranges(fitted, own_budget, message_cost)
        ]
    return [
        Window(messages=group, context=context, existing=_most_related(existing, group + context, memory_budget,
                                                                        memory_cost))
        for group, context in windows
    ]


def split_window(window: Window, *, message_cost: Callable[[ConversationMessage], int]) -> tuple[Window, Window]:
    """Two windows of about half the messages each (of a window of at least two), the second with the end of
    the first as its context; the same memories."""
    half = _half_point(window.messages, message_cost)
    first, second = window.messages[:half], window.messages[half:]
    # Context taken from what the window held before it keeps the second half within the window's cost.
    before = window.context + first
    context = _context_before(before, sum(message_cost(message) for message in before), message_cost)
    return (
        Window(messages=first, context=window.context, existing=window.existing),
        Window(messages=second, context=context, existing=window.existing),
    )


def fit_message(
    message: ConversationMessage, budget: int, message_cost: Callable[[ConversationMessage], int]
) -> ConversationMessage:
    """The message, or, when it costs more than `budget`, its beginning and end with a marker between."""
    cost = message_cost(message)
    if cost <= budget:
        return message
    text = message.text
    overhead = message_cost(replace(message, text=_CUT_MARKER.format(count=len(text))))
    keep = int(len(text) * max(budget - overhead, 0) / max(cost - overhead, 1))
    while True:
        head = keep * 2 // 3  # the beginning says what the message is about; the end often asks or concludes
        tail = keep - head
        cut = replace(message, text=text[:head] + _CUT_MARKER.format(count=len(text) - keep) + text[len(text) - tail:])
        if message_cost(cut) <= budget or keep == 0:
            return cut
        keep = int(keep * 0.9)


def _consecutive_ranges(messages, budget, message_cost) -> list[tuple[int, int]]:
    """(start, end) index ranges of consecutive messages costing at most `budget` each (every message does)."""
    ranges: list[tuple[int, int]] = []
    start, used = 0, 0
    for index, message in enumerate(messages):
        cost = message_cost(message)
        if index > start and used + cost > budget:
            ranges.append((start, index))
            start, used = index, 0
        used += cost
    if messages:
        ranges.append((start, len(messages)))
    return ranges


def _context_before(earlier: list[ConversationMessage], budget: int, message_cost) -> list[ConversationMessage]:
    """The last few messages of `earlier` that fit `budget`; a long one is cut to its share."""
    context: list[ConversationMessage] = []
    used = 0
    for message in reversed(earlier[-CONTEXT_MESSAGES:]):
        fitted = fit_message(message, max(budget - used, 0), message_cost)
        cost = message_cost(fitted)
        if used + cost > budget:
            break
        context.insert(0, fitted)
        used += cost
    return context


def _half_point(messages: list[ConversationMessage], message_cost) -> int:
    total = sum(message_cost(message) for message in messages)
    used = 0
    for index, message in enumerate(messages[:-1]):
        used += message_cost(message)
        if used * 2 >= total:
            return index + 1
    return max(len(messages) - 1, 1)


def _most_related(
    existing: list[ExistingMemory], messages: list[ConversationMessage], budget: int, memory_cost
) -> list[ExistingMemory]:
    """The memories sharing most words with the messages, in their given order, as many as fit `budget`.

    A memory with a subject (name, employer, a preference) counts one word more: those are what new facts
    most often replace."""
    words = {word.lower() for message in messages for word in _WORD.findall(message.text)}

    def relatedness(memory: ExistingMemory) -> int:
        shared = {word.lower() for word in _WORD.findall(memory.content)} & words
        return len(shared) + (1 if memory.subject else 0)

    ranked = sorted(range(len(existing)), key=lambda index: (-relatedness(existing[index]), index))
    chosen, used = set(), 0
    for index in ranked:
        cost = memory_cost(existing[index])
        if used + cost > budget:
            continue  # a shorter one further down may still fit
        chosen.add(index)
        used += cost
    return [memory for index, memory in enumerate(existing) if index in chosen]
