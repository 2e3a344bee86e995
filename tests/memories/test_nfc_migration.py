"""memories.0006_nfc_identifiers: ids written before the API normalised them are rewritten in NFC."""

import importlib

import pytest
from django.apps import apps as django_apps
from django.db import IntegrityError, connection, transaction

from apps.memories.models import Memory, MemoryRevision

migration = importlib.import_module("apps.memories.migrations.0006_nfc_identifiers")

COMPOSED = "Jos\u00e9"
DECOMPOSED = "Jose\u0301"
SESSION_COMPOSED = "s\u00e9ance"
SESSION_DECOMPOSED = "se\u0301ance"


def _migrate():
    with connection.cursor() as cursor:
        # The rows this test wrote queued foreign-key checks, which a migration's own transaction has not:
        # run them now, or PostgreSQL refuses the migration's ALTER TABLE.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    with connection.schema_editor() as schema_editor:
        migration.normalise_identifiers(django_apps, schema_editor)


def _written_decomposed(add_memory, store, content, **ids):
    """A memory and a revision as an older version stored them: ids exactly as the client sent them."""
    memory = add_memory(store, content, user_id="placeholder")
    Memory.objects.filter(pk=memory.pk).update(**ids)
    MemoryRevision.objects.create(
        memory=memory, store=store, user_id=ids["user_id"], action="update", actor_type="system"
    )
    return memory


def test_decomposed_ids_of_memories_and_revisions_become_nfc(tenant_a, add_memory):
    memory = _written_decomposed(add_memory, tenant_a.store, "José likes tea", user_id=DECOMPOSED,
                                 agent_id=DECOMPOSED, session_id=SESSION_DECOMPOSED)
    ascii_memory = add_memory(tenant_a.store, "Bob likes tea", user_id="bob")

    _migrate()

    memory.refresh_from_db()
    assert (memory.user_id, memory.agent_id, memory.session_id) == (COMPOSED, COMPOSED, SESSION_COMPOSED)
    assert memory.status == "active"
    assert not MemoryRevision.objects.filter(user_id=DECOMPOSED).exists()
    assert MemoryRevision.objects.filter(memory=memory, user_id=COMPOSED).count() == 1
    assert Memory.objects.get(pk=ascii_memory.pk).user_id == "bob"
    # The append-only trigger is back once the migration is done.
    with pytest.raises(IntegrityError, match="append-only"), transaction.atomic():
        MemoryRevision.objects.filter(memory=memory).update(reason="rewritten")
    # One user now: erasing the composed form takes the memory that was written decomposed.
    response = tenant_a.client("admin").delete(f"/api/v1/stores/main/users/{COMPOSED}")
    assert response.json()["memories"] == 1 and not MemoryRevision.objects.filter(memory_id=memory.pk).exists()


def test_a_live_duplicate_in_the_other_form_is_superseded_with_a_revision(tenant_a, add_memory):
    kept = add_memory(tenant_a.store, "José likes tea", user_id=COMPOSED)
    duplicate = _written_decomposed(add_memory, tenant_a.store, "José likes tea", user_id=DECOMPOSED,
                                    agent_id="", session_id="")
    deleted = _written_decomposed(add_memory, tenant_a.store, "José lives in Porto", user_id=DECOMPOSED,
                                  agent_id="", session_id="")
    Memory.objects.filter(pk=deleted.pk).update(status="deleted")

    _migrate()

    kept.refresh_from_db(), duplicate.refresh_from_db(), deleted.refresh_from_db()
    assert (kept.status, kept.user_id) == ("active", COMPOSED)
    assert (duplicate.status, duplicate.superseded_by_id, duplicate.user_id) == ("superseded", kept.pk, COMPOSED)
    assert duplicate.valid_to is not None
    revision = duplicate.revisions.order_by("-id").first()
    assert (revision.actor_type, revision.user_id) == ("system", COMPOSED)
    assert "0006_nfc_identifiers" in revision.actor_label and str(kept.pk) in revision.reason
    assert revision.before["status"] == "active" and revision.after["status"] == "superseded"
    assert {"status", "superseded_by_id", "valid_to"} <= set(revision.changed_fields)
    assert (deleted.status, deleted.user_id) == ("deleted", COMPOSED)


def test_an_id_whose_nfc_form_would_not_fit_its_column_is_left_as_it_is(tenant_a, add_memory):
    # U+0958 is not allowed in NFC: it decomposes into two characters, so 255 of them become 510.
    too_long = "\u0958" * 255
    memory = _written_decomposed(add_memory, tenant_a.store, "A long id", user_id=too_long)
    fine = _written_decomposed(add_memory, tenant_a.store, "José likes tea", user_id=DECOMPOSED)

    _migrate()  # no DataError: the migration goes on

    assert Memory.objects.get(pk=memory.pk).user_id == too_long
    assert MemoryRevision.objects.filter(memory=memory, user_id=too_long).count() == 1
    assert Memory.objects.get(pk=fine.pk).user_id == COMPOSED
