"""memoryhub as an OpenAI Agents SDK session, end to end: a real `Runner` with the SDK's scripted model (no
network), MemoryHubSession, and a live memoryhub server with a real extraction worker; then the same agent
while memoryhub is refused, hanging or losing answers (a proxy in front of the live server)."""

import asyncio
import json
import time

import pytest
from agents import Agent, RunConfig, Runner, SQLiteSession, function_tool
from agents.memory import Session
from agents.testing import ScriptedModel, assistant_message, function_call

from memoryhub_client import resilience
from memoryhub_client.errors import NotFound
from memoryhub_client.fault_proxy import FaultyProxy
from memoryhub_client.openai_agents import MAX_METADATA_BYTES, MemoryHubSession
from tests.processes import wait_for

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

STORE = "main"
OFFLINE = RunConfig(tracing_disabled=True)


@function_tool
def check_order(order_id: str) -> str:
    """Look up an order."""
    return f"Order {order_id} ships tomorrow."


def _agent(*steps) -> tuple[Agent, ScriptedModel]:
    model = ScriptedModel([[step] if not isinstance(step, list) else step for step in steps])
    return Agent(name="support", instructions="Help the customer.", model=model, tools=[check_order]), model


def _reply(text: str, n: int = 0):
    return assistant_message(text, item_id=f"msg_{n}")


def _session(hub, session_id: str, **options) -> MemoryHubSession:
    return MemoryHubSession(session_id, store=STORE, user_id="alice", agent_id="support", client=hub, **options)


def _items(hub, session_id: str) -> list:
    return [message.metadata["openai_agents"] for message in hub.sessions.iter_messages(STORE, session_id)]


def _message_count(hub, session_id: str) -> int:
    try:
        return hub.sessions.get(STORE, session_id).message_count
    except NotFound:
        return 0


@pytest.fixture
def other_hub(hub_for, tenant_a):
    """Another client: its sessions share nothing with those of `hub` in this process, so they read memoryhub."""
    return hub_for(tenant_a.keys["write"])


@pytest.fixture
def proxy(live_server):
    with FaultyProxy(live_server.base_url) as proxy:
        yield proxy


def test_two_turns_keep_the_history_and_what_the_user_said_becomes_a_memory(hub, other_hub):
    session = _session(hub, "latex")
    assert isinstance(session, Session)
    agent, model = _agent(_reply("Noted, no latex gloves.", 1), _reply("Nitrile ones, as you asked.", 2))

    first = asyncio.run(Runner.run(agent, "I'm allergic to latex", session=session, run_config=OFFLINE))
    # Another session object, of another client: all it gives the model comes from memoryhub.
    second = Runner.run_sync(agent, "Which gloves will you send?", session=_session(other_hub, "latex"),
                             run_config=OFFLINE)

    assert (first.final_output, second.final_output) == ("Noted, no latex gloves.", "Nitrile ones, as you asked.")
    # The second model call was given the first turn, then the new input.
    assert model.calls[1].input == [
        {"role": "user", "content": "I'm allergic to latex"},
        _reply("Noted, no latex gloves.", 1).model_dump(exclude_unset=True),
        {"role": "user", "content": "Which gloves will you send?"},
    ]
    messages = list(hub.sessions.iter_messages(STORE, "latex"))
    assert [(message.role, message.text) for message in messages] == [
        ("user", "I'm allergic to latex"), ("assistant", "Noted, no latex gloves."),
        ("user", "Which gloves will you send?"), ("assistant", "Nitrile ones, as you asked."),
    ]
    info = hub.sessions.get(STORE, "latex")
    assert (info.user_id, info.agent_id) == ("alice", "support")

    assert hub.sessions.flush(STORE, "latex", wait=30).complete
    memories = [memory.content for memory in hub.memories.iter(STORE, user_id="alice")]
    assert any("latex" in content.lower() for content in memories), memories


