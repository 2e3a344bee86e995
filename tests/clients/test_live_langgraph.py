"""memoryhub as a LangGraph store, end to end: MemoryHubLangGraphStore against a live memoryhub server (and its
worker), used directly and by a real compiled LangGraph graph with a scripted model (no network), sync and async,
with the server up, refusing connections, hanging, and back after a restart."""

import asyncio
import sqlite3
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import TypedDict

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.config import get_store
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from memoryhub_client import resilience
from memoryhub_client.fault_proxy import FaultyProxy
from memoryhub_client.langgraph import MemoryHubLangGraphStore
from tests.clients.transports import LosesFirstResponse
from tests.processes import free_port

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

STORE = "main"
ALICE = ("alice", "memories")


@pytest.fixture
def make_store(live_server, tenant_a):
    """A MemoryHubLangGraphStore on the live server (tenant acme's write key unless told); closed after the test."""
    stores: list[MemoryHubLangGraphStore] = []

    def make(**options) -> MemoryHubLangGraphStore:
        options.setdefault("base_url", live_server.base_url)
        options.setdefault("api_key", tenant_a.keys["write"])
        store = MemoryHubLangGraphStore(store=STORE, **options)
        stores.append(store)
        return store

    yield make
    for store in stores:
        store.close()


def _memories(hub, user_id: str = "alice", **filters) -> list:
    return list(hub.memories.iter(STORE, user_id=user_id, **filters))


# --- the store API ------------------------------------------------------------------------------------------

def test_put_get_update_delete_round_trip(make_store, hub):
    store = make_store()
    store.put(ALICE, "drink", {"content": "Alice drinks green tea", "since": 2019})
    item = store.get(ALICE, "drink")
    assert (item.namespace, item.key, item.value) == (ALICE, "drink", {"content": "Alice drinks green tea", "since": 2019})
    [memory] = _memories(hub)
    assert memory.content == "Alice drinks green tea" and memory.user_id == "alice" and "langgraph" in memory.tags
    assert memory.metadata["langgraph_namespace"] == "alice.memories" and memory.metadata["langgraph_key"] == "drink"
    assert item.created_at == memory.created_at and item.updated_at == memory.updated_at

    store.put(ALICE, "drink", {"content": "Alice drinks black coffee", "since": 2024})
    item = store.get(ALICE, "drink")
    assert item.value == {"content": "Alice drinks black coffee", "since": 2024} and item.updated_at > item.created_at
    [updated] = _memories(hub)
    assert updated.id == memory.id and updated.content == "Alice drinks black coffee"  # updated, not duplicated
    history = hub.memories.history(STORE, memory.id)
    assert [revision.action for revision in history] == ["create", "update"]
    assert history[1].before["content"] == "Alice drinks green tea" and history[1].reason == "LangGraph put"

    store.put(ALICE, "drink", {"content": "Alice drinks black coffee", "since": 2024})  # the same value again
    assert len(hub.memories.history(STORE, memory.id)) == 2  # nothing changed, nothing recorded

    store.delete(ALICE, "drink")
    assert store.get(ALICE, "drink") is None
    assert hub.memories.get(STORE, memory.id).status == "deleted"  # memoryhub's soft delete: restorable
    store.delete(ALICE, "drink")  # deleting what is gone is fine
    assert store.flush(timeout=10) and store.get(ALICE, "drink") is None
    store.put(ALICE, "drink", {"content": "Alice drinks green tea"})  # a key deleted and put again
    assert store.get(ALICE, "drink").value == {"content": "Alice drinks green tea"}


def test_items_with_the_same_text_stay_distinct(make_store, hub):
    """memoryhub keeps one live memory per user and content: a second key with the same text gets its own."""
    store = make_store()
    store.put(ALICE, "a", {"content": "Alice likes jazz"})
    store.put(ALICE, "b", {"content": "Alice likes jazz"})
    store.put(("alice", "music"), "a", {"content": "Alice likes jazz", "source": "playlist"})
    assert store.get(ALICE, "a").value == {"content": "Alice likes jazz"}
    assert store.get(ALICE, "b").value == {"content": "Alice likes jazz"}
    assert store.get(("alice", "music"), "a").value["source"] == "playlist"
    assert len(_memories(hub)) == 3
    store.put(ALICE, "b", {"content": "Alice likes jazz", "mood": "calm"})  # an update of the told-apart one
    assert store.get(ALICE, "b").value["mood"] == "calm" and len(_memories(hub)) == 3


