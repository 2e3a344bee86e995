"""Live events of a store over a websocket: authenticate, join the store's group, relay what arrives."""

import asyncio
import time
from types import SimpleNamespace

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.contrib.auth import get_user
from django.contrib.sessions.backends.db import SessionStore

from apps.memories.events import store_group_name
from apps.memories.selectors import store_for_listener
from apps.tenancy.selectors import api_key_authenticate

# How long a connection without credentials in its headers has to send them as its first message.
FIRST_MESSAGE_AUTH_SECONDS = 5.0

# Access is checked again this often while a connection lasts: a revoked key, a removed membership or a logout
# ends it. The store's group membership is renewed less often (it expires after a day, as in channels-redis).
ACCESS_RECHECK_SECONDS = 60.0
MEMBERSHIP_RENEW_SECONDS = 3600.0

# Close codes (4000–4999 are the application's): the client can tell why without a body.
CLOSE_UNAUTHENTICATED = 4401
CLOSE_NOT_FOUND = 4404  # no such store, or not one these credentials may listen to


def _bearer_key(headers) -> str | None:
    for name, value in headers:
        if name.lower() == b"authorization":
            scheme, _, key = value.decode("latin-1").partition(" ")
            if scheme.lower() == "bearer" and key.strip():
                return key.strip()
    return None


@database_sync_to_async
def _store_for(store_ref: str, user, raw_key: str | None):
    if raw_key is not None:
        api_key = api_key_authenticate(raw_key=raw_key)
        return (store_for_listener(store_ref=store_ref, api_key=api_key), True) if api_key else (None, False)
    if user is not None and user.is_authenticated:
        return store_for_listener(store_ref=store_ref, user=user), True
    return None, False


@database_sync_to_async
def _session_user(session_key: str | None):
    """The user of the session as it is now in the database (logged out: anonymous)."""
    return get_user(SimpleNamespace(session=SessionStore(session_key=session_key)))


class StoreEventsConsumer(AsyncJsonWebsocketConsumer):
    """`/ws/stores/<store>/events/`: staff with their session cookie, or an agent with an API key of read
    scope in the `Authorization: Bearer` header or in a first message `{"type": "auth", "api_key": "..."}`
    (never in the URL, which servers and proxies log). Each event arrives as one JSON text frame."""

    group = None
    watch = None

    async def connect(self):
        self.store_ref = self.scope["url_route"]["kwargs"]["store"]
        raw_key = _bearer_key(self.scope.get("headers", []))
        user = self.scope.get("user")
        if raw_key is None and not (user is not None and user.is_authenticated):
            await self.accept()
            self.auth_timeout = asyncio.get_running_loop().call_later(
                FIRST_MESSAGE_AUTH_SECONDS, lambda: asyncio.ensure_future(self.close(code=CLOSE_UNAUTHENTICATED))
            )
            return
        await self.accept()
        await self._join(user, raw_key)

    async def receive_json(self, content, **kwargs):
        if self.group is not None:
            return  # listeners only listen
        if not isinstance(content, dict) or content.get("type") != "auth" or not isinstance(content.get("api_key"), str):
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        self.auth_timeout.cancel()
        await self._join(None, content["api_key"])

    async def _join(self, user, raw_key):
        store, authenticated = await _store_for(self.store_ref, user, raw_key)
        if store is None:
            await self.close(code=CLOSE_NOT_FOUND if authenticated else CLOSE_UNAUTHENTICATED)
            return
        self.group = store_group_name(store.pk)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.send_json({"type": "subscribed", "store": store.name, "store_id": str(store.pk)})
        self.watch = asyncio.ensure_future(self._keep_checking_access(raw_key))

    async def _keep_checking_access(self, raw_key):
        renewed = time.monotonic()
        while True:
            await asyncio.sleep(ACCESS_RECHECK_SECONDS)
            user = None if raw_key is not None else await _session_user(self.scope["session"].session_key)
            store, authenticated = await _store_for(self.store_ref, user, raw_key)
            if store is None or store_group_name(store.pk) != self.group:
                await self.close(code=CLOSE_NOT_FOUND if authenticated else CLOSE_UNAUTHENTICATED)
                return
            if time.monotonic() - renewed >= MEMBERSHIP_RENEW_SECONDS:
                await self.channel_layer.group_add(self.group, self.channel_name)
                renewed = time.monotonic()

    async def disconnect(self, code):
        if getattr(self, "auth_timeout", None) is not None:
            self.auth_timeout.cancel()
        if self.watch is not None:
            self.watch.cancel()
        if self.group is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def store_events(self, message):
        for event in message["events"]:
            await self.send_json(event)
