"""export_store → import_store: a copy equal to the original, idempotent, in whole batches, with vectors carried
or computed."""

import json

import numpy as np
import pytest
from django.core.management.base import CommandError
from django.db import connection

from apps.memories.models import Memory, MemoryRevision, MemoryStore
from apps.memories.services import store_create, store_delete
from apps.portability import services
from tests.portability.conftest import export_text, import_text, store_view

pytestmark = pytest.mark.django_db


def _lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def _counts(store) -> dict:
    return {"memories": Memory.objects.filter(store=store).count(),
            "revisions": MemoryRevision.objects.filter(store=store).count(),
            "sessions": store.sessions.count(),
            "messages": sum(session.messages.count() for session in store.sessions.all())}


def test_export_is_a_header_then_memories_sessions_and_messages(rich_store):
    records = _lines(export_text(rich_store))

    header = records[0]
    assert (header["type"], header["format"], header["version"]) == ("header", "memoryhub-store-export", 1)
    assert header["tenant"] == {"slug": "acme", "name": "Acme"}
    assert header["store"]["id"] == str(rich_store.pk)
    assert (header["store"]["embedding_provider"], header["store"]["embedding_dimension"]) == ("hash", 384)
    assert header["counts"] == {**_counts(rich_store)}
    types = [record["type"] for record in records[1:]]
    assert types == sorted(types, key=["memory", "session", "message"].index)  # memories, then sessions, then messages
    assert types.count("memory") == header["counts"]["memories"]
    memories = {record["content"]: record for record in records if record["type"] == "memory"}
    peanuts = memories["Alice is allergic to peanuts and cashews"]
    assert [revision["action"] for revision in peanuts["revisions"]] == ["create", "update"]
    assert peanuts["provenance"] == {"from": "crm", "record": 17} and "embedding" not in peanuts
    assert memories["Alice lives in Paris"]["superseded_by"] == memories["Alice lives in Berlin"]["id"]
    assert {memories[content]["status"] for content in memories} >= {"active", "deleted", "rejected", "superseded"}
    task = next(record for record in records if record["type"] == "session" and record["session_id"] == "task-7")
    assert task["task_state"]["description"] == "Replace Alice's broken kettle"
    assert [item["key"] for item in task["working_memory"]] == ["order", "otp"]
    assert [event["event"] for event in task["events"]] == ["spawn", "pause", "resume"]
    assert len(task["checkpoints"]) == 2 and task["scratchpad"][0]["content"] == "Warranty valid until May"


@pytest.mark.parametrize("tenant_fixture", ["tenant_a", "tenant_b"])
def test_a_round_trip_into_another_store_is_equal_to_the_original(rich_store, tenant_fixture, request):
    tenant = request.getfixturevalue(tenant_fixture).tenant
    text = export_text(rich_store)

    output = import_text(tenant.slug, "copy", text)

    copy = MemoryStore.objects.get(tenant=tenant, name="copy")
    assert "(created)" in output and "embeddings computed" in output
    assert (copy.embedding_provider, copy.embedding_model, copy.embedding_dimension) == (
        rich_store.embedding_provider, rich_store.embedding_model, rich_store.embedding_dimension)
    assert store_view(copy, imported=True) == store_view(rich_store)
    # Another store: other ids, none shared with the original.
    assert not set(Memory.objects.filter(store=copy).values_list("pk", flat=True)) & set(
        Memory.objects.filter(store=rich_store).values_list("pk", flat=True))
    revision = MemoryRevision.objects.filter(store=copy).order_by("-id").first()
    assert (revision.action, revision.actor_label) == ("create", "manage.py import_store")
    assert revision.reason.startswith("Imported from acme/main")
    counts = _counts(rich_store)
    assert _counts(copy) == {**counts, "revisions": counts["revisions"] + counts["memories"]}


def test_importing_the_same_file_again_changes_nothing(rich_store, tenant_b):
    text = export_text(rich_store)
    import_text("globex", "copy", text)
    copy = MemoryStore.objects.get(tenant=tenant_b.tenant, name="copy")
    before, view = _counts(copy), store_view(copy)

    output = import_text("globex", "copy", text)

    assert _counts(copy) == before and store_view(copy) == view
    counts = _counts(rich_store)
    assert f"0 memories ({counts['memories']} already there" in output, output
    assert f"0 sessions ({counts['sessions']} already there)" in output, output


