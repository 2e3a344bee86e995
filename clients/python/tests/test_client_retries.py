"""Retries: which calls are repeated, on what, after how long; and what is raised when they run out."""

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from scripted_http import Reply

from memoryhub_client import Conflict, ConnectionFailed, RateLimited, ServerError, ValidationFailed
from memoryhub_client._transport import retry_after_seconds

MEMORY = {"id": "7d6c1c3e-6a55-4d4a-9d1c-0e6d6f1c2a10", "content": "Alice likes tea", "user_id": "alice"}
WRITE_RESULT = {"memory": MEMORY, "duplicate": False}
SESSION = {"session_id": "chat-1", "user_id": "alice", "status": "active"}
INGEST = {"accepted": 2, "duplicates": 0, "session": SESSION, "extraction_job": None}
SCRATCHPAD = {"entry": {"seq": 1, "content": "note"}, "dropped": 0, "entries": 1, "limit": 500}


# --- Backoff --------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_a_read_is_retried_on_server_errors_with_exponential_backoff(server, hub, sleeps, status):
    server.script(Reply.error(status), Reply.error(status), Reply(body={"id": "s1", "name": "main"}))

    store = hub.stores.get("main")

    assert store.name == "main"
    assert len(server.requests) == 3
    assert sleeps.delays == [0.5, 1.0]  # backoff_seconds * 2**retry, jitter pinned at its maximum


def test_retries_stop_after_max_retries_and_raise_the_last_error(server, make_hub, sleeps):
    hub = make_hub(max_retries=3)
    server.default = Reply.error(503, "unavailable", "Try later.")

    with pytest.raises(ServerError) as caught:
        hub.stores.list()

    assert len(server.requests) == 4
    assert sleeps.delays == [0.5, 1.0, 2.0]
    assert (caught.value.status_code, caught.value.code) == (503, "unavailable")


def test_full_jitter_scales_the_delay_and_the_cap_bounds_it(server, make_hub, sleeps):
    hub = make_hub(max_retries=5, backoff_seconds=1.0, max_backoff_seconds=3.0, jitter=0.25)
    server.default = Reply.error(500)

    with pytest.raises(ServerError):
        hub.stores.list()

    # ceilings 1, 2, 4→3, 8→3, 16→3, each times the jitter factor
    assert sleeps.delays == [0.25, 0.5, 0.75, 0.75, 0.75]


def test_jitter_draws_a_new_factor_for_every_retry(server, make_hub, sleeps):
    factors = iter([0.1, 0.9])
    hub = make_hub(max_retries=2)
    hub._transport._random = lambda: next(factors)
    server.default = Reply.error(502)

    with pytest.raises(ServerError):
        hub.stores.list()

    assert sleeps.delays == pytest.approx([0.05, 0.9])


def test_no_retries_when_max_retries_is_zero(server, make_hub, sleeps):
    hub = make_hub(max_retries=0)
    server.script(Reply.error(503))

    with pytest.raises(ServerError):
        hub.stores.list()

    assert len(server.requests) == 1 and sleeps.delays == []


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 413, 422])
def test_client_errors_are_never_retried(server, hub, sleeps, status):
    server.script(Reply.error(status))

    with pytest.raises(Exception) as caught:
        hub.stores.get("main")

    assert caught.value.status_code == status
    assert len(server.requests) == 1 and sleeps.delays == []


# --- 429 and Retry-After --------------------------------------------------------------------------


def test_retry_after_seconds_is_honoured(server, hub, sleeps):
    server.script(Reply.error(429, "rate_limited", headers={"Retry-After": "3"}), Reply(body={"results": []}))

    assert hub.stores.list() == []
    assert sleeps.delays == [3.0]


def test_retry_after_is_capped_by_max_backoff(server, make_hub, sleeps):
    hub = make_hub(max_backoff_seconds=5.0)
    server.script(Reply.error(429, headers={"Retry-After": "120"}), Reply(body={"results": []}))

    hub.stores.list()

    assert sleeps.delays == [5.0]


