"""Deleting data for good deletes the admin's log entries that quote it ("Recent actions" shows object_repr,
a memory's first 80 characters), through every delete path, and only those entries."""

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.contenttypes.models import ContentType

from apps.conversations.models import Message, Session
from apps.conversations.services import messages_ingest, session_delete
from apps.conversations.services.messages import MessageInput
from apps.memories.services import memory_hard_delete, store_create, store_delete


def _log(user, obj) -> LogEntry:
    return LogEntry.objects.create(
        user=user, content_type=ContentType.objects.get_for_model(obj), object_id=str(obj.pk),
        object_repr=str(obj)[:200], action_flag=CHANGE, change_message="[]",
    )


def _session(store, external_id, text):
    messages_ingest(store=store, session_external_id=external_id, user_id="alice",
                    messages=[MessageInput(role="user", content=text)])
    session = Session.objects.get(store=store, external_id=external_id)
    return session, session.messages.get()


@pytest.fixture
def logged(tenant_a, add_memory, configure_store):
    configure_store(tenant_a.store, extraction_config={"enabled": False})
    kept_memory = add_memory(tenant_a.store, "Alice keeps this one")
    kept_session, kept_message = _session(tenant_a.store, "kept", "a message that stays")
    return {
        "kept": [_log(tenant_a.admin, obj) for obj in (kept_memory, kept_session, kept_message)],
        "user": tenant_a.admin,
    }


def _remaining(entries) -> list[int]:
    return sorted(LogEntry.objects.filter(pk__in=[entry.pk for entry in entries]).values_list("pk", flat=True))


def test_a_hard_deleted_memory_takes_its_log_entries_with_it(tenant_a, add_memory, logged):
    memory = add_memory(tenant_a.store, "Alice's secret recipe")
    gone = _log(logged["user"], memory)
    memory_hard_delete(memory=memory)
    assert _remaining([gone]) == [] and _remaining(logged["kept"]) == sorted(e.pk for e in logged["kept"])


def test_a_deleted_session_takes_its_and_its_messages_log_entries(tenant_a, logged):
    session, message = _session(tenant_a.store, "doomed", "my card number is 4111")
    gone = [_log(logged["user"], session), _log(logged["user"], message)]
    session_delete(session=session)
    assert not Message.objects.filter(pk=message.pk).exists()
    assert _remaining(gone) == [] and _remaining(logged["kept"]) == sorted(e.pk for e in logged["kept"])


def test_a_deleted_store_takes_the_log_entries_of_everything_in_it(tenant_a, add_memory, logged):
    store = store_create(tenant=tenant_a.tenant, name="doomed", embedding_provider="hash")
    memory = add_memory(store, "Bob's allergy to walnuts")
    session, message = _session(store, "doomed-chat", "Bob says hi")
    gone = [_log(logged["user"], obj) for obj in (store, memory, session, message)]
    store_delete(store=store)
    assert _remaining(gone) == [] and _remaining(logged["kept"]) == sorted(e.pk for e in logged["kept"])