def test_a_function_tool_call_and_its_output_come_back_unchanged(hub, other_hub):
    def script():
        return _agent(function_call("check_order", {"order_id": "A-17"}, call_id="call_1"),
                      _reply("It ships tomorrow.", 1), _reply("You're welcome.", 2))

    # The same run on the SDK's own SQLiteSession: the items memoryhub must give back.
    reference = SQLiteSession("reference")
    Runner.run_sync(script()[0], "Where is order A-17?", session=reference, run_config=OFFLINE)
    expected = asyncio.run(reference.get_items())
    assert [item.get("type") for item in expected] == [None, "function_call", "function_call_output", "message"]

    agent, model = script()
    Runner.run_sync(agent, "Where is order A-17?", session=_session(hub, "tools"), run_config=OFFLINE)
    fresh = _session(other_hub, "tools")
    assert asyncio.run(fresh.get_items()) == expected
    roles = [(message.role, message.text) for message in hub.sessions.iter_messages(STORE, "tools")]
    assert roles == [("user", "Where is order A-17?"), ("assistant", ""), ("tool", "Order A-17 ships tomorrow."),
                     ("assistant", "It ships tomorrow.")]

    Runner.run_sync(agent, "Thanks", session=fresh, run_config=OFFLINE)
    assert model.calls[2].input[:4] == expected  # the tool call replayed to the model as it was made


def test_get_items_limit_pop_and_clear_behave_as_with_sqlite(hub, other_hub):
    items = [{"role": "user", "content": f"message {n}"} for n in range(5)]
    ours, reference = _session(hub, "semantics"), SQLiteSession("semantics")

    async def both(call, *args):
        return await getattr(ours, call)(*args), await getattr(reference, call)(*args)

    async def scenario():
        assert await both("pop_item") == (None, None)
        await both("add_items", items)
        for limit in (None, 0, 1, 3, 5, 9, -1):
            mine, theirs = await both("get_items", limit)
            assert mine == theirs, limit
        mine, theirs = await both("pop_item")
        assert mine == theirs == items[-1]
        assert await ours.get_items() == items[:4]
        assert await _session(other_hub, "semantics").get_items() == items[:4]  # memoryhub has the pop
        await both("clear_session")
        assert await both("get_items") == ([], [])
        await both("add_items", items[:1])
        assert await both("get_items") == ([items[0]], [items[0]])

    asyncio.run(scenario())
    assert ours.flush()
    later = _session(other_hub, "semantics", session_settings={"limit": 1})
    assert asyncio.run(later.get_items()) == [items[0]]
    # Markers are messages without text: the transcript keeps everything, extraction sees nothing new.
    texts = [message.text for message in hub.sessions.iter_messages(STORE, "semantics")]
    assert texts == [f"message {n}" for n in range(5)] + ["", ""] + ["message 0"]


def test_items_over_the_servers_limits_are_kept_shortened_not_lost(hub, other_hub, caplog):
    session = _session(hub, "large")
    long_answer = "word " * 10_000  # 50,000 characters: over the metadata and the text limits
    image = {"type": "input_image", "image_url": "data:image/png;base64," + "A" * 40_000, "detail": "auto"}
    items = [
        {"role": "assistant", "content": long_answer},
        {"role": "user", "content": [{"type": "input_text", "text": "What is on this photo?\x00"}, image]},
        {"role": "user", "content": "small"},
    ]
    asyncio.run(session.add_items(items))
    assert session.flush()
    kept = asyncio.run(_session(other_hub, "large").get_items())
    assert len(kept) == 3 and kept[2] == items[2]
    assert kept[0]["content"].startswith("word word") and kept[0]["content"].endswith("[…truncated]")
    assert kept[1]["content"] == [{"type": "input_text", "text": "What is on this photo?"},
                                  {"type": "input_text", "text": "[image omitted: too large to keep in memoryhub]"}]
    assert "kept altered" in caplog.text
    stored = [json.dumps({"openai_agents": meta}, ensure_ascii=False).encode() for meta in _items(hub, "large")]
    assert max(map(len, stored)) <= MAX_METADATA_BYTES


