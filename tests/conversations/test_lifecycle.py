"""spawn / pause / resume / terminate: transitions, their envelopes, the event log and the episode."""

import threading
from datetime import timedelta

import pytest
from django.db import connection
from rest_framework.test import APIClient

from apps.conversations.models import Checkpoint, Session, SessionEvent, WorkingMemoryItem
from apps.extraction.models import ExtractionJob
from apps.memories.models import Memory, MemoryRevision
from apps.tenancy.models import ApiKey

BASE = "/api/v1/stores/main/sessions/s-1"


def _spawn(client, **body):
    return client.post(f"{BASE}/spawn", {"user_id": "alice", **body}, format="json")


def _events(client):
    return [(event["event"], event["from_status"], event["to_status"])
            for event in client.get(f"{BASE}/events").json()["results"]]


def test_spawn_creates_an_active_session_with_initial_working_state(quiet_store):
    client = quiet_store.client("write")
    response = _spawn(
        client, agent_id="planner", metadata={"channel": "web"},
        working_memory=[{"key": "goal", "value": "book a flight"}, {"key": "otp", "value": "1234", "ttl_seconds": 60}],
        task_state={"description": "Book a flight", "total_steps": 3},
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["success"] is True and body["event"] == "spawn" and isinstance(body["duration_ms"], int)
    assert body["data"]["created"] is True
    assert (body["data"]["working_memory"], body["data"]["task_state"]) == (2, True)
    assert body["data"]["session"]["status"] == "active"
    assert body["data"]["session"]["metadata"] == {"channel": "web"}
    assert client.get(f"{BASE}/working-memory/goal").json()["value"] == "book a flight"
    assert client.get(f"{BASE}/working-memory/otp").json()["expires_at"] is not None
    assert client.get(f"{BASE}/task-state").json()["total_steps"] == 3
    assert _events(client) == [("spawn", "", "active")]
    event = client.get(f"{BASE}/events").json()["results"][0]
    key = ApiKey.objects.get(name="acme-write")
    assert (event["actor_type"], event["actor_id"], event["actor_label"]) == ("api_key", str(key.pk), f"acme-write ({key.prefix})")


def test_spawn_that_fails_validation_creates_nothing(quiet_store):
    client = quiet_store.client("write")
    response = _spawn(client, working_memory=[{"key": "_reserved", "value": 1}])
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "reserved_key"
    assert not Session.objects.exists()
    oversized = _spawn(client, working_memory=[{"key": "big", "value": "x" * 70_000}])
    assert oversized.status_code == 413
    assert not Session.objects.exists()
    assert _spawn(client, working_memory=[{"key": "a", "value": 1}, {"key": "a", "value": 2}]).status_code == 400
    no_user = client.post(f"{BASE}/spawn", {}, format="json")  # a new session needs user_id
    assert no_user.status_code == 400 and "user_id" in no_user.json()["error"]["details"]
    assert not Session.objects.exists()


def test_pause_takes_a_checkpoint_and_resume_restores_it(quiet_store):
    client = quiet_store.client("write")
    _spawn(client, working_memory=[{"key": "step", "value": 1}])
    paused = client.post(f"{BASE}/pause", {"description": "lunch"}, format="json")
    assert paused.status_code == 200, paused.content
    data = paused.json()["data"]
    assert paused.json()["event"] == "pause" and data["session"]["status"] == "paused"
    assert (data["working_memory"], data["task_state"], data["scratchpad"]) == (1, False, 0)
    checkpoint = client.get(f"{BASE}/checkpoints/{data['checkpoint_id']}").json()
    assert (checkpoint["kind"], checkpoint["description"]) == ("pause", "lunch")

    # While paused, something changes the working memory; resume puts the paused state back.
    client.put(f"{BASE}/working-memory/step", {"value": 99}, format="json")
    client.put(f"{BASE}/working-memory/noise", {"value": True}, format="json")
    resumed = client.post(f"{BASE}/resume", {}, format="json")
    assert resumed.status_code == 200, resumed.content
    assert resumed.json()["data"]["checkpoint_id"] == data["checkpoint_id"]
    assert resumed.json()["data"]["session"]["status"] == "active"
    items = {item["key"]: item["value"] for item in client.get(f"{BASE}/working-memory").json()["results"]}
    assert items == {"step": 1}
    assert _events(client) == [("spawn", "", "active"), ("pause", "active", "paused"), ("resume", "paused", "active")]


def test_resume_from_a_named_checkpoint_without_clearing(quiet_store):
    client = quiet_store.client("write")
    _spawn(client, working_memory=[{"key": "a", "value": 1}])
    early = client.post(f"{BASE}/checkpoints", {"description": "early"}, format="json").json()["id"]
    client.put(f"{BASE}/working-memory/a", {"value": 2}, format="json")
    client.put(f"{BASE}/working-memory/b", {"value": 3}, format="json")
    client.post(f"{BASE}/pause", {}, format="json")
    body = client.post(f"{BASE}/resume", {"checkpoint_id": early, "clear_current": False}, format="json").json()
    assert body["data"]["checkpoint_id"] == early
    items = {item["key"]: item["value"] for item in client.get(f"{BASE}/working-memory").json()["results"]}
    assert items == {"a": 1, "b": 3}


def test_spawn_reactivates_a_paused_session(quiet_store):
    client = quiet_store.client("write")
    _spawn(client)
    client.post(f"{BASE}/pause", {}, format="json")
    again = _spawn(client, metadata={"attempt": 2}, working_memory=[{"key": "k", "value": "v"}])
    assert again.status_code == 200, again.content
    assert again.json()["data"]["created"] is False
    assert again.json()["data"]["session"]["status"] == "active"
    assert again.json()["data"]["session"]["metadata"] == {"attempt": 2}


@pytest.mark.parametrize(
    ("setup", "action", "status_now"),
    [
        ([], "pause", "paused"),  # pause a paused session
        (["resume"], "resume", "active"),  # resume an active session
        (["resume"], "spawn", "active"),
        (["terminate"], "resume", "terminated"),  # resume a terminated session
        (["terminate"], "pause", "terminated"),
        (["terminate"], "spawn", "terminated"),
        (["terminate"], "terminate", "terminated"),
    ],
)
def test_invalid_transitions_are_409_with_the_current_status(quiet_store, setup, action, status_now):
    client = quiet_store.client("write")
    _spawn(client)
    client.post(f"{BASE}/pause", {}, format="json")
    for step in setup:
        assert client.post(f"{BASE}/{step}", {"wait": 0} if step == "terminate" else {}, format="json").status_code == 200
    events_before = SessionEvent.objects.count()
    body = {"user_id": "alice"} if action == "spawn" else {}
    response = client.post(f"{BASE}/{action}", body, format="json")
    assert response.status_code == 409, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid_transition"
    assert error["details"]["status"] == status_now
    assert status_now in error["message"]
    assert SessionEvent.objects.count() == events_before


def test_lifecycle_of_unknown_sessions_and_bad_input(quiet_store, tenant_b):
    client = quiet_store.client("write")
    for action in ("pause", "resume", "terminate"):
        response = client.post(f"/api/v1/stores/main/sessions/nope/{action}", {}, format="json")
        assert response.status_code == 404 and response.json()["error"]["code"] == "session_not_found"
    _spawn(client)
    client.post(f"{BASE}/pause", {}, format="json")
    assert client.post(f"{BASE}/resume", {"checkpoint_id": "nope"}, format="json").status_code == 400
    missing = client.post(f"{BASE}/resume", {"checkpoint_id": "00000000-0000-0000-0000-000000000000"}, format="json")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "checkpoint_not_found"
    assert Session.objects.get().status == "paused"  # nothing changed
    assert client.post(f"{BASE}/resume", {"clear_current": "sometimes"}, format="json").status_code == 400
    for body in ({"outcome": "great"}, {"wait": 61}, {"wait": "nan"}, {"lessons": "not a list"},
                 {"lessons": ["x"] * 51}, {"clear_working_memory": "yes please"}):
        response = client.post(f"{BASE}/terminate", body, format="json")
        assert response.status_code == 400, (body, response.content)
    assert Session.objects.get().status == "paused"
    assert _spawn(client, user_id="mallory").status_code == 409  # another user's session
    assert tenant_b.client("admin").post(f"{BASE}/pause", {}, format="json").status_code == 404
    assert quiet_store.client("read").post(f"{BASE}/resume", {}, format="json").status_code == 403
    assert APIClient().post(f"{BASE}/resume", {}, format="json").status_code == 401


def test_terminate_writes_an_episode_and_can_clear_working_memory(quiet_store):
    client = quiet_store.client("write")
    _spawn(client, working_memory=[{"key": "draft", "value": "..."}],
           task_state={"description": "Reset the router", "current_step": 3, "total_steps": 3,
                       "status": "completed"})
    client.post(f"{BASE}/messages", {"user_id": "alice", "messages": [
        {"role": "user", "content": "My router keeps dropping"}, {"role": "assistant", "content": "Try a reset"}]},
        format="json")
    response = client.post(f"{BASE}/terminate", {
        "lessons": ["Power-cycling fixes the XR500 drop-outs"], "key_facts": ["Alice has an XR500 router"],
        "clear_working_memory": True, "wait": 0,
    }, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    data = body["data"]
    assert body["event"] == "terminate" and data["outcome"] == "success"
    assert data["cleared"] == {"working_memory": 1, "task_state": True, "scratchpad": 0}
    assert data["session"]["status"] == "terminated" and data["session"]["ended_at"]
    assert data["session"]["episode_memory_id"] == data["episode_memory_id"]

    episode = Memory.objects.get(pk=data["episode_memory_id"])
    assert (episode.memory_type, episode.user_id, episode.session_id) == ("episode", "alice", "s-1")
    assert "Reset the router" in episode.content and "success" in episode.content
    assert "Power-cycling fixes the XR500 drop-outs" in episode.content
    assert "Alice has an XR500 router" in episode.content
    assert episode.metadata["outcome"] == "success"
    assert episode.metadata["lessons"] == ["Power-cycling fixes the XR500 drop-outs"]
    assert episode.metadata["source_messages"] == {"session_id": "s-1", "from_seq": 1, "to_seq": 2, "count": 2}
    assert MemoryRevision.objects.filter(memory=episode, action="create").count() == 1
    assert client.get(f"{BASE}/working-memory").json()["results"] == []
    assert client.get(f"{BASE}/task-state").status_code == 404
    # A terminated session accepts neither messages nor working-state writes.
    assert client.post(f"{BASE}/messages", {"user_id": "alice", "messages": [{"role": "user", "content": "hi"}]},
                       format="json").status_code == 409
    assert client.put(f"{BASE}/working-memory/x", {"value": 1}, format="json").status_code == 409
    events = client.get(f"{BASE}/events").json()["results"]
    assert events[-1]["event"] == "terminate" and events[-1]["data"]["episode_memory_id"] == str(episode.pk)


@pytest.mark.parametrize(("task_status", "outcome"), [
    ("completed", "success"), ("failed", "failure"), ("cancelled", "failure"), ("in_progress", "partial"),
])
def test_terminate_outcome_follows_the_task_state_unless_given(quiet_store, task_status, outcome):
    client = quiet_store.client("write")
    _spawn(client, task_state={"description": "t", "status": task_status})
    assert client.post(f"{BASE}/terminate", {"wait": 0}, format="json").json()["data"]["outcome"] == outcome


def test_explicit_outcome_wins(quiet_store):
    client = quiet_store.client("write")
    _spawn(client, task_state={"description": "t", "status": "completed"})
    assert client.post(f"{BASE}/terminate", {"wait": 0, "outcome": "partial"},
                       format="json").json()["data"]["outcome"] == "partial"


@pytest.mark.django_db(transaction=True)
class TestTerminateExtraction:
    """The final extraction runs (inline here) and the tail is extracted exactly once."""

    @pytest.fixture(autouse=True)
    def extraction_at_the_end_only(self, inline_extraction, tenant_a, configure_store):
        # No turn trigger: the messages wait for the end of the session.
        configure_store(tenant_a.store, extraction_config={"every_n_turns": 100})

    def _converse(self, client):
        _spawn(client, task_state={"description": "Set up the account"})
        response = client.post(f"{BASE}/messages", {"user_id": "alice", "run_id": "r", "messages": [
            {"role": "user", "content": "My name is Alice and I work as a nurse at St Mary's", "seq": 1},
            {"role": "assistant", "content": "Nice to meet you", "seq": 2},
            {"role": "user", "content": "I prefer email over phone calls", "seq": 3},
        ]}, format="json")
        assert response.json()["extraction_job"] is None

    def test_terminate_extracts_the_tail_and_names_the_facts_in_the_episode(self, tenant_a):
        client = tenant_a.client("write")
        self._converse(client)
        body = client.post(f"{BASE}/terminate", {}, format="json").json()
        extraction = body["data"]["extraction"]
        assert extraction["complete"] is True and len(extraction["jobs"]) == 1 and extraction["added"] >= 2
        job = ExtractionJob.objects.get()
        assert (job.trigger, job.from_seq, job.to_seq, job.status) == ("session_end", 0, 3, "succeeded")
        facts = Memory.objects.filter(memory_type__in=["fact", "preference"], status="active")
        assert facts.count() == extraction["added"]
        episode = Memory.objects.get(memory_type="episode")
        assert all(fact.content.rstrip(".") in episode.content for fact in facts)
        assert set(episode.metadata["key_fact_memory_ids"]) == {str(fact.pk) for fact in facts}
        assert Session.objects.get().extracted_seq == 3

    def test_facts_the_user_already_had_count_as_key_facts_of_the_session(self, tenant_a):
        client = tenant_a.client("write")
        client.post("/api/v1/stores/main/sessions/earlier/messages", {"user_id": "alice", "messages": [
            {"role": "user", "content": "My name is Alice and I work as a nurse at St Mary's"}]}, format="json")
        client.post("/api/v1/stores/main/sessions/earlier/flush?wait=5")
        known = set(Memory.objects.values_list("pk", flat=True))
        assert known
        self._converse(client)  # says the same again, and more
        episode = client.post(f"{BASE}/terminate", {}, format="json").json()["data"]["episode_memory_id"]
        episode = Memory.objects.get(pk=episode)
        assert {str(pk) for pk in known} < set(episode.metadata["key_fact_memory_ids"])
        assert Memory.objects.filter(pk__in=known, status="active").count() == len(known)

    def test_terminate_twice_gives_one_episode_and_one_extraction(self, tenant_a):
        client = tenant_a.client("write")
        self._converse(client)
        first = client.post(f"{BASE}/terminate", {}, format="json")
        second = client.post(f"{BASE}/terminate", {}, format="json")
        assert first.status_code == 200 and second.status_code == 409
        assert second.json()["error"]["details"]["episode_memory_id"] == first.json()["data"]["episode_memory_id"]
        self._assert_once()

    def test_concurrent_terminates_give_one_episode_and_one_extraction(self, tenant_a):
        self._converse(tenant_a.client("write"))
        statuses = []
        barrier = threading.Barrier(4)

        def terminate():
            try:
                barrier.wait()
                statuses.append(tenant_a.client("write").post(f"{BASE}/terminate", {}, format="json").status_code)
            finally:
                connection.close()

        threads = [threading.Thread(target=terminate) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert sorted(statuses) == [200, 409, 409, 409]
        self._assert_once()

    def _assert_once(self):
        assert Memory.objects.filter(memory_type="episode").count() == 1
        assert ExtractionJob.objects.count() == 1
        contents = list(Memory.objects.exclude(memory_type="episode").values_list("content", flat=True))
        assert len(contents) == len(set(contents)) >= 2
        assert SessionEvent.objects.filter(event="terminate").count() == 1
        revisions = MemoryRevision.objects.filter(action="create").count()
        assert revisions == Memory.objects.count()  # each memory created once, nothing re-extracted


def test_erasing_a_user_removes_their_sessions_and_working_state(quiet_store):
    client = quiet_store.client("write")
    _spawn(client, working_memory=[{"key": "card", "value": "4111..."}])
    client.post(f"{BASE}/messages", {"user_id": "alice", "messages": [{"role": "user", "content": "my card"}]},
                format="json")
    client.post(f"{BASE}/pause", {}, format="json")
    client.post("/api/v1/stores/main/sessions/bob-1/spawn", {"user_id": "bob"}, format="json")
    response = quiet_store.client("admin").delete("/api/v1/stores/main/users/alice")
    assert response.json() == {"user_id": "alice", "memories": 0, "revisions": 0, "sessions": 1, "messages": 1}
    assert list(Session.objects.values_list("external_id", flat=True)) == ["bob-1"]
    assert not WorkingMemoryItem.objects.exists() and not Checkpoint.objects.exists()
    assert not SessionEvent.objects.filter(session__user_id="alice").exists()


def test_two_sessions_with_the_same_task_get_their_own_episodes(quiet_store):
    client = quiet_store.client("write")
    episodes = []
    for session_id in ("t1", "t2"):
        url = f"/api/v1/stores/main/sessions/{session_id}"
        client.post(f"{url}/spawn", {"user_id": "alice", "task_state": {"description": "Same task"}}, format="json")
        episodes.append(client.post(f"{url}/terminate", {"wait": 0}, format="json").json()["data"]["episode_memory_id"])
    assert episodes[0] != episodes[1]
    assert sorted(Memory.objects.filter(memory_type="episode").values_list("session_id", flat=True)) == ["t1", "t2"]


def test_resume_never_restores_a_checkpoint_from_before_the_pause(quiet_store):
    import time_machine
    from django.utils import timezone

    client = quiet_store.client("write")
    _spawn(client, working_memory=[{"key": "order", "value": "draft"}])
    client.post(f"{BASE}/checkpoints", {"ttl_seconds": 0}, format="json")  # an old checkpoint that never expires
    client.put(f"{BASE}/working-memory/order", {"value": "paid"}, format="json")
    client.post(f"{BASE}/pause", {}, format="json")  # its checkpoint expires after 7 days
    with time_machine.travel(timezone.now() + timedelta(days=8), tick=False):
        body = client.post(f"{BASE}/resume", {}, format="json").json()
        assert body["data"]["checkpoint_id"] is None
        assert client.get(f"{BASE}/working-memory/order").json()["value"] == "paid"


def test_writes_to_a_session_deleted_meanwhile_are_404(quiet_store):
    from apps.conversations import services
    from apps.core.errors import NotFoundError

    _spawn(quiet_store.client("write"))
    stale = Session.objects.select_related("store").get()
    services.session_delete(session=Session.objects.get())
    with pytest.raises(NotFoundError):
        services.working_memory_put(session=stale, key="k", value=1)
    with pytest.raises(NotFoundError):
        services.session_pause(session=stale, actor=services.lifecycle.Actor.system())
    with pytest.raises(NotFoundError):
        services.session_terminate(session=stale, actor=services.lifecycle.Actor.system())
