"""memories.0007_revision_action_supersede: supersedes recorded as `update` before are named `supersede`."""

import importlib

import pytest
from django.apps import apps as django_apps
from django.db import IntegrityError, connection, transaction

from apps.memories.models import MemoryRevision

migration = importlib.import_module("apps.memories.migrations.0007_revision_action_supersede")


def _run(step):
    with connection.cursor() as cursor:
        # The rows this test wrote queued foreign-key checks, which a migration's own transaction has not:
        # run them now, or PostgreSQL refuses the migration's ALTER TABLE.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    with connection.schema_editor() as schema_editor:
        step(django_apps, schema_editor)


def _written_before(memory, action, before, after) -> MemoryRevision:
    """A revision as the service wrote it before `supersede` existed."""
    return MemoryRevision.objects.create(memory=memory, store=memory.store, user_id=memory.user_id, action=action,
                                         before=before, after=after, actor_type="system", reason="as written")


def test_revisions_whose_snapshots_show_a_supersede_are_renamed_and_nothing_else(tenant_a, add_memory):
    old = add_memory(tenant_a.store, "Alice lives in Paris")
    new = add_memory(tenant_a.store, "Alice lives in Berlin")
    active = {"status": "active", "content": old.content}
    superseded = {"status": "superseded", "content": old.content, "superseded_by_id": str(new.pk)}
    retired = _written_before(old, "update", active, superseded)
    edit = _written_before(new, "update", {"status": "active", "content": "x"}, {"status": "active", "content": "y"})
    deleted_later = _written_before(old, "delete", superseded, {**superseded, "status": "deleted"})
    created = MemoryRevision.objects.get(memory=new, action="create")

    _run(migration.name_supersedes)

    actions = dict(MemoryRevision.objects.values_list("pk", "action"))
    assert actions[retired.pk] == "supersede"
    assert (actions[edit.pk], actions[deleted_later.pk], actions[created.pk]) == ("update", "delete", "create")
    relabelled = MemoryRevision.objects.get(pk=retired.pk)
    assert (relabelled.before, relabelled.after, relabelled.reason) == (active, superseded, "as written")
    # The append-only trigger is back once the migration is done.
    with pytest.raises(IntegrityError, match="append-only"), transaction.atomic():
        MemoryRevision.objects.filter(pk=retired.pk).update(reason="rewritten")

    _run(migration.unname_supersedes)
    assert MemoryRevision.objects.get(pk=retired.pk).action == "update"


def test_with_nothing_to_rename_the_trigger_is_left_alone(tenant_a, add_memory):
    add_memory(tenant_a.store, "Alice likes tea")
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    with connection.schema_editor() as schema_editor, connection.cursor() as cursor:
        migration.name_supersedes(django_apps, schema_editor)
        cursor.execute("SELECT count(*) FROM pg_locks WHERE relation = 'memories_memoryrevision'::regclass "
                       "AND mode = 'ShareRowExclusiveLock' AND pid = pg_backend_pid()")
        assert cursor.fetchone()[0] == 0  # no ALTER TABLE: the table was not locked against writers