def test_ttl_sets_expires_at_and_a_read_extends_it(make_store, hub):
    store = make_store()
    before = datetime.now(UTC)
    store.put(ALICE, "note", {"content": "Alice is in Lisbon this week"}, ttl=30)
    [memory] = _memories(hub)
    assert before + timedelta(minutes=29) < memory.expires_at < datetime.now(UTC) + timedelta(minutes=31)
    assert memory.metadata["langgraph_ttl"] == 30

    # More than half the ttl gone: a read queues a refresh (a write, so not one per read).
    hub.memories.update(STORE, memory.id, expires_at=(datetime.now(UTC) + timedelta(minutes=5)).isoformat())
    assert store.get(ALICE, "note") is not None
    assert store.flush(timeout=10)
    assert hub.memories.get(STORE, memory.id).expires_at > datetime.now(UTC) + timedelta(minutes=29)
    revisions = len(hub.memories.history(STORE, memory.id))
    store.get(ALICE, "note", refresh_ttl=True)  # fresh again: no write
    assert store.flush(timeout=10) and len(hub.memories.history(STORE, memory.id)) == revisions

    store.put(ALICE, "note", {"content": "Alice is in Lisbon this week"})  # no ttl: never expires
    assert hub.memories.get(STORE, memory.id).expires_at is None

    hub.memories.update(STORE, memory.id, expires_at=(datetime.now(UTC) - timedelta(seconds=1)).isoformat())
    assert store.get(ALICE, "note") is None and store.search(ALICE) == []  # expired: gone
    store.put(ALICE, "note", {"content": "Alice is back home"}, ttl=60)  # the expired memory comes back
    assert store.get(ALICE, "note").value == {"content": "Alice is back home"}
    assert [m.id for m in _memories(hub)] == [memory.id]


def _alice_and_bob(store: MemoryHubLangGraphStore) -> None:
    store.put(ALICE, "tea", {"content": "Alice drinks green tea every morning", "kind": "habit", "weight": 3})
    store.put(ALICE, "cat", {"content": "Alice has a cat called Miso", "kind": "fact", "weight": 5})
    store.put(ALICE, "job", {"content": "Alice works night shifts as a nurse", "kind": "fact", "weight": 1})
    store.put(ALICE, "tea-shop", {"content": "Alice buys her tea at a shop on Rua Augusta", "kind": "habit",
                                  "weight": 2})
    store.put(("alice", "work", "projects"), "ward", {"content": "The ward's green tea supply is low", "kind": "task"})
    store.put(("alice", "work", "notes"), "shift", {"content": "Night shift starts at 22:00", "kind": "note"})
    store.put(("bob", "memories"), "tea", {"content": "Bob drinks green tea with honey", "kind": "habit"})


def test_search_with_a_query_ranks_by_hybrid_search_with_scores(make_store):
    store = make_store()
    _alice_and_bob(store)
    results = store.search(ALICE, query="which green tea does she drink in the morning?")
    assert [item.key for item in results][0] == "tea"
    assert {item.key for item in results} <= {"tea", "cat", "job", "tea-shop"}  # the namespace, only alice's
    scores = [item.score for item in results]
    assert all(isinstance(score, float) for score in scores) and scores == sorted(scores, reverse=True)
    assert results[0].namespace == ALICE and results[0].value["kind"] == "habit"

    everywhere = store.search(("alice",), query="green tea")
    assert {"tea", "ward"} <= {item.key for item in everywhere} and all(i.namespace[0] == "alice" for i in everywhere)
    work = store.search(("alice", "work"), query="green tea")
    assert [item.key for item in work] == ["ward", "shift"]  # hybrid: every memory in scope, the best first
    assert store.search(("carol",), query="green tea") == []
    assert [item.key for item in store.search(ALICE, query="green tea", limit=1, offset=1)] == \
        [item.key for item in store.search(ALICE, query="green tea", limit=2)][1:]


