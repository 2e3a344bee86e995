"""Outgoing webhooks of a store: created and changed here, told of the store's events by apps.memories.events
(webhook_deliveries_schedule, after commit), delivered by django-q2 tasks, one per delivery, retried with
backoff (apps.memories.services.webhook_delivery), and forgotten with the user whose data they hold.
"""

import secrets
from collections import defaultdict
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.core.errors import ApplicationError, ConflictError, NotFoundError
from apps.memories.events import Event, EventType
from apps.memories.models import MemoryStore, Webhook, WebhookDelivery
from apps.memories.services.webhook_delivery import (
    SIGNATURE_HEADER,
    backoff_seconds,
    check_webhook_url,
    enqueue_deliveries,
    webhook_delivery_attempt,
    webhook_signature,
)

__all__ = [
    "SIGNATURE_HEADER",
    "backoff_seconds",
    "webhook_create",
    "webhook_deliveries_forget",
    "webhook_deliveries_purge_old",
    "webhook_deliveries_schedule",
    "webhook_delete",
    "webhook_delivery_attempt",
    "webhook_delivery_retry",
    "webhook_rotate_secret",
    "webhook_send_test",
    "webhook_signature",
    "webhook_sweep",
    "webhook_update",
]

PING_EVENT = "ping"
SECRET_PREFIX = "whsec_"


# --- Managing webhooks -----------------------------------------------------------------------------------


def webhook_create(*, store: MemoryStore, url: str, event_types: list[str] | None = None,
                   description: str = "") -> Webhook:
    """Add a webhook to `store`, with a new secret (returned in `secret` this once, and by a rotation)."""
    url = check_webhook_url(url)
    event_types = _clean_event_types(event_types)
    with transaction.atomic():
        # The store's row locked: two concurrent creates cannot both pass the limit.
        MemoryStore.objects.select_for_update().filter(pk=store.pk).first()
        if Webhook.objects.filter(store=store).count() >= settings.WEBHOOK_MAX_PER_STORE:
            raise ConflictError(
                f"Store {store.name!r} has {settings.WEBHOOK_MAX_PER_STORE} webhooks, the most a store may have.",
                code="webhook_limit_reached",
            )
        return Webhook.objects.create(
            store=store, url=url, event_types=event_types, description=description, secret=_new_secret()
        )


_UPDATABLE_FIELDS = ("url", "event_types", "description", "is_active")


def webhook_update(*, webhook: Webhook, changes: dict) -> Webhook:
    """Change a webhook's URL, event types, description or whether it is active; enabling it again (or
    giving it a new URL) starts its count of failed deliveries afresh."""
    unknown = sorted(set(changes) - set(_UPDATABLE_FIELDS))
    if unknown:
        raise ApplicationError(
            f"{', '.join(unknown)} cannot be changed; a webhook's changeable fields are {', '.join(_UPDATABLE_FIELDS)}.",
            code="immutable_field",
            details={name: ["Cannot be changed."] for name in unknown},
        )
    changes = dict(changes)
    if "url" in changes:
        changes["url"] = check_webhook_url(changes["url"])
    if "event_types" in changes:
        changes["event_types"] = _clean_event_types(changes["event_types"])
    with transaction.atomic():
        # Locked: a delivery failing meanwhile counts against the webhook and may disable it (_count_final_failure).
        locked = Webhook.objects.select_for_update().filter(pk=webhook.pk).first()
        if locked is None:
            raise NotFoundError(f"Webhook {webhook.pk} was deleted meanwhile.", code="webhook_not_found")
        updated = [name for name in _UPDATABLE_FIELDS if name in changes and changes[name] != getattr(locked, name)]
        for name in updated:
            setattr(locked, name, changes[name])
        if "is_active" in updated:
            if locked.is_active:
                locked.disabled_at, locked.disabled_reason = None, ""
            else:
                locked.disabled_at, locked.disabled_reason = timezone.now(), "Disabled by an administrator."
            updated += ["disabled_at", "disabled_reason"]
        if ("is_active" in updated and locked.is_active) or "url" in updated:
            locked.consecutive_failures = 0
            updated.append("consecutive_failures")
        if updated:
            locked.save(update_fields=[*updated, "updated_at"])
    locked.store = webhook.store
    return locked


def webhook_delete(*, webhook: Webhook) -> None:
    """Delete a webhook with its delivery log; deliveries not yet sent are not sent."""
    webhook.delete()


def webhook_rotate_secret(*, webhook: Webhook) -> Webhook:
    """Give a webhook a new secret: every delivery from now on, retries of older events included, is signed
    with it, and the old one stops verifying."""
    webhook.secret = _new_secret()
    webhook.save(update_fields=["secret", "updated_at"])
    return webhook


def webhook_send_test(*, webhook: Webhook) -> WebhookDelivery:
    """Queue a `ping` delivery to the webhook, to check that its receiver answers and verifies signatures."""
    if not webhook.is_active:
        raise ConflictError("This webhook is disabled; enable it before sending a test.", code="webhook_disabled")
    event = Event(type=PING_EVENT, store_id=str(webhook.store_id), store_name=webhook.store.name,
                  data={"webhook_id": str(webhook.pk), "message": "A test delivery from memoryhub."})
    with transaction.atomic():
        delivery = WebhookDelivery.objects.create(
            webhook=webhook, event_id=event.id, event_type=event.type, payload=event.as_dict(),
            next_attempt_at=timezone.now(),
        )
        transaction.on_commit(lambda: enqueue_deliveries([delivery.pk]))
    return delivery


