"""The JSON the model must answer with, and its validation into Candidates.

jsonschema is not a dependency: the schema is small, and hand-written checks can also verify what a
schema cannot (target ids and message seqs that were actually given). Validation is lenient only where
the model's meaning is unambiguous (a number sent as a string, "Event" for "episode", an array sent as a
JSON string, a shortened id that matches one memory); anything else rejects the whole answer: a
half-valid answer is a failed attempt (MalformedAnswer), never partial or guessed data.
"""

import json
import math
import re
from dataclasses import dataclass, field

from apps.extraction.extractors.base import Candidate
from apps.extraction.extractors.llm.errors import MalformedAnswer

MEMORY_TYPES = ("fact", "preference", "episode", "procedure")
ACTIONS = ("add", "update", "delete")
TOOL_NAME = "record_memories"  # also the json_schema name for OpenAI structured output

# Only keywords that OpenAI strict mode, Anthropic tools, vLLM and llama.cpp grammars all accept:
# ranges (confidence 0..1, non-empty content) are stated in descriptions and checked below.
MEMORIES_SCHEMA: dict = {
    "type": "object",
    "properties": {
        "memories": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "content": {"type": "string", "description": "One third-person sentence about the user."},
                    "memory_type": {"type": "string", "enum": list(MEMORY_TYPES)},
                    "confidence": {"type": "number", "description": "From 0 to 1."},
                    "action": {"type": "string", "enum": list(ACTIONS)},
                    "target_memory_id": {
                        "type": ["string", "null"],
                        "description": 'Id of the existing memory to update or delete ("m1"); null for add.',
                    },
                    "subject": {
                        "type": ["string", "null"],
                        "description": 'Stable key of a single-valued fact, e.g. "employer"; null if none.',
                    },
                    "source_seqs": {
                        "type": "array",
                        "items": {"type": "integer"},
                        "description": "Seqs of the messages the memory comes from.",
                    },
                },
                "required": [
                    "content",
                    "memory_type",
                    "confidence",
                    "action",
                    "target_memory_id",
                    "subject",
                    "source_seqs",
                ],
                "additionalProperties": False,
            },
        }
    },
    "required": ["memories"],
    "additionalProperties": False,
}


# Words models use for our enum values; each maps to one value only.
_MEMORY_TYPE_SYNONYMS = {"event": "episode", "action": "episode", "instruction": "procedure",
                         "preferences": "preference", "facts": "fact", "episodes": "episode", "procedures": "procedure"}
_ACTION_SYNONYMS = {"create": "add", "insert": "add", "new": "add", "replace": "update", "modify": "update",
                    "edit": "update", "supersede": "update", "remove": "delete", "forget": "delete",
                    "invalidate": "delete", "retract": "delete"}
_NULL_WORDS = {"", "null", "none", "n/a"}
_NUMBER = re.compile(r"^\s*[-+]?(?:\d+\.?\d*|\.\d+)\s*$")
# Subjects of contact details: marked as personal data, as the rules extractor marks them.
PII_SUBJECTS = {"email", "phone", "address"}
_MIN_ID_PREFIX = 8


@dataclass(frozen=True)
class AnswerScope:
    """What one request showed the model: the memory ids it may target and the message seqs it may cite."""

    memory_ids: dict[str, str] = field(default_factory=dict)  # an id as shown to the model -> the memory's id
    message_seqs: frozenset[int] = frozenset()  # the messages to extract from
    context_seqs: frozenset[int] = frozenset()  # earlier messages shown for context only

    def resolve(self, target: str) -> str | None:
        """The memory a model-written id names: as shown, in another case, or a unique prefix of a full id."""
        if target in self.memory_ids:
            return self.memory_ids[target]
        cleaned = target.strip().strip("#[]()<>'\"").lower()
        by_lower = {shown.lower(): real for shown, real in self.memory_ids.items()}
        if cleaned in by_lower:
            return by_lower[cleaned]
        if len(cleaned) >= _MIN_ID_PREFIX:
            matches = {real for real in self.memory_ids.values() if real.lower().startswith(cleaned)}
            if len(matches) == 1:
                return matches.pop()
        return None


def candidates_from_output(output: object, scope: AnswerScope) -> list[Candidate]:
    """Candidates from the model's decoded answer; MalformedAnswer naming the first problem otherwise."""
    if not isinstance(output, dict):
        raise _malformed('the answer must be an object with a "memories" list')
    items = output.get("memories")
    if isinstance(items, str):
        # Tool-calling models sometimes send an array argument as a JSON string.
        try:
            items = json.loads(items)
        except ValueError:
            pass
    if not isinstance(items, list):
        raise _malformed('the answer must be an object with a "memories" list')
    candidates = [_candidate(item, f"memories[{index}]", scope) for index, item in enumerate(items)]
    return [candidate for candidate in candidates if candidate is not None]