def test_a_store_imported_home_keeps_its_ids(rich_store, tenant_a):
    """A store deleted (or moved to a new server) and imported from its export comes back with the same ids."""
    text = export_text(rich_store)
    original = store_view(rich_store)
    ids = set(Memory.objects.filter(store=rich_store).values_list("pk", flat=True))
    store_id = rich_store.pk
    store_delete(store=rich_store)

    import_text("acme", "main", text)

    restored = MemoryStore.objects.get(tenant=tenant_a.tenant, name="main")
    assert restored.pk == store_id
    assert set(Memory.objects.filter(store=restored).values_list("pk", flat=True)) == ids
    assert store_view(restored, imported=True) == original


def test_an_import_into_the_original_store_adds_nothing(rich_store):
    text = export_text(rich_store)
    before = _counts(rich_store)

    import_text("acme", "main", text)

    assert _counts(rich_store) == before


def _vectors(store) -> dict[str, np.ndarray]:
    return {memory.content: np.asarray(memory.embedding) for memory in Memory.objects.filter(store=store)}


def test_embeddings_are_carried_when_the_embedder_matches(rich_store, tenant_b):
    # A vector no embedder would compute for this text: a copy holding it was carried, not recomputed.
    marked = Memory.objects.get(store=rich_store, content="Alice lives in Berlin")
    with connection.cursor() as cursor:
        cursor.execute("UPDATE memories_memory SET embedding = %s::vector WHERE id = %s",
                       ["[" + ",".join(["0.0625"] * 383 + ["-0.123456789"]) + "]", marked.pk])
    text = export_text(rich_store, "--with-embeddings")

    output = import_text("globex", "copy", text)

    copy = MemoryStore.objects.get(tenant=tenant_b.tenant, name="copy")
    assert "embeddings carried" in output
    original, copied = _vectors(rich_store), _vectors(copy)
    assert original.keys() == copied.keys()
    for content, vector in original.items():
        assert np.array_equal(copied[content], vector), content  # bit for bit: float4 text is exact
    assert np.float32(copied["Alice lives in Berlin"][-1]) == np.float32(-0.123456789)


def test_embeddings_are_computed_when_the_file_has_none(rich_store, tenant_b):
    marked = Memory.objects.get(store=rich_store, content="Alice lives in Berlin")
    with connection.cursor() as cursor:
        cursor.execute("UPDATE memories_memory SET embedding = %s::vector WHERE id = %s",
                       ["[" + ",".join(["0.0625"] * 384) + "]", marked.pk])

    import_text("globex", "copy", export_text(rich_store))

    copy = MemoryStore.objects.get(tenant=tenant_b.tenant, name="copy")
    computed = copy.embedder.embed(["Alice lives in Berlin"])[0]
    assert np.allclose(_vectors(copy)["Alice lives in Berlin"], computed, atol=1e-6)


def test_vectors_of_another_embedder_are_refused_unless_reembedded(rich_store, tenant_b):
    other = store_create(tenant=tenant_b.tenant, name="copy", embedding_provider="hash",
                         embedding_model="hash-ngram-other")
    text = export_text(rich_store, "--with-embeddings")

    with pytest.raises(CommandError, match="Import with --reembed"):
        import_text("globex", "copy", text)
    assert not Memory.objects.filter(store=other).exists()

    output = import_text("globex", "copy", text, "--reembed")

    assert "embeddings computed" in output
    assert Memory.objects.filter(store=other).count() == Memory.objects.filter(store=rich_store).count()


def test_a_truncated_file_names_the_line_and_leaves_whole_batches(rich_store, tenant_b, monkeypatch):
    monkeypatch.setitem(services.BATCH_SIZES, "memory", 2)
    lines = export_text(rich_store).splitlines()
    cut = 6  # header, then memories 1-2 (a batch), 3-4 (a batch), then memory 5 cut short
    text = "\n".join(lines[:cut - 1] + [lines[cut - 1][:40]]) + "\n"

    with pytest.raises(CommandError, match=f"line {cut}: not valid JSON"):
        import_text("globex", "copy", text)

    copy = MemoryStore.objects.get(tenant=tenant_b.tenant, name="copy")
    assert Memory.objects.filter(store=copy).count() == 4  # two whole batches
    # Run again with the whole file: it completes, equal to an import in one go.
    import_text("globex", "copy", "\n".join(lines) + "\n")
    assert store_view(copy, imported=True) == store_view(rich_store)