def test_retry_after_as_an_http_date_is_honoured(server, make_hub, sleeps):
    hub = make_hub(max_backoff_seconds=60.0)
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    server.script(Reply.error(429, headers={"Retry-After": when}), Reply(body={"results": []}))

    hub.stores.list()

    [delay] = sleeps.delays
    assert 25 < delay <= 30


def test_a_429_without_retry_after_backs_off_like_other_failures(server, hub, sleeps):
    server.script(Reply.error(429), Reply.error(429), Reply(body={"results": []}))

    hub.stores.list()

    assert sleeps.delays == [0.5, 1.0]


def test_rate_limited_after_the_retries_carries_retry_after(server, make_hub, sleeps):
    hub = make_hub(max_retries=1)
    server.default = Reply.error(429, "rate_limited", "Slow down.", headers={"Retry-After": "7"})

    with pytest.raises(RateLimited) as caught:
        hub.stores.list()

    assert caught.value.retry_after == 7.0
    assert (caught.value.status_code, caught.value.code, caught.value.message) == (429, "rate_limited", "Slow down.")
    assert len(server.requests) == 2 and sleeps.delays == [7.0]


@pytest.mark.parametrize(("header", "expected"), [
    ("5", 5.0),
    ("0.5", 0.5),
    ("-3", 0.0),
    ("Wed, 21 Oct 2015 07:28:30 GMT", 30.0),
    ("Wed, 21 Oct 2015 07:27:00 GMT", 0.0),  # in the past
    ("soon", None),
    ("", None),
])
def test_retry_after_is_read_as_seconds_or_an_http_date(header, expected):
    now = datetime(2015, 10, 21, 7, 28, 0, tzinfo=UTC)
    assert retry_after_seconds({"retry-after": header}, now=now) == expected


# --- Which calls are repeated ---------------------------------------------------------------------


def test_a_plain_post_is_retried_under_a_key_minted_for_the_call(server, hub, sleeps):
    server.script(Reply.error(503), Reply(201, SCRATCHPAD))

    result = hub.scratchpad.append("main", "chat-1", "note")

    assert result.entry.content == "note"
    keys = [request.headers.get("idempotency-key") for request in server.requests]
    assert len(keys) == 2 and keys[0] and keys[0] == keys[1]  # one key, the same on the retry
    hub.scratchpad.append("main", "chat-1", "note")
    assert server.requests[2].headers.get("idempotency-key") not in (None, keys[0])  # a new call, a new key


def test_without_automatic_keys_a_plain_post_is_not_retried(server, make_hub, sleeps):
    hub = make_hub(auto_idempotency_keys=False)
    server.script(Reply.error(503), Reply(201, SCRATCHPAD))

    with pytest.raises(ServerError):
        hub.scratchpad.append("main", "chat-1", "note")

    assert len(server.requests) == 1 and sleeps.delays == []
    assert "idempotency-key" not in server.requests[0].headers


def test_a_post_with_an_idempotency_key_is_retried_with_the_same_key(server, hub, sleeps):
    server.script(Reply.error(503), Reply.error(502), Reply(201, SCRATCHPAD))

    result = hub.scratchpad.append("main", "chat-1", "note", idempotency_key="note-1")

    assert result.entry.content == "note"
    assert [request.headers.get("idempotency-key") for request in server.requests] == ["note-1"] * 3
    assert sleeps.delays == [0.5, 1.0]


def test_patch_is_retried_under_a_minted_key(server, hub, sleeps):
    server.script(Reply.error(500), Reply(200, MEMORY))

    hub.memories.update("main", MEMORY["id"], content="Alice likes green tea")

    keys = [request.headers.get("idempotency-key") for request in server.requests]
    assert len(keys) == 2 and keys[0] and keys[0] == keys[1]