def webhook_delivery_retry(*, delivery: WebhookDelivery) -> WebhookDelivery:
    """Send a failed delivery again, with a fresh set of attempts."""
    with transaction.atomic():
        locked = WebhookDelivery.objects.select_for_update().filter(pk=delivery.pk).first()
        if locked is None:
            raise NotFoundError(f"Delivery {delivery.pk} was deleted meanwhile.", code="delivery_not_found")
        if locked.status != WebhookDelivery.Status.FAILED:
            raise ConflictError(f"Only failed deliveries can be sent again; this one is {locked.status}.",
                                code="delivery_not_failed", details={"status": locked.status})
        if not delivery.webhook.is_active:
            raise ConflictError("This webhook is disabled; enable it before sending deliveries again.",
                                code="webhook_disabled")
        locked.status = WebhookDelivery.Status.QUEUED
        locked.attempts = 0
        locked.next_attempt_at = timezone.now()
        locked.save(update_fields=["status", "attempts", "next_attempt_at", "updated_at"])
        transaction.on_commit(lambda: enqueue_deliveries([locked.pk]))
    locked.webhook = delivery.webhook
    return locked


def _new_secret() -> str:
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def _clean_event_types(event_types) -> list[str]:
    if not event_types:
        return []
    unknown = [name for name in event_types if name not in EventType.ALL]
    if unknown:
        raise ApplicationError(
            f"Unknown event type(s) {', '.join(map(repr, unknown))}; the event types are {', '.join(EventType.ALL)}.",
            code="unknown_event_type",
            details={"event_types": [f"Unknown: {name!r}." for name in unknown]},
        )
    return sorted(set(event_types), key=EventType.ALL.index)


# --- Scheduling --------------------------------------------------------------------------------------------


def webhook_deliveries_schedule(*, events) -> list[WebhookDelivery]:
    """Write a delivery for each of the store's webhooks that wants each event, and enqueue it."""
    events = [event for event in events if event is not None]
    if not events:
        return []
    # The one query a store without webhooks costs (by the store foreign key's index).
    webhooks = list(
        Webhook.objects.filter(store_id__in={event.store_id for event in events}, is_active=True)
        .only("pk", "store_id", "event_types")
    )
    if not webhooks:
        return []
    by_store = defaultdict(list)
    for webhook in webhooks:
        by_store[str(webhook.store_id)].append(webhook)
    now = timezone.now()
    deliveries = [
        WebhookDelivery(
            webhook_id=webhook.pk, event_id=event.id, event_type=event.type, user_id=_subject_user_id(event.data),
            payload=event.as_dict(), next_attempt_at=now,
        )
        for event in events
        for webhook in by_store[str(event.store_id)]
        if webhook.wants(event.type)
    ]
    if deliveries:
        with transaction.atomic():
            WebhookDelivery.objects.bulk_create(deliveries)
            transaction.on_commit(lambda: enqueue_deliveries([delivery.pk for delivery in deliveries]))
    return deliveries


def _subject_user_id(data) -> str:
    """Whose data an event holds: its `user_id`, or that of the object it is about (memory, session, job)."""
    if not isinstance(data, dict):
        return ""
    candidates = [data.get("user_id"), *(value.get("user_id") for value in data.values() if isinstance(value, dict))]
    return next((candidate for candidate in candidates if isinstance(candidate, str) and candidate), "")[:255]


# --- Erasure and housekeeping ------------------------------------------------------------------------------


def webhook_deliveries_forget_memory(*, memory) -> int:
    """Delete the deliveries whose payload is about one memory (erasing it for good, so its words are not sent)."""
    deleted, _ = WebhookDelivery.objects.filter(
        webhook_id__in=Webhook.objects.filter(store_id=memory.store_id).values("pk"),
        user_id=memory.user_id,
        payload__data__memory__id=str(memory.pk),
    ).delete()
    return deleted


def webhook_deliveries_forget(*, store: MemoryStore, user_id: str) -> int:
    """Delete the deliveries of the store's webhooks that hold a user's data (erasing the user); their count."""
    deleted, _ = WebhookDelivery.objects.filter(
        webhook_id__in=Webhook.objects.filter(store=store).values("pk"), user_id=user_id
    ).delete()
    return deleted


def webhook_deliveries_purge_old(*, older_than: timedelta | None = None) -> int:
    """Delete deliveries older than WEBHOOK_DELIVERY_RETENTION_DAYS (or `older_than`); their count."""
    older_than = older_than or timedelta(days=settings.WEBHOOK_DELIVERY_RETENTION_DAYS)
    deleted, _ = WebhookDelivery.objects.filter(created_at__lt=timezone.now() - older_than).delete()
    return deleted


# The most deliveries one sweep enqueues again: a long outage of the broker is caught up over several sweeps.
SWEEP_BATCH = 1000


def webhook_sweep() -> dict:
    """Periodic: enqueue again the deliveries whose task was lost, and delete deliveries past their retention."""
    now = timezone.now()
    # A task taken by a worker that died is re-delivered by the broker after Q retry seconds (the ORM broker's
    # lease), and retries fire from the scheduler's 30 s tick: a delivery due for longer lost its task. The
    # sweep's own mark (updated_at) keeps it from enqueuing the same delivery at every run of a long backlog.
    lost_after = timedelta(seconds=settings.Q_CLUSTER["retry"] + 60)
    lost = list(
        WebhookDelivery.objects.filter(
            status=WebhookDelivery.Status.QUEUED, next_attempt_at__lt=now - lost_after, updated_at__lt=now - lost_after
        ).values_list("pk", flat=True)[:SWEEP_BATCH]
    )
    if lost:
        WebhookDelivery.objects.filter(pk__in=lost).update(updated_at=now)
        enqueue_deliveries(lost)
    return {"requeued": len(lost), "purged": webhook_deliveries_purge_old()}
