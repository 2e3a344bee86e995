import threading

import pytest
from django.db import connection

from apps.conversations.models import Message, Session
from apps.extraction.models import ExtractionJob

URL = "/api/v1/stores/main/sessions/s-1/messages"


def _post(client, messages, run_id="run-1", user_id="alice", url=URL, **extra):
    return client.post(url, {"user_id": user_id, "run_id": run_id, "messages": messages, **extra}, format="json")


def test_first_post_creates_the_session_and_answers_202(quiet_store):
    response = _post(
        quiet_store.client("write"),
        [{"role": "user", "content": "Hi, I'm Alice", "seq": 0}, {"role": "assistant", "content": "Hello!", "seq": 1}],
        agent_id="support-bot",
        metadata={"channel": "web"},
    )
    assert response.status_code == 202, response.content
    body = response.json()
    assert (body["accepted"], body["duplicates"], body["extraction_job"]) == (2, 0, None)
    assert body["session"]["session_id"] == "s-1" and body["session"]["message_count"] == 2
    session = Session.objects.get(external_id="s-1")
    assert (session.user_id, session.agent_id, session.metadata) == ("alice", "support-bot", {"channel": "web"})
    messages = list(session.messages.order_by("seq"))
    assert [(m.seq, m.role, m.text) for m in messages] == [(1, "user", "Hi, I'm Alice"), (2, "assistant", "Hello!")]
    assert messages[0].content == [{"text": "Hi, I'm Alice"}]


def test_retried_batches_store_each_message_once(quiet_store):
    client = quiet_store.client("write")
    first = [{"role": "user", "content": f"message {i}", "seq": i} for i in range(3)]
    assert _post(client, first).json()["accepted"] == 3
    again = _post(client, first).json()
    assert (again["accepted"], again["duplicates"]) == (0, 3)
    overlapping = [{"role": "user", "content": f"message {i}", "seq": i} for i in range(1, 6)]
    body = _post(client, overlapping).json()
    assert (body["accepted"], body["duplicates"]) == (3, 2)
    texts = list(Message.objects.order_by("seq").values_list("text", flat=True))
    assert texts == [f"message {i}" for i in range(6)]
    # The same client seq in another run is a different message.
    other_run = _post(client, [{"role": "user", "content": "message 0", "seq": 0}], run_id="run-2").json()
    assert other_run["accepted"] == 1


def test_the_answer_gives_each_message_its_session_seq_repeats_included(quiet_store):
    client = quiet_store.client("write")
    assert _post(client, [{"role": "user", "content": "one", "seq": 0},
                          {"role": "user", "content": "two", "seq": 1}]).json()["seqs"] == [1, 2]
    # A retry of the second message, a new one, the same new one again within the batch, one without a seq.
    body = _post(client, [
        {"role": "user", "content": "two", "seq": 1},
        {"role": "user", "content": "three", "seq": 2},
        {"role": "user", "content": "three", "seq": 2},
        {"role": "assistant", "content": "Noted!"},
    ]).json()
    assert (body["accepted"], body["duplicates"], body["seqs"]) == (2, 2, [2, 3, 3, 4])
    assert list(Message.objects.order_by("seq").values_list("seq", "text")) == [
        (1, "one"), (2, "two"), (3, "three"), (4, "Noted!")]


def test_messages_without_seq_are_always_new(quiet_store):
    client = quiet_store.client("write")
    _post(client, [{"role": "user", "content": "again"}])
    _post(client, [{"role": "user", "content": "again"}])
    assert Message.objects.count() == 2


def test_content_blocks_and_binary_placeholders(quiet_store):
    blocks = [
        {"text": "Here is my receipt"},
        {"image": {"format": "png", "source": {"bytes": "iVBORw0KGgo" * 100}}},
        {"toolUse": {"toolUseId": "t1", "name": "lookup_order", "input": {"order": "A-1"}}},
        {"toolResult": {"toolUseId": "t1", "content": [{"text": "Order A-1 shipped"}], "status": "success"}},
    ]
    assert _post(quiet_store.client("write"), [{"role": "user", "content": blocks}]).status_code == 202
    message = Message.objects.get()
    assert message.text == "Here is my receipt\nOrder A-1 shipped"
    image = message.content[1]["image"]
    assert image["omitted"] is True and image["format"] == "png" and image["size"] == 825
    assert "source" not in image
    assert message.content[2]["toolUse"]["name"] == "lookup_order"


