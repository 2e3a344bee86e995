import json
from datetime import timedelta

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from rest_framework import serializers

from apps.core.actors import Actor
from apps.memories.models import Memory, MemoryRevision, MemoryStore
from apps.memories.serializers import MemoryOutput
from apps.memories.services import create, memory_supersede

BASE = "/api/v1/stores/main"


def _create(client, **fields):
    body = {"user_id": "alice", "content": "Alice likes green tea", **fields}
    return client.post(f"{BASE}/memories", body, format="json")


def test_create_memory_returns_it_and_writes_a_create_revision(tenant_a):
    response = _create(
        tenant_a.client("write"),
        memory_type="preference",
        metadata={"channel": "chat"},
        tags=["drinks"],
        importance=0.8,
        agent_id="support-bot",
        session_id="s-1",
    )
    assert response.status_code == 201
    body = response.json()
    assert body["duplicate"] is False
    memory = body["memory"]
    assert memory["content"] == "Alice likes green tea"
    assert memory["memory_type"] == "preference"
    assert memory["metadata"] == {"channel": "chat"}
    assert memory["tags"] == ["drinks"]
    assert memory["importance"] == 0.8
    assert memory["status"] == "active" and memory["source"] == "api"
    revisions = list(MemoryRevision.objects.filter(memory_id=memory["id"]))
    assert [r.action for r in revisions] == ["create"]
    assert revisions[0].actor_type == "api_key" and "acme-write" in revisions[0].actor_label
    assert revisions[0].after["content"] == "Alice likes green tea" and revisions[0].before is None


def test_same_normalised_content_returns_existing_memory(tenant_a):
    client = tenant_a.client("write")
    first = _create(client).json()["memory"]
    again = _create(client, content="  alice LIKES green   tea.  ")
    assert again.status_code == 200
    assert again.json()["duplicate"] is True
    assert again.json()["memory"]["id"] == first["id"]
    assert Memory.objects.filter(store=tenant_a.store).count() == 1
    # Another user may hold the same sentence.
    other = _create(client, user_id="bob")
    assert other.status_code == 201 and other.json()["duplicate"] is False
    assert other.json()["memory"]["user_id"] == "bob" and other.json()["memory"]["id"] != first["id"]
    assert sorted(Memory.objects.values_list("user_id", "content")) == [
        ("alice", "Alice likes green tea"), ("bob", "Alice likes green tea")
    ]


def test_deleted_content_can_be_written_again(tenant_a):
    client = tenant_a.client("write")
    first = _create(client).json()["memory"]
    deleted = client.delete(f"{BASE}/memories/{first['id']}")
    assert deleted.status_code == 200, deleted.content
    assert (deleted.json()["hard"], deleted.json()["memory"]["status"]) == (False, "deleted")
    again = _create(client)
    assert again.status_code == 201 and again.json()["duplicate"] is False
    assert again.json()["memory"]["id"] != first["id"] and again.json()["memory"]["status"] == "active"
    assert sorted(Memory.objects.values_list("content", "status")) == [
        ("Alice likes green tea", "active"), ("Alice likes green tea", "deleted")
    ]


def test_database_refuses_two_live_rows_with_same_content(tenant_a, add_memory):
    memory = add_memory(tenant_a.store, "Alice likes green tea")
    clone = Memory.objects.get(pk=memory.pk)
    clone.pk = None
    with pytest.raises(IntegrityError), transaction.atomic():
        clone.save(force_insert=True)


def test_bulk_create_counts_duplicates_within_and_across_requests(tenant_a):
    client = tenant_a.client("write")
    _create(client, content="Alice lives in Paris")
    response = client.post(
        f"{BASE}/memories/bulk",
        {
            "memories": [
                {"user_id": "alice", "content": "Alice lives in Paris"},
                {"user_id": "alice", "content": "Alice has a cat named Tom"},
                {"user_id": "alice", "content": "alice has a cat named tom"},
                {"user_id": "bob", "content": "Bob plays chess", "memory_type": "fact"},
            ]
        },
        format="json",
    )
    assert response.status_code == 201
    body = response.json()
    assert (body["created"], body["duplicates"]) == (2, 2)
    assert [r["duplicate"] for r in body["results"]] == [True, False, True, False]
    assert body["results"][1]["memory"]["id"] == body["results"][2]["memory"]["id"]
    assert Memory.objects.filter(store=tenant_a.store).count() == 3
    assert MemoryRevision.objects.filter(store=tenant_a.store, action="create").count() == 3


