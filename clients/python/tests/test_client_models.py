"""Result types: parsing the server's JSON, tolerating fields added or left out by other server versions."""

import dataclasses
from datetime import UTC, datetime

import pytest

from memoryhub_client import (
    Checkpoint,
    ContextResult,
    FlushResult,
    LifecycleResult,
    Memory,
    MemoryWriteResult,
    Page,
    SearchHit,
    Session,
    Webhook,
    WebhookDelivery,
    WorkingMemoryItem,
)
from memoryhub_client.models import cursor_from_url, parse_datetime

MEMORY_JSON = {
    "id": "7d6c1c3e-6a55-4d4a-9d1c-0e6d6f1c2a10",
    "store": "main",
    "user_id": "alice",
    "agent_id": "bot",
    "session_id": "chat-1",
    "content": "Alice is allergic to peanuts",
    "memory_type": "fact",
    "metadata": {"source": "chat"},
    "tags": ["health"],
    "importance": 0.8,
    "confidence": 0.9,
    "status": "active",
    "source": "api",
    "provenance": {},
    "valid_from": "2026-01-02T03:04:05.123456Z",
    "valid_to": None,
    "expires_at": None,
    "superseded_by": None,
    "created_at": "2026-01-02T03:04:05.123456Z",
    "updated_at": "2026-01-03T00:00:00+00:00",
}


def test_memory_from_json():
    memory = Memory.from_json(MEMORY_JSON)

    assert (memory.id, memory.content, memory.memory_type, memory.user_id, memory.agent_id, memory.session_id) == (
        "7d6c1c3e-6a55-4d4a-9d1c-0e6d6f1c2a10", "Alice is allergic to peanuts", "fact", "alice", "bot", "chat-1"
    )
    assert (memory.metadata, memory.tags, memory.importance, memory.confidence) == ({"source": "chat"}, ["health"],
                                                                                    0.8, 0.9)
    assert (memory.status, memory.source, memory.expires_at, memory.superseded_by) == ("active", "api", None, None)
    assert memory.created_at == datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)
    assert memory.updated_at == datetime(2026, 1, 3, tzinfo=UTC)
    assert memory.raw == MEMORY_JSON and memory.to_dict() == MEMORY_JSON


def test_unknown_fields_are_kept_in_raw_and_missing_ones_get_defaults():
    newer = {**MEMORY_JSON, "embedding_version": 3, "links": [{"to": "x"}]}
    del newer["tags"], newer["confidence"]

    memory = Memory.from_json(newer)

    assert memory.raw["embedding_version"] == 3 and memory.raw["links"] == [{"to": "x"}]
    assert memory.tags == [] and memory.confidence is None
    assert memory.content == "Alice is allergic to peanuts"


def test_models_are_frozen():
    memory = Memory.from_json(MEMORY_JSON)
    with pytest.raises(dataclasses.FrozenInstanceError):
        memory.content = "changed"


def test_equality_ignores_raw():
    assert Memory.from_json(MEMORY_JSON) == Memory.from_json({**MEMORY_JSON, "extra": 1})
    assert Memory.from_json(MEMORY_JSON) != Memory.from_json({**MEMORY_JSON, "content": "other"})


def test_nested_results_are_typed():
    write = MemoryWriteResult.from_json({"memory": MEMORY_JSON, "duplicate": True})
    hit = SearchHit.from_json({"memory": MEMORY_JSON, "score": 0.5, "vector_rank": None, "keyword_rank": 2,
                               "similarity": None})

    assert isinstance(write.memory, Memory) and write.duplicate is True
    assert isinstance(hit.memory, Memory) and (hit.score, hit.vector_rank, hit.keyword_rank) == (0.5, None, 2)


def test_flush_result_types_its_jobs_and_changes():
    flush = FlushResult.from_json({
        "complete": True,
        "session": {"session_id": "chat-1", "last_seq": 3, "extracted_seq": 3, "ended_at": None},
        "jobs": [{"id": "j1", "status": "succeeded", "added": 2, "finished_at": "2026-01-01T00:00:00Z"}],
        "more_jobs": True,
        "changes": [{"memory_id": "m1", "action": "create", "content": "Alice prefers dark mode",
                     "superseded_by": None, "message_seqs": [3]},
                    {"memory_id": "m0", "action": "supersede", "content": "Alice prefers light mode",
                     "superseded_by": "m1", "message_seqs": [3]}],
    })

    assert flush.complete and flush.session.extracted_seq == 3 and flush.more_jobs is True
    assert flush.jobs[0].status == "succeeded" and flush.jobs[0].finished_at == datetime(2026, 1, 1, tzinfo=UTC)
    assert flush.changes[0].message_seqs == [3] and flush.changes[0].action == "create"
    assert (flush.changes[1].action, flush.changes[1].superseded_by) == ("supersede", "m1")


