"""Checkpoints: create, list, get, restore (atomic; the checkpoint stays), delete, expiry and the cap."""

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from apps.conversations import services
from apps.conversations.models import Checkpoint, ScratchpadEntry, SessionEvent, TaskState, WorkingMemoryItem
from apps.conversations.services import checkpoints as checkpoint_services

BASE = "/api/v1/stores/main/sessions/s-1"


@pytest.fixture
def session_with_state(tenant_a):
    client = tenant_a.client("write")
    response = client.post(f"{BASE}/spawn", {
        "user_id": "alice",
        "working_memory": [{"key": "cart", "value": {"items": 2}}, {"key": "step", "value": "checkout"}],
        "task_state": {"description": "Buy a laptop", "current_step": 2, "total_steps": 4},
    }, format="json")
    assert response.status_code == 201, response.content
    client.post(f"{BASE}/scratchpad", {"content": "User wants 16 GB RAM"}, format="json")
    return client


def _state(client) -> dict:
    items = client.get(f"{BASE}/working-memory").json()["results"]
    task = client.get(f"{BASE}/task-state")
    notes = client.get(f"{BASE}/scratchpad").json()["results"]
    return {
        "working_memory": {item["key"]: item["value"] for item in items},
        "task": task.json()["description"] if task.status_code == 200 else None,
        "scratchpad": [note["content"] for note in notes],
    }


