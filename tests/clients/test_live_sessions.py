"""The Python client against a live memoryhub: sessions and messages, extraction by the real worker, jobs,
working memory, task state, scratchpad, checkpoints, the lifecycle and context assembly."""

import math
from datetime import UTC, datetime, timedelta

import pytest

from memoryhub_client import Conflict, LifecycleResult, NotFound, Session
from tests.clients.transports import LosesFirstResponse
from tests.processes import wait_for

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

STORE = "main"
INTRODUCTION = "My name is Alice and I work as a software engineer at TechCorp"
REPLY = "Nice to meet you, Alice!"
PREFERENCE = "I prefer dark mode"
CONVERSATION = [
    {"role": "user", "content": INTRODUCTION},
    {"role": "assistant", "content": REPLY},
    {"role": "user", "content": [{"text": PREFERENCE}]},
]


@pytest.fixture
def lossy_hub(hub_for, tenant_a):
    transport = LosesFirstResponse()
    client = hub_for(tenant_a.keys["write"], transport=transport, backoff_seconds=0)
    client.lost = transport
    return client


# --- Messages -------------------------------------------------------------------------------------


def test_a_repeated_batch_of_a_run_is_stored_once(hub):
    first = hub.sessions.add_messages(STORE, "chat-1", user_id="alice", agent_id="bot", run_id="run-1",
                                      messages=CONVERSATION)
    assert (first.accepted, first.duplicates) == (3, 0)
    assert isinstance(first.session, Session) and first.session.last_seq == 3 and first.session.agent_id == "bot"

    # The caller sends the batch again with the seqs the client gave it, then an overlapping one.
    repeated = hub.sessions.add_messages(STORE, "chat-1", user_id="alice", run_id="run-1",
                                         messages=[{**message, "seq": seq} for seq, message in enumerate(CONVERSATION)])
    overlapping = hub.sessions.add_messages(STORE, "chat-1", user_id="alice", run_id="run-1", messages=[
        {**CONVERSATION[2], "seq": 2}, {"role": "user", "content": "Thanks, that's all"},
    ])

    assert (repeated.accepted, repeated.duplicates) == (0, 3)
    assert (overlapping.accepted, overlapping.duplicates) == (1, 1)
    # The client numbers the messages of a run: the repeats answer with the seqs they were stored with.
    assert (first.seqs, repeated.seqs, overlapping.seqs) == ([1, 2, 3], [1, 2, 3], [3, 4])
    transcript = list(hub.sessions.iter_messages(STORE, "chat-1", page_size=2))
    assert [(m.seq, m.role, m.text, m.run_id, m.client_seq) for m in transcript] == [
        (1, "user", INTRODUCTION, "run-1", 0),
        (2, "assistant", REPLY, "run-1", 1),
        (3, "user", PREFERENCE, "run-1", 2),
        (4, "user", "Thanks, that's all", "run-1", 3),
    ]
    assert transcript[2].content == [{"text": PREFERENCE}]
    page = hub.sessions.messages(STORE, "chat-1", page_size=3)
    assert [message.seq for message in page.items] == [1, 2, 3] and page.next_cursor


def test_a_retry_after_a_lost_answer_stores_each_message_once(lossy_hub):
    result = lossy_hub.sessions.add_messages(STORE, "chat-2", user_id="alice", run_id="run-9", messages=CONVERSATION)

    assert lossy_hub.lost.sent == 2  # the first answer was lost and the batch sent again
    assert (result.accepted, result.duplicates) == (0, 3)  # (run_id, seq): the first attempt had stored them
    assert [message.client_seq for message in lossy_hub.sessions.iter_messages(STORE, "chat-2")] == [0, 1, 2]


def test_a_retry_after_a_lost_answer_finds_the_memory_it_added(lossy_hub):
    result = lossy_hub.memories.add(STORE, user_id="alice", content="Alice collects stamps")

    assert lossy_hub.lost.sent == 2
    assert result.duplicate is True  # the first attempt created it; the retry found it
    assert [memory.content for memory in lossy_hub.memories.iter(STORE, user_id="alice")] == ["Alice collects stamps"]