def test_lifecycle_result_takes_the_session_out_of_data():
    result = LifecycleResult.from_json({"success": True, "event": "pause", "duration_ms": 4,
                                        "data": {"checkpoint_id": "c1", "session": {"session_id": "s",
                                                                                    "status": "paused"}}})
    bare = LifecycleResult.from_json({"success": True, "event": "restore", "duration_ms": 1, "data": {}})

    assert isinstance(result.session, Session) and result.session.status == "paused"
    assert result.data["checkpoint_id"] == "c1"
    assert bare.session is None


def test_checkpoint_and_working_memory_item():
    checkpoint = Checkpoint.from_json({"id": "c1", "kind": "manual", "counts": {"working_memory": 2},
                                       "snapshot": {"working_memory": []}, "expires_at": None})
    item = WorkingMemoryItem.from_json({"key": "k", "value": None, "version": 7,
                                        "expires_at": "2026-05-01T12:00:00Z"})

    assert checkpoint.snapshot == {"working_memory": []} and checkpoint.pruned == []
    assert (item.value, item.version, item.expires_at) == (None, 7, datetime(2026, 5, 1, 12, tzinfo=UTC))


def test_context_result_types_its_entries():
    result = ContextResult.from_json({
        "context": "<memory>…</memory>", "format": "xml", "token_budget": 100, "tokens_estimated": 40,
        "included": [{"id": "task_state", "kind": "working_state", "source": "task_state", "type": "task",
                      "score": None, "tokens": 12}],
        "left_out": [{"id": "m1", "kind": "facts", "source": "memory", "type": "fact", "score": 0.3, "tokens": 90}],
        "kinds": {"facts": {"budget": 40}},
    })

    assert [entry.id for entry in result.included] == ["task_state"]
    assert result.left_out[0].tokens == 90 and result.kinds == {"facts": {"budget": 40}}


def test_webhook_and_delivery_from_json():
    webhook = Webhook.from_json({
        "id": "w1", "store": "main", "url": "https://crm.example.com/hook", "description": "", "event_types": [],
        "is_active": False, "disabled_at": "2026-02-01T00:00:00Z", "consecutive_failures": 6,
        "disabled_reason": "Disabled after 6 failed deliveries in a row.", "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-02-01T00:00:00Z", "secret": "whsec_abc",
    })
    delivery = WebhookDelivery.from_json({
        "id": "d1", "webhook_id": "w1", "event_id": "evt_1", "event_type": "memory.created", "user_id": "alice",
        "status": "failed", "attempts": 6, "next_attempt_at": None, "response_status": 500,
        "last_error": "The receiver answered 500 Internal Server Error.", "duration_ms": 31,
        "delivered_at": None, "created_at": "2026-02-01T00:00:00Z", "payload": {"type": "memory.created"},
    })

    assert (webhook.is_active, webhook.consecutive_failures, webhook.event_types) == (False, 6, [])
    assert webhook.disabled_at == datetime(2026, 2, 1, tzinfo=UTC) and webhook.secret == "whsec_abc"
    assert "whsec_abc" not in repr(webhook)  # a logged webhook does not leak its signing secret
    assert Webhook.from_json({"id": "w1"}).secret is None  # not shown outside create and rotate_secret
    assert (delivery.status, delivery.attempts, delivery.response_status, delivery.next_attempt_at) == (
        "failed", 6, 500, None)
    assert delivery.created_at == datetime(2026, 2, 1, tzinfo=UTC) and delivery.payload == {"type": "memory.created"}


def test_page_from_json():
    page = Page.from_json({"next": "https://h/api/v1/stores?cursor=cD0y&page_size=5", "previous": None,
                           "results": [MEMORY_JSON]}, Memory.from_json)

    assert len(page) == 1 and [memory.id for memory in page] == [MEMORY_JSON["id"]]
    assert page.next_cursor == "cD0y" and page.previous_cursor is None


@pytest.mark.parametrize(("url", "cursor"), [
    (None, None), ("", None), ("http://h/x?page_size=2", None), ("http://h/x?cursor=a%2Bb", "a+b"),
])
def test_cursor_from_url(url, cursor):
    assert cursor_from_url(url) == cursor


@pytest.mark.parametrize(("value", "expected"), [
    ("2026-01-02T03:04:05Z", datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)),
    (None, None),
    ("not a time", None),
    (12, None),
])
def test_parse_datetime(value, expected):
    assert parse_datetime(value) == expected


def test_from_json_refuses_what_is_not_an_object():
    with pytest.raises(TypeError, match="Memory"):
        Memory.from_json(["not", "an", "object"])
