import math
from contextlib import contextmanager
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone

from apps.core.actors import Actor
from apps.core.embeddings import SUPPORTED_DIMENSIONS
from apps.memories.search import SearchQuery, memory_search
from apps.memories.services import MemoryInput, memory_bulk_create, memory_supersede, store_create

SEARCH = "/api/v1/stores/main/search"


def _search(client, **body):
    response = client.post(SEARCH, body, format="json")
    assert response.status_code == 200, response.content
    return response.json()["results"]


@pytest.fixture
def alice_memories(tenant_a, add_memory):
    store = tenant_a.store
    return {
        "tea": add_memory(store, "Alice drinks green tea every morning", memory_type="preference",
                          metadata={"topic": "food"}, tags=["drinks"]),
        "paris": add_memory(store, "Alice lives in Paris near the river", metadata={"topic": "home"}),
        "job": add_memory(store, "Alice works as a nurse at the city hospital", agent_id="hr-bot", session_id="s9"),
        "bob": add_memory(store, "Bob drinks black tea", user_id="bob"),
    }


def test_hybrid_search_fuses_both_rankings(tenant_a, alice_memories):
    results = _search(tenant_a.client("read"), query="green tea", user_id="alice")
    top = results[0]
    assert top["memory"]["id"] == str(alice_memories["tea"].pk)
    assert top["vector_rank"] == 1 and top["keyword_rank"] == 1
    assert top["score"] == pytest.approx(1.0)
    assert all(0 <= hit["score"] <= 1 for hit in results)
    assert [hit["score"] for hit in results] == sorted((hit["score"] for hit in results), reverse=True)


def test_search_is_scoped_to_the_user(tenant_a, alice_memories):
    results = _search(tenant_a.client("read"), query="tea", user_id="bob")
    assert [hit["memory"]["user_id"] for hit in results] == ["bob"]


def test_search_filters(tenant_a, alice_memories):
    client = tenant_a.client("read")
    ids = lambda results: {hit["memory"]["id"] for hit in results}  # noqa: E731
    assert ids(_search(client, query="Alice", memory_types=["preference"])) == {str(alice_memories["tea"].pk)}
    assert ids(_search(client, query="Alice", metadata={"topic": "home"})) == {str(alice_memories["paris"].pk)}
    assert ids(_search(client, query="Alice", agent_id="hr-bot")) == {str(alice_memories["job"].pk)}
    assert ids(_search(client, query="Alice", session_id="s9")) == {str(alice_memories["job"].pk)}
    assert ids(_search(client, query="tea", tags=["drinks"])) == {str(alice_memories["tea"].pk)}


def test_modes_and_limit_and_min_score(tenant_a, alice_memories):
    client = tenant_a.client("read")
    keyword = _search(client, query="hospital nurse", mode="keyword")
    assert [hit["memory"]["id"] for hit in keyword] == [str(alice_memories["job"].pk)]
    assert keyword[0]["vector_rank"] is None and keyword[0]["similarity"] is None
    vector = _search(client, query="hospital nurse", mode="vector", limit=2)
    assert len(vector) == 2 and vector[0]["memory"]["id"] == str(alice_memories["job"].pk)
    assert vector[0]["keyword_rank"] is None
    assert vector[0]["score"] == pytest.approx(vector[0]["similarity"])
    strict = _search(client, query="hospital nurse", mode="vector", min_score=0.99)
    assert strict == []


def test_store_search_defaults_apply(tenant_a, alice_memories, configure_store):
    configure_store(tenant_a.store, search_defaults={"mode": "keyword", "limit": 1})
    response = tenant_a.client("read").post(SEARCH, {"query": "Alice"}, format="json").json()
    assert response["mode"] == "keyword" and len(response["results"]) == 1