def test_a_write_whose_answer_is_lost_is_retried_and_done_once(hub, lossy_hub):
    # The client mints an Idempotency-Key for the append; the server answers the retry with the first response.
    hub.lifecycle.spawn(STORE, "chat-3", user_id="alice")

    result = lossy_hub.scratchpad.append(STORE, "chat-3", "written once")

    assert lossy_hub.lost.sent == 2
    assert result.entry.content == "written once"
    assert [entry.content for entry in hub.scratchpad.list(STORE, "chat-3")] == ["written once"]


def test_sessions_list_get_and_delete(hub):
    hub.sessions.add_messages(STORE, "alice-1", user_id="alice", messages=[{"role": "user", "content": "Hi"}])
    hub.sessions.add_messages(STORE, "alice-2", user_id="alice", agent_id="bot",
                              messages=[{"role": "user", "content": "Hello"}], metadata={"channel": "web"})
    hub.sessions.add_messages(STORE, "bob-1", user_id="bob", messages=[{"role": "user", "content": "Yo"}])

    alices = hub.sessions.list(STORE, user_id="alice")
    assert [session.session_id for session in alices.items] == ["alice-2", "alice-1"]  # newest first
    assert [session.session_id for session in hub.sessions.iter(STORE, page_size=1)] == ["bob-1", "alice-2", "alice-1"]
    assert [session.session_id for session in hub.sessions.iter(STORE, agent_id="bot")] == ["alice-2"]

    session = hub.sessions.get(STORE, "alice-2")
    assert (session.user_id, session.status, session.message_count, session.metadata) == (
        "alice", "active", 1, {"channel": "web"}
    )
    assert isinstance(session.last_activity_at, datetime)

    deleted = hub.sessions.delete(STORE, "alice-2")
    assert deleted["deleted"] is True and deleted["session_id"] == "alice-2"
    with pytest.raises(NotFound):
        hub.sessions.get(STORE, "alice-2")


# --- Extraction through the worker ----------------------------------------------------------------


def test_messages_are_extracted_by_the_worker(hub, live_server):
    ingest = hub.sessions.add_messages(STORE, "chat-1", user_id="alice", run_id="run-1", messages=CONVERSATION)
    assert ingest.extraction_job  # every user turn is due by default

    job = wait_for(lambda: (found := hub.jobs.get(ingest.extraction_job)).status == "succeeded" and found,
                   timeout=30, what="the extraction job", cluster=live_server.worker)

    assert (job.trigger, job.extractor, job.from_seq, job.to_seq, job.attempts) == ("turns", "rules", 0, 3, 1)
    assert job.added >= 2 and isinstance(job.finished_at, datetime)
    hits = hub.search(STORE, "dark mode", user_id="alice")
    assert hits[0].memory.content == "The user prefers dark mode" and hits[0].memory.source == "extraction"
    assert hub.sessions.get(STORE, "chat-1").extracted_seq == 3


def test_flush_extracts_what_is_not_due_yet_and_reports_the_changes(hub, live_server):
    assert hub.stores.update(STORE, extraction_config={"every_n_turns": 5}).extraction_settings["every_n_turns"] == 5
    ingest = hub.sessions.add_messages(STORE, "chat-1", user_id="alice", run_id="run-1", messages=CONVERSATION)
    assert ingest.extraction_job is None  # two user turns of five

    flushed = hub.sessions.flush(STORE, "chat-1", wait=20)

    assert flushed.complete is True, live_server.log()
    assert flushed.session.extracted_seq == flushed.session.last_seq == 3
    [job] = flushed.jobs
    assert (job.status, job.trigger) == ("succeeded", "flush")
    assert len(flushed.changes) == job.added >= 2
    assert {change.action for change in flushed.changes} == {"create"}
    seqs = {change.content: change.message_seqs for change in flushed.changes}
    assert any("TechCorp" in content and found == [1] for content, found in seqs.items()), seqs
    assert any("dark mode" in content and found == [3] for content, found in seqs.items()), seqs
    extracted = {memory.content for memory in hub.memories.iter(STORE, user_id="alice")}
    assert extracted == set(seqs)

    # Nothing left to extract: no new job, and the same report of what the job did.
    again = hub.sessions.flush(STORE, "chat-1", wait=5)
    assert again.complete is True and again.more_jobs is False
    assert [found.id for found in again.jobs] == [job.id] and again.changes == flushed.changes
    assert hub.sessions.flush(STORE, "chat-1", wait=5, since_seq=3).jobs == []  # nothing after the last message

    # The jobs endpoints see the same job.
    assert hub.jobs.get(job.id).status == "succeeded"
    assert [found.id for found in hub.jobs.list(store=STORE, session_id="chat-1").items] == [job.id]
    assert job.id in {found.id for found in hub.jobs.iter(status="succeeded", page_size=1)}
    assert hub.jobs.list(status="failed").items == []
    with pytest.raises(Conflict) as not_failed:
        hub.jobs.retry(job.id)
    assert not_failed.value.code == "job_not_failed"