def test_bulk_create_with_an_invalid_item_is_refused_before_any_write(tenant_a):
    response = tenant_a.client("write").post(
        f"{BASE}/memories/bulk",
        {"memories": [{"user_id": "alice", "content": "fine"}, {"user_id": "alice", "content": "x", "importance": 7}]},
        format="json",
    )
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert error["details"] == {"memories": {"1": {"importance": ["Ensure this value is less than or equal to 1.0."]}}}
    assert not Memory.objects.exists() and not MemoryRevision.objects.exists()


@pytest.mark.django_db(transaction=True)  # real commits: a batch left half-written would stay in the database
def test_bulk_create_is_all_or_nothing(tenant_a, monkeypatch):
    """The memories of a batch are copied, then the database refuses its history rows: nothing remains."""
    copied = []
    copy_rows = create.copy_rows

    def copy_rows_refused_at_the_last_revision(model, instances, **options):
        copied.append((model, len(instances)))
        if model is MemoryRevision:
            instances[-1].action = "x" * 21  # longer than the column allows: PostgreSQL refuses the COPY
        copy_rows(model, instances, **options)

    monkeypatch.setattr(create, "copy_rows", copy_rows_refused_at_the_last_revision)
    items = [{"user_id": "alice", "content": f"Alice fact number {i}"} for i in range(3)]
    response = tenant_a.client("write").post(f"{BASE}/memories/bulk", {"memories": items}, format="json")
    assert copied == [(Memory, 3), (MemoryRevision, 3)]  # the memories went in before the failure
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "invalid_data"
    assert not Memory.objects.exists()
    assert not MemoryRevision.objects.exists()
    assert MemoryStore.objects.get(pk=tenant_a.store.pk).memories.count() == 0


def test_bulk_create_of_500_succeeds_and_501_is_413(tenant_a):
    client = tenant_a.client("write")
    items = [{"user_id": f"u{i % 7}", "content": f"Fact number {i} about the customer"} for i in range(501)]
    too_many = client.post(f"{BASE}/memories/bulk", {"memories": items}, format="json")
    assert too_many.status_code == 413
    assert too_many.json()["error"]["code"] == "batch_too_large"
    assert Memory.objects.count() == 0
    ok = client.post(f"{BASE}/memories/bulk", {"memories": items[:500]}, format="json")
    assert ok.status_code == 201 and ok.json()["created"] == 500
    assert Memory.objects.count() == 500


def test_list_filters(tenant_a, add_memory):
    store = tenant_a.store
    add_memory(store, "Alice likes tea", memory_type="preference", tags=["drinks"], metadata={"plan": "pro"})
    add_memory(store, "Alice lives in Paris", agent_id="bot-1", session_id="s1", metadata={"plan": "free"})
    add_memory(store, "Bob likes coffee", user_id="bob", tags=["drinks"])
    pending = add_memory(store, "Alice maybe likes jazz", status="pending_review")
    client = tenant_a.client("read")

    def contents(query):
        response = client.get(f"{BASE}/memories{query}")
        assert response.status_code == 200, response.content
        return sorted(m["content"] for m in response.json()["results"])

    assert contents("?user_id=alice") == ["Alice likes tea", "Alice lives in Paris", "Alice maybe likes jazz"]
    assert contents("?agent_id=bot-1") == ["Alice lives in Paris"]
    assert contents("?session_id=s1") == ["Alice lives in Paris"]
    assert contents("?memory_type=preference") == ["Alice likes tea"]
    assert contents("?tag=drinks") == ["Alice likes tea", "Bob likes coffee"]
    assert contents("?metadata.plan=pro") == ["Alice likes tea"]
    assert contents("?status=pending_review") == [pending.content]
    assert contents("?user_id=alice&tag=drinks") == ["Alice likes tea"]
    assert contents("?created_after=2999-01-01T00:00:00Z") == []
    assert len(contents("?created_before=2999-01-01T00:00:00Z")) == 4