def test_a_bad_field_names_its_line_and_writes_nothing_of_its_batch(rich_store, tenant_b, monkeypatch):
    monkeypatch.setitem(services.BATCH_SIZES, "memory", 3)
    records = _lines(export_text(rich_store))
    records[5]["importance"] = 7  # the second memory of the second batch
    text = "\n".join(json.dumps(record) for record in records)

    with pytest.raises(CommandError, match=r"line 6: memory importance: must be between 0 and 1"):
        import_text("globex", "copy", text)

    assert Memory.objects.filter(store__tenant=tenant_b.tenant, store__name="copy").count() == 3


def test_an_import_stops_at_the_tenants_memory_quota_and_goes_on_once_there_is_room(rich_store, tenant_b,
                                                                                    monkeypatch):
    monkeypatch.setitem(services.BATCH_SIZES, "memory", 2)
    tenant = tenant_b.tenant
    tenant.max_memories = 3
    tenant.save(update_fields=["max_memories"])
    text = export_text(rich_store)

    with pytest.raises(CommandError, match="its quota is 3"):
        import_text("globex", "copy", text)

    copy = MemoryStore.objects.get(tenant=tenant, name="copy")
    assert Memory.objects.filter(store=copy).count() == 2  # the first batch; the second would pass the quota
    tenant.max_memories = None
    tenant.save(update_fields=["max_memories"])
    import_text("globex", "copy", text)
    assert store_view(copy, imported=True) == store_view(rich_store)


def test_a_file_cut_at_a_line_boundary_is_caught_by_the_header_counts(rich_store, tenant_b):
    lines = export_text(rich_store).splitlines()
    messages = _counts(rich_store)["messages"]

    with pytest.raises(CommandError, match=f"the header announces {messages} messages and the file holds "
                                           f"{messages - 1}: it was cut short"):
        import_text("globex", "copy", "\n".join(lines[:-1]))


@pytest.mark.parametrize(("text", "message"), [
    ("", "the file is empty"),
    ('{"type": "memory"}', "line 1: not a memoryhub store export"),
    ('{"type": "header", "format": "memoryhub-store-export", "version": 2}', "format version 2, written by a newer"),
    ("[1, 2]", "line 1: a record must be a JSON object"),
])
def test_a_file_that_is_no_export_is_refused(tenant_b, text, message):
    with pytest.raises(CommandError, match=message):
        import_text("globex", "copy", text)
    assert not MemoryStore.objects.filter(tenant=tenant_b.tenant, name="copy").exists()


def test_one_users_export_holds_only_their_data(rich_store, tenant_b):
    records = _lines(export_text(rich_store, "--user", "bob"))

    assert records[0]["user_id"] == "bob"
    assert {record.get("user_id") for record in records[1:] if record["type"] != "message"} == {"bob"}
    assert [record["session_id"] for record in records if record["type"] == "message"] == ["bob-1"]
    import_text("globex", "bob", "\n".join(json.dumps(record) for record in records))
    assert set(Memory.objects.filter(store__tenant=tenant_b.tenant, store__name="bob").values_list(
        "user_id", flat=True)) == {"bob"}


def test_the_export_reads_memories_a_chunk_at_a_time(rich_store, monkeypatch, django_assert_max_num_queries):
    """Streaming: memories come through a server-side cursor in chunks, each chunk's revisions in one query,
    so nothing holds the whole store. With chunks of 2, n memories take n/2 revision queries."""
    from django.test.utils import CaptureQueriesContext

    from apps.portability import selectors

    monkeypatch.setattr(selectors, "MEMORY_CHUNK", 2)
    with CaptureQueriesContext(connection) as queries:
        lines = list(selectors.store_export_lines(store=rich_store))

    revision_queries = [query["sql"] for query in queries if 'FROM "memories_memoryrevision"' in query["sql"]
                        and "COUNT" not in query["sql"]]
    memories = Memory.objects.filter(store=rich_store).count()
    assert len(revision_queries) == -(-memories // 2)
    counts = _counts(rich_store)
    assert len(lines) == 1 + counts["memories"] + counts["sessions"] + counts["messages"]