@pytest.mark.parametrize(("name", "call", "answer"), [
    ("memory add (deduplicated by the server)",
     lambda hub: hub.memories.add("main", user_id="alice", content="Alice likes tea"), Reply(201, WRITE_RESULT)),
    ("bulk add (deduplicated per memory)",
     lambda hub: hub.memories.bulk_add("main", [{"user_id": "alice", "content": "Alice likes tea"}]),
     Reply(201, {"created": 1, "duplicates": 0, "results": [WRITE_RESULT]})),
    ("search (a read)", lambda hub: hub.search("main", "tea"), Reply(body={"mode": "hybrid", "results": []})),
    ("context (a read)", lambda hub: hub.context("main", "tea", user_id="alice"),
     Reply(body={"context": "<memory></memory>", "included": [], "left_out": []})),
    ("flush (one open job per session)", lambda hub: hub.sessions.flush("main", "chat-1", wait=0),
     Reply(body={"complete": True, "session": SESSION, "jobs": [], "changes": []})),
    ("messages with a run_id",
     lambda hub: hub.sessions.add_messages("main", "chat-1", user_id="alice", run_id="run-1",
                                           messages=[{"role": "user", "content": "hi"}]), Reply(202, INGEST)),
    ("working-memory put", lambda hub: hub.working_memory.put("main", "chat-1", "k", 1), Reply(body={"key": "k"})),
    ("delete", lambda hub: hub.memories.delete("main", MEMORY["id"]), Reply(body={"deleted": True})),
])
def test_calls_that_are_safe_to_repeat_are_retried(server, hub, sleeps, name, call, answer):
    server.script(Reply.error(503), answer)

    call(hub)

    assert len(server.requests) == 2, name
    assert server.requests[0].body == server.requests[1].body
    assert sleeps.delays == [0.5]


def test_messages_without_a_run_id_are_retried_under_an_idempotency_key(server, hub, sleeps):
    server.script(Reply.error(503), Reply(202, INGEST))

    hub.sessions.add_messages("main", "chat-1", user_id="alice", messages=[{"role": "user", "content": "hi"}])

    assert len(server.requests) == 2
    assert "seq" not in server.requests[0].body["messages"][0]
    keys = [request.headers.get("idempotency-key") for request in server.requests]
    assert keys[0] and keys[0] == keys[1]


def test_a_retried_message_batch_repeats_the_same_seqs(server, hub):
    server.script(Reply.error(502), Reply(202, INGEST))
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]

    hub.sessions.add_messages("main", "chat-1", user_id="alice", run_id="run-1", messages=messages)

    sent = [[message["seq"] for message in request.body["messages"]] for request in server.requests]
    assert sent == [[0, 1], [0, 1]]
    assert messages == [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]  # untouched


# --- Connection errors and timeouts ---------------------------------------------------------------


def test_a_refused_connection_is_retried_then_raised(closed_port_url, make_hub, sleeps):
    hub = make_hub(base_url=closed_port_url, max_retries=2)

    with pytest.raises(ConnectionFailed) as caught:
        hub.stores.list()

    assert caught.value.attempts == 3
    assert sleeps.delays == [0.5, 1.0]
    assert "ConnectError" in str(caught.value) and caught.value.url.endswith("/api/v1/stores")


def test_a_refused_connection_is_retried_even_for_a_plain_post(closed_port_url, make_hub, sleeps):
    # Nothing reached the server, so nothing can happen twice.
    hub = make_hub(base_url=closed_port_url, max_retries=1)

    with pytest.raises(ConnectionFailed) as caught:
        hub.scratchpad.append("main", "chat-1", "note")

    assert caught.value.attempts == 2 and sleeps.delays == [0.5]


def test_a_dropped_connection_is_retried_for_a_read(server, hub, sleeps):
    server.script(Reply(drop=True), Reply(body={"results": []}))

    assert hub.stores.list() == []
    assert len(server.requests) == 2 and sleeps.delays == [0.5]