def test_checkpoint_snapshots_working_state_and_message_high_water_mark(tenant_a, session_with_state):
    client = session_with_state
    client.post(f"{BASE}/messages", {"user_id": "alice", "messages": [{"role": "user", "content": "hi"}]},
                format="json")
    response = client.post(f"{BASE}/checkpoints", {"description": "before payment"}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["description"] == "before payment" and body["kind"] == "manual"
    assert body["counts"] == {"working_memory": 2, "task_state": True, "scratchpad": 1}
    assert (body["message_seq"], body["extracted_seq"], body["pruned"]) == (1, 0, [])
    # Default expiry: 7 days.
    expires = timezone.datetime.fromisoformat(body["expires_at"].replace("Z", "+00:00"))
    assert timedelta(days=7) - timedelta(minutes=1) < expires - timezone.now() <= timedelta(days=7)

    detail = client.get(f"{BASE}/checkpoints/{body['id']}").json()
    snapshot = detail["snapshot"]
    assert {item["key"]: item["value"] for item in snapshot["working_memory"]} == {
        "cart": {"items": 2}, "step": "checkout"}
    assert snapshot["task_state"]["description"] == "Buy a laptop"
    assert snapshot["task_state"]["progress"] == 50.0
    assert [entry["content"] for entry in snapshot["scratchpad"]] == ["User wants 16 GB RAM"]


def test_checkpoints_list_newest_first_without_snapshots(session_with_state):
    client = session_with_state
    ids = [client.post(f"{BASE}/checkpoints", {"description": f"c{i}"}, format="json").json()["id"]
           for i in range(3)]
    listed = client.get(f"{BASE}/checkpoints").json()["results"]
    assert [checkpoint["id"] for checkpoint in listed] == ids[::-1]
    assert "snapshot" not in listed[0]


def test_restore_replaces_the_working_state_and_keeps_the_checkpoint(session_with_state):
    client = session_with_state
    checkpoint_id = client.post(f"{BASE}/checkpoints", {}, format="json").json()["id"]
    saved = _state(client)
    client.put(f"{BASE}/working-memory/cart", {"value": {"items": 9}}, format="json")
    client.put(f"{BASE}/working-memory/new-key", {"value": 1}, format="json")
    client.put(f"{BASE}/task-state", {"description": "Something else"}, format="json")
    client.post(f"{BASE}/scratchpad", {"content": "a later thought"}, format="json")

    response = client.post(f"{BASE}/checkpoints/{checkpoint_id}/restore", {}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["success"] is True and body["event"] == "restore"
    assert (body["data"]["session"]["session_id"], body["data"]["session"]["status"]) == ("s-1", "active")
    assert body["data"]["restored"] == {"working_memory": 2, "task_state": True, "scratchpad": 1}
    assert body["data"]["cleared"] == {"working_memory": 3, "task_state": True, "scratchpad": 2}
    assert _state(client) == saved
    assert client.get(f"{BASE}/checkpoints/{checkpoint_id}").status_code == 200
    assert SessionEvent.objects.filter(event="restore", checkpoint_id=checkpoint_id).count() == 1


def test_restore_without_clearing_merges_the_snapshot_keys(session_with_state):
    client = session_with_state
    checkpoint_id = client.post(f"{BASE}/checkpoints", {}, format="json").json()["id"]
    client.put(f"{BASE}/working-memory/cart", {"value": {"items": 9}}, format="json")
    client.put(f"{BASE}/working-memory/extra", {"value": "kept"}, format="json")
    client.post(f"{BASE}/scratchpad", {"content": "later"}, format="json")
    response = client.post(f"{BASE}/checkpoints/{checkpoint_id}/restore", {"clear_current": False}, format="json")
    assert response.status_code == 200, response.content
    state = _state(client)
    assert state["working_memory"] == {"cart": {"items": 2}, "step": "checkout", "extra": "kept"}
    assert state["scratchpad"] == ["User wants 16 GB RAM", "later"]


def test_a_failure_mid_restore_leaves_the_old_state_intact(session_with_state, monkeypatch):
    client = session_with_state
    checkpoint_id = client.post(f"{BASE}/checkpoints", {}, format="json").json()["id"]
    client.put(f"{BASE}/working-memory/cart", {"value": {"items": 9}}, format="json")
    client.put(f"{BASE}/task-state", {"description": "Changed"}, format="json")
    before = _state(client)

    def fail(*args, **kwargs):
        raise RuntimeError("disk full")

    # The working memory has been cleared and rewritten when the task state write fails.
    monkeypatch.setattr(checkpoint_services, "_restore_task_state", fail)
    checkpoint = Checkpoint.objects.get(pk=checkpoint_id)
    with pytest.raises(RuntimeError):
        services.checkpoint_restore(checkpoint=checkpoint, actor=services.lifecycle.Actor.system("test"))
    assert _state(client) == before
    assert not SessionEvent.objects.filter(event="restore").exists()


def test_restore_that_would_overflow_working_memory_is_refused_whole(tenant_a, session_with_state, configure_store):
    client = session_with_state
    checkpoint_id = client.post(f"{BASE}/checkpoints", {}, format="json").json()["id"]
    configure_store(tenant_a.store, working_memory_config={"max_items": 3})
    client.delete(f"{BASE}/working-memory/cart")
    client.put(f"{BASE}/working-memory/a", {"value": 1}, format="json")
    client.put(f"{BASE}/working-memory/b", {"value": 2}, format="json")
    before = _state(client)
    response = client.post(f"{BASE}/checkpoints/{checkpoint_id}/restore", {"clear_current": False}, format="json")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "working_memory_full"
    assert _state(client) == before


def test_items_that_expired_since_the_checkpoint_stay_gone(session_with_state):
    client = session_with_state
    client.put(f"{BASE}/working-memory/otp", {"value": "123456", "ttl_seconds": 60}, format="json")
    checkpoint_id = client.post(f"{BASE}/checkpoints", {}, format="json").json()["id"]
    with time_machine.travel(timezone.now() + timedelta(minutes=5), tick=False):
        body = client.post(f"{BASE}/checkpoints/{checkpoint_id}/restore", {}, format="json").json()
        assert body["data"]["expired_skipped"] == 1
        assert client.get(f"{BASE}/working-memory/otp").status_code == 404
        assert client.get(f"{BASE}/working-memory/cart").status_code == 200


def test_expired_checkpoints_are_hidden_then_purged(session_with_state):
    client = session_with_state
    checkpoint_id = client.post(f"{BASE}/checkpoints", {"ttl_seconds": 3600}, format="json").json()["id"]
    forever = client.post(f"{BASE}/checkpoints", {"ttl_seconds": 0}, format="json").json()
    assert forever["expires_at"] is None
    with time_machine.travel(timezone.now() + timedelta(hours=2), tick=False):
        assert client.get(f"{BASE}/checkpoints/{checkpoint_id}").status_code == 404
        restore = client.post(f"{BASE}/checkpoints/{checkpoint_id}/restore", {}, format="json")
        assert restore.status_code == 404
        assert [c["id"] for c in client.get(f"{BASE}/checkpoints").json()["results"]] == [forever["id"]]
        assert Checkpoint.objects.filter(pk=checkpoint_id).exists()
        assert services.checkpoint_purge_expired() == 1
    assert not Checkpoint.objects.filter(pk=checkpoint_id).exists()


def test_manual_checkpoints_stop_at_the_cap_and_automatic_ones_rotate(tenant_a, session_with_state, configure_store):
    client = session_with_state
    configure_store(tenant_a.store, working_memory_config={"max_checkpoints": 2})
    first = client.post(f"{BASE}/checkpoints", {"description": "one"}, format="json").json()["id"]
    client.post(f"{BASE}/pause", {}, format="json")  # an automatic checkpoint: 2 of 2
    response = client.post(f"{BASE}/checkpoints", {"description": "three"}, format="json")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "checkpoint_limit_reached"
    assert response.json()["error"]["details"] == {"checkpoints": 2, "limit": 2}
    client.post(f"{BASE}/resume", {}, format="json")
    paused_again = client.post(f"{BASE}/pause", {}, format="json").json()
    assert len(paused_again["data"]["pruned_checkpoints"]) == 1
    remaining = {c["id"] for c in client.get(f"{BASE}/checkpoints").json()["results"]}
    assert remaining == {first, paused_again["data"]["checkpoint_id"]}


def test_delete_checkpoint(session_with_state):
    client = session_with_state
    checkpoint_id = client.post(f"{BASE}/checkpoints", {}, format="json").json()["id"]
    response = client.delete(f"{BASE}/checkpoints/{checkpoint_id}")
    assert response.status_code == 200 and response.json() == {"deleted": True, "id": checkpoint_id}
    assert client.get(f"{BASE}/checkpoints/{checkpoint_id}").status_code == 404
    assert client.delete(f"{BASE}/checkpoints/{checkpoint_id}").status_code == 404


@pytest.mark.parametrize(
    ("path", "body", "status", "code"),
    [
        ("checkpoints", {"ttl_seconds": -1}, 400, "validation_error"),
        ("checkpoints", {"ttl_seconds": "soon"}, 400, "validation_error"),
        ("checkpoints", {"ttl_seconds": 10**9}, 400, "validation_error"),
        ("checkpoints", {"description": "x" * 2001}, 400, "validation_error"),
        ("checkpoints", ["not", "an", "object"], 400, "validation_error"),
        ("checkpoints/not-a-uuid/restore", {}, 404, "not_found"),
        ("checkpoints/00000000-0000-0000-0000-000000000000/restore", {}, 404, "checkpoint_not_found"),
    ],
)
def test_bad_checkpoint_requests_are_4xx_and_write_nothing(session_with_state, path, body, status, code):
    response = session_with_state.post(f"{BASE}/{path}", body, format="json")
    assert response.status_code == status, response.content
    assert response.json()["error"]["code"] == code
    assert Checkpoint.objects.count() == 0


def test_restore_clear_current_must_be_a_boolean(session_with_state):
    checkpoint_id = session_with_state.post(f"{BASE}/checkpoints", {}, format="json").json()["id"]
    response = session_with_state.post(f"{BASE}/checkpoints/{checkpoint_id}/restore", {"clear_current": "maybe"},
                                       format="json")
    assert response.status_code == 400
    assert "clear_current" in response.json()["error"]["details"]


def test_checkpoints_of_another_tenant_are_not_found(tenant_a, tenant_b, session_with_state):
    checkpoint_id = session_with_state.post(f"{BASE}/checkpoints", {}, format="json").json()["id"]
    other = tenant_b.client("admin")
    assert other.get(f"{BASE}/checkpoints/{checkpoint_id}").status_code == 404
    assert other.post(f"{BASE}/checkpoints/{checkpoint_id}/restore", {}, format="json").status_code == 404
    assert tenant_a.client("read").post(f"{BASE}/checkpoints", {}, format="json").status_code == 403
    assert WorkingMemoryItem.objects.count() == 2 and TaskState.objects.count() == 1
    assert ScratchpadEntry.objects.count() == 1


def test_json_null_values_survive_a_checkpoint(session_with_state):
    client = session_with_state
    assert client.put(f"{BASE}/working-memory/nothing", {"value": None}, format="json").status_code == 201
    checkpoint_id = client.post(f"{BASE}/checkpoints", {}, format="json").json()["id"]
    client.delete(f"{BASE}/working-memory/nothing")
    response = client.post(f"{BASE}/checkpoints/{checkpoint_id}/restore", {}, format="json")
    assert response.status_code == 200, response.content
    item = client.get(f"{BASE}/working-memory/nothing").json()
    assert item["value"] is None and item["size_bytes"] == 4