# --- Working state --------------------------------------------------------------------------------


def test_working_memory(hub):
    hub.lifecycle.spawn(STORE, "task-7", user_id="carol")

    created = hub.working_memory.put(STORE, "task-7", "order", {"id": "A-1009", "item": "kettle"})
    replaced = hub.working_memory.put(STORE, "task-7", "order", {"id": "A-1010"}, if_version=created.version)
    assert replaced.version > created.version and replaced.value == {"id": "A-1010"}
    with pytest.raises(Conflict):
        hub.working_memory.put(STORE, "task-7", "order", {"id": "stale"}, if_version=created.version)

    otp = hub.working_memory.put(STORE, "task-7", "otp", "482913", ttl_seconds=300)
    assert timedelta(seconds=290) < otp.expires_at - datetime.now(UTC) <= timedelta(seconds=300)
    for key in ("notes/2026/ü", "..", "a b?c#d"):
        hub.working_memory.put(STORE, "task-7", key, key.upper())
        assert hub.working_memory.get(STORE, "task-7", key).value == key.upper()

    assert [item.key for item in hub.working_memory.list(STORE, "task-7", prefix="o")] == ["order", "otp"]
    assert [item.key for item in hub.working_memory.list(STORE, "task-7")] == [
        "..", "a b?c#d", "notes/2026/ü", "order", "otp"
    ]
    assert hub.sessions.get(STORE, "task-7").status == "active"  # ".." was a key, not the session

    assert hub.working_memory.delete(STORE, "task-7", "otp") == {"deleted": True, "key": "otp"}
    with pytest.raises(NotFound):
        hub.working_memory.get(STORE, "task-7", "otp")
    assert hub.working_memory.clear(STORE, "task-7") == 4
    assert hub.working_memory.list(STORE, "task-7") == []


def test_working_memory_list_follows_cursors_past_one_page(hub):
    hub.lifecycle.spawn(STORE, "many", user_id="carol", working_memory={f"k{n:03d}": n for n in range(120)})

    items = hub.working_memory.list(STORE, "many")

    assert [item.value for item in items] == list(range(120))  # the server's page is 100


def test_task_state_and_scratchpad(hub):
    hub.lifecycle.spawn(STORE, "task-8", user_id="carol")
    store = hub.stores.update(STORE, working_memory_config={"scratchpad_max_entries": 2})
    assert store.working_memory_limits["scratchpad_max_entries"] == 2

    task = hub.task_state.put(STORE, "task-8", description="Replace the kettle", total_steps=4, current_step=1,
                              metadata={"ticket": 7})
    assert (task.description, task.progress, task.status, task.metadata) == ("Replace the kettle", 25.0,
                                                                             "in_progress", {"ticket": 7})
    assert hub.task_state.patch(STORE, "task-8", current_step=2).progress == 50.0
    done = hub.task_state.patch(STORE, "task-8", status="completed")
    assert done.progress == 100.0 and done.finished_at is not None
    assert hub.task_state.get(STORE, "task-8") == done
    assert hub.task_state.delete(STORE, "task-8") == {"deleted": True}
    with pytest.raises(NotFound):
        hub.task_state.get(STORE, "task-8")

    first = hub.scratchpad.append(STORE, "task-8", "Warranty valid until May", metadata={"kind": "note"})
    assert (first.entry.seq, first.dropped, first.entries, first.limit) == (1, 0, 1, 2)
    hub.scratchpad.append(STORE, "task-8", "Offer a replacement")
    third = hub.scratchpad.append(STORE, "task-8", "Customer agreed")
    assert (third.dropped, third.entries) == (1, 2)
    entries = hub.scratchpad.list(STORE, "task-8")
    assert [(entry.seq, entry.content) for entry in entries] == [(2, "Offer a replacement"), (3, "Customer agreed")]
    assert hub.scratchpad.clear(STORE, "task-8") == 2 and hub.scratchpad.list(STORE, "task-8") == []


