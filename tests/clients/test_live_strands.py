"""memoryhub as a Strands Agents memory store, end to end: a real `strands` Agent with a scripted model
(no network), MemoryHubStore, and a live memoryhub server with a real extraction worker."""

import pytest
from strands import Agent
from strands.memory import MemoryManager

from memoryhub_client import AuthenticationFailed
from memoryhub_client.strands import MemoryHubStore
from memoryhub_client.testing import ScriptedModel, ToolCall
from tests.clients.transports import LosesFirstResponse

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

STORE = "main"


def _agent(store: MemoryHubStore, replies: list) -> tuple[Agent, ScriptedModel]:
    model = ScriptedModel(replies)
    agent = Agent(model=model, memory_manager=MemoryManager(stores=[store]), callback_handler=None)
    return agent, model


def _first_conversation(hub) -> MemoryHubStore:
    store = MemoryHubStore(store=STORE, user_id="alice", agent_id="assistant", client=hub)
    agent, _ = _agent(store, ["Nice to meet you, Alice!", "Dark mode it is.", "You're welcome."])
    # Three synchronous calls: Strands runs each in a new event loop; all must reach the server.
    agent("My name is Alice")
    agent("I prefer dark mode")
    agent("Thanks!")
    return store


def test_a_conversation_becomes_memories_that_a_new_agent_is_given(hub):
    store = _first_conversation(hub)

    session = hub.sessions.get(STORE, store.session_id)
    assert (session.user_id, session.agent_id, session.message_count) == ("alice", "assistant", 6)
    flushed = hub.sessions.flush(STORE, store.session_id, wait=30)
    assert flushed.complete
    memories = {memory.content: memory for memory in hub.memories.iter(STORE, user_id="alice")}
    assert any("Alice" in content and "name" in content for content in memories), memories
    dark_mode = [memory for content, memory in memories.items() if "dark mode" in content]
    assert len(dark_mode) == 1 and dark_mode[0].source == "extraction"

    # A new agent for the same user: the facts are injected into the model input and found by the tool.
    later = MemoryHubStore(store=STORE, user_id="alice", client=hub)
    agent, model = _agent(later, [ToolCall("search_memory", {"query": "dark mode preference"}),
                                  "You prefer dark mode."])
    answer = agent("Which theme should I use?")
    assert "dark mode" in str(answer)
    injected = [text for text in model.texts_sent(0) if "<memory>" in text]
    assert len(injected) == 1 and "dark mode" in injected[0]
    assert f'<entry source="{later.name}">' in injected[0]
    assert "search_memory" in model.calls[0]["tools"]
    # The search_memory tool's result (the model's second call) names the memory and its score.
    tool_results = [text for text in model.texts_sent(1) if "memory_id" in text]
    assert len(tool_results) == 1 and dark_mode[0].id in tool_results[0] and "score" in tool_results[0]


def test_another_users_memories_are_not_injected(hub):
    store = _first_conversation(hub)
    hub.sessions.flush(STORE, store.session_id, wait=30)
    bob = MemoryHubStore(store=STORE, user_id="bob", client=hub)
    agent, model = _agent(bob, ["Hello Bob."])
    agent("What do you know about my theme?")
    assert not any("<memory>" in text for text in model.texts_sent(0))


def _messages_posts(request) -> bool:
    return request.method == "POST" and request.url.path.endswith("/messages")


def _assert_stored_once(hub, store: MemoryHubStore) -> None:
    transcript = list(hub.sessions.iter_messages(STORE, store.session_id))
    assert [(message.role, message.text) for message in transcript] == [
        ("user", "My name is Alice"), ("assistant", "Hi Alice."),
        ("user", "I prefer dark mode"), ("assistant", "Noted: dark mode."),
    ]
    assert hub.sessions.flush(STORE, store.session_id, wait=30).complete
    contents = [memory.content for memory in hub.memories.iter(STORE, user_id="alice")]
    assert len(contents) == len(set(contents)) >= 2
    assert sum("dark mode" in content for content in contents) == 1


def test_a_batch_the_client_retries_is_stored_once(hub_for, tenant_a, hub):
    # The first messages POST reaches the server but its answer is lost: the client sends it again.
    lossy = LosesFirstResponse(matching=_messages_posts)
    store = MemoryHubStore(store=STORE, user_id="alice",
                           client=hub_for(tenant_a.keys["write"], transport=lossy, backoff_seconds=0))
    agent, _ = _agent(store, ["Hi Alice.", "Noted: dark mode."])
    agent("My name is Alice")
    agent("I prefer dark mode")
    assert lossy.sent == 3  # two batches, the first one twice
    _assert_stored_once(hub, store)


def test_a_batch_strands_resends_after_a_failed_save_is_stored_once(hub_for, tenant_a, hub):
    # No client retries: the save fails, Strands keeps the messages and sends them again with the next
    # turn's, under the same sequence numbers -- although the server had stored them the first time.
    lossy = LosesFirstResponse(matching=_messages_posts)
    store = MemoryHubStore(store=STORE, user_id="alice",
                           client=hub_for(tenant_a.keys["write"], transport=lossy, max_retries=0))
    agent, _ = _agent(store, ["Hi Alice.", "Noted: dark mode."])
    agent("My name is Alice")  # the save fails; the flush that ends the call sends the batch again
    assert lossy.sent == 2
    assert hub.sessions.get(STORE, store.session_id).message_count == 2
    agent("I prefer dark mode")
    assert lossy.sent == 3
    _assert_stored_once(hub, store)


def test_a_second_manager_on_the_same_store_instance_does_not_lose_messages(hub):
    # Strands numbers each manager's messages from 0; the store must not take them for retries.
    store = MemoryHubStore(store=STORE, user_id="alice", client=hub)
    first, _ = _agent(store, ["One."])
    first("first agent speaking")
    second, _ = _agent(store, ["Two."])
    second("second agent speaking")
    texts = [message.text for message in hub.sessions.iter_messages(STORE, store.session_id)]
    assert texts == ["first agent speaking", "One.", "second agent speaking", "Two."]


def test_add_memory_tool_writes_through_add(hub):
    store = MemoryHubStore(store=STORE, user_id="carol", client=hub)
    model = ScriptedModel([ToolCall("add_memory", {"entries": ["Carol is allergic to peanuts"]}), "Noted."])
    agent = Agent(model=model, memory_manager=MemoryManager(stores=[store], add_tool_config=True),
                  callback_handler=None)
    agent("Remember that I'm allergic to peanuts")
    assert any('"stored": 1' in text or "'stored': 1" in text for text in model.texts_sent(1)), model.calls[1]
    memories = list(hub.memories.iter(STORE, user_id="carol"))
    assert [memory.content for memory in memories if memory.source == "api"] == ["Carol is allergic to peanuts"]


def test_initialize_fails_loudly(hub_for, tenant_a, live_server):
    missing = MemoryHubStore(store="no-such-store", user_id="alice", client=hub_for(tenant_a.keys["read"]))
    with pytest.raises(ValueError, match="no-such-store"):
        Agent(model=ScriptedModel([]), memory_manager=MemoryManager(stores=[missing]), callback_handler=None)
    bad_key = MemoryHubStore(store=STORE, user_id="alice", client=live_server.client("mh_bogus_key", max_retries=0))
    with pytest.raises(AuthenticationFailed):
        Agent(model=ScriptedModel([]), memory_manager=MemoryManager(stores=[bad_key]), callback_handler=None)
