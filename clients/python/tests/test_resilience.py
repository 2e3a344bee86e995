"""The circuit breaker, the outbox and its spool, against the scripted server (no memoryhub needed)."""

import asyncio
import logging
import sqlite3

import pytest
from scripted_http import API_KEY, Reply

from memoryhub_client import ConnectionFailed, MemoryHub, NotFound, ServerError, resilience
from memoryhub_client.resilience import CircuitBreaker, Guard, describe_refusal, needs_a_person, wrong_url

MESSAGES = {"store": "main", "session_id": "s1", "user_id": "alice", "run_id": "r1",
            "messages": [{"role": "user", "content": "hello", "seq": 0}]}
ACCEPTED = Reply(202, {"accepted": 1, "duplicates": 0, "seqs": [0]})


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.setattr(resilience, "FIRST_COOLDOWN_SECONDS", 0.05)
    monkeypatch.setattr(resilience, "MAX_COOLDOWN_SECONDS", 0.2)
    monkeypatch.setattr(resilience, "REFUSED_RECHECK_SECONDS", 60.0)
    resilience.reset(timeout=0)
    yield
    resilience.reset(timeout=0)


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_breaker_opens_on_failure_backs_off_while_probes_fail_and_closes_on_success():
    clock = Clock()
    breaker = CircuitBreaker("http://memoryhub", cooldown=5, max_cooldown=12, clock=clock)
    assert breaker.allows_calls() and breaker.probe_due()
    breaker.record_failure(ConnectionFailed("refused"))
    assert not breaker.allows_calls() and not breaker.probe_due()
    assert breaker.seconds_until_probe() == 5
    clock.now += 5
    assert breaker.probe_due() and not breaker.allows_calls()  # the outbox probes, agents still skip
    breaker.record_failure(ConnectionFailed("refused"))
    assert breaker.seconds_until_probe() == 10
    clock.now += 10
    breaker.record_failure(ConnectionFailed("refused"))
    assert breaker.seconds_until_probe() == 12  # capped
    breaker.record_success()
    assert breaker.allows_calls() and breaker.failures == 0
    breaker.record_failure(ServerError(503, "unavailable", "down"))
    assert breaker.seconds_until_probe() == 5  # a new outage starts from the first cooldown


def test_refusals_are_told_apart_from_outages_and_a_foreign_server_from_a_missing_store():
    foreign = NotFound(404, "http_404", "Welcome to nginx!", body="<html>…</html>")
    no_route = NotFound(404, "not_found", "No route for /api/api/v1/key.", body={"error": {"code": "not_found"}})
    missing = NotFound(404, "store_not_found", "Store 'x' not found.", body={"error": {"code": "store_not_found"}})
    assert wrong_url(foreign) and wrong_url(no_route) and not wrong_url(missing)
    assert all(needs_a_person(error) for error in (foreign, no_route, missing))
    assert not needs_a_person(ServerError(502, "http_502", "Bad gateway", body="<html>"))
    assert "is not memoryhub's API" in describe_refusal(foreign, base_url="http://x/api/v1/", store="main")
    assert "does not exist" in describe_refusal(missing, base_url="http://x/api/v1/", store="main")


def test_the_outbox_delivers_in_order_and_a_waiting_writer_learns_it_was_delivered(server):
    server.script(ACCEPTED, ACCEPTED)
    guard = Guard(base_url=server.url, api_key=API_KEY)
    assert guard.write("add_messages", MESSAGES)
    assert guard.write("add_messages", {**MESSAGES, "session_id": "s2"})
    posts = [request.path for request in server.requests if request.method == "POST"]
    assert posts == ["/api/v1/stores/main/sessions/s1/messages", "/api/v1/stores/main/sessions/s2/messages"]
    assert server.requests[0].body["run_id"] == "r1" and server.requests[0].body["messages"][0]["seq"] == 0


def test_an_outage_opens_the_breaker_and_the_outbox_delivers_when_the_server_is_back(server):
    server.script(Reply.error(503, "unavailable"), Reply.error(503, "unavailable"), ACCEPTED)
    guard = Guard(base_url=server.url, api_key=API_KEY)
    assert not guard.write("add_messages", MESSAGES)  # not delivered yet: the agent does not wait for it
    assert guard.flush(timeout=5)
    assert [request.method for request in server.requests] == ["POST", "POST", "POST"]
    assert guard.available


def test_reads_return_the_default_during_an_outage_without_calling_the_server_again(server):
    server.script(Reply.error(503, "unavailable"))
    guard = Guard(base_url=server.url, api_key=API_KEY)
    assert guard.read(lambda: guard.client.key_info(), default="nothing", what="key") == "nothing"
    assert guard.read(lambda: guard.client.key_info(), default="nothing", what="key") == "nothing"
    assert len(server.requests) == 1  # the second read was skipped by the open breaker


def test_a_refused_store_is_logged_once_and_its_writes_wait_while_other_stores_go_on(server, caplog):
    missing = Reply.error(404, "store_not_found", "Store 'gone' not found.")
    server.script(missing, ACCEPTED)
    guard = Guard(base_url=server.url, api_key=API_KEY)
    with caplog.at_level(logging.ERROR, logger="memoryhub_client.resilience"):
        guard.write("add_messages", {**MESSAGES, "store": "gone"})
        guard.write("add_messages", {**MESSAGES, "store": "gone"})
        assert guard.write("add_messages", MESSAGES)
    assert [request.path.split("/")[4] for request in server.requests] == ["gone", "main"]
    assert len([record for record in caplog.records if "does not exist" in record.getMessage()]) == 1
    assert guard.outbox.pending() == 2


