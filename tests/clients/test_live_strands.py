"""memoryhub as a Strands Agents memory store, end to end: a real `strands` Agent with a scripted model
(no network), MemoryHubStore, and a live memoryhub server with a real extraction worker."""

import pytest
from strands import Agent
from strands.memory import MemoryManager

from memoryhub_client.strands import MemoryHubStore
from memoryhub_client.testing import ScriptedModel, ToolCall
from tests.clients.transports import LosesAnswers, LosesFirstResponse
from tests.processes import wait_for

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
    assert store.flush(timeout=30)
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


def test_only_the_users_own_memories_are_injected(hub):
    store = _first_conversation(hub)
    hub.sessions.flush(STORE, store.session_id, wait=30)
    hub.memories.add(STORE, user_id="bob", content="Bob prefers light mode")
    bob = MemoryHubStore(store=STORE, user_id="bob", client=hub)
    agent, model = _agent(bob, ["Hello Bob."])
    agent("Which display mode do I prefer?")
    injected = [text for text in model.texts_sent(0) if "<memory>" in text]
    assert len(injected) == 1 and "Bob prefers light mode" in injected[0] and "dark mode" not in injected[0]


def test_a_very_long_user_message_is_still_searched_and_stored(hub):
    store = _first_conversation(hub)
    hub.sessions.flush(STORE, store.session_id, wait=30)
    later = MemoryHubStore(store=STORE, user_id="alice", client=hub)
    agent, model = _agent(later, ["Summarised.", "Hello again."])
    pasted = "lorem ipsum " * 4000 + "\x00 which theme do I prefer, dark mode?"
    agent(pasted)  # 48,000 characters with a NUL: over the server's limits for a message and a query
    assert any("<memory>" in text and "dark mode" in text for text in model.texts_sent(0))
    agent("And one more thing")  # later saves are not blocked by the refused one
    assert later.flush(timeout=30)
    texts = [message.text for message in hub.sessions.iter_messages(STORE, later.session_id)]
    assert len(texts) == 4 and texts[0].endswith("[…truncated]") and len(texts[0]) == 32_768
    assert "\x00" not in texts[0] and texts[2:] == ["And one more thing", "Hello again."]


def test_a_batch_over_the_servers_limit_is_sent_in_parts(hub):
    import asyncio

    from strands.memory import AddMessagesContext

    store = MemoryHubStore(store=STORE, user_id="alice", client=hub)
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": [{"text": f"message {i}"}]}
                for i in range(150)]
    result = asyncio.run(store.add_messages(messages, AddMessagesContext(sequence_numbers=list(range(150)))))
    assert result == {"queued": 150, "delivered": True}
    assert hub.sessions.get(STORE, store.session_id).message_count == 150


def test_messages_of_a_terminated_session_are_dropped_not_resent_forever(hub):
    store = MemoryHubStore(store=STORE, user_id="alice", client=hub)
    agent, _ = _agent(store, ["One.", "Two."])
    agent("first")
    hub.lifecycle.terminate(STORE, store.session_id, wait=0)
    agent("second")  # refused (409): dropped with an error in the log, not raised into the agent
    agent("third")
    assert store.flush(timeout=30)  # nothing stuck in the outbox behind the refused batches
    texts = [message.text for message in hub.sessions.iter_messages(STORE, store.session_id)]
    assert texts == ["first", "One."]


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
    assert store.flush(timeout=30)
    assert lossy.sent == 3  # two batches, the first one twice
    _assert_stored_once(hub, store)


def test_a_batch_whose_answer_was_lost_is_delivered_again_and_stored_once(hub_for, tenant_a, hub):
    # No client retries: the outbox's delivery fails (the server had stored the batch), the breaker opens,
    # and the outbox delivers the batch again once it reopens, under the same sequence numbers.
    lossy = LosesFirstResponse(matching=_messages_posts)
    store = MemoryHubStore(store=STORE, user_id="alice",
                           client=hub_for(tenant_a.keys["write"], transport=lossy, max_retries=0))
    agent, _ = _agent(store, ["Hi Alice.", "Noted: dark mode."])
    agent("My name is Alice")
    agent("I prefer dark mode")
    assert store.flush(timeout=30)
    assert lossy.sent == 3
    _assert_stored_once(hub, store)


def test_a_second_manager_on_the_same_store_instance_does_not_lose_messages(hub):
    # Strands numbers each manager's messages from 0; the store must not take them for retries.
    store = MemoryHubStore(store=STORE, user_id="alice", client=hub)
    first, _ = _agent(store, ["One."])
    first("first agent speaking")
    second, _ = _agent(store, ["Two."])
    second("second agent speaking")
    assert store.flush(timeout=30)
    texts = [message.text for message in hub.sessions.iter_messages(STORE, store.session_id)]
    assert texts == ["first agent speaking", "One.", "second agent speaking", "Two."]


def test_a_new_agent_after_an_unconfirmed_save_does_not_lose_messages(hub_for, tenant_a, hub):
    # The first agent's messages reach the server but no answer comes back: the outbox keeps delivering
    # them. A new agent on the same store numbers from 0 again: its messages are not taken for repeats.
    lossy = LosesAnswers(matching=_messages_posts)
    store = MemoryHubStore(store=STORE, user_id="alice",
                           client=hub_for(tenant_a.keys["write"], transport=lossy, max_retries=0))
    first, _ = _agent(store, ["One."])
    first("first agent speaking")
    wait_for(lambda: lossy.lost >= 2, timeout=10, what="the outbox to deliver the batch again")
    lossy.losing = False
    second, _ = _agent(store, ["Two."])
    second("second agent speaking")
    assert store.flush(timeout=30)
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


def test_initialize_fails_loudly(hub_for, tenant_a):
    missing = MemoryHubStore(store="no-such-store", user_id="alice", client=hub_for(tenant_a.keys["read"]))
    with pytest.raises(ValueError, match="no-such-store"):
        Agent(model=ScriptedModel([]), memory_manager=MemoryManager(stores=[missing]), callback_handler=None)
    bad_key = MemoryHubStore(store=STORE, user_id="alice", client=hub_for("mh_bogus_key", max_retries=0))
    with pytest.raises(ValueError, match="refused the API key"):
        Agent(model=ScriptedModel([]), memory_manager=MemoryManager(stores=[bad_key]), callback_handler=None)
    read_only_key = MemoryHubStore(store=STORE, user_id="alice", client=hub_for(tenant_a.keys["read"]))
    with pytest.raises(ValueError, match="needs 'write'"):
        Agent(model=ScriptedModel([]), memory_manager=MemoryManager(stores=[read_only_key]), callback_handler=None)
    reader = MemoryHubStore(store=STORE, user_id="alice", writable=False, extraction=False,
                            client=hub_for(tenant_a.keys["read"]))
    agent = Agent(model=ScriptedModel(["Hi."]), memory_manager=MemoryManager(stores=[reader]), callback_handler=None)
    assert str(agent("hello")).strip() == "Hi."
