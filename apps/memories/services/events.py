"""The one event publisher: what changed in a store, told after commit to the store's live listeners
(websockets, through the channel layer) and to its webhooks.

Services call `events_publish` inside their transaction; nothing is sent unless it commits, so a
listener never hears of a change that was rolled back. Delivery is best effort for live listeners (a
page that misses an event still shows the change on reload) and durable for webhooks (a delivery row
is written and retried by the worker).
"""

import logging
from contextlib import contextmanager
from contextvars import ContextVar

from channels_postgres.models import GroupChannel
from channels_postgres.models import Message as LayerMessage
from django.db import transaction
from django.utils import timezone

from apps.memories import live
from apps.memories.events import Event, store_group_name
from apps.memories.services.webhooks import webhook_deliveries_schedule

logger = logging.getLogger(__name__)

_collecting: ContextVar[list[Event] | None] = ContextVar("collected_events", default=None)


def events_publish(events: list[Event]) -> None:
    """Publish `events` of the current transaction: webhook deliveries are written in it (an outbox: they commit or
    roll back with the change, and the worker sends them after the commit); live listeners hear of them once it
    commits (at once outside a transaction). Inside `events_collected`, they wait for the end of that block."""
    events = [event for event in events if event is not None]
    collected = _collecting.get()
    if collected is not None:
        collected.extend(events)
    elif events:
        webhook_deliveries_schedule(events=events)
        transaction.on_commit(lambda: _send_live(events), robust=True)


@contextmanager
def events_collected():
    """Publish the events of the services called in this block together when it ends without an error: one look
    for the store's webhooks and one live message, instead of one per change (an extraction job makes several).
    Use it inside the transaction, around services that publish last, once their writes are done (all of them do),
    so that no event of a change rolled back to a savepoint is left in the batch."""
    if _collecting.get() is not None:
        yield  # the outer block publishes
        return
    collected: list[Event] = []
    token = _collecting.set(collected)
    try:
        yield
    finally:
        _collecting.reset(token)
    events_publish(collected)


def _send_live(events: list[Event]) -> None:
    by_store: dict[str, list[Event]] = {}
    for event in events:
        by_store.setdefault(event.store_id, []).append(event)
    for store_id, store_events in by_store.items():
        try:
            live.group_send(store_group_name(store_id),
                            {"type": "store.events", "events": [_without_content(event) for event in store_events]})
        except Exception:
            # A live update is a convenience: the change is committed and pages show it on reload.
            logger.exception("Could not send %d live event(s) of store %s", len(store_events), store_id)


def _without_content(event: Event) -> dict:
    """What goes through the channel layer: which memory changed and how, never what it says. The PostgreSQL layer
    keeps its messages in a table for a while, where an erasure would not find them; a listener that wants the
    text reads the memory (the console fetches its card), with its own access checked then."""
    message = event.as_dict()
    memory = message["data"].get("memory")
    if isinstance(memory, dict) and "content" in memory:
        message["data"] = {**message["data"], "memory": {k: v for k, v in memory.items() if k != "content"}}
    return message


def live_messages_purge(*, now=None) -> dict:
    """Delete what the PostgreSQL channel layer keeps past its expiry: messages (delivered by NOTIFY, but their rows
    stay) and the group memberships of listeners that went away without leaving (a web process that died)."""
    now = now or timezone.now()
    messages, _ = LayerMessage.objects.filter(expire__lt=now).delete()
    memberships, _ = GroupChannel.objects.filter(expire__lt=now).delete()
    return {"messages": messages, "memberships": memberships}
