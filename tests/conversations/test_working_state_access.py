"""Working state and access: what a read key sees, tenants with the same session id, unknown sessions and the
session's lifecycle. Keys, scopes and other tenants' sessions, for every session endpoint: test_access.py."""

import pytest

from apps.conversations.models import ScratchpadEntry, Session, TaskState, WorkingMemoryItem
from tests.conversations.working_state import PAD, SESSION, TASK, WM, assert_error, key_url, put_key

WRITES = [
    ("put", key_url("k"), {"value": 1}),
    ("delete", key_url("k"), None),
    ("delete", WM, None),
    ("put", TASK, {"description": "t"}),
    ("patch", TASK, {"progress": 5}),
    ("delete", TASK, None),
    ("post", PAD, {"content": "c"}),
    ("delete", PAD, None),
]
READS = [key_url("k"), WM, TASK, PAD]


def _seed(world):
    client = world.client("write")
    assert put_key(client, "k", "seed").status_code == 201
    assert client.put(TASK, {"description": "seed"}, format="json").status_code == 200
    assert client.post(PAD, {"content": "seed"}, format="json").status_code == 201


def _state():
    return (
        list(WorkingMemoryItem.objects.values_list("key", "value", "version")),
        list(TaskState.objects.values_list("description", "progress")),
        list(ScratchpadEntry.objects.values_list("seq", "content")),
    )


SEEDED = ([("k", "seed", 1)], [("seed", 0.0)], [(1, "seed")])
SEEN = {key_url("k"): "seed", WM: ["k"], TASK: "seed", PAD: ["seed"]}


def _seen(client, url):
    """What a read of `url` shows of the seeded state (compare with SEEN)."""
    response = client.get(url)
    assert response.status_code == 200, response.content
    body = response.json()
    if "results" in body:
        return [item.get("key", item.get("content")) for item in body["results"]]
    return body["value"] if "value" in body else body["description"]


@pytest.mark.parametrize("url", READS)
def test_a_read_key_can_read(session, url):
    _seed(session)
    assert _seen(session.client("read"), url) == SEEN[url]


def test_tenants_with_the_same_session_id_see_only_their_own_state(session, tenant_b):
    _seed(session)
    other = tenant_b.client("write")
    spawned = other.post(f"{SESSION}/spawn", {"user_id": "alice"}, format="json")
    assert (spawned.status_code, spawned.json()["data"]["created"]) == (201, True)
    assert Session.objects.filter(external_id="s-1").count() == 2
    assert_error(other.get(key_url("k")), 404, "key_not_found")
    assert other.get(WM).json()["results"] == []
    assert_error(other.get(TASK), 404, "task_state_not_found")
    assert other.get(PAD).json()["results"] == []
    assert other.delete(WM).json() == {"deleted": 0}
    assert put_key(other, "k", "theirs").json()["value"] == "theirs"
    assert WorkingMemoryItem.objects.get(session__store=tenant_b.store).value == "theirs"
    assert session.client("read").get(key_url("k")).json()["value"] == "seed"
    assert sorted(WorkingMemoryItem.objects.values_list("session__store__tenant__slug", "value")) == [
        ("acme", "seed"), ("globex", "theirs")
    ]


@pytest.mark.parametrize("method, url, body", WRITES + [("get", url, None) for url in READS])
def test_an_unknown_session_is_404(session, method, url, body):
    url = url.replace("/sessions/s-1/", "/sessions/nope/")
    response = getattr(session.client("write"), method)(url, body, format="json")
    assert_error(response, 404, "session_not_found")
    assert not Session.objects.filter(external_id="nope").exists()


def test_a_session_created_by_messages_has_working_state(tenant_a, configure_store):
    configure_store(tenant_a.store, extraction_config={"enabled": False})
    client = tenant_a.client("write")
    url = "/api/v1/stores/main/sessions/chat-9"
    posted = client.post(f"{url}/messages", {"user_id": "alice", "messages": [{"role": "user", "content": "hi"}]},
                         format="json")
    assert posted.status_code == 202, posted.content
    assert (posted.json()["accepted"], posted.json()["session"]["session_id"]) == (1, "chat-9")
    written = client.put(f"{url}/working-memory/k", {"value": 1}, format="json")
    assert (written.status_code, written.json()["key"], written.json()["value"]) == (201, "k", 1)
    item = WorkingMemoryItem.objects.get()
    assert (item.session.external_id, item.key, item.value) == ("chat-9", "k", 1)


@pytest.mark.parametrize("method, url, body", WRITES)
def test_a_terminated_sessions_working_state_is_read_only(session, method, url, body):
    _seed(session)
    client = session.client("write")
    terminated = client.post(f"{SESSION}/terminate", {"wait": 0}, format="json")
    assert terminated.status_code == 200, terminated.content
    assert Session.objects.get().status == "terminated"
    assert_error(getattr(client, method)(url, body, format="json"), 409, "session_terminated")
    assert _state() == SEEDED
    assert Session.objects.get().scratchpad_seq == 1
    for read_url in READS:
        assert _seen(client, read_url) == SEEN[read_url]


def test_a_paused_session_can_still_be_written(session):
    client = session.client("write")
    paused = client.post(f"{SESSION}/pause", {}, format="json")
    assert paused.status_code == 200, paused.content
    assert paused.json()["data"]["session"]["status"] == "paused"
    written = put_key(client, "k", 1)
    assert (written.status_code, written.json()["value"], written.json()["version"]) == (201, 1, 1)
    assert Session.objects.get().status == "paused"
    assert list(WorkingMemoryItem.objects.values_list("key", "value")) == [("k", 1)]
