"""Removing memories for good: one with its history, or everything about a user."""

from django.db import transaction

from apps.core.admin_log import admin_log_forget
from apps.core.identifiers import normalise_identifier
from apps.memories.models import Memory, MemoryRevision, MemoryStore
from apps.tenancy.services import idempotency_forget


def memory_hard_delete(*, memory: Memory) -> None:
    """Remove a memory and its whole history for good."""
    with transaction.atomic():
        MemoryRevision.objects.filter(memory=memory).delete()
        memory.delete()


def user_erase(*, store: MemoryStore, user_id: str) -> dict:
    """Forget everything about one user of a store: every memory and revision, and every session with
    its messages, working state, checkpoints, event log and extraction jobs; and the copies of them kept
    elsewhere: stored Idempotency-Key responses and the admin's log entries."""
    user_id = normalise_identifier(user_id)
    with transaction.atomic():
        # Sessions first, locked like every writer of their rows locks them (so none adds a row
        # mid-delete); deleting them cascades to the jobs that could otherwise add memories back.
        session_rows = list(store.sessions.select_for_update().filter(user_id=user_id).values_list("pk", "external_id"))
        session_ids, external_ids = [pk for pk, _ in session_rows], [external_id for _, external_id in session_rows]
        # The copies, found while the rows they copy still exist.
        admin_log_forget(
            store.sessions.filter(pk__in=session_ids),
            Memory.objects.filter(store=store, user_id=user_id),
            MemoryRevision.objects.filter(store=store, user_id=user_id),
        )
        idempotency_forget(tenant=store.tenant, user_id=user_id, session_ids=external_ids)
        _, sessions = store.sessions.filter(pk__in=session_ids).delete()
        revisions, _ = MemoryRevision.objects.filter(store=store, user_id=user_id).delete()
        _, deleted = Memory.objects.filter(store=store, user_id=user_id).delete()
    return {
        "memories": deleted.get(Memory._meta.label, 0),
        "revisions": revisions,
        "sessions": sessions.get("conversations.Session", 0),
        "messages": sessions.get("conversations.Message", 0),
    }
