"""The store events websocket: who may listen, how agents authenticate, and what they hear."""

import asyncio

import pytest
from channels.db import database_sync_to_async
from channels.layers import channel_layers
from channels.testing import WebsocketCommunicator
from django.contrib.sessions.backends.db import SessionStore
from django.db import transaction
from django.test import Client

from apps.core.actors import Actor
from apps.memories import live
from apps.memories.services import MemoryInput, memory_approve, memory_create
from apps.review import consumers
from apps.tenancy.services import api_key_issue, api_key_revoke
from memoryhub.asgi import application

pytestmark = [pytest.mark.anyio, pytest.mark.django_db(transaction=True)]

HOST = [(b"host", b"localhost")]


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(autouse=True)
def _sent_from_the_test_loop():
    """As in a web process, events go out from the loop the consumers run in. The layer is the in-memory one
    (tests/conftest.py); tests/review/test_live_events.py runs PostgreSQL's and Redis's between real processes."""
    channel_layers.backends.clear()  # a fresh layer: each test runs its own event loop
    yield
    live.bind_event_loop(None)


def _bind_loop():
    live.bind_event_loop(asyncio.get_running_loop())


async def _connect(store_ref: str, *, key: str | None = None, cookie: str | None = None):
    headers = list(HOST)
    if key:
        headers.append((b"authorization", f"Bearer {key}".encode()))
    if cookie:
        headers.append((b"cookie", cookie.encode()))
    communicator = WebsocketCommunicator(application, f"/ws/stores/{store_ref}/events/", headers=headers)
    connected, _ = await communicator.connect(timeout=10)
    assert connected
    return communicator


@database_sync_to_async
def _add(store, content, user_id="alice", **fields):
    with transaction.atomic():
        return memory_create(store=store, item=MemoryInput(user_id=user_id, content=content, **fields),
                             actor=Actor.system("test")).memory


@database_sync_to_async
def _session_cookie(user) -> str:
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}"


async def _next_event(communicator, timeout=5):
    return await communicator.receive_json_from(timeout=timeout)


async def test_agent_with_a_read_key_in_the_header_hears_a_new_memory(tenant_a):
    _bind_loop()
    communicator = await _connect("main", key=tenant_a.keys["read"])
    subscribed = await _next_event(communicator)
    assert subscribed == {"type": "subscribed", "store": "main", "store_id": str(tenant_a.store.pk)}

    memory = await _add(tenant_a.store, "Prefers email over phone calls.")

    event = await _next_event(communicator)
    assert event["type"] == "memory.created"
    assert event["store"] == "main"
    assert event["data"]["memory"]["id"] == str(memory.pk)
    assert "content" not in event["data"]["memory"]  # the channel layer never holds what a memory says
    assert event["data"]["memory"]["status"] == "active"
    await communicator.disconnect()


async def test_agent_may_send_its_key_as_the_first_message_instead(tenant_a):
    _bind_loop()
    communicator = await _connect("main")
    await communicator.send_json_to({"type": "auth", "api_key": tenant_a.keys["read"]})
    assert (await _next_event(communicator))["type"] == "subscribed"
    await _add(tenant_a.store, "Lives in Cork.")
    assert (await _next_event(communicator))["type"] == "memory.created"
    await communicator.disconnect()


async def test_a_connection_that_never_authenticates_is_closed(tenant_a, monkeypatch):
    monkeypatch.setattr(consumers, "FIRST_MESSAGE_AUTH_SECONDS", 0.2)
    communicator = await _connect("main")
    assert await communicator.receive_output(timeout=3) == {"type": "websocket.close",
                                                               "code": consumers.CLOSE_UNAUTHENTICATED}


@pytest.mark.parametrize("first_message", [{"type": "auth", "api_key": "mh_not-a-key"}, {"type": "hello"}, ["x"]])
async def test_a_wrong_first_message_closes_the_connection(tenant_a, first_message):
    communicator = await _connect("main")
    await communicator.send_json_to(first_message)
    assert await communicator.receive_output(timeout=3) == {"type": "websocket.close",
                                                               "code": consumers.CLOSE_UNAUTHENTICATED}


async def test_a_bad_key_in_the_header_is_refused(tenant_a):
    communicator = await _connect("main", key="mh_not-a-key")
    assert await communicator.receive_output(timeout=3) == {"type": "websocket.close",
                                                               "code": consumers.CLOSE_UNAUTHENTICATED}


async def test_another_tenants_store_is_not_found_for_a_key(tenant_a, tenant_b):
    # Both stores are called "main": by name or by id, a key finds its own tenant's store, never another's.
    for store_ref in ("main", str(tenant_b.store.pk)):
        communicator = await _connect(store_ref, key=tenant_b.keys["read"])
        assert (await _next_event(communicator))["store_id"] == str(tenant_b.store.pk)
        await communicator.disconnect()
    communicator = await _connect(str(tenant_b.store.pk), key=tenant_a.keys["read"])
    assert await communicator.receive_output(timeout=3) == {"type": "websocket.close",
                                                               "code": consumers.CLOSE_NOT_FOUND}


async def test_a_key_limited_to_other_stores_is_not_let_in(tenant_a):
    issued = await database_sync_to_async(api_key_issue)(tenant=tenant_a.tenant, name="other", scopes=["read"],
                                                        store_names=["elsewhere"])
    communicator = await _connect("main", key=issued.raw_key)
    assert await communicator.receive_output(timeout=3) == {"type": "websocket.close",
                                                               "code": consumers.CLOSE_NOT_FOUND}