def test_a_write_refused_for_its_content_is_dropped_and_does_not_hold_up_the_next(server, caplog):
    server.script(Reply.error(409, "session_terminated", "Session s1 is terminated."), ACCEPTED)
    guard = Guard(base_url=server.url, api_key=API_KEY)
    with caplog.at_level(logging.ERROR, logger="memoryhub_client.resilience"):
        guard.write("add_messages", MESSAGES)
        assert guard.write("add_messages", {**MESSAGES, "session_id": "s2"})
    assert guard.outbox.pending() == 0
    assert any("is dropped" in record.getMessage() for record in caplog.records)


def test_the_spool_keeps_writes_across_outboxes_and_replays_them(server, tmp_path):
    spool = tmp_path / "outbox.spool"
    server.default = Reply.error(503, "unavailable")
    guard = Guard(base_url=server.url, api_key=API_KEY, spool=spool)
    guard.write("add_messages", MESSAGES)
    guard.write("add_messages", {**MESSAGES, "session_id": "s2"})
    resilience.reset(timeout=0)  # as if the process ended
    with sqlite3.connect(spool) as kept:
        assert kept.execute("SELECT count(*) FROM outbox").fetchone()[0] == 2

    server.default = ACCEPTED  # the server is back
    before = len(server.requests)
    replay = Guard(base_url=server.url, api_key=API_KEY, spool=spool)
    assert replay.flush(timeout=5)
    assert [request.path.split("/")[6] for request in server.requests[before:]] == ["s1", "s2"]
    with sqlite3.connect(spool) as kept:
        assert kept.execute("SELECT count(*) FROM outbox").fetchone()[0] == 0


def test_a_cancelled_async_writer_loses_nothing_and_ends_normally(server):
    server.script(Reply(202, {"accepted": 1, "duplicates": 0, "seqs": [0]}, delay=0.3))
    guard = Guard(base_url=server.url, api_key=API_KEY, timeout=5)

    async def cancel_while_waiting() -> asyncio.Task:
        task = asyncio.create_task(guard.write_async("add_messages", MESSAGES))
        await asyncio.sleep(0.05)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return task

    task = asyncio.run(cancel_while_waiting())
    assert not task.cancelled() and task.result() is False
    assert guard.flush(timeout=5)
    assert len([request for request in server.requests if request.method == "POST"]) == 1


def test_one_outbox_per_server_key_and_spool_however_many_adapters(server, tmp_path):
    first = Guard(base_url=server.url, api_key=API_KEY)
    second = Guard(base_url=server.url, api_key=API_KEY)
    spooled = Guard(base_url=server.url, api_key=API_KEY, spool=tmp_path / "s.spool")
    assert first.outbox is second.outbox and spooled.outbox is not first.outbox
    assert first.breaker is spooled.breaker
    with MemoryHub(server.url, API_KEY) as client:
        own = Guard(client=client)
        assert own.outbox is not first.outbox and own.outbox.client is client


def test_a_forked_child_delivers_through_an_outbox_of_its_own(server):
    import multiprocessing

    server.script(ACCEPTED, ACCEPTED)
    guard = Guard(base_url=server.url, api_key=API_KEY)
    assert guard.write("add_messages", MESSAGES)  # the parent's outbox thread is running

    def child() -> None:
        delivered = guard.write("add_messages", {**MESSAGES, "session_id": "from-child"}) and guard.flush(5)
        raise SystemExit(0 if delivered else 1)

    process = multiprocessing.get_context("fork").Process(target=child)
    process.start()
    process.join(10)
    assert process.exitcode == 0
    assert server.requests[-1].path.endswith("/sessions/from-child/messages")


def test_with_nothing_to_deliver_the_outbox_probes_so_readers_get_memory_back(server):
    import time

    server.script(Reply.error(503, "unavailable"))
    guard = Guard(base_url=server.url, api_key=API_KEY)
    assert guard.read(lambda: guard.client.key_info(), default=None, what="key") is None
    assert not guard.available
    deadline = time.monotonic() + 5
    while not guard.available and time.monotonic() < deadline:
        time.sleep(0.02)
    assert guard.available  # closed by the outbox's own probe: no read or write had to try
    assert [request.path for request in server.requests] == ["/api/v1/key", "/api/v1/key"]


def test_writes_of_an_operation_this_process_cannot_deliver_are_kept_not_dropped(server, tmp_path, caplog):
    spool = tmp_path / "outbox.spool"
    with caplog.at_level(logging.WARNING, logger="memoryhub_client.resilience"):
        guard = Guard(base_url=server.url, api_key=API_KEY, spool=spool)
        resilience.register_delivery("elsewhere_put", lambda client, payload: None)
        guard.outbox.submit("elsewhere_put", {"store": "main"})
        del resilience._deliveries["elsewhere_put"]  # as in a process that never imported that adapter
        server.script(ACCEPTED)
        assert guard.write("add_messages", MESSAGES)  # delivered past the write it cannot deliver
    assert guard.outbox.pending() == 1
    assert any("'elsewhere_put' writes this process cannot deliver" in record.getMessage()
               for record in caplog.records)


def test_a_write_whose_object_is_gone_is_dropped_without_holding_up_its_store(server):
    server.script(Reply.error(404, "memory_not_found", "Memory m1 not found in store 'main'."), ACCEPTED)
    guard = Guard(base_url=server.url, api_key=API_KEY)
    guard.write("add_memory", {"store": "main", "memory": {"user_id": "alice", "content": "x"}})
    assert guard.write("add_messages", MESSAGES)
    assert guard.outbox.pending() == 0