def test_list_hides_deleted_and_expired_unless_asked(tenant_a, add_memory):
    from datetime import timedelta

    from django.utils import timezone

    add_memory(tenant_a.store, "Alice likes tea")
    add_memory(tenant_a.store, "Old promo code", expires_at=timezone.now() - timedelta(minutes=1))
    gone = add_memory(tenant_a.store, "Wrong fact")
    assert tenant_a.client("write").delete(f"{BASE}/memories/{gone.pk}").json()["memory"]["status"] == "deleted"
    client = tenant_a.client("read")
    assert [m["content"] for m in client.get(f"{BASE}/memories").json()["results"]] == ["Alice likes tea"]
    with_expired = client.get(f"{BASE}/memories?include_expired=true").json()["results"]
    assert {m["content"] for m in with_expired} == {"Alice likes tea", "Old promo code"}
    deleted = client.get(f"{BASE}/memories?status=deleted").json()["results"]
    assert [m["content"] for m in deleted] == ["Wrong fact"]


def test_cursor_pagination_walks_every_memory_once(tenant_a):
    client = tenant_a.client("write")
    items = [{"user_id": "alice", "content": f"Memory number {i}"} for i in range(23)]
    assert client.post(f"{BASE}/memories/bulk", {"memories": items}, format="json").json()["created"] == 23
    seen = []
    url = f"{BASE}/memories?page_size=5"
    while url:
        body = client.get(url).json()
        assert len(body["results"]) <= 5
        seen.extend(m["id"] for m in body["results"])
        url = body["next"]
    assert len(seen) == 23 == len(set(seen))


def test_patch_content_reembeds_and_records_before_and_after(tenant_a, add_memory):
    memory = add_memory(tenant_a.store, "Alice lives in Paris")
    client = tenant_a.client("write")
    response = client.patch(
        f"{BASE}/memories/{memory.pk}",
        {"content": "Alice lives in Berlin", "tags": ["moved"], "reason": "customer moved"},
        format="json",
    )
    assert response.status_code == 200, response.content
    assert (response.json()["content"], response.json()["tags"]) == ("Alice lives in Berlin", ["moved"])
    memory.refresh_from_db()
    assert (memory.content, memory.tags) == ("Alice lives in Berlin", ["moved"])
    revision = MemoryRevision.objects.filter(memory=memory).order_by("-id").first()
    assert revision.action == "update"
    assert revision.before["content"] == "Alice lives in Paris"
    assert revision.after["content"] == "Alice lives in Berlin"
    assert revision.changed_fields == ["content", "tags"]
    assert revision.reason == "customer moved"
    hits = client.post(f"{BASE}/search", {"query": "Berlin", "mode": "keyword"}, format="json").json()["results"]
    assert [hit["memory"]["id"] for hit in hits] == [str(memory.pk)]


def test_patch_to_content_of_another_live_memory_is_409(tenant_a, add_memory):
    add_memory(tenant_a.store, "Alice likes tea")
    other = add_memory(tenant_a.store, "Alice likes coffee")
    response = tenant_a.client("write").patch(
        f"{BASE}/memories/{other.pk}", {"content": "alice likes tea"}, format="json"
    )
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "duplicate_memory"
    other.refresh_from_db()
    assert other.content == "Alice likes coffee"