def test_checkpoints(hub):
    hub.lifecycle.spawn(STORE, "task-9", user_id="carol", working_memory={"step": 1},
                        task_state={"description": "Refund", "total_steps": 2})

    checkpoint = hub.checkpoints.create(STORE, "task-9", description="before the refund", ttl_seconds=0)
    assert (checkpoint.kind, checkpoint.description, checkpoint.expires_at) == ("manual", "before the refund", None)
    assert checkpoint.counts == {"working_memory": 1, "task_state": True, "scratchpad": 0}
    assert checkpoint.pruned == []

    hub.working_memory.put(STORE, "task-9", "step", 2)
    hub.working_memory.put(STORE, "task-9", "extra", True)
    assert [found.id for found in hub.checkpoints.list(STORE, "task-9")] == [checkpoint.id]
    detail = hub.checkpoints.get(STORE, "task-9", checkpoint.id)
    assert [item["key"] for item in detail.snapshot["working_memory"]] == ["step"]

    restored = hub.checkpoints.restore(STORE, "task-9", checkpoint.id)
    assert isinstance(restored, LifecycleResult) and restored.event == "restore"
    assert restored.data["checkpoint_id"] == checkpoint.id and restored.session.session_id == "task-9"
    assert [(item.key, item.value) for item in hub.working_memory.list(STORE, "task-9")] == [("step", 1)]

    hub.working_memory.put(STORE, "task-9", "extra", True)
    hub.checkpoints.restore(STORE, "task-9", checkpoint.id, clear_current=False)
    assert {item.key: item.value for item in hub.working_memory.list(STORE, "task-9")} == {"step": 1, "extra": True}

    assert hub.checkpoints.delete(STORE, "task-9", checkpoint.id) == {"deleted": True, "id": checkpoint.id}
    with pytest.raises(NotFound):
        hub.checkpoints.get(STORE, "task-9", checkpoint.id)


# --- Lifecycle ------------------------------------------------------------------------------------


