"""AsyncMemoryHub: the same requests, retries and errors as the sync client, with `await`."""

import asyncio
import inspect

import pytest
from scripted_http import Reply

from memoryhub_client import AsyncMemoryHub, ConnectionFailed, MemoryHub, NotFound, RateLimited, ServerError

SESSION = {"session_id": "chat-1", "user_id": "alice", "status": "active"}


def memory(number: int) -> dict:
    return {"id": f"00000000-0000-0000-0000-{number:012d}", "content": f"memory {number}"}


def parameters(function) -> list:
    return list(inspect.signature(function).parameters.values())


def test_the_async_client_has_the_sync_surface_as_coroutines():
    sync, asynchronous = MemoryHub("http://127.0.0.1:1", "k"), AsyncMemoryHub("http://127.0.0.1:1", "k")
    groups = ["stores", "memories", "users", "sessions", "jobs", "working_memory", "task_state", "scratchpad",
              "checkpoints", "lifecycle", "webhooks"]
    compared = 0
    for group in groups:
        for name, method in inspect.getmembers(getattr(sync, group), inspect.ismethod):
            if name.startswith("_"):
                continue
            other = getattr(getattr(asynchronous, group), name)
            assert parameters(method) == parameters(other), f"{group}.{name}"
            is_iterator = name.startswith("iter")
            assert inspect.iscoroutinefunction(other) is not is_iterator, f"{group}.{name}"
            compared += 1
    for name in ("search", "context"):
        assert parameters(getattr(sync, name)) == parameters(getattr(asynchronous, name))
        assert inspect.iscoroutinefunction(getattr(asynchronous, name))
    assert compared > 50
    sync.close()
    asyncio.run(asynchronous.aclose())


def test_requests_and_results(server, make_async_hub):
    server.script(Reply(201, {"memory": memory(1), "duplicate": False}),
                  Reply(body={"results": [{"memory": memory(1), "score": 1.0}]}))

    async def scenario():
        async with make_async_hub() as hub:
            written = await hub.memories.add("main", user_id="alice", content="memory 1")
            hits = await hub.search("main", "memory", user_id="alice")
            return written, hits

    written, hits = asyncio.run(scenario())

    assert written.memory.id == memory(1)["id"] and [hit.memory.content for hit in hits] == ["memory 1"]
    add, search = server.requests
    assert (add.method, add.raw_path, add.body["content"]) == ("POST", "/api/v1/stores/main/memories", "memory 1")
    assert search.headers["authorization"] == "Bearer mh_test_key"


def test_retries_wait_with_the_async_sleep(server, make_async_hub, sleeps):
    server.script(Reply.error(503), Reply.error(429, headers={"Retry-After": "2"}), Reply(body={"results": []}))

    async def scenario():
        async with make_async_hub() as hub:
            return await hub.stores.list()

    assert asyncio.run(scenario()) == []
    assert sleeps.delays == [0.5, 2.0]


def test_errors_are_the_same_classes(server, make_async_hub):
    server.script(Reply.error(404, "not_found", "No store 'x'."),
                  Reply.error(429, "rate_limited", headers={"Retry-After": "1"}))

    async def scenario():
        async with make_async_hub(max_retries=0) as hub:
            with pytest.raises(NotFound) as missing:
                await hub.stores.get("x")
            with pytest.raises(RateLimited) as limited:
                await hub.stores.list()
            return missing.value, limited.value

    missing, limited = asyncio.run(scenario())
    assert (missing.code, missing.message) == ("not_found", "No store 'x'.")
    assert limited.retry_after == 1.0


def test_a_plain_post_is_retried_under_one_minted_key(server, make_async_hub, sleeps):
    server.script(Reply.error(502), Reply.error(502), Reply.error(502), Reply.error(502))

    async def scenario():
        async with make_async_hub() as hub:
            await hub.checkpoints.create("main", "chat-1", description="before")

    with pytest.raises(ServerError):
        asyncio.run(scenario())
    keys = {request.headers.get("idempotency-key") for request in server.requests}
    assert len(server.requests) == 4 and len(keys) == 1 and None not in keys
    assert sleeps.delays == [0.5, 1.0, 2.0]


def test_iter_follows_cursors_and_lists_collect_every_page(server, make_async_hub):
    server.script(
        Reply.page([memory(1)], "http://x/?cursor=p2"), Reply.page([memory(2)]),
        Reply.page([{"id": 1, "event": "spawn"}], "http://x/?cursor=e2"), Reply.page([{"id": 2, "event": "pause"}]),
    )

    async def scenario():
        async with make_async_hub() as hub:
            memories = [item.content async for item in hub.memories.iter("main")]
            events = await hub.sessions.events("main", "chat-1")
            return memories, events

    memories, events = asyncio.run(scenario())
    assert memories == ["memory 1", "memory 2"]
    assert [event.event for event in events] == ["spawn", "pause"]
    assert [request.param("cursor") for request in server.requests] == [None, "p2", None, "e2"]


def test_webhooks_and_their_delivery_log(server, make_async_hub):
    webhook = {"id": "w1", "url": "https://crm.example.com/hook", "is_active": True}
    server.script(Reply(201, {**webhook, "secret": "whsec_1"}), Reply.page([{"id": "d1"}], "http://x/?cursor=d2"),
                  Reply.page([{"id": "d2", "status": "failed"}]))

    async def scenario():
        async with make_async_hub() as hub:
            created = await hub.webhooks.create("main", "https://crm.example.com/hook")
            deliveries = [delivery.id async for delivery in hub.webhooks.iter_deliveries("main", "w1")]
            return created, deliveries

    created, deliveries = asyncio.run(scenario())
    assert created.secret == "whsec_1" and deliveries == ["d1", "d2"]
    assert [(request.method, request.raw_path) for request in server.requests] == [
        ("POST", "/api/v1/stores/main/webhooks"), ("GET", "/api/v1/stores/main/webhooks/w1/deliveries"),
        ("GET", "/api/v1/stores/main/webhooks/w1/deliveries"),
    ]


def test_messages_of_a_run_are_numbered_and_retried(server, make_async_hub, sleeps):
    ingest = {"accepted": 2, "duplicates": 0, "session": SESSION, "extraction_job": None}
    server.script(Reply.error(500), Reply(202, ingest))

    async def scenario():
        async with make_async_hub() as hub:
            return await hub.sessions.add_messages(
                "main", "chat-1", user_id="alice", run_id="r", messages=[{"role": "user", "content": "a"},
                                                                         {"role": "user", "content": "b"}])

    assert asyncio.run(scenario()).accepted == 2
    assert [[m["seq"] for m in request.body["messages"]] for request in server.requests] == [[0, 1], [0, 1]]
    assert sleeps.delays == [0.5]


def test_a_refused_connection_is_reported_after_the_retries(closed_port_url, make_async_hub, sleeps):
    async def scenario():
        async with make_async_hub(base_url=closed_port_url, max_retries=1) as hub:
            await hub.stores.list()

    with pytest.raises(ConnectionFailed) as caught:
        asyncio.run(scenario())
    assert caught.value.attempts == 2 and sleeps.delays == [0.5]


def test_aclose_closes_the_http_client(server):
    async def scenario():
        hub = AsyncMemoryHub(server.url, "k")
        async with hub:
            assert not hub._transport._client.is_closed
        return hub

    assert asyncio.run(scenario())._transport._client.is_closed