def test_search_hides_pending_deleted_rejected_superseded_and_expired(tenant_a, add_memory):
    store = tenant_a.store
    visible = add_memory(store, "Alice owns a red bicycle")
    pending = add_memory(store, "Alice owns a blue bicycle", status="pending_review")
    add_memory(store, "Alice owned a green bicycle", expires_at=timezone.now() - timedelta(seconds=1))
    deleted = add_memory(store, "Alice owns a yellow bicycle")
    assert tenant_a.client("write").delete(f"/api/v1/stores/main/memories/{deleted.pk}").status_code == 200
    rejected = add_memory(store, "Alice owns a white bicycle")
    response = tenant_a.client("write").patch(
        f"/api/v1/stores/main/memories/{rejected.pk}", {"status": "rejected"}, format="json"
    )
    assert response.status_code == 200, response.content
    superseded = add_memory(store, "Alice owns a black bicycle")
    memory_supersede(old=superseded, new=visible, actor=Actor.system("test"))
    for memory, status in ((deleted, "deleted"), (rejected, "rejected"), (superseded, "superseded")):
        memory.refresh_from_db()
        assert memory.status == status
    assert superseded.superseded_by_id == visible.pk and superseded.valid_to is not None

    client = tenant_a.client("read")
    assert [hit["memory"]["id"] for hit in _search(client, query="bicycle")] == [str(visible.pk)]
    with_pending = {hit["memory"]["id"] for hit in _search(client, query="bicycle", include_pending=True)}
    assert with_pending == {str(visible.pk), str(pending.pk)}


def test_stopword_only_query_still_answers_by_vector(tenant_a, alice_memories):
    results = _search(tenant_a.client("read"), query="the and of")
    assert results and all(hit["keyword_rank"] is None for hit in results)


@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
def test_search_never_crosses_stores(tenant_a, tenant_b, alice_memories, add_memory, mode):
    # The other tenant's store (also named "main") holds the very same sentence for the same user.
    theirs = add_memory(tenant_b.store, "Alice drinks green tea every morning")
    ours = {str(memory.pk) for memory in alice_memories.values()}

    found = _search(tenant_b.client("read"), query="green tea", user_id="alice", mode=mode)
    assert [hit["memory"]["id"] for hit in found] == [str(theirs.pk)]

    found = [hit["memory"]["id"] for hit in _search(tenant_a.client("read"), query="green tea", mode=mode)]
    assert found[0] == str(alice_memories["tea"].pk)
    assert set(found) <= ours and str(theirs.pk) not in found


def _explain_search(store, search, *, forbid_seqscan=False):
    statements = []

    def capture(execute, sql, params, many, context):
        statements.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(capture):
        memory_search(store=store, search=search)
    sql, params = next((sql, params) for sql, params in statements if sql.lstrip().startswith("WITH"))
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        if forbid_seqscan:
            # Only the HNSW index can deliver rows in distance order, so forbidding a sort asks
            # whether the query can use it at all.
            cursor.execute("SET LOCAL enable_seqscan = off")
            cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute("EXPLAIN " + sql, params)
        return "\n".join(row[0] for row in cursor.fetchall())


WORDS = ["tea", "coffee", "paris", "berlin", "nurse", "pilot", "cat", "dog", "jazz", "rock", "bike", "car"]


def _fill(store, batches):
    for batch in range(batches):
        items = [
            MemoryInput(user_id=f"user{i % 200}",
                        content=f"{WORDS[i % 12]} {WORDS[(i // 12) % 12]} {WORDS[(i // 144) % 12]} fact {batch}-{i}")
            for i in range(500)
        ]
        memory_bulk_create(store=store, items=items, actor=Actor.system())
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories_memory")


def test_planner_chooses_hnsw_and_gin_indexes_on_its_own(tenant_a):
    store = store_create(tenant=tenant_a.tenant, name="big", embedding_provider="hash", embedding_dimension=384)
    _fill(store, 6)
    # 3,000 memories: a pool of 100 is found faster by reading them all, and the planner knows it; a pool of
    # 40 out of them is where the index pays.
    plan = _explain_search(store, SearchQuery(query="tea in paris", mode="vector", limit=10, candidate_depth=40))
    assert "memory_embedding_hnsw_384" in plan, plan
    # A selective word: the full-text side goes through the GIN index.
    hybrid = _explain_search(store, SearchQuery(query="zeppelin", limit=10, candidate_depth=40))
    assert "memory_embedding_hnsw_384" in hybrid and "memory_search_vector" in hybrid, hybrid