def test_search_with_a_filter(make_store):
    store = make_store()
    _alice_and_bob(store)
    habits = store.search(ALICE, query="tea", filter={"kind": "habit"})
    assert {item.key for item in habits} == {"tea", "tea-shop"}
    assert {item.key for item in store.search(ALICE, filter={"kind": "habit"})} == {"tea", "tea-shop"}
    assert {item.key for item in store.search(ALICE, filter={"weight": {"$gte": 3}})} == {"tea", "cat"}
    assert {item.key for item in store.search(ALICE, query="Alice", filter={"kind": {"$ne": "habit"},
                                                                          "weight": {"$lt": 5}})} == {"job"}
    listed = store.search(ALICE, limit=10)
    assert len(listed) == 4 and all(item.score is None for item in listed)
    assert [item.key for item in store.search(ALICE, limit=2, offset=1)] == [item.key for item in listed[1:3]]
    assert store.search(("alice",), filter={"kind": "task"})[0].key == "ward"


def test_list_namespaces(make_store):
    store = make_store()
    _alice_and_bob(store)
    assert store.list_namespaces(prefix=("alice",)) == [ALICE, ("alice", "work", "notes"), ("alice", "work", "projects")]
    assert store.list_namespaces(prefix=("alice",), max_depth=2) == [ALICE, ("alice", "work")]
    assert store.list_namespaces(suffix=("memories",)) == [ALICE, ("bob", "memories")]
    assert store.list_namespaces(prefix=("*", "work")) == [("alice", "work", "notes"), ("alice", "work", "projects")]
    assert store.list_namespaces(max_depth=1) == [("alice",), ("bob",)]
    assert store.list_namespaces(limit=2, offset=1) == [("alice", "work", "notes"), ("alice", "work", "projects")]


def test_users_are_isolated(make_store, hub):
    store = make_store()
    _alice_and_bob(store)
    assert store.get(("bob", "memories"), "cat") is None
    assert {item.key for item in store.search(("bob",), query="green tea cat nurse")} == {"tea"}
    assert {item.namespace[0] for item in store.search(("bob",))} == {"bob"}
    bob = _memories(hub, user_id="bob")
    assert [memory.content for memory in bob] == ["Bob drinks green tea with honey"]
    # memoryhub's own search for bob sees only bob's memories too
    assert {hit.memory.user_id for hit in hub.search(STORE, "green tea", user_id="bob")} == {"bob"}


def test_a_custom_namespace_layout(make_store, hub):
    store = make_store(user_from_namespace=lambda ns: ns[1] if len(ns) > 1 else None)
    store.put(("memories", "carol"), "k", {"text": "Carol collects stamps"})
    assert [memory.content for memory in _memories(hub, user_id="carol")] == ["Carol collects stamps"]
    assert [item.key for item in store.search(("memories",), query="stamps")] == ["k"]
    with pytest.raises(ValueError, match="does not name a memoryhub user"):
        store.put(("memories",), "k", {"text": "whose?"})


def test_refusals_a_person_must_fix_raise(make_store, tenant_a, live_server):
    with pytest.raises(ValueError, match="refused the API key"):
        make_store(api_key="mh_not-a-key").get(ALICE, "x")
    read_only = make_store(api_key=tenant_a.keys["read"])
    assert read_only.search(ALICE) == []
    with pytest.raises(ValueError, match="'write' scope"):
        read_only.put(ALICE, "x", {"content": "nope"})
    with pytest.raises(ValueError, match="does not exist"):
        MemoryHubLangGraphStore(store="nope", base_url=live_server.base_url, api_key=tenant_a.keys["write"]).get(
            ALICE, "x")
    with pytest.raises(ValueError, match="metadata"):
        make_store().put(ALICE, "big", {"content": "x" * 20_000})


# --- a real graph -------------------------------------------------------------------------------------------

class State(TypedDict, total=False):
    user_id: str
    message: str
    recalled: list[str]
    prompt: str
    reply: str


