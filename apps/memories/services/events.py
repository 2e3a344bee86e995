"""The one event publisher: what changed in a store, told after commit to the store's live listeners
(websockets, through the channel layer) and to its webhooks.

Services call `events_publish` inside their transaction; nothing is sent unless it commits, so a
listener never hears of a change that was rolled back. Delivery is best effort for live listeners (a
page that misses an event still shows the change on reload) and durable for webhooks (a delivery row
is written and retried by the worker).
"""

import logging

from django.db import transaction

from apps.memories import live
from apps.memories.events import Event, store_group_name
from apps.memories.services.webhooks import webhook_deliveries_schedule

logger = logging.getLogger(__name__)


def events_publish(events: list[Event]) -> None:
    """Send `events` once the current transaction commits (at once outside a transaction)."""
    events = [event for event in events if event is not None]
    if events:
        transaction.on_commit(lambda: _deliver(events), robust=True)


def _deliver(events: list[Event]) -> None:
    by_store: dict[str, list[Event]] = {}
    for event in events:
        by_store.setdefault(event.store_id, []).append(event)
    for store_id, store_events in by_store.items():
        try:
            live.group_send(store_group_name(store_id),
                            {"type": "store.events", "events": [event.as_dict() for event in store_events]})
        except Exception:
            # A live update is a convenience: the change is committed and pages show it on reload.
            logger.exception("Could not send %d live event(s) of store %s", len(store_events), store_id)
    webhook_deliveries_schedule(events=events)