def test_what_a_person_must_fix_raises_at_the_first_call(hub, hub_for, tenant_a):
    hub.sessions.add_messages(STORE, "bobs", user_id="bob", messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(ValueError, match="belongs to user 'bob', not 'alice'"):
        asyncio.run(_session(hub, "bobs").get_items())
    with pytest.raises(ValueError, match="needs 'write'"):
        asyncio.run(_session(hub_for(tenant_a.keys["read"]), "readonly").add_items([{"role": "user", "content": "x"}]))
    with pytest.raises(ValueError, match="store 'nowhere' does not exist"):
        asyncio.run(MemoryHubSession("s", store="nowhere", user_id="alice", client=hub).get_items())


# --- outages ---------------------------------------------------------------------------------------------------

def test_a_turn_during_a_hang_completes_at_once_and_its_items_arrive_later(proxy, hub, tenant_a):
    session = MemoryHubSession("hanging", store=STORE, user_id="alice", base_url=proxy.url,
                               api_key=tenant_a.keys["write"])
    agent, model = _agent(_reply("Noted.", 1), _reply("Latex, you said.", 2), _reply("Bye.", 3))
    Runner.run_sync(agent, "I'm allergic to latex", session=session, run_config=OFFLINE)
    assert session.flush()
    proxy.mode = "hang"

    def timed_turn(text: str) -> tuple[str, float]:
        started = time.monotonic()
        result = Runner.run_sync(agent, text, session=session, run_config=OFFLINE)
        return result.final_output, time.monotonic() - started

    answer, elapsed = timed_turn("What am I allergic to?")
    assert answer == "Latex, you said."
    assert elapsed < 2.0, elapsed  # one read timeout (1 s), then the breaker keeps memoryhub off the path
    answer, elapsed = timed_turn("Thanks")
    assert (answer, elapsed < 0.5) == ("Bye.", True), elapsed
    # The model was given the history as this process knows it: the first turn, then the new input.
    assert [item.get("content") for item in model.calls[1].input][::2] == [
        "I'm allergic to latex", "What am I allergic to?"]
    assert session._guard.outbox.pending() >= 1
    assert len(asyncio.run(session.get_items())) == 6  # from what this process knows
    # So does a session object made afterwards (as a web app makes one per request).
    again = MemoryHubSession("hanging", store=STORE, user_id="alice", base_url=proxy.url,
                             api_key=tenant_a.keys["write"])
    assert asyncio.run(again.get_items()) == asyncio.run(session.get_items())

    proxy.mode = "forward"
    assert session.flush(timeout=30)
    texts = [message.text for message in hub.sessions.iter_messages(STORE, "hanging")]
    assert texts == ["I'm allergic to latex", "Noted.", "What am I allergic to?", "Latex, you said.", "Thanks",
                     "Bye."]


def test_with_a_spool_items_survive_a_new_outbox_and_are_stored_once(proxy, hub, tenant_a, tmp_path):
    spool = tmp_path / "oai.spool"

    def new_session() -> MemoryHubSession:
        return MemoryHubSession("spooled", store=STORE, user_id="alice", base_url=proxy.url,
                                api_key=tenant_a.keys["write"], spool=spool)

    session = new_session()
    asyncio.run(session.get_items())  # checked while memoryhub is up
    proxy.mode = "drop"  # every request reaches the server, every answer is lost
    agent, _ = _agent(_reply("One.", 1), _reply("Two.", 2))
    Runner.run_sync(agent, "first", session=session, run_config=OFFLINE)
    # The outbox's tries reach memoryhub (which stores the first write once, however often it comes); the
    # outbox, told of none, keeps it.
    wait_for(lambda: _message_count(hub, "spooled") == 1, timeout=10, what="the first write to reach memoryhub")
    proxy.mode = "refuse"
    Runner.run_sync(agent, "second", session=session, run_config=OFFLINE)
    assert [item["content"] for item in asyncio.run(session.get_items())][::2] == ["first", "second"]
    assert session._guard.outbox.pending() >= 3

    resilience.reset(timeout=0)  # as if the process ended: the spool keeps what was not delivered
    proxy.mode = "forward"
    replayed = new_session()  # a new outbox on the same spool replays it
    assert replayed.flush(timeout=30)
    texts = [message.text for message in hub.sessions.iter_messages(STORE, "spooled")]
    assert texts == ["first", "One.", "second", "Two."]
    assert [item.get("content") for item in asyncio.run(replayed.get_items())][::2] == ["first", "second"]
