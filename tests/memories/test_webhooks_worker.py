"""Webhook deliveries through a real `manage.py qcluster` process: a memory added through the API reaches the
receiver as a signed POST, a failed attempt is retried by django-q2's scheduler, and duplicated tasks send once.

The worker is a subprocess attached to the test database, so these tests use transactional databases (see
tests/processes.py); the receiver is a real HTTP server on 127.0.0.1, which the worker may call because its
environment allows private addresses.
"""

import time

import pytest
from django_q.models import Task
from django_q.tasks import async_task

from apps.memories.models import WebhookDelivery
from apps.memories.services.webhooks import webhook_create
from tests.fakes.webhook_receiver import Reply, WebhookReceiver
from tests.processes import QCluster, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

DELIVER_TASK = "apps.memories.tasks.deliver_webhook"
WORKER_ENV = {"WEBHOOK_ALLOW_PRIVATE_ADDRESSES": "true", "WEBHOOK_BACKOFF_SECONDS": "1"}
MEMORIES_URL = "/api/v1/stores/main/memories"


@pytest.fixture
def qcluster(transactional_db, settings, tmp_path):
    cluster = QCluster(database_name=settings.DATABASES["default"]["NAME"], log_dir=tmp_path)
    yield cluster
    cluster.stop()  # before the database is flushed


@pytest.fixture
def receiver(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = True  # for webhook_create in this process
    with WebhookReceiver() as server:
        yield server


def _add_memory(world, content: str) -> dict:
    response = world.client("write").post(MEMORIES_URL, {"user_id": "alice", "content": content}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["memory"]


def test_a_memory_added_through_the_api_reaches_the_webhook_signed(tenant_a, qcluster, receiver):
    webhook = webhook_create(store=tenant_a.store, url=receiver.url, event_types=["memory.created"])
    qcluster.start(**WORKER_ENV)

    memory = _add_memory(tenant_a, "Alice is allergic to latex")

    [request] = receiver.wait_for(1, timeout=30)
    body = request.verified(webhook.secret)
    assert body["type"] == "memory.created" and body["store"] == "main"
    assert body["data"]["memory"]["id"] == memory["id"]
    assert body["data"]["memory"]["content"] == "Alice is allergic to latex"
    assert request.headers["memoryhub-event"] == "memory.created"
    delivery = wait_for(
        lambda: WebhookDelivery.objects.filter(status=WebhookDelivery.Status.SUCCEEDED).first(),
        timeout=10, what="the delivery to be recorded", cluster=qcluster,
    )
    assert request.headers["memoryhub-delivery"] == str(delivery.pk)
    assert (delivery.attempts, delivery.response_status, delivery.user_id) == (1, 200, "alice")


def test_a_failed_attempt_is_retried_by_the_scheduler(tenant_a, qcluster, receiver):
    webhook = webhook_create(store=tenant_a.store, url=receiver.url)
    receiver.fail(1, status_code=503)
    qcluster.start(**WORKER_ENV)

    _add_memory(tenant_a, "Alice prefers email")

    # The retry is due a second later and fires from the scheduler, which runs every 30 s.
    first, second = receiver.wait_for(2, timeout=90)
    assert first.body == second.body and first.headers["memoryhub-delivery"] == second.headers["memoryhub-delivery"]
    second.verified(webhook.secret)
    delivery = wait_for(
        lambda: WebhookDelivery.objects.filter(status=WebhookDelivery.Status.SUCCEEDED).first(),
        timeout=10, what="the retried delivery to be recorded", cluster=qcluster,
    )
    assert delivery.attempts == 2 and delivery.last_error == ""


def test_duplicated_tasks_of_a_delivery_send_it_once(tenant_a, qcluster, receiver):
    webhook_create(store=tenant_a.store, url=receiver.url)
    receiver.script(Reply.slow(1.5))  # the first send is still under way when the duplicates run
    _add_memory(tenant_a, "Alice lives in Lyon")  # enqueues its task
    delivery = WebhookDelivery.objects.get()
    for _ in range(2):  # e.g. the sweep's, or the broker's re-delivery
        async_task(DELIVER_TASK, str(delivery.pk))

    qcluster.start(workers=2, **WORKER_ENV)

    def finished_tasks():
        results = list(Task.objects.filter(func=DELIVER_TASK).values_list("result", flat=True))
        return results if len(results) == 3 else None

    results = wait_for(finished_tasks, timeout=30, what="the three tasks to finish", cluster=qcluster)
    time.sleep(0.5)
    assert len(receiver.requests) == 1
    assert sorted(results) == ["not claimed (sent, failed, not yet due, or being sent by another task)"] * 2 + [
        "succeeded after 1 attempt(s)"]
    delivery.refresh_from_db()
    assert delivery.status == WebhookDelivery.Status.SUCCEEDED and delivery.attempts == 1
