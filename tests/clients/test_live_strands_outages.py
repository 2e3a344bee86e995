"""A Strands agent with memoryhub as its memory stays up while memoryhub is not: built and answering with the
server refused, erroring, hanging or losing answers (a proxy in front of a live server), its messages kept
(through a process restart with the spool on) and delivered once when the server is back."""

import asyncio
import logging
import sqlite3
import subprocess
import sys
import textwrap
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import httpx
import pytest
from strands import Agent
from strands.memory import MemoryManager

from memoryhub_client import resilience
from memoryhub_client.fault_proxy import FaultyProxy
from memoryhub_client.strands import MemoryHubStore, flush_memory_on_exit, invoke_and_save
from memoryhub_client.testing import ScriptedModel, ToolCall

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

STORE = "main"


@pytest.fixture
def proxy(live_server):
    with FaultyProxy(live_server.base_url) as proxy:
        yield proxy


def _agent(store: MemoryHubStore, replies: list, **manager_options) -> tuple[Agent, ScriptedModel]:
    model = ScriptedModel(replies)
    manager = MemoryManager(stores=[store], **manager_options)
    return Agent(model=model, memory_manager=manager, callback_handler=None), model


def _texts(hub, session_id: str) -> list[str]:
    return [message.text for message in hub.sessions.iter_messages(STORE, session_id)]


@pytest.mark.parametrize("outage", ["refuse", "error", "hang", "drop"])
def test_an_agent_is_built_and_answers_during_an_outage_and_its_messages_arrive_once_after(
        outage, proxy, hub, tenant_a):
    hub.memories.add(STORE, user_id="alice", content="Alice prefers dark mode")
    proxy.mode = outage
    store = MemoryHubStore(store=STORE, user_id="alice", base_url=proxy.url, api_key=tenant_a.keys["write"])
    agent, model = _agent(store, ["One.", "Two.", "Three."])  # does not raise

    answers = [str(agent(text)).strip() for text in ("first", "second", "third")]

    assert answers == ["One.", "Two.", "Three."]
    # The model was called without memory: nothing injected while memoryhub was unreachable.
    assert not any("<memory>" in text for call in range(3) for text in model.texts_sent(call))
    assert resilience.breaker_for(store._client.base_url).is_open or outage == "drop"
    proxy.mode = "forward"
    assert store.flush(timeout=30)
    assert _texts(hub, store.session_id) == ["first", "One.", "second", "Two.", "third", "Three."]
    # Back to normal: the next turn is given what memoryhub knows.
    agent, model = _agent(MemoryHubStore(store=STORE, user_id="alice", base_url=proxy.url,
                                         api_key=tenant_a.keys["write"]), ["Dark mode."])
    agent("Which theme do I like?")
    assert any("<memory>" in text and "dark mode" in text for text in model.texts_sent(0))


def test_the_breaker_keeps_memory_calls_off_the_agents_path_until_the_server_is_back(proxy, tenant_a):
    proxy.mode = "hang"
    store = MemoryHubStore(store=STORE, user_id="alice", base_url=proxy.url, api_key=tenant_a.keys["write"])
    breaker = resilience.breaker_for(store._client.base_url)
    agent, _ = _agent(store, ["One.", "Two."])  # the first check times out: the breaker opens
    assert breaker.is_open and breaker.failures >= 1

    searched = []
    original_search = store._client.search
    store._client.search = lambda *args, **kwargs: searched.append(args) or original_search(*args, **kwargs)
    agent("first")
    agent("second")
    assert searched == []  # skipped, not tried and timed out

    proxy.mode = "forward"
    assert store.flush(timeout=30)  # the outbox's probe found the server back
    assert not breaker.is_open
    agent, _ = _agent(store, ["Three."])
    agent("third")
    assert len(searched) == 1


def test_no_message_is_lost_through_a_process_restart_with_the_spool_on(proxy, hub, tenant_a, tmp_path):
    spool = tmp_path / "agent.spool"
    script = textwrap.dedent("""
        import sys
        from strands import Agent
        from strands.memory import MemoryManager
        from memoryhub_client.strands import MemoryHubStore
        from memoryhub_client.testing import ScriptedModel

        url, key, spool, turns = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
        store = MemoryHubStore(store="main", user_id="alice", session_id="restarted", base_url=url, api_key=key,
                               spool=spool or None)
        agent = Agent(model=ScriptedModel([f"Answer {n}." for n in range(turns)]),
                      memory_manager=MemoryManager(stores=[store]), callback_handler=None)
        for n in range(turns):
            print(agent(f"Message {n}").message["content"][0]["text"])
        if turns == 0:
            print("delivered" if store.flush(timeout=30) else "not delivered")
    """)

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", script, proxy.url, tenant_a.keys["write"], *args],
                              capture_output=True, text=True, timeout=120)

    proxy.mode = "refuse"
    first = run(str(spool), "3")  # three turns, then the process exits with memoryhub still down
    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == ["Answer", "0.", "Answer", "1.", "Answer", "2."]
    assert "stay in the spool" in first.stderr
    with sqlite3.connect(spool) as spooled:
        assert spooled.execute("SELECT count(*) FROM outbox").fetchone()[0] == 3

    proxy.mode = "forward"
    second = run(str(spool), "0")  # a new process on the same spool, memoryhub back: replayed
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "delivered"
    assert _texts(hub, "restarted") == ["Message 0", "Answer 0.", "Message 1", "Answer 1.", "Message 2", "Answer 2."]

    # Without a spool the same exit loses the messages, and says so.
    proxy.mode = "refuse"
    lost = run("", "1")
    assert lost.returncode == 0 and "are lost; pass spool=" in lost.stderr


