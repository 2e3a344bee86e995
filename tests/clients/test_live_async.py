"""AsyncMemoryHub against a live memoryhub: a representative part of the surface, and concurrent requests."""

import asyncio

import pytest

from memoryhub_client import AuthenticationFailed, Conflict, NotFound, ValidationFailed

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

STORE = "main"


def run(live_server, api_key, scenario):
    """Run `scenario(hub)` with a fresh async client in a fresh event loop."""

    async def main():
        async with live_server.async_client(api_key) as hub:
            return await scenario(hub)

    return asyncio.run(main())


def test_memories_and_search(live_server, tenant_a):
    async def scenario(hub):
        store = await hub.stores.get(STORE)
        first = await hub.memories.add(STORE, user_id="alice", content="Alice is allergic to peanuts")
        again = await hub.memories.add(STORE, user_id="alice", content="Alice is allergic to peanuts")
        bulk = await hub.memories.bulk_add(STORE, [
            {"user_id": "alice", "content": f"Alice fact {number}"} for number in range(5)
        ])
        listed = [memory.content async for memory in hub.memories.iter(STORE, user_id="alice", page_size=2)]
        hits = await hub.search(STORE, "peanuts allergy", user_id="alice", limit=3)
        changed = await hub.memories.update(STORE, first.memory.id, content="Alice is allergic to all nuts",
                                            reason="doctor's note")
        history = await hub.memories.history(STORE, first.memory.id)
        return store, first, again, bulk, listed, hits, changed, history

    store, first, again, bulk, listed, hits, changed, history = run(live_server, tenant_a.keys["admin"], scenario)

    assert store.name == STORE and store.embedding_provider == "hash"
    assert (first.duplicate, again.duplicate, again.memory.id) == (False, True, first.memory.id)
    assert [result.duplicate for result in bulk] == [False] * 5
    assert len(listed) == 6 and "Alice is allergic to peanuts" in listed
    assert hits[0].memory.id == first.memory.id and len(hits) <= 3
    assert changed.content == "Alice is allergic to all nuts"
    assert [revision.action for revision in history] == ["create", "update"]


def test_concurrent_adds_share_one_client(live_server, tenant_a):
    async def scenario(hub):
        contents = [f"Concurrent fact {number}" for number in range(12)]
        results = await asyncio.gather(*(hub.memories.add(STORE, user_id="eve", content=text) for text in contents))
        # The same content from many requests at once is still one memory.
        same = await asyncio.gather(*(hub.memories.add(STORE, user_id="eve", content="Eve likes jazz")
                                      for _ in range(6)))
        listed = [memory async for memory in hub.memories.iter(STORE, user_id="eve")]
        return results, same, listed

    results, same, listed = run(live_server, tenant_a.keys["write"], scenario)

    assert sorted(result.memory.content for result in results) == sorted(f"Concurrent fact {n}" for n in range(12))
    assert len({result.memory.id for result in same}) == 1
    assert sorted(result.duplicate for result in same) == [False] + [True] * 5
    assert len(listed) == 13


def test_a_session_from_spawn_to_terminate(live_server, tenant_a):
    async def scenario(hub):
        spawned = await hub.lifecycle.spawn(STORE, "async-1", user_id="alice", working_memory={"step": 1},
                                            task_state={"description": "Set up the account"})
        await hub.working_memory.put(STORE, "async-1", "plan/ü", ["a", "b"])
        items = await hub.working_memory.list(STORE, "async-1")
        ingest = await hub.sessions.add_messages(STORE, "async-1", user_id="alice", run_id="r1", messages=[
            {"role": "user", "content": "My name is Alice and I prefer dark mode"},
            {"role": "assistant", "content": "Noted!"},
        ])
        repeated = await hub.sessions.add_messages(STORE, "async-1", user_id="alice", run_id="r1", messages=[
            {"role": "user", "content": "My name is Alice and I prefer dark mode", "seq": 0},
        ])
        flushed = await hub.sessions.flush(STORE, "async-1", wait=20)
        context = await hub.context(STORE, "What does Alice like?", user_id="alice", session_id="async-1")
        checkpoint = await hub.checkpoints.create(STORE, "async-1", description="before the end")
        terminated = await hub.lifecycle.terminate(STORE, "async-1", outcome="partial", wait=20)
        events = await hub.sessions.events(STORE, "async-1")
        return spawned, items, ingest, repeated, flushed, context, checkpoint, terminated, events

    spawned, items, ingest, repeated, flushed, context, checkpoint, terminated, events = run(
        live_server, tenant_a.keys["write"], scenario
    )

    assert spawned.data["created"] is True
    assert [(item.key, item.value) for item in items] == [("plan/ü", ["a", "b"]), ("step", 1)]
    assert (ingest.accepted, repeated.accepted, repeated.duplicates) == (2, 0, 1)
    assert flushed.complete is True, live_server.log()
    assert any("dark mode" in change.content for change in flushed.changes)
    assert "dark mode" in context.context and "Set up the account" in context.context
    assert checkpoint.counts["working_memory"] == 2
    assert terminated.data["outcome"] == "partial" and terminated.session.status == "terminated"
    assert [event.event for event in events] == ["spawn", "terminate"]


def test_errors(live_server, tenant_a):
    async def scenario(hub):
        caught = []
        for call in (
            lambda: hub.stores.get("missing"),
            lambda: hub.search(STORE, "x", limit=0),
            lambda: hub.lifecycle.pause(STORE, "async-2"),
        ):
            try:
                await call()
            except Exception as error:  # collected, checked below
                caught.append(error)
        return caught

    async def spawn_then(hub):
        await hub.lifecycle.spawn(STORE, "async-2", user_id="alice")
        await hub.lifecycle.pause(STORE, "async-2")
        return await scenario(hub)

    missing, invalid, conflict = run(live_server, tenant_a.keys["write"], spawn_then)
    assert isinstance(missing, NotFound) and missing.code == "store_not_found"
    assert isinstance(invalid, ValidationFailed) and "limit" in invalid.details
    assert isinstance(conflict, Conflict) and conflict.details["status"] == "paused"

    with pytest.raises(AuthenticationFailed):
        run(live_server, "mh_wrong", lambda hub: hub.stores.list())
