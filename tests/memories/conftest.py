"""Fixtures of the webhook tests: a receiver on 127.0.0.1 (which webhooks may reach in tests) and a store's webhook
pointing at it."""

import pytest

from apps.memories.services.webhooks import webhook_create
from tests.fakes.webhook_receiver import WebhookReceiver


@pytest.fixture
def receiver(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = True  # the receiver listens on 127.0.0.1
    with WebhookReceiver() as server:
        yield server


@pytest.fixture
def webhook(tenant_a, receiver):
    return webhook_create(store=tenant_a.store, url=receiver.url, description="CRM sync")
