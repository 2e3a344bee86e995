"""Removing memories for good: one with its history, or everything about a user."""

from django.db import transaction

from apps.core.identifiers import normalise_identifier
from apps.memories.models import Memory, MemoryRevision, MemoryStore


def memory_hard_delete(*, memory: Memory) -> None:
    """Remove a memory and its whole history for good."""
    with transaction.atomic():
        MemoryRevision.objects.filter(memory=memory).delete()
        memory.delete()


def user_erase(*, store: MemoryStore, user_id: str) -> dict:
    """Forget everything about one user of a store: every memory and revision, and every session with
    its messages, working state, checkpoints, event log and extraction jobs."""
    user_id = normalise_identifier(user_id)
    with transaction.atomic():
        # Sessions first, locked like every writer of their rows locks them (so none adds a row
        # mid-delete); deleting them cascades to the jobs that could otherwise add memories back.
        session_ids = list(store.sessions.select_for_update().filter(user_id=user_id).values_list("pk", flat=True))
        _, sessions = store.sessions.filter(pk__in=session_ids).delete()
        revisions, _ = MemoryRevision.objects.filter(store=store, user_id=user_id).delete()
        _, deleted = Memory.objects.filter(store=store, user_id=user_id).delete()
    return {
        "memories": deleted.get(Memory._meta.label, 0),
        "revisions": revisions,
        "sessions": sessions.get("conversations.Session", 0),
        "messages": sessions.get("conversations.Message", 0),
    }
