"""History: every change to a memory writes a MemoryRevision with the memory before and after."""

import uuid
from datetime import datetime

from apps.core.actors import Actor
from apps.memories.models import Memory, MemoryRevision

SNAPSHOT_FIELDS = (
    "content",
    "provenance",
    "superseded_by_id",
    "memory_type",
    "status",
    "metadata",
    "tags",
    "importance",
    "confidence",
    "agent_id",
    "session_id",
    "valid_from",
    "valid_to",
    "expires_at",
)


def memory_snapshot(memory: Memory) -> dict:
    snapshot = {}
    for name in SNAPSHOT_FIELDS:
        value = getattr(memory, name)
        if isinstance(value, datetime):
            value = value.isoformat()
        elif isinstance(value, uuid.UUID):
            value = str(value)
        snapshot[name] = value
    return snapshot


def revision_for(
    *, memory: Memory, action: str, actor: Actor, before: dict | None, after: dict | None, reason: str = "",
    context: dict | None = None,
) -> MemoryRevision:
    changed = sorted(name for name in SNAPSHOT_FIELDS if (before or {}).get(name) != (after or {}).get(name))
    return MemoryRevision(
        memory=memory,
        store_id=memory.store_id,
        user_id=memory.user_id,
        action=action,
        changed_fields=changed,
        before=before,
        after=after,
        actor_type=actor.kind,
        actor_id=actor.id,
        actor_label=actor.label,
        reason=reason,
        context=context or {},
    )