def test_async_turns_each_in_their_own_event_loop_lose_no_message(hub):
    # One agent, driven by asyncio.run(agent.invoke_async(...)) turn after turn: every loop ends right after
    # its turn, while the turn's save may still be pending.
    store = MemoryHubStore(store=STORE, user_id="alice", client=hub)
    agent, _ = _agent(store, [f"Answer {n}." for n in range(5)])
    for n in range(5):
        asyncio.run(agent.invoke_async(f"Message {n}"))
    assert store.flush(timeout=30)
    assert len(_texts(hub, store.session_id)) == 10


def test_the_async_helpers_save_each_turn_before_the_loop_ends(hub):
    store = MemoryHubStore(store=STORE, user_id="alice", client=hub)
    agent, _ = _agent(store, [f"Answer {n}." for n in range(4)])

    async def turn_in_a_block(text: str) -> None:
        async with flush_memory_on_exit(agent):
            await agent.invoke_async(text)

    asyncio.run(invoke_and_save(agent, "Message 0"))
    assert hub.sessions.get(STORE, store.session_id).message_count == 2  # no store.flush(): already there
    asyncio.run(turn_in_a_block("Message 1"))
    assert hub.sessions.get(STORE, store.session_id).message_count == 4
    asyncio.run(invoke_and_save(agent, "Message 2"))
    asyncio.run(turn_in_a_block("Message 3"))
    assert _texts(hub, store.session_id) == [
        text for n in range(4) for text in (f"Message {n}", f"Answer {n}.")
    ]


def test_a_session_of_another_user_is_refused_when_the_agent_is_built(hub):
    hub.sessions.add_messages(STORE, "shared-session", user_id="alice", messages=[{"role": "user", "content": "hi"}])
    store = MemoryHubStore(store=STORE, user_id="bob", session_id="shared-session", client=hub)
    with pytest.raises(ValueError, match="belongs to user 'alice', not 'bob'"):
        _agent(store, [])


class _NotMemoryhub(BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"<html><head><title>Welcome to nginx!</title></head></html>"
        self.send_response(404)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_a_url_that_is_not_memoryhubs_api_is_named_so_not_taken_for_a_missing_store(live_server, tenant_a):
    below_the_root = MemoryHubStore(store=STORE, user_id="alice", base_url=f"{live_server.base_url}/api",
                                    api_key=tenant_a.keys["write"])
    with pytest.raises(ValueError, match=r"/api/api/v1/ is not memoryhub's API \(it answered HTTP 404"):
        _agent(below_the_root, [])

    server = HTTPServer(("127.0.0.1", 0), _NotMemoryhub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        elsewhere = MemoryHubStore(store=STORE, user_id="alice", base_url=f"http://127.0.0.1:{server.server_port}",
                                   api_key=tenant_a.keys["write"])
        with pytest.raises(ValueError, match="is not memoryhub's API .*Welcome to nginx"):
            _agent(elsewhere, [])
    finally:
        server.shutdown()


class _CountingTransport(httpx.HTTPTransport):
    def __init__(self):
        super().__init__()
        self.message_posts = 0

    def handle_request(self, request):
        if request.method == "POST" and request.url.path.endswith("/messages"):
            self.message_posts += 1
        return super().handle_request(request)


def test_a_store_deleted_mid_run_is_reported_once_not_retried_on_every_save(hub, hub_for, tenant_a, caplog):
    hub.stores.create("scratch", embedding_provider="hash")
    counting = _CountingTransport()
    store = MemoryHubStore(store="scratch", user_id="alice",
                           client=hub_for(tenant_a.keys["write"], transport=counting, max_retries=0))
    agent, _ = _agent(store, ["One.", "Two.", "Three.", "Four."])
    agent("first")
    assert counting.message_posts == 1
    hub.stores.delete("scratch")

    with caplog.at_level(logging.ERROR, logger="memoryhub_client"):
        for text in ("second", "third", "fourth"):
            assert str(agent(text)).strip()  # the agent goes on answering
        store.flush(timeout=2)

    assert counting.message_posts == 2  # the second save learnt of the deletion; the later ones wait
    refusals = [record for record in caplog.records
                if record.name == "memoryhub_client.resilience" and "does not exist" in record.getMessage()]
    assert len(refusals) == 1
    assert store._guard.outbox.pending() == 3  # kept, for when the store is back (or the spool's next run)


def test_add_memory_during_an_outage_is_kept_and_the_model_is_not_told_it_failed(proxy, hub, tenant_a):
    proxy.mode = "hang"
    store = MemoryHubStore(store=STORE, user_id="carol", base_url=proxy.url, api_key=tenant_a.keys["write"])
    agent, model = _agent(store, [ToolCall("add_memory", {"entries": ["Carol is allergic to latex"]}), "Noted."],
                          add_tool_config=True)
    agent("Remember that I'm allergic to latex")
    tool_result = " ".join(model.texts_sent(1))
    assert '"stored": 1' in tool_result or "'stored': 1" in tool_result
    assert "error" not in tool_result.lower()

    proxy.mode = "forward"
    assert store.flush(timeout=30)
    contents = [memory.content for memory in hub.memories.iter(STORE, user_id="carol")]
    assert contents.count("Carol is allergic to latex") == 1