def test_spawn_pause_resume_terminate(hub, live_server):
    spawned = hub.lifecycle.spawn(STORE, "task-10", user_id="carol", agent_id="support-bot",
                                  metadata={"channel": "web"}, working_memory={"order": "A-1009"},
                                  task_state={"description": "Replace Carol's broken kettle", "total_steps": 2})
    assert (spawned.success, spawned.event) == (True, "spawn")
    assert spawned.data["created"] is True and spawned.data["working_memory"] == 1 and spawned.data["task_state"]
    assert spawned.session.status == "active" and spawned.duration_ms >= 0

    paused = hub.lifecycle.pause(STORE, "task-10", description="waiting for the customer")
    assert paused.session.status == "paused" and paused.data["checkpoint_id"]
    with pytest.raises(Conflict) as twice:
        hub.lifecycle.pause(STORE, "task-10")
    assert twice.value.details["status"] == "paused" and twice.value.code == "invalid_transition"

    hub.working_memory.put(STORE, "task-10", "order", "changed while paused")
    resumed = hub.lifecycle.resume(STORE, "task-10")
    assert resumed.session.status == "active" and resumed.data["checkpoint_id"] == paused.data["checkpoint_id"]
    assert hub.working_memory.get(STORE, "task-10", "order").value == "A-1009"

    hub.sessions.add_messages(STORE, "task-10", user_id="carol", run_id="run-1", messages=[
        {"role": "user", "content": "My name is Carol and I work as a nurse at City Hospital"},
    ])
    hub.task_state.patch(STORE, "task-10", current_step=2, status="completed")

    terminated = hub.lifecycle.terminate(STORE, "task-10", lessons=["Check the warranty before offering a refund"],
                                         key_facts=["Carol's kettle is under warranty"], clear_working_memory=True,
                                         wait=20)

    assert terminated.event == "terminate" and terminated.session.status == "terminated"
    assert terminated.data["outcome"] == "success"  # from the completed task
    assert terminated.data["extraction"]["complete"] is True, live_server.log()
    episode_id = terminated.data["episode_memory_id"]
    assert terminated.session.episode_memory_id == episode_id
    episode = hub.memories.get(STORE, episode_id)
    assert (episode.memory_type, episode.user_id, episode.session_id) == ("episode", "carol", "task-10")
    assert "Lessons learned: Check the warranty before offering a refund." in episode.content
    assert episode.metadata["outcome"] == "success"
    assert "Carol's kettle is under warranty" in episode.metadata["key_facts"]
    assert any("nurse" in fact for fact in episode.metadata["key_facts"])  # extracted by the worker

    with pytest.raises(Conflict) as again:
        hub.lifecycle.terminate(STORE, "task-10")
    assert again.value.details["episode_memory_id"] == episode_id
    assert hub.working_memory.list(STORE, "task-10") == []
    with pytest.raises(Conflict) as read_only:
        hub.working_memory.put(STORE, "task-10", "late", 1)
    assert read_only.value.code == "session_terminated"

    events = hub.sessions.events(STORE, "task-10")
    assert [event.event for event in events] == ["spawn", "pause", "resume", "terminate"]
    assert events[1].checkpoint_id == paused.data["checkpoint_id"]
    assert [(event.from_status, event.to_status) for event in events][-1] == ("active", "terminated")


def test_resume_from_a_named_checkpoint(hub):
    hub.lifecycle.spawn(STORE, "task-11", user_id="carol", working_memory={"draft": 1})
    early = hub.checkpoints.create(STORE, "task-11", description="first draft")
    hub.working_memory.put(STORE, "task-11", "draft", 2)
    hub.lifecycle.pause(STORE, "task-11")

    resumed = hub.lifecycle.resume(STORE, "task-11", checkpoint_id=early.id)

    assert resumed.data["checkpoint_id"] == early.id
    assert hub.working_memory.get(STORE, "task-11", "draft").value == 1


# --- Context --------------------------------------------------------------------------------------


def test_context_assembles_memories_and_working_state_within_the_budget(hub):
    preference = hub.memories.add(STORE, user_id="carol", content="Carol prefers email over phone calls",
                                  memory_type="preference").memory
    hub.memories.add(STORE, user_id="carol", content="Carol works as a nurse at City Hospital")
    hub.lifecycle.spawn(STORE, "task-12", user_id="carol", working_memory={"kettle": {"order": "A-1009"}},
                        task_state={"description": "Replace Carol's broken kettle"})
    hub.scratchpad.append(STORE, "task-12", "Warranty valid until May")

    result = hub.context(STORE, "How should we contact Carol about her kettle?", user_id="carol",
                         session_id="task-12", token_budget=1000)

    assert result.format == "xml" and result.token_budget == 1000
    assert result.context.startswith("<memory>") and "Carol prefers email over phone calls" in result.context
    assert result.tokens_estimated == math.ceil(len(result.context) / 4) <= 1000
    included = {entry.id for entry in result.included}
    assert {preference.id, "task_state", "working_memory:kettle", "scratchpad:1"} <= included
    assert result.left_out == []
    assert set(result.kinds) == {"working_state", "facts", "episodes", "procedures"}

    tight = hub.context(STORE, "How should we contact Carol?", user_id="carol", session_id="task-12",
                        token_budget=50)
    assert tight.tokens_estimated <= 50 and tight.left_out

    facts = hub.context(STORE, "contact", user_id="carol", kinds=["facts"], format="markdown")
    assert facts.format == "markdown" and "Carol prefers email" in facts.context
    assert all(entry.kind == "facts" for entry in facts.included)

