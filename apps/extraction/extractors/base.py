"""The extractor contract: conversation messages (plus related existing memories) in, candidates out.

Extractors are pure: they read what they are given and return candidate memories. Deciding what a
candidate does to the store (add, merge into a duplicate, supersede, invalidate) is consolidation's
job (apps.extraction.consolidation), which also writes the history.
"""

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol


@dataclass(frozen=True)
class ConversationMessage:
    seq: int
    role: str  # "user" | "assistant" | "system" | "tool"
    text: str  # flattened text of the message's content blocks
    created_at: datetime | None = None


@dataclass(frozen=True)
class ExistingMemory:
    """An active memory of the same user that may be related to the messages."""

    id: str
    content: str
    memory_type: str
    subject: str | None = None  # the candidate subject it was created with, if any


@dataclass
class Candidate:
    """A durable fact distilled from messages, written as a third-person sentence."""

    content: str  # e.g. "Alice works as a software engineer at TechCorp"
    memory_type: str  # "fact" | "preference" | "episode" | "procedure"
    confidence: float  # 0..1
    source_seqs: list[int]  # seqs of the messages it came from
    # What it asks of the store. "add": a new fact (consolidation still checks duplicates and
    # same-subject values); "update": replaces `target_memory_id`; "delete": invalidates
    # `target_memory_id`, or the memories with the same `subject` when no target is given
    # (explicit retractions such as "forget my phone number").
    action: str = "add"
    target_memory_id: str | None = None
    # A stable key of what the fact is about, so a new value replaces the old one: "name",
    # "location", "employer", "job_title", "email", "phone", "preference:dark mode",
    # "identifier:order", ... None when the fact has no single-valued subject.
    subject: str | None = None
    tags: list[str] = field(default_factory=list)
    metadata: dict = field(default_factory=dict)  # e.g. {"pii": True} for contact details


# A retraction of a subject also covers its typed variants ("phone" covers "phone:work") and these kin:
# "forget my address" takes the city they live in with it.
RETRACTION_KIN = {"address": ("location",)}


# Retracting a value of these subjects ("I've left Halden & Moss", "we don't use Slack anymore") also retracts the
# free-form memories that name it ("The user is at Halden & Moss during the day"): such a name means nothing else.
NAMED_VALUE_SUBJECTS = ("employer", "tool", "device")


def names_value(content: str, value: str) -> bool:
    """Whether `content` names the organisation or product `value` as the thing itself: a name ("Slack", "iPad"),
    a whole word, and not the first word of another name ("Amazon" in "works at Amazon", never in "the Amazon
    Locker" or "an Amazon gift card")."""
    pattern = _named_value_pattern(value)
    return pattern is not None and re.search(pattern, content) is not None


def replace_named_value(content: str, value: str, replacement: str) -> str:
    """`content` with each place that names `value` (as names_value reads it) saying `replacement` instead."""
    pattern = _named_value_pattern(value)
    return content if pattern is None else re.sub(pattern, lambda _: replacement, content)


def _named_value_pattern(value: str) -> str | None:
    if not re.search(r"[A-Z]", value) or len(value) < 3:
        return None
    return (rf"(?<![\w&-]){re.escape(value)}(?![\w&-])"
            r"(?!\s+(?-i:[A-Z])|\s+(?:gift|voucher|card|locker|store|shop|pay|prime|account)\b)")


def names_retracted_value(retraction: "Candidate", content: str, subject: str | None) -> bool:
    """Whether a free-form memory (no `subject`) names the organisation or product `retraction` takes back."""
    if subject or retraction.action != "delete":
        return False
    if retraction.subject not in NAMED_VALUE_SUBJECTS:
        return False
    return names_value(content, str((retraction.metadata or {}).get("value") or ""))


def retracted_subjects(subject: str) -> tuple[str, ...]:
    return (subject, *RETRACTION_KIN.get(subject, ()))


def covers(retracted: str, subject: str | None) -> bool:
    """Whether a retraction of `retracted` reaches a memory about `subject`."""
    return bool(subject) and any(subject == kin or subject.startswith(f"{kin}:") for kin in retracted_subjects(retracted))



class Extractor(Protocol):
    name: str

    def extract(
        self, *, messages: list[ConversationMessage], existing: list[ExistingMemory], user_name: str | None = None
    ) -> list[Candidate]:
        """Candidates for the durable facts in `messages`; [] for small talk.

        `user_name` is the user's known name (from an existing "name" memory), used to write facts
        in the third person; extractors fall back to "The user" when it is unknown.
        Raise ExtractionError for failures worth retrying (a model that timed out or answered
        malformed output); never return made-up data.
        """


class ExtractionError(Exception):
    """An extraction attempt failed and may be retried."""
