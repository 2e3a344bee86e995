"""django-q2 entry points of the memories app: thin wrappers that take ids and call services."""

from apps.memories.services import webhooks
from apps.memories.services.events import live_messages_purge


def deliver_webhook(delivery_id: str) -> str:
    """One attempt at a webhook delivery (enqueued when the event is published, scheduled for each retry)."""
    delivery = webhooks.webhook_delivery_attempt(delivery_id=delivery_id)
    if delivery is None:
        return "not claimed (sent, failed, not yet due, or being sent by another task)"
    return f"{delivery.status} after {delivery.attempts} attempt(s)"


def sweep_webhook_deliveries() -> dict:
    """Every 5 minutes (schedule created by a migration): lost deliveries enqueued again, old ones deleted."""
    return webhooks.webhook_sweep()


def purge_live_messages() -> dict:
    """Every 5 minutes (schedule created by a migration): the channel layer's expired rows deleted."""
    return live_messages_purge()