@pytest.mark.parametrize(
    "messages, fragment",
    [
        ([], "messages"),
        ([{"role": "robot", "content": "x"}], "role"),
        ([{"role": "user"}], "content"),
        ([{"role": "user", "content": []}], "content"),
        ([{"role": "user", "content": [{"text": "a", "image": {}}]}], "exactly one"),
        ([{"role": "user", "content": [{"audio": {}}]}], "unknown block"),
        ([{"role": "user", "content": [{"text": 5}]}], "text must be a string"),
        ([{"role": "user", "content": "nul \u0000"}], "NUL"),
        ([{"role": "user", "content": "x", "seq": -1}], "seq"),
        ([{"role": "user", "content": "x", "seq": "one"}], "seq"),
    ],
)
def test_bad_messages_are_400_and_store_nothing(quiet_store, messages, fragment):
    response = _post(quiet_store.client("write"), messages)
    assert response.status_code == 400, response.content
    assert fragment in str(response.json()["error"])
    assert not Session.objects.exists() and not Message.objects.exists()


def test_limits_answer_413(quiet_store, settings):
    settings.MEMORYHUB_MAX_MESSAGES_PER_BATCH = 3
    settings.MEMORYHUB_MAX_MESSAGE_CHARS = 100
    client = quiet_store.client("write")
    too_many = _post(client, [{"role": "user", "content": "x"}] * 4)
    assert too_many.status_code == 413 and too_many.json()["error"]["code"] == "batch_too_large"
    too_long = _post(client, [{"role": "user", "content": "y" * 101}])
    assert too_long.status_code == 413 and "100" in too_long.json()["error"]["message"]
    assert not Message.objects.exists()


def test_a_session_belongs_to_one_user(quiet_store):
    client = quiet_store.client("write")
    _post(client, [{"role": "user", "content": "hi"}])
    response = _post(client, [{"role": "user", "content": "hi"}], user_id="mallory")
    assert response.status_code == 409 and response.json()["error"]["code"] == "session_user_mismatch"


def test_session_read_endpoints(quiet_store):
    client = quiet_store.client("write")
    _post(client, [{"role": "user", "content": f"m{i}"} for i in range(5)])
    _post(client, [{"role": "user", "content": "x"}], url="/api/v1/stores/main/sessions/s-2/messages", user_id="bob")
    reader = quiet_store.client("read")
    sessions = reader.get("/api/v1/stores/main/sessions?user_id=alice").json()["results"]
    assert [s["session_id"] for s in sessions] == ["s-1"]
    assert reader.get("/api/v1/stores/main/sessions/s-2").json()["user_id"] == "bob"
    page = reader.get(URL + "?page_size=2").json()
    assert [m["seq"] for m in page["results"]] == [1, 2]
    assert [m["seq"] for m in reader.get(page["next"]).json()["results"]] == [3, 4]
    assert reader.get("/api/v1/stores/main/sessions/nope").status_code == 404
    deleted = client.delete("/api/v1/stores/main/sessions/s-1")
    assert deleted.json() == {"deleted": True, "session_id": "s-1", "messages": 5}
    assert not Message.objects.filter(session__external_id="s-1").exists()


def test_turn_trigger_schedules_one_job_per_n_user_turns(tenant_a, django_capture_on_commit_callbacks, configure_store):
    configure_store(tenant_a.store, extraction_config={"every_n_turns": 2})
    client = tenant_a.client("write")
    with django_capture_on_commit_callbacks(execute=False):
        first = _post(client, [{"role": "user", "content": "I live in Paris"}, {"role": "assistant", "content": "Nice"}])
        assert first.json()["extraction_job"] is None
        second = _post(client, [{"role": "user", "content": "I work at TechCorp"}])
    job = ExtractionJob.objects.get()
    assert second.json()["extraction_job"] == str(job.pk)
    assert (job.from_seq, job.to_seq, job.trigger, job.status) == (0, 3, "turns", "queued")
    session = Session.objects.get()
    assert (session.scheduled_seq, session.unscheduled_user_turns) == (3, 0)


@pytest.mark.django_db(transaction=True)
def test_concurrent_clients_posting_to_one_session(tenant_a, configure_store):
    configure_store(tenant_a.store, extraction_config={"enabled": False})
    barrier = threading.Barrier(8)
    statuses = []

    def client_run(index):
        try:
            client = tenant_a.client("write")
            barrier.wait()
            batch = [{"role": "user", "content": f"client {index} message {i}", "seq": i} for i in range(5)]
            statuses.append(_post(client, batch, run_id=f"run-{index}").status_code)
            statuses.append(_post(client, batch, run_id=f"run-{index}").status_code)  # a retry
        finally:
            connection.close()

    threads = [threading.Thread(target=client_run, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert statuses == [202] * 16
    session = Session.objects.get()
    seqs = list(session.messages.order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, 41))
    assert session.last_seq == 40 and session.message_count == 40
    assert session.messages.values("client_run_id", "client_seq").distinct().count() == 40