def _candidate(item: object, where: str, scope: AnswerScope) -> Candidate | None:
    if not isinstance(item, dict):
        raise _malformed(f"{where} must be an object")
    # Keys outside the schema are ignored (nothing reads them); the nullable keys may be left out by
    # models answering in plain JSON mode, which is the same as null.
    for key in ("content", "memory_type", "confidence", "action", "source_seqs"):
        if key not in item:
            raise _malformed(f"{where} has no {key!r}")

    content = item["content"]
    if not isinstance(content, str) or not content.strip():
        raise _malformed(f"{where}.content must be a non-empty string")

    memory_type = _enum_value(item["memory_type"], MEMORY_TYPES, _MEMORY_TYPE_SYNONYMS)
    if memory_type is None:
        raise _malformed(f"{where}.memory_type {_shown(item['memory_type'])} is not one of {', '.join(MEMORY_TYPES)}")

    action = _enum_value(item["action"], ACTIONS, _ACTION_SYNONYMS)
    if action is None:
        raise _malformed(f"{where}.action {_shown(item['action'])} is not one of {', '.join(ACTIONS)}")

    confidence = item["confidence"]
    if isinstance(confidence, str) and _NUMBER.match(confidence):
        confidence = float(confidence)
    # bool is an int in Python; a JSON true is not a confidence. Out-of-range values are refused, not
    # clamped: a model answering on a 0-100 scale would otherwise make every fact look certain.
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not math.isfinite(confidence):
        raise _malformed(f"{where}.confidence must be a number, got {_shown(confidence)}")
    if not 0.0 <= confidence <= 1.0:
        raise _malformed(f"{where}.confidence {_shown(confidence)} is outside 0..1")

    subject = _nullable_text(item.get("subject"))
    if subject is not None and not isinstance(subject, str):
        raise _malformed(f"{where}.subject must be a string or null")

    target = _nullable_text(item.get("target_memory_id"))
    if target is not None:
        if not isinstance(target, str):
            raise _malformed(f"{where}.target_memory_id must be a string or null")
        resolved = scope.resolve(target)
        if resolved is None and subject is not None and action in ("update", "delete"):
            # A made-up or mangled id, but the subject says what is meant: a delete retracts that subject's
            # memories and an update adds the new value, which replaces the subject's old one
            # (consolidation), as the instructions ask for facts not among the existing memories.
            action = "add" if action == "update" else action
        elif resolved is None:
            raise _malformed(f"{where}.target_memory_id {_shown(target)} is not one of the existing memories given")
        target = resolved
    if action == "add" and target is not None:
        raise _malformed(f'{where} is an "add" with a target_memory_id; an add replaces nothing')
    if action == "update" and target is None:
        raise _malformed(f'{where} is an "update" without a target_memory_id')
    if action == "delete" and target is None and subject is None:
        raise _malformed(f'{where} is a "delete" with neither a target_memory_id nor a subject')

    seqs = _seqs(item["source_seqs"], where)
    shown = scope.message_seqs | scope.context_seqs
    for seq in seqs:
        if seq not in shown:
            raise _malformed(f"{where}.source_seqs {seq} is not one of the messages given")
    if not any(seq in scope.message_seqs for seq in seqs):
        return None  # taken from the context lines only: the request that extracted those messages has it

    # A typed subject ("phone:work", "address:home") is as personal as its base subject.
    personal = subject is not None and subject.split(":", 1)[0] in PII_SUBJECTS and action != "delete"
    metadata, tags = ({"pii": True}, ["pii", "contact"]) if personal else ({}, [])
    return Candidate(
        content=content.strip(),
        memory_type=memory_type,
        confidence=float(confidence),
        source_seqs=sorted(set(seqs)),
        action=action,
        target_memory_id=target,
        subject=subject,
        tags=tags,
        metadata=metadata,
    )


def _enum_value(value: object, allowed: tuple[str, ...], synonyms: dict[str, str]) -> str | None:
    if not isinstance(value, str):
        return None
    word = value.strip().lower()
    return word if word in allowed else synonyms.get(word)


def _nullable_text(value: object) -> object:
    """None for null and for the words models write for it ("null", "none", ""); strings stripped."""
    if isinstance(value, str):
        value = value.strip()
        return None if value.lower() in _NULL_WORDS else value
    return value


def _seqs(value: object, where: str) -> list[int]:
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list) or not value:
        raise _malformed(f"{where}.source_seqs must be a non-empty list of message seqs")
    seqs = []
    for seq in value:
        if isinstance(seq, str) and seq.strip().isdigit():
            seq = int(seq)
        if isinstance(seq, bool) or not isinstance(seq, int):
            raise _malformed(f"{where}.source_seqs must hold integers, got {_shown(seq)}")
        seqs.append(seq)
    return seqs


def _shown(value: object) -> str:
    # Errors go to logs, the job row and the model's second prompt: a model's value is shown briefly.
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _malformed(problem: str) -> MalformedAnswer:
    return MalformedAnswer(f"LLM answer does not match the memories schema: {problem}")