@pytest.mark.parametrize("dimension", SUPPORTED_DIMENSIONS)
def test_each_dimension_has_a_matching_partial_hnsw_index(tenant_a, dimension):
    """The query's cast and predicate match the partial index of that dimension (and no other)."""
    store = store_create(tenant=tenant_a.tenant, name=f"dim{dimension}", embedding_provider="hash",
                         embedding_dimension=dimension)
    memory_bulk_create(store=store, items=[MemoryInput(user_id="u", content="tea in paris")], actor=Actor.system())
    plan = _explain_search(store, SearchQuery(query="tea", mode="vector"), forbid_seqscan=True)
    used = {name for name in (f"memory_embedding_hnsw_{d}" for d in SUPPORTED_DIMENSIONS) if name + " " in plan}
    assert used == {f"memory_embedding_hnsw_{dimension}"}, plan


def test_connections_enable_iterative_hnsw_scans(db):
    with connection.cursor() as cursor:
        cursor.execute("SELECT '[1,0]'::vector")  # loads pgvector, which validates the setting
        cursor.execute("SHOW hnsw.iterative_scan")
        assert cursor.fetchone()[0] == "relaxed_order"


def test_wide_searches_return_the_requested_number_of_rows(tenant_a):
    store = store_create(tenant=tenant_a.tenant, name="wide", embedding_provider="hash")
    _fill(store, 1)
    results = memory_search(store=store, search=SearchQuery(query="tea", mode="vector", limit=100))
    assert len(results) == 100
    assert [hit.vector_rank for hit in results] == list(range(1, 101))


def _cosine_order(store, query, memories):
    query_vector = store.embedder.embed_query(query)
    vectors = store.embedder.embed([memory.content for memory in memories])

    def distance(vector):
        dot = sum(a * b for a, b in zip(query_vector, vector, strict=True))
        norms = math.sqrt(sum(a * a for a in query_vector)) * math.sqrt(sum(b * b for b in vector))
        return 1 - dot / norms

    ranked = sorted(zip(memories, vectors, strict=True), key=lambda pair: distance(pair[1]))
    return [str(memory.pk) for memory, _ in ranked]


@contextmanager
def _narrowest_index_scan():
    """The narrowest HNSW scan there is, and the planner pushed towards it: on its own it returns at most
    one row."""
    with transaction.atomic(), connection.cursor() as cursor:
        for setting in ("hnsw.iterative_scan = off", "hnsw.ef_search = 1", "enable_seqscan = off",
                        "enable_bitmapscan = off", "enable_sort = off"):
            cursor.execute(f"SET LOCAL {setting}")
        yield


def _ours_and_others(store, add_memory):
    ours = [add_memory(store, text) for text in
            ("The user prefers dark mode on every screen", "The user's name is Alice", "Alice owns two monitors")]
    for index in range(60):  # others' memories, closer to the query, crowding the index's neighbourhood
        add_memory(store, f"set up my new monitor the way I like it {index}", user_id=f"other{index}")
    return ours


MONITOR_QUESTION = "Can you set up my new monitor the way I like it?"


def test_a_small_scope_is_ranked_exactly_whatever_the_index_would_find(tenant_a, add_memory):
    """HNSW is approximate: an element can be unreachable in its graph (all its neighbours deleted, or
    inserted by transactions that rolled back, until VACUUM), so an index scan may miss a memory written a
    moment ago. A user's few memories are all compared with the query instead."""
    store = tenant_a.store
    ours = _ours_and_others(store, add_memory)
    with _narrowest_index_scan():
        hits = memory_search(store=store, search=SearchQuery(query=MONITOR_QUESTION, mode="vector", user_id="alice"))
    assert [str(hit.memory.pk) for hit in hits] == _cosine_order(store, MONITOR_QUESTION, ours)
    assert [hit.vector_rank for hit in hits] == [1, 2, 3]


def test_a_scope_above_the_exact_limit_goes_through_the_index(tenant_a, add_memory, settings):
    store = tenant_a.store
    _ours_and_others(store, add_memory)
    settings.SEARCH_EXACT_MAX_ROWS = 2
    with _narrowest_index_scan():
        hits = memory_search(store=store, search=SearchQuery(query=MONITOR_QUESTION, mode="vector", user_id="alice"))
    assert len(hits) < 3
    settings.SEARCH_EXACT_MAX_ROWS = 3
    with _narrowest_index_scan():
        hits = memory_search(store=store, search=SearchQuery(query=MONITOR_QUESTION, mode="vector", user_id="alice"))
    assert len(hits) == 3
