"""Erasing a user: everything a store holds about them, in every app below this one and this one."""

from django.db import transaction

from apps.conversations.models import Message, Session
from apps.core.admin_log import admin_log_forget
from apps.core.identifiers import normalise_identifier
from apps.memories.events import Event, EventType
from apps.memories.models import Memory, MemoryRevision, MemoryStore
from apps.memories.services.events import events_publish
from apps.memories.services.webhooks import webhook_deliveries_forget
from apps.tenancy.services import idempotency_forget


def user_erase(*, store: MemoryStore, user_id: str) -> dict:
    """Forget everything about one user of a store: every memory and revision, and every session with
    its messages, working state, checkpoints, event log and extraction jobs; and the copies of them kept
    elsewhere: stored Idempotency-Key responses and the admin's log entries."""
    user_id = normalise_identifier(user_id)
    with transaction.atomic():
        # Sessions first, locked like every writer of their rows locks them (so none adds a row
        # mid-delete); deleting them cascades to the jobs that could otherwise add memories back.
        sessions = Session.objects.filter(store=store, user_id=user_id)
        session_rows = list(sessions.select_for_update().values_list("pk", "external_id"))
        sessions = Session.objects.filter(pk__in=[pk for pk, _ in session_rows])
        memories = Memory.objects.filter(store=store, user_id=user_id)
        revisions = MemoryRevision.objects.filter(store=store, user_id=user_id)
        # The copies, found while the rows they copy still exist.
        admin_log_forget(sessions, memories, revisions)
        idempotency_forget(tenant=store.tenant, user_id=user_id,
                           session_ids=[external_id for _, external_id in session_rows])
        _, deleted_with_sessions = sessions.delete()
        deleted_revisions, _ = revisions.delete()
        _, deleted_memories = memories.delete()
        webhook_deliveries_forget(store=store, user_id=user_id)
        events_publish([Event(type=EventType.USER_ERASED, store_id=str(store.pk), store_name=store.name,
                              data={"user_id": user_id})])
    return {
        "memories": deleted_memories.get(Memory._meta.label, 0),
        "revisions": deleted_revisions,
        "sessions": deleted_with_sessions.get(Session._meta.label, 0),
        "messages": deleted_with_sessions.get(Message._meta.label, 0),
    }