async def test_staff_of_the_tenant_listen_with_their_login(tenant_a):
    _bind_loop()
    communicator = await _connect(str(tenant_a.store.pk), cookie=await _session_cookie(tenant_a.reviewer))
    assert (await _next_event(communicator))["type"] == "subscribed"
    memory = await _add(tenant_a.store, "Allergic to latex.", status="pending_review")
    created = await _next_event(communicator)
    assert (created["type"], created["data"]["memory"]["status"]) == ("memory.created", "pending_review")

    await database_sync_to_async(memory_approve)(memory=memory, actor=Actor.for_user(tenant_a.reviewer))
    changed = await _next_event(communicator)
    assert changed["type"] == "memory.status_changed"
    assert (changed["data"]["previous_status"], changed["data"]["memory"]["status"]) == ("pending_review", "active")
    await communicator.disconnect()


async def test_staff_of_another_tenant_are_not_let_in(tenant_a, tenant_b, outsider):
    for user in (tenant_b.admin, outsider):
        communicator = await _connect(str(tenant_a.store.pk), cookie=await _session_cookie(user))
        assert await communicator.receive_output(timeout=3) == {"type": "websocket.close",
                                                                   "code": consumers.CLOSE_NOT_FOUND}


async def test_listeners_hear_only_their_own_store(tenant_a, tenant_b):
    _bind_loop()
    listener_a = await _connect("main", key=tenant_a.keys["read"])
    listener_b = await _connect("main", key=tenant_b.keys["read"])
    await _next_event(listener_a), await _next_event(listener_b)
    globex = await _add(tenant_b.store, "Globex customer fact.")
    assert (await _next_event(listener_b))["data"]["memory"]["id"] == str(globex.pk)
    acme = await _add(tenant_a.store, "Acme customer fact.")
    assert (await _next_event(listener_a))["data"]["memory"]["id"] == str(acme.pk)
    assert await listener_a.receive_nothing(timeout=0.3)
    await listener_a.disconnect()
    await listener_b.disconnect()


async def test_a_rolled_back_change_is_never_announced(tenant_a):
    _bind_loop()
    communicator = await _connect("main", key=tenant_a.keys["read"])
    await _next_event(communicator)

    @database_sync_to_async
    def add_then_fail():
        with pytest.raises(RuntimeError), transaction.atomic():
            memory_create(store=tenant_a.store, item=MemoryInput(user_id="alice", content="Never committed."),
                          actor=Actor.system("test"))
            raise RuntimeError("rolled back")

    await add_then_fail()
    committed = await _add(tenant_a.store, "Committed.")
    assert (await _next_event(communicator))["data"]["memory"]["id"] == str(committed.pk)
    assert await communicator.receive_nothing(timeout=0.3)
    await communicator.disconnect()


async def test_listeners_cannot_send_anything_once_subscribed(tenant_a):
    _bind_loop()
    communicator = await _connect("main", key=tenant_a.keys["read"])
    await _next_event(communicator)
    await communicator.send_json_to({"type": "auth", "api_key": tenant_a.keys["admin"]})
    assert await communicator.receive_nothing(timeout=0.3)
    await _add(tenant_a.store, "Still listening.")
    assert (await _next_event(communicator))["type"] == "memory.created"
    await communicator.disconnect()


async def test_a_browser_on_another_site_cannot_listen_with_a_reviewers_login(tenant_a):
    cookie = await _session_cookie(tenant_a.reviewer)
    communicator = WebsocketCommunicator(
        application, f"/ws/stores/{tenant_a.store.pk}/events/",
        headers=[*HOST, (b"cookie", cookie.encode()), (b"origin", b"https://attacker.example")],
    )
    connected, _ = await communicator.connect(timeout=10)
    assert not connected


async def test_a_revoked_key_stops_listening(tenant_a, monkeypatch):
    monkeypatch.setattr(consumers, "ACCESS_RECHECK_SECONDS", 0.2)
    issued = await database_sync_to_async(api_key_issue)(tenant=tenant_a.tenant, name="soon revoked", scopes=["read"])
    communicator = await _connect("main", key=issued.raw_key)
    assert (await _next_event(communicator))["type"] == "subscribed"
    assert await communicator.receive_nothing(timeout=0.5)  # still allowed: checked again, nothing happens

    await database_sync_to_async(api_key_revoke)(api_key=issued.api_key)
    assert await communicator.receive_output(timeout=3) == {"type": "websocket.close",
                                                               "code": consumers.CLOSE_UNAUTHENTICATED}


async def test_a_reviewer_who_logs_out_stops_listening(tenant_a, monkeypatch):
    monkeypatch.setattr(consumers, "ACCESS_RECHECK_SECONDS", 0.2)
    cookie = await _session_cookie(tenant_a.reviewer)
    communicator = await _connect(str(tenant_a.store.pk), cookie=cookie)
    assert (await _next_event(communicator))["type"] == "subscribed"

    await database_sync_to_async(SessionStore(session_key=cookie.removeprefix("sessionid=")).delete)()
    assert await communicator.receive_output(timeout=3) == {"type": "websocket.close",
                                                               "code": consumers.CLOSE_UNAUTHENTICATED}
