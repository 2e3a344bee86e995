"""The Python client against a live memoryhub: stores, memories, search, erasing a user, real error answers."""

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from memoryhub_client import (
    APIError,
    AuthenticationFailed,
    Conflict,
    Memory,
    NotFound,
    PayloadTooLarge,
    PermissionDenied,
    ValidationFailed,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

STORE = "main"


# --- Stores ---------------------------------------------------------------------------------------


def test_stores_create_get_update_list_delete(hub):
    created = hub.stores.create("support", description="What support knows", embedding_provider="hash",
                                extraction_config={"every_n_turns": 2})

    assert (created.name, created.description, created.embedding_provider) == ("support", "What support knows", "hash")
    assert created.extraction_config["every_n_turns"] == 2
    assert isinstance(created.created_at, datetime) and created.id

    fetched = hub.stores.get("support")
    assert fetched == created

    updated = hub.stores.update("support", description="Customers", working_memory_config={"max_items": 5})
    assert updated.description == "Customers"
    assert updated.working_memory_limits["max_items"] == 5
    assert updated.updated_at > created.updated_at

    assert sorted(store.name for store in hub.stores.list()) == ["main", "support"]

    hub.memories.add("support", user_id="alice", content="Alice is a customer")
    deleted = hub.stores.delete("support")
    assert deleted["deleted"] is True and deleted["store"] == "support" and deleted["memories"] == 1
    with pytest.raises(NotFound):
        hub.stores.get("support")


# --- Webhooks -------------------------------------------------------------------------------------

# An address literal: the server checks that a webhook's host is public without a DNS lookup. Nothing is
# sent to it: no test here queues a delivery.
PUBLIC_HOOK = "https://93.184.216.34/hooks/memoryhub"


def test_webhooks_create_list_update_delete(hub):
    created = hub.webhooks.create(STORE, PUBLIC_HOOK, event_types=["memory.created"], description="CRM sync")

    assert created.secret and created.secret.startswith("whsec_")
    assert (created.url, created.event_types, created.is_active, created.store) == (
        PUBLIC_HOOK, ["memory.created"], True, STORE)
    assert [webhook.id for webhook in hub.webhooks.list(STORE)] == [created.id]
    assert hub.webhooks.get(STORE, created.id).secret is None  # shown once
    disabled = hub.webhooks.update(STORE, created.id, is_active=False)
    assert disabled.is_active is False and disabled.disabled_at is not None
    assert hub.webhooks.deliveries(STORE, created.id, status="failed").items == []

    assert hub.webhooks.delete(STORE, created.id) == {"deleted": True, "id": created.id}
    assert hub.webhooks.list(STORE) == []
    with pytest.raises(NotFound):
        hub.webhooks.get(STORE, created.id)


# --- Memories -------------------------------------------------------------------------------------


def test_memory_add_duplicate_get_update_delete_and_history(hub):
    expires = datetime.now(UTC) + timedelta(days=30)
    first = hub.memories.add(STORE, user_id="alice", content="Alice is allergic to peanuts", tags=["health"],
                             metadata={"source": "intake"}, importance=0.9, agent_id="bot", session_id="chat-1",
                             expires_at=expires)

    memory = first.memory
    assert first.duplicate is False
    assert (memory.user_id, memory.agent_id, memory.session_id, memory.tags, memory.importance) == (
        "alice", "bot", "chat-1", ["health"], 0.9
    )
    assert (memory.status, memory.source, memory.memory_type) == ("active", "api", "fact")
    assert abs((memory.expires_at - expires).total_seconds()) < 0.001
    uuid.UUID(memory.id)

    # Known content (after case and whitespace normalisation) is the same memory.
    again = hub.memories.add(STORE, user_id="alice", content="  alice is ALLERGIC to peanuts ")
    assert again.duplicate is True and again.memory.id == memory.id

    assert hub.memories.get(STORE, memory.id) == memory

    changed = hub.memories.update(STORE, memory.id, reason="more precise", content="Alice is allergic to peanuts "
                                  "and tree nuts", importance=1.0)
    assert changed.content == "Alice is allergic to peanuts and tree nuts" and changed.importance == 1.0

    soft = hub.memories.delete(STORE, memory.id, reason="asked to forget")
    assert soft["deleted"] is True and soft["hard"] is False and soft["memory"]["status"] == "deleted"
    assert hub.memories.get(STORE, memory.id).status == "deleted"
    restored = hub.memories.update(STORE, memory.id, status="active")
    assert restored.status == "active"

    history = hub.memories.history(STORE, memory.id)
    assert [revision.action for revision in history] == ["create", "update", "delete", "restore"]
    assert history[1].reason == "more precise" and "content" in history[1].changed_fields
    assert history[1].before["content"] == "Alice is allergic to peanuts"
    assert history[1].actor_type == "api_key" and isinstance(history[1].created_at, datetime)

    hard = hub.memories.delete(STORE, memory.id, hard=True)
    assert hard == {"deleted": True, "hard": True, "id": memory.id}
    with pytest.raises(NotFound):
        hub.memories.get(STORE, memory.id)


def test_bulk_add_then_list_page_by_page_and_iterate(hub):
    hub.memories.add(STORE, user_id="alice", content="Alice lives in Paris")
    items = [
        {"user_id": "alice", "content": f"Alice fact number {number}", "tags": ["numbered"]} for number in range(6)
    ] + [
        {"user_id": "alice", "content": "Alice lives in Paris"},
        {"user_id": "alice", "content": "Alice prefers dark mode", "memory_type": "preference",
         "metadata": {"plan": "pro"}},
        {"user_id": "bob", "content": "Bob plays football on Sundays"},
    ]

    results = hub.memories.bulk_add(STORE, items)

    assert [result.duplicate for result in results] == [False] * 6 + [True, False, False]
    assert [result.memory.content for result in results] == [item["content"] for item in items]

    first = hub.memories.list(STORE, user_id="alice", page_size=3)
    assert len(first.items) == 3 and first.next_cursor
    second = hub.memories.list(STORE, user_id="alice", page_size=3, cursor=first.next_cursor)
    assert not {memory.id for memory in first.items} & {memory.id for memory in second.items}

    every = list(hub.memories.iter(STORE, user_id="alice", page_size=3))
    assert len(every) == 8 == len({memory.id for memory in every})
    assert all(isinstance(memory, Memory) and memory.user_id == "alice" for memory in every)
    created = [memory.created_at for memory in every]
    assert created == sorted(created, reverse=True)  # newest first

    assert [m.content for m in hub.memories.iter(STORE, memory_type="preference")] == ["Alice prefers dark mode"]
    assert [m.content for m in hub.memories.iter(STORE, metadata={"plan": "pro"})] == ["Alice prefers dark mode"]
    assert len(list(hub.memories.iter(STORE, tag="numbered"))) == 6
    assert list(hub.memories.iter(STORE, user_id="alice", created_after=datetime.now(UTC) + timedelta(hours=1))) == []


# --- Search ---------------------------------------------------------------------------------------


def test_search_finds_the_best_match_first_with_its_evidence(hub):
    hub.memories.bulk_add(STORE, [
        {"user_id": "alice", "content": "Alice is allergic to peanuts", "tags": ["health"]},
        {"user_id": "alice", "content": "Alice prefers email over phone calls", "memory_type": "preference"},
        {"user_id": "alice", "content": "Alice works as a nurse at City Hospital"},
        {"user_id": "bob", "content": "Bob is allergic to cats"},
    ])

    hits = hub.search(STORE, "allergic peanuts", user_id="alice")
    assert hits[0].memory.content == "Alice is allergic to peanuts"
    assert hits[0].score == pytest.approx(1.0) and (hits[0].vector_rank, hits[0].keyword_rank) == (1, 1)
    assert 0 < hits[0].similarity <= 1
    assert all(hit.memory.user_id == "alice" for hit in hits)
    scores = [hit.score for hit in hits]
    assert scores == sorted(scores, reverse=True)

    keyword = hub.search(STORE, "allergic", mode="keyword")
    assert {hit.memory.content for hit in keyword} == {"Alice is allergic to peanuts", "Bob is allergic to cats"}
    assert all(hit.vector_rank is None for hit in keyword)

    preferences = hub.search(STORE, "contact", user_id="alice", memory_types=["preference"])
    assert [hit.memory.content for hit in preferences] == ["Alice prefers email over phone calls"]
    assert [hit.memory.content for hit in hub.search(STORE, "allergic", tags=["health"])] == [
        "Alice is allergic to peanuts"
    ]
    assert len(hub.search(STORE, "Alice", user_id="alice", limit=1)) == 1
    best_only = hub.search(STORE, "allergic peanuts", user_id="alice", min_score=0.99)
    assert [hit.memory.content for hit in best_only] == ["Alice is allergic to peanuts"]


def test_search_includes_pending_memories_only_when_asked(hub):
    hub.memories.add(STORE, user_id="alice", content="Alice might move to Lyon", status="pending_review")

    assert hub.search(STORE, "Lyon", user_id="alice") == []
    [hit] = hub.search(STORE, "Lyon", user_id="alice", include_pending=True)
    assert hit.memory.status == "pending_review"


def test_search_explains_and_filters_by_time(hub):
    [alice] = hub.memories.bulk_add(STORE, [{"user_id": "alice", "content": "Alice is allergic to peanuts"}])
    written = datetime.now(UTC)

    [hit] = hub.search(STORE, "peanuts", user_id="alice", explain=True)
    assert hit.keyword_score > 0 and hit.explain["keyword"]["rank"] == 1
    assert hit.explain["vector"]["contribution"] + hit.explain["keyword"]["contribution"] == pytest.approx(hit.score)
    assert hub.search(STORE, "peanuts", user_id="alice", created_after=written + timedelta(minutes=1)) == []
    assert hub.search(STORE, "peanuts", user_id="alice", valid_at=written - timedelta(days=1)) == []
    assert [h.memory.id for h in hub.search(STORE, "peanuts", user_id="alice", valid_at=written)] == [alice.memory.id]


# --- Erasing a user -------------------------------------------------------------------------------


def test_erase_removes_every_memory_and_session_of_the_user(hub):
    hub.memories.bulk_add(STORE, [{"user_id": "carol", "content": f"Carol fact {number}"} for number in range(3)])
    hub.memories.add(STORE, user_id="dave", content="Dave stays")
    hub.sessions.add_messages(STORE, "carol-chat", user_id="carol", messages=[
        {"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi Carol"},
    ])

    counts = hub.users.erase(STORE, "carol")

    assert counts["user_id"] == "carol" and counts["memories"] == 3 and counts["sessions"] == 1
    assert counts["messages"] == 2 and counts["revisions"] >= 3
    assert list(hub.memories.iter(STORE, user_id="carol")) == []
    with pytest.raises(NotFound):
        hub.sessions.get(STORE, "carol-chat")
    assert [memory.content for memory in hub.memories.iter(STORE)] == ["Dave stays"]
    assert hub.users.erase(STORE, "carol")["memories"] == 0  # repeating it is harmless


# --- Errors ---------------------------------------------------------------------------------------


def test_a_validation_error_carries_the_field_details(hub):
    with pytest.raises(ValidationFailed) as caught:
        hub.search(STORE, "anything", limit=1000)

    error = caught.value
    assert (error.status_code, error.code) == (400, "validation_error")
    assert error.message.startswith("limit:") and "limit" in error.details
    assert error.body["error"]["code"] == "validation_error"
    assert str(error).startswith("HTTP 400 validation_error: limit:")


def test_a_bad_key_is_authentication_failed(hub_for):
    bad = hub_for("mh_not_a_real_key")

    with pytest.raises(AuthenticationFailed) as caught:
        bad.stores.list()

    assert caught.value.status_code == 401 and caught.value.code == "authentication_failed"
    assert caught.value.headers.get("www-authenticate", "").startswith("Bearer")


def test_a_missing_scope_is_permission_denied(hub_for, tenant_a):
    reader = hub_for(tenant_a.keys["read"])
    writer = hub_for(tenant_a.keys["write"])
    memory = writer.memories.add(STORE, user_id="alice", content="Alice likes tea").memory

    with pytest.raises(PermissionDenied) as caught:
        reader.memories.add(STORE, user_id="alice", content="Alice likes coffee")
    assert (caught.value.status_code, caught.value.code) == (403, "permission_denied")
    with pytest.raises(PermissionDenied, match="admin"):
        writer.memories.delete(STORE, memory.id, hard=True)
    with pytest.raises(PermissionDenied):
        writer.stores.create("other")
    assert reader.memories.get(STORE, memory.id).content == "Alice likes tea"  # reading is allowed


def test_unknown_and_foreign_objects_are_not_found(hub, hub_for, tenant_b):
    foreign = hub_for(tenant_b.keys["admin"]).memories.add(STORE, user_id="zed", content="Zed's secret").memory

    with pytest.raises(NotFound) as no_store:
        hub.stores.get("nope")
    with pytest.raises(NotFound):
        hub.memories.get(STORE, foreign.id)  # another tenant's memory: 404, not 403
    with pytest.raises(NotFound):
        hub.memories.get(STORE, str(uuid.uuid4()))
    with pytest.raises(NotFound):
        hub.sessions.get(STORE, "no-such-session")
    assert no_store.value.code == "store_not_found" and no_store.value.status_code == 404


def test_conflicts(hub):
    hub.lifecycle.spawn(STORE, "conflict", user_id="alice")
    hub.working_memory.put(STORE, "conflict", "counter", 1)

    with pytest.raises(Conflict) as stale:
        hub.working_memory.put(STORE, "conflict", "counter", 2, if_version=0)  # must not exist yet
    with pytest.raises(Conflict) as twice:
        hub.lifecycle.spawn(STORE, "conflict", user_id="alice")

    assert stale.value.status_code == 409 and hub.working_memory.get(STORE, "conflict", "counter").value == 1
    assert twice.value.code == "invalid_transition" and twice.value.details["status"] == "active"


def test_payloads_over_the_limits_are_payload_too_large(hub):
    assert hub.stores.update(STORE, working_memory_config={"max_value_bytes": 100}).working_memory_limits[
        "max_value_bytes"] == 100
    hub.lifecycle.spawn(STORE, "big", user_id="alice")

    with pytest.raises(PayloadTooLarge) as batch:
        hub.sessions.add_messages(STORE, "big", user_id="alice",
                                  messages=[{"role": "user", "content": f"message {n}"} for n in range(101)])
    with pytest.raises(PayloadTooLarge) as value:
        hub.working_memory.put(STORE, "big", "blob", "x" * 200)

    assert (batch.value.status_code, batch.value.code) == (413, "batch_too_large")
    assert isinstance(value.value, ValidationFailed) and value.value.details["limit_bytes"] == 100
    assert hub.sessions.get(STORE, "big").message_count == 0


def test_every_api_error_names_the_request(hub):
    with pytest.raises(APIError) as caught:
        hub.memories.update(STORE, str(uuid.uuid4()), content="x")

    assert caught.value.method == "PATCH" and "/api/v1/stores/main/memories/" in caught.value.url