def test_patch_without_fields_is_400(tenant_a, add_memory):
    memory = add_memory(tenant_a.store, "Alice likes tea")
    response = tenant_a.client("write").patch(f"{BASE}/memories/{memory.pk}", {"reason": "nothing"}, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "validation_error"
    assert list(MemoryRevision.objects.filter(memory=memory).values_list("action", flat=True)) == ["create"]
    assert Memory.objects.get(pk=memory.pk).updated_at == memory.updated_at


def test_soft_delete_then_restore_keeps_history(tenant_a, add_memory):
    memory = add_memory(tenant_a.store, "Alice likes tea")
    client = tenant_a.client("write")
    response = client.delete(f"{BASE}/memories/{memory.pk}?reason=wrong")
    assert response.status_code == 200 and response.json()["hard"] is False
    assert client.get(f"{BASE}/memories/{memory.pk}").json()["status"] == "deleted"
    restored = client.patch(f"{BASE}/memories/{memory.pk}", {"status": "active"}, format="json")
    assert restored.json()["status"] == "active"
    history = client.get(f"{BASE}/memories/{memory.pk}/history").json()["results"]
    assert [entry["action"] for entry in history] == ["create", "delete", "restore"]
    assert history[1]["reason"] == "wrong"
    assert history[1]["before"]["status"] == "active" and history[1]["after"]["status"] == "deleted"


def test_a_supersede_is_its_own_action_in_history_naming_the_successor(tenant_a, add_memory):
    old = add_memory(tenant_a.store, "Alice lives in Paris")
    new = add_memory(tenant_a.store, "Alice lives in Berlin")
    memory_supersede(old=old, new=new, actor=Actor.system("test"))
    history = tenant_a.client("read").get(f"{BASE}/memories/{old.pk}/history").json()["results"]
    assert [entry["action"] for entry in history] == ["create", "supersede"]
    assert (history[1]["before"]["status"], history[1]["after"]["status"]) == ("active", "superseded")
    assert history[1]["after"]["superseded_by_id"] == str(new.pk)
    assert {"status", "superseded_by_id", "valid_to"} <= set(history[1]["changed_fields"])


def test_hard_delete_removes_memory_and_history(tenant_a, add_memory):
    memory = add_memory(tenant_a.store, "Alice likes tea")
    response = tenant_a.client("admin").delete(f"{BASE}/memories/{memory.pk}?hard=true")
    assert response.status_code == 200 and response.json()["hard"] is True
    assert not Memory.objects.filter(pk=memory.pk).exists()
    assert not MemoryRevision.objects.filter(memory_id=memory.pk).exists()


def test_erase_user_removes_only_that_users_memories_and_revisions(tenant_a, tenant_b, add_memory):
    for content in ("Alice likes tea", "Alice lives in Paris", "Alice has a cat"):
        add_memory(tenant_a.store, content)
    kept = add_memory(tenant_a.store, "Bob likes coffee", user_id="bob")
    elsewhere = add_memory(tenant_b.store, "Alice at Globex", user_id="alice")
    response = tenant_a.client("admin").delete(f"{BASE}/users/alice")
    assert response.status_code == 200
    assert response.json() == {"user_id": "alice", "memories": 3, "revisions": 3, "sessions": 0, "messages": 0}
    assert not Memory.objects.filter(store=tenant_a.store, user_id="alice").exists()
    assert not MemoryRevision.objects.filter(store=tenant_a.store, user_id="alice").exists()
    assert Memory.objects.filter(pk__in=[kept.pk, elsewhere.pk]).count() == 2


def test_revisions_are_append_only_in_the_database(tenant_a, add_memory):
    memory = add_memory(tenant_a.store, "Alice likes tea")
    with pytest.raises(IntegrityError, match="append-only"), transaction.atomic():
        MemoryRevision.objects.filter(memory=memory).update(reason="rewritten")


def test_store_crud(tenant_a):
    client = tenant_a.client("admin")
    created = client.post(
        "/api/v1/stores",
        {"name": "support", "description": "Support facts", "embedding_provider": "hash", "embedding_dimension": 768,
         "review_policy": "review", "search_defaults": {"mode": "keyword", "limit": 5}},
        format="json",
    )
    assert created.status_code == 201, created.content
    assert created.json()["embedding_dimension"] == 768
    again = client.post("/api/v1/stores", {"name": "support"}, format="json")
    assert (again.status_code, again.json()["error"]["code"]) == (409, "store_exists")
    assert MemoryStore.objects.get(tenant=tenant_a.tenant, name="support").embedding_dimension == 768
    updated = client.patch("/api/v1/stores/support", {"description": "Changed", "review_policy": "auto"}, format="json")
    assert updated.status_code == 200 and updated.json()["description"] == "Changed"
    assert updated.json()["review_policy"] == "auto"
    store = MemoryStore.objects.get(tenant=tenant_a.tenant, name="support")
    assert (store.description, store.review_policy) == ("Changed", "auto")
    fixed = client.patch("/api/v1/stores/support", {"embedding_dimension": 384}, format="json")
    assert fixed.status_code == 400 and fixed.json()["error"]["code"] == "immutable_field"
    assert MemoryStore.objects.get(pk=store.pk).embedding_dimension == 768
    added = client.post("/api/v1/stores/support/memories", {"user_id": "u", "content": "x y z"}, format="json")
    assert added.status_code == 201, added.content
    deleted = client.delete("/api/v1/stores/support")
    assert deleted.json() == {"deleted": True, "store": "support", "memories": 1}
    assert not MemoryStore.objects.filter(pk=store.pk).exists()
    assert not Memory.objects.filter(store_id=store.pk).exists()
    gone = client.get("/api/v1/stores/support")
    assert (gone.status_code, gone.json()["error"]["code"]) == (404, "store_not_found")


@pytest.mark.parametrize(
    "body, field",
    [
        ({"name": "Not A Slug"}, "name"),
        ({"name": "x", "embedding_provider": "word2vec"}, "embedding_provider"),
        ({"name": "x", "embedding_provider": "hash", "embedding_dimension": 1000}, "embedding_dimension"),
        ({"name": "x", "embedding_provider": "local", "embedding_dimension": 768}, "embedding_dimension"),
        ({"name": "x", "search_defaults": {"mode": "fuzzy"}}, "mode"),
        ({"name": "x", "search_defaults": {"limit": 1000}}, "limit"),
        ({"name": "x", "max_content_length": 3}, "max_content_length"),
    ],
)
def test_store_create_rejects_bad_configuration(tenant_a, body, field):
    response = tenant_a.client("admin").post("/api/v1/stores", body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "validation_error"
    assert field in str(response.json()["error"]["details"])
    assert list(MemoryStore.objects.filter(tenant=tenant_a.tenant).values_list("name", flat=True)) == ["main"]


def test_vector_dimensions_follow_the_store(tenant_a):
    client = tenant_a.client("admin")
    store = client.post("/api/v1/stores", {"name": "wide", "embedding_provider": "hash", "embedding_dimension": 1536},
                        format="json")
    assert (store.status_code, store.json()["embedding_dimension"]) == (201, 1536)
    created = client.post("/api/v1/stores/wide/memories", {"user_id": "u", "content": "Wide vectors"}, format="json")
    assert created.status_code == 201, created.content
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT vector_dims(embedding), embedding_dimension FROM memories_memory WHERE id = %s",
            [created.json()["memory"]["id"]],
        )
        assert cursor.fetchone() == (1536, 1536)


def test_memory_output_matches_drf_rendering_of_its_declared_fields(tenant_a, add_memory):
    # MemoryOutput renders by hand for speed; its declared fields are what the OpenAPI schema
    # publishes. DRF's generic rendering of those fields must give exactly the same document.
    newer = add_memory(tenant_a.store, "Alice now drinks oolong tea")
    memory = add_memory(
        tenant_a.store,
        "Alice drinks green tea",
        agent_id="support-bot",
        session_id="s-1",
        memory_type="preference",
        metadata={"channel": "chat", "nested": {"n": [1, 2.5, None, True]}},
        tags=["drinks", "morning"],
        importance=0.75,
        confidence=0.6,
        expires_at=timezone.now() + timedelta(days=3),
    )
    memory_supersede(old=memory, new=newer, actor=Actor.system("test"))
    memory = Memory.objects.select_related("store").get(pk=memory.pk)
    assert memory.valid_to is not None and memory.expires_at is not None
    assert memory.superseded_by_id == newer.pk and memory.tags and memory.metadata

    by_hand = MemoryOutput(memory).data
    generic = serializers.Serializer.to_representation(MemoryOutput(), memory)
    assert by_hand == dict(generic)
    assert by_hand["superseded_by"] == str(newer.pk)
    assert by_hand["valid_to"] is not None and by_hand["expires_at"] is not None
    # And the API serves that document.
    response = tenant_a.client("read").get(f"{BASE}/memories/{memory.pk}")
    assert response.status_code == 200, response.content
    assert response.json() == json.loads(json.dumps(by_hand))
