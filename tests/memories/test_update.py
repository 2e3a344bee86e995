"""memory_update writes what changed: the columns of the edit, never the others (apps/memories/services/update.py)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.core.actors import Actor
from apps.memories.models import Memory
from apps.memories.normalise import content_hash
from apps.memories.services import memory_add_provenance, memory_supersede, memory_update

pytestmark = pytest.mark.django_db

ACTOR = Actor.system("test")


def _updated_columns(queries) -> set[str]:
    [update] = [query["sql"] for query in queries if query["sql"].startswith('UPDATE "memories_memory"')]
    assignments = update.split(" SET ", 1)[1].split(" WHERE ", 1)[0]
    return {part.split(" = ")[0].strip().strip('"') for part in assignments.split(", ") if " = " in part}


def test_a_provenance_change_writes_only_the_provenance(tenant_a, add_memory):
    memory = add_memory(tenant_a.store, "The user lives in Lisbon")

    with CaptureQueriesContext(connection) as queries:
        memory_add_provenance(memory=memory, source={"session_id": "s-2"}, actor=ACTOR)

    assert _updated_columns(queries) == {"provenance", "updated_at"}
    assert Memory.objects.get(pk=memory.pk).provenance["sources"] == [{"session_id": "s-2"}]


def test_a_content_change_writes_the_content_its_hash_and_its_vector(tenant_a, add_memory):
    memory = add_memory(tenant_a.store, "The user lives in Lisbon")
    before = list(Memory.objects.values_list("embedding", flat=True).get(pk=memory.pk))

    with CaptureQueriesContext(connection) as queries:
        memory_update(memory=memory, changes={"content": "The user lives in Porto", "tags": ["home"]}, actor=ACTOR)

    assert _updated_columns(queries) == {"content", "content_hash", "embedding", "tags", "updated_at"}
    stored = Memory.objects.get(pk=memory.pk)
    assert (stored.content, stored.content_hash, stored.tags) == (
        "The user lives in Porto", content_hash("The user lives in Porto"), ["home"])
    assert list(stored.embedding) != before
    assert "porto" in str(Memory.objects.values_list("search_vector", flat=True).get(pk=memory.pk))


def test_a_supersede_writes_the_status_the_successor_and_the_end_of_validity(tenant_a, add_memory):
    old = add_memory(tenant_a.store, "The user lives in Lisbon")
    new = add_memory(tenant_a.store, "The user lives in Porto")

    with CaptureQueriesContext(connection) as queries:
        memory_supersede(old=old, new=new, actor=ACTOR)

    assert _updated_columns(queries) == {"status", "superseded_by_id", "valid_to", "updated_at"}
    stored = Memory.objects.get(pk=old.pk)
    assert (stored.status, stored.superseded_by_id) == ("superseded", new.pk) and stored.valid_to is not None



def test_new_content_given_with_a_stale_copy_still_gets_its_hash_and_vector(tenant_a, add_memory):
    memory = add_memory(tenant_a.store, "The user lives in Lisbon")
    stale = Memory.objects.get(pk=memory.pk)
    stale.content = "The user lives in Porto"  # the caller's copy already says what it writes; the row does not

    memory_update(memory=stale, changes={"content": "The user lives in Porto"}, actor=ACTOR)

    stored = Memory.objects.get(pk=memory.pk)
    assert (stored.content, stored.content_hash) == ("The user lives in Porto", content_hash("The user lives in Porto"))
    assert list(stored.embedding) == pytest.approx(tenant_a.store.embedder.embed(["The user lives in Porto"])[0])