def test_a_dropped_connection_is_not_retried_for_a_post_without_a_key(server, make_hub, sleeps):
    # The server may have acted on the request before the connection broke.
    hub = make_hub(auto_idempotency_keys=False)
    server.script(Reply(drop=True), Reply(201, SCRATCHPAD))

    with pytest.raises(ConnectionFailed) as caught:
        hub.scratchpad.append("main", "chat-1", "note")

    assert caught.value.attempts == 1
    assert len(server.requests) == 1 and sleeps.delays == []


def test_a_timeout_is_retried_and_then_reported(server, make_hub, sleeps):
    hub = make_hub(timeout=0.2, max_retries=1)
    server.default = Reply(body={"results": []}, delay=2)

    with pytest.raises(ConnectionFailed, match="timed out") as caught:
        hub.stores.list()

    assert caught.value.attempts == 2 and len(server.requests) == 2


def test_a_timeout_then_an_answer_succeeds(server, make_hub, sleeps):
    hub = make_hub(timeout=0.2)
    server.script(Reply(body={"results": []}, delay=2), Reply(body={"results": [{"id": "s", "name": "main"}]}))

    assert [store.name for store in hub.stores.list()] == ["main"]
    assert sleeps.delays == [0.5]


def test_flush_waits_longer_than_the_timeout_when_asked_to(server, make_hub, sleeps):
    # The server may hold a flush for `wait` seconds: the read timeout grows by as much.
    hub = make_hub(timeout=0.2, max_retries=0)
    server.script(Reply(body={"complete": True, "session": SESSION, "jobs": [], "changes": []}, delay=0.5))

    result = hub.sessions.flush("main", "chat-1", wait=1)

    assert result.complete is True
    assert server.requests[0].param("wait") == "1"


def test_a_validation_error_is_raised_at_once_even_for_retryable_calls(server, hub, sleeps):
    server.script(Reply.error(400, "validation_error", "limit: too big", {"limit": ["too big"]}))

    with pytest.raises(ValidationFailed):
        hub.search("main", "tea", limit=1000)

    assert len(server.requests) == 1 and sleeps.delays == []


def test_put_and_delete_carry_a_minted_key_kept_across_retries(server, hub, sleeps):
    item = {"key": "k", "value": 1, "version": 1, "size_bytes": 1, "expires_at": None,
            "created_at": "2026-11-21T10:00:00Z", "updated_at": "2026-11-21T10:00:00Z"}
    server.script(Reply(drop=True), Reply(201, item), Reply.error(502), Reply(200, {"deleted": True, "key": "k"}))

    hub.working_memory.put("main", "chat-1", "k", 1, if_version=0)
    hub.working_memory.delete("main", "chat-1", "k")

    keys = [request.headers.get("idempotency-key") for request in server.requests]
    assert keys[0] and keys[0] == keys[1] and keys[2] and keys[2] == keys[3] and keys[0] != keys[2]


def test_a_call_still_running_on_the_server_is_waited_for_not_reported_as_a_conflict(server, hub, sleeps):
    in_progress = Reply.error(409, code="idempotency_in_progress")
    server.script(Reply(drop=True), in_progress, Reply(201, SCRATCHPAD))

    result = hub.scratchpad.append("main", "chat-1", "note")

    assert result.entry.content == "note" and len(server.requests) == 3


def test_other_conflicts_are_not_retried(server, hub, sleeps):
    server.script(Reply.error(409, code="version_conflict"))

    with pytest.raises(Conflict):
        hub.working_memory.put("main", "chat-1", "k", 1, if_version=3)
    assert len(server.requests) == 1


def test_calls_safe_to_repeat_carry_no_minted_key(server, hub, sleeps):
    server.script(Reply.error(503), Reply(200, {"results": []}))

    hub.search("main", "tea")

    assert len(server.requests) == 2 and all("idempotency-key" not in r.headers for r in server.requests)
