"""The JSON the model must answer with, and its strict validation into Candidates.

jsonschema is not a dependency: the schema is small, and hand-written checks can also verify what a
schema cannot (target ids and message seqs that were actually given). Any violation rejects the
whole answer: a half-valid answer is a failed attempt, never partial data.
"""

import math

from apps.extraction.extractors.base import Candidate, ExtractionError

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
                        "description": "Id of the existing memory to update or delete; null for add.",
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


def candidates_from_output(output: object, *, existing_ids: set[str], message_seqs: set[int]) -> list[Candidate]:
    """Candidates from the model's decoded answer; ExtractionError naming the first problem otherwise."""
    if not isinstance(output, dict) or not isinstance(output.get("memories"), list):
        raise _malformed('the answer must be an object with a "memories" list')
    return [
        _candidate(item, f"memories[{index}]", existing_ids=existing_ids, message_seqs=message_seqs)
        for index, item in enumerate(output["memories"])
    ]


def _candidate(item: object, where: str, *, existing_ids: set[str], message_seqs: set[int]) -> Candidate:
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

    memory_type = item["memory_type"]
    if memory_type not in MEMORY_TYPES:
        raise _malformed(f"{where}.memory_type {memory_type!r} is not one of {', '.join(MEMORY_TYPES)}")

    action = item["action"]
    if action not in ACTIONS:
        raise _malformed(f"{where}.action {action!r} is not one of {', '.join(ACTIONS)}")

    confidence = item["confidence"]
    # bool is an int in Python; a JSON true is not a confidence. Out-of-range values are refused, not
    # clamped: a model answering on a 0-100 scale would otherwise make every fact look certain.
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not math.isfinite(confidence):
        raise _malformed(f"{where}.confidence must be a number, got {confidence!r}")
    if not 0.0 <= confidence <= 1.0:
        raise _malformed(f"{where}.confidence {confidence!r} is outside 0..1")

    subject = item.get("subject")
    if subject is not None and not isinstance(subject, str):
        raise _malformed(f"{where}.subject must be a string or null")
    subject = (subject or "").strip() or None

    target = item.get("target_memory_id")
    if target is not None:
        if not isinstance(target, str):
            raise _malformed(f"{where}.target_memory_id must be a string or null")
        if target not in existing_ids:
            raise _malformed(f"{where}.target_memory_id {target[:64]!r} is not one of the existing memories given")
    if action == "add" and target is not None:
        raise _malformed(f'{where} is an "add" with a target_memory_id; an add replaces nothing')
    if action == "update" and target is None:
        raise _malformed(f'{where} is an "update" without a target_memory_id')
    if action == "delete" and target is None and subject is None:
        raise _malformed(f'{where} is a "delete" with neither a target_memory_id nor a subject')

    seqs = item["source_seqs"]
    if not isinstance(seqs, list) or not seqs:
        raise _malformed(f"{where}.source_seqs must be a non-empty list of message seqs")
    for seq in seqs:
        if isinstance(seq, bool) or not isinstance(seq, int):
            raise _malformed(f"{where}.source_seqs must hold integers, got {seq!r}")
        if seq not in message_seqs:
            raise _malformed(f"{where}.source_seqs {seq} is not one of the messages given")

    return Candidate(
        content=content.strip(),
        memory_type=memory_type,
        confidence=float(confidence),
        source_seqs=sorted(set(seqs)),
        action=action,
        target_memory_id=target,
        subject=subject,
    )


def _malformed(problem: str) -> ExtractionError:
    return ExtractionError(f"LLM answer does not match the memories schema: {problem}")