def _remember(fact: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": "remember", "args": {"fact": fact}, "id": uuid.uuid4().hex}])


def build_graph(store: MemoryHubLangGraphStore, replies: list[AIMessage], *, asynchronous: bool = False):
    """recall (store.search via the runtime) → respond (the scripted model) → act (remember: store.put via
    get_store())."""
    model = GenericFakeChatModel(messages=iter(replies))

    def prompt_for(state: State, recalled: list[str]) -> list:
        facts = "\n".join(f"- {fact}" for fact in recalled) or "(nothing yet)"
        return [SystemMessage(f"What you know about the user:\n{facts}"), HumanMessage(state["message"])]

    def act(state: State, reply: AIMessage) -> None:
        for call in reply.tool_calls:
            if call["name"] == "remember":
                get_store().put((state["user_id"], "memories"), uuid.uuid4().hex, {"content": call["args"]["fact"]})

    if asynchronous:
        async def recall(state: State, runtime: Runtime) -> dict:
            items = await runtime.store.asearch((state["user_id"], "memories"), query=state["message"], limit=3)
            return {"recalled": [item.value["content"] for item in items]}

        async def respond(state: State) -> dict:
            messages = prompt_for(state, state["recalled"])
            reply = await model.ainvoke(messages)
            for call in reply.tool_calls:
                if call["name"] == "remember":
                    await get_store().aput((state["user_id"], "memories"), uuid.uuid4().hex,
                                           {"content": call["args"]["fact"]})
            return {"prompt": messages[0].content, "reply": reply.content}
    else:
        def recall(state: State, runtime: Runtime) -> dict:
            items = runtime.store.search((state["user_id"], "memories"), query=state["message"], limit=3)
            return {"recalled": [item.value["content"] for item in items]}

        def respond(state: State) -> dict:
            messages = prompt_for(state, state["recalled"])
            reply = model.invoke(messages)
            act(state, reply)
            return {"prompt": messages[0].content, "reply": reply.content}

    builder = StateGraph(State)
    builder.add_node("recall", recall)
    builder.add_node("respond", respond)
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "respond")
    builder.add_edge("respond", END)
    return builder.compile(store=store)


SCRIPT = [_remember("The user drinks green tea every morning"), AIMessage(content="You drink green tea.")]


def test_a_graph_remembers_and_recalls(make_store, hub):
    graph = build_graph(make_store(), list(SCRIPT))
    first = graph.invoke({"user_id": "alice", "message": "I drink green tea every morning"})
    assert first["recalled"] == [] and "(nothing yet)" in first["prompt"]
    assert [memory.content for memory in _memories(hub)] == ["The user drinks green tea every morning"]

    later = build_graph(make_store(), list(SCRIPT[1:]))  # a new store and graph: as a new process would
    second = later.invoke({"user_id": "alice", "message": "What do I drink in the morning?"})
    assert second["recalled"] == ["The user drinks green tea every morning"]
    assert "green tea every morning" in second["prompt"] and second["reply"] == "You drink green tea."
    assert build_graph(make_store(), [AIMessage(content="Hi Bob.")]).invoke(
        {"user_id": "bob", "message": "What do I drink in the morning?"})["recalled"] == []


def test_an_async_graph_remembers_and_recalls(make_store, hub):
    async def scenario():
        graph = build_graph(make_store(), list(SCRIPT), asynchronous=True)
        first = await graph.ainvoke({"user_id": "alice", "message": "I drink green tea every morning"})
        assert first["recalled"] == []
        later = build_graph(make_store(), list(SCRIPT[1:]), asynchronous=True)
        return await later.ainvoke({"user_id": "alice", "message": "What do I drink in the morning?"})

    second = asyncio.run(scenario())
    assert second["recalled"] == ["The user drinks green tea every morning"]
    assert [memory.content for memory in _memories(hub)] == ["The user drinks green tea every morning"]


# --- outages ------------------------------------------------------------------------------------------------

def _timed(call):
    started = time.monotonic()
    result = call()
    return result, time.monotonic() - started


def _assert_reads_fail_open(store: MemoryHubLangGraphStore) -> None:
    for _ in range(2):  # the first pays for the outage, the next is skipped by the breaker (or pays again)
        for read, empty in ((lambda: store.get(ALICE, "tea"), None), (lambda: store.search(ALICE, query="tea"), []),
                            (lambda: store.search(ALICE), []), (lambda: store.list_namespaces(), [])):
            result, seconds = _timed(read)
            assert result == empty and seconds < 2, (result, seconds)


def test_a_refused_server_leaves_the_graph_running(tenant_a):
    store = MemoryHubLangGraphStore(store=STORE, base_url=f"http://127.0.0.1:{free_port()}",
                                    api_key=tenant_a.keys["write"])
    _assert_reads_fail_open(store)
    result, seconds = _timed(lambda: build_graph(store, list(SCRIPT)).invoke(
        {"user_id": "alice", "message": "I drink green tea every morning"}))
    assert result["recalled"] == [] and result["reply"] == "" and seconds < 4
    assert not store.flush(timeout=0.2)  # the remembered fact waits in the outbox
    store.close()


