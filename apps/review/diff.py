"""A memory's history as a reader wants it: for each revision, each changed field with its old and new
value, and the content as a word diff."""

import difflib
import json
import re
from dataclasses import dataclass, field

from apps.memories.models import Memory, MemoryRevision

# The order fields are shown in, and their names on the page.
FIELD_LABELS = {
    "content": "Content",
    "memory_type": "Type",
    "status": "Status",
    "confidence": "Confidence",
    "importance": "Importance",
    "tags": "Tags",
    "metadata": "Metadata",
    "valid_from": "Valid from",
    "valid_to": "Valid to",
    "expires_at": "Expires",
    "superseded_by_id": "Superseded by",
    "agent_id": "Agent",
    "session_id": "Session",
    "provenance": "Sources",
}
_STATUS_LABELS = dict(Memory.Status.choices)
_TYPE_LABELS = dict(Memory.Type.choices)
_WORDS = re.compile(r"\s+|[^\s]+")


@dataclass(frozen=True)
class Segment:
    op: str  # "equal" | "insert" | "delete"
    text: str


@dataclass(frozen=True)
class FieldChange:
    name: str
    label: str
    before: str
    after: str
    words: list[Segment] | None = None  # content only: the word diff


@dataclass
class RevisionView:
    revision: MemoryRevision
    changes: list[FieldChange] = field(default_factory=list)

    @property
    def source(self) -> tuple[str, list[int]] | None:
        """(session external id, message seqs) the revision was made from, when its context says."""
        context = self.revision.context or {}
        session_id = context.get("session_id")
        if not isinstance(session_id, str) or not session_id:
            return None
        seqs = [seq for seq in context.get("message_seqs") or [] if isinstance(seq, int) and not isinstance(seq, bool)]
        return session_id, seqs


def word_diff(before: str, after: str) -> list[Segment]:
    """`before` -> `after` as runs of unchanged, deleted and inserted words (whitespace kept)."""
    old, new = _WORDS.findall(before or ""), _WORDS.findall(after or "")
    segments: list[Segment] = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for op, a1, a2, b1, b2 in matcher.get_opcodes():
        if op == "equal":
            segments.append(Segment("equal", "".join(old[a1:a2])))
            continue
        if a2 > a1:
            segments.append(Segment("delete", "".join(old[a1:a2])))
        if b2 > b1:
            segments.append(Segment("insert", "".join(new[b1:b2])))
    return segments


def _shown(name: str, value) -> str:
    if value is None or value == "" or value == [] or value == {}:
        return "—"
    if name == "status":
        return str(_STATUS_LABELS.get(value, value))
    if name == "memory_type":
        return str(_TYPE_LABELS.get(value, value))
    if name == "tags" and isinstance(value, list):
        return ", ".join(str(tag) for tag in value)
    if name == "provenance" and isinstance(value, dict):
        sources = value.get("sources") or []
        described = [
            f"session {source.get('session_id')} messages {', '.join(str(s) for s in source.get('message_seqs') or [])}"
            for source in sources if isinstance(source, dict)
        ]
        return "; ".join(described) or json.dumps(value, ensure_ascii=False, sort_keys=True)
    if isinstance(value, float):
        return f"{value:.2f}"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return str(value)


def revision_view(revision: MemoryRevision) -> RevisionView:
    before, after = revision.before or {}, revision.after or {}
    if revision.action == MemoryRevision.Action.CREATE:
        names = [name for name in FIELD_LABELS if name in ("content", "memory_type", "status", "confidence")]
    else:
        names = [name for name in FIELD_LABELS if name in (revision.changed_fields or [])]
    changes = []
    for name in names:
        old, new = before.get(name), after.get(name)
        words = word_diff(old or "", new or "") if name == "content" and revision.before is not None else None
        changes.append(FieldChange(name=name, label=FIELD_LABELS[name], before=_shown(name, old) if revision.before
                                   is not None else "", after=_shown(name, new), words=words))
    return RevisionView(revision=revision, changes=changes)


def history(revisions) -> list[RevisionView]:
    return [revision_view(revision) for revision in revisions]