def test_a_hanging_server_leaves_the_graph_running_and_the_put_is_delivered_later(live_server, tenant_a, hub):
    with FaultyProxy(live_server.base_url) as proxy:
        store = MemoryHubLangGraphStore(store=STORE, base_url=proxy.url, api_key=tenant_a.keys["write"])
        proxy.mode = "hang"
        _assert_reads_fail_open(store)

        async def run():
            graph = build_graph(store, list(SCRIPT), asynchronous=True)
            return await graph.ainvoke({"user_id": "alice", "message": "I drink green tea every morning"})

        result, seconds = _timed(lambda: asyncio.run(run()))
        assert result["recalled"] == [] and seconds < 4
        assert store.get(ALICE, "anything") is None  # documented: a queued put is not visible yet

        proxy.mode = "forward"
        assert store.flush(timeout=30)
        assert [memory.content for memory in _memories(hub)] == ["The user drinks green tea every morning"]
        store.close()


@pytest.mark.parametrize("mode", ["error", "drop"])
def test_a_failing_server_leaves_reads_empty(live_server, tenant_a, mode):
    with FaultyProxy(live_server.base_url) as proxy:
        store = MemoryHubLangGraphStore(store=STORE, base_url=proxy.url, api_key=tenant_a.keys["write"])
        proxy.mode = mode  # a load balancer's HTML 503; answers lost on the way back
        _assert_reads_fail_open(store)
        store.close()


def test_a_put_whose_answer_was_lost_is_stored_once(hub_for, tenant_a, hub):
    # No client retries: the delivery fails after the server acted; the outbox delivers the put again, which
    # finds the memory by namespace and key and leaves it as it is.
    def writes(request):
        return request.method in ("POST", "PATCH") and "/memories" in request.url.path

    lossy = LosesFirstResponse(matching=writes)
    store = MemoryHubLangGraphStore(store=STORE, client=hub_for(tenant_a.keys["write"], transport=lossy,
                                                                 max_retries=0, timeout=5))
    store.put(ALICE, "tea", {"content": "Alice drinks green tea"})
    store.put(ALICE, "tea", {"content": "Alice drinks oolong tea"})
    assert store.flush(timeout=30)
    assert lossy.sent == 2  # the add (delivered again, it found the memory as it should be), the update
    [memory] = _memories(hub)
    assert memory.content == "Alice drinks oolong tea"
    assert [revision.action for revision in hub.memories.history(STORE, memory.id)] == ["create", "update"]


def test_a_put_spooled_during_an_outage_is_delivered_after_a_restart(live_server, tenant_a, hub, tmp_path):
    spool = tmp_path / "langgraph.spool"
    with FaultyProxy(live_server.base_url) as proxy:
        store = MemoryHubLangGraphStore(store=STORE, base_url=proxy.url, api_key=tenant_a.keys["write"], spool=spool)
        assert store.search(ALICE) == []  # checked while up
        proxy.mode = "refuse"
        store.put(ALICE, "tea", {"content": "Alice drinks green tea"})
        store.put(ALICE, "cat", {"content": "Alice has a cat"})
        store.delete(ALICE, "cat")
        assert store.get(ALICE, "tea") is None  # documented: queued, not yet visible

        resilience.reset(timeout=0)  # the process ends; the spool keeps what was not delivered
        with sqlite3.connect(spool) as db:
            assert db.execute("SELECT count(*) FROM outbox").fetchone()[0] == 3

        proxy.mode = "forward"
        later = MemoryHubLangGraphStore(store=STORE, base_url=proxy.url, api_key=tenant_a.keys["write"], spool=spool)
        assert later.flush(timeout=30)
        assert later.get(ALICE, "tea").value == {"content": "Alice drinks green tea"}
        assert later.get(ALICE, "cat") is None
        assert [memory.content for memory in _memories(hub)] == ["Alice drinks green tea"]
        later.close()


def test_reads_come_back_after_an_outage_without_any_write(live_server, tenant_a, make_store):
    make_store().put(ALICE, "tea", {"content": "Alice drinks green tea"})
    with FaultyProxy(live_server.base_url) as proxy:
        store = MemoryHubLangGraphStore(store=STORE, base_url=proxy.url, api_key=tenant_a.keys["write"])
        assert store.get(ALICE, "tea") is not None
        proxy.mode = "refuse"
        assert store.get(ALICE, "tea") is None
        proxy.mode = "forward"
        deadline = time.monotonic() + 10
        while store.get(ALICE, "tea") is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert store.get(ALICE, "tea") is not None
        store.close()
