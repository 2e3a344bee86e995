"""Outgoing webhooks, through the services: managing them, where their URLs may point, which events go to which
webhook (and what that costs), erasure and the sweep. Delivering them: tests/memories/test_webhooks_delivery.py;
through a real worker: tests/memories/test_webhooks_worker.py. The helpers below serve all three.
"""

from datetime import timedelta

import pytest
import time_machine
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django_q.models import OrmQ

from apps.core.errors import ApplicationError, ConflictError
from apps.memories.events import Event, EventType
from apps.memories.models import Webhook, WebhookDelivery
from apps.memories.services import memory_hard_delete
from apps.memories.services.events import events_collected, events_publish
from apps.memories.services.webhooks import (
    webhook_create,
    webhook_deliveries_forget,
    webhook_deliveries_schedule,
    webhook_delivery_attempt,
    webhook_sweep,
    webhook_update,
)


def store_event(store, event_type=EventType.MEMORY_CREATED, user_id="alice", content="Alice drinks green tea"):
    return Event(type=event_type, store_id=str(store.pk), store_name=store.name,
                 data={"memory": {"id": "m-1", "user_id": user_id, "content": content}})


def schedule(*events) -> list[WebhookDelivery]:
    return webhook_deliveries_schedule(events=list(events))


def attempt_now(delivery) -> WebhookDelivery | None:
    """One attempt, as the worker's task makes it."""
    return webhook_delivery_attempt(delivery_id=delivery.pk)


def attempt_when_due(delivery) -> WebhookDelivery | None:
    with time_machine.travel(delivery.next_attempt_at + timedelta(milliseconds=1), tick=True):
        return attempt_now(delivery)


# --- Managing ------------------------------------------------------------------------------------------------


def test_a_webhook_gets_a_generated_secret(tenant_a, receiver):
    first = webhook_create(store=tenant_a.store, url=receiver.url)
    second = webhook_create(store=tenant_a.store, url=receiver.url, event_types=["memory.deleted", "memory.created"])

    assert first.secret.startswith("whsec_") and len(first.secret) > 40
    assert first.secret != second.secret
    assert first.event_types == [] and first.is_active
    assert second.event_types == ["memory.created", "memory.deleted"]  # in the order of EventType.ALL


def test_unknown_event_types_and_bad_urls_are_refused(tenant_a, receiver):
    with pytest.raises(ApplicationError) as refused:
        webhook_create(store=tenant_a.store, url=receiver.url, event_types=["memory.created", "memory.exploded"])
    assert refused.value.code == "unknown_event_type" and "memory.exploded" in refused.value.message

    for url in ("ftp://example.com/hook", "javascript:alert(1)", "not a url", "http://exa mple.com/", "https://",
                "http://example.com:99999/", "//example.com/hook", ""):
        with pytest.raises(ApplicationError) as refused:
            webhook_create(store=tenant_a.store, url=url)
        assert refused.value.code == "invalid_webhook_url", url
        assert "url" in refused.value.details
    assert not Webhook.objects.exists()


def test_a_store_has_at_most_the_configured_number_of_webhooks(tenant_a, receiver, settings):
    settings.WEBHOOK_MAX_PER_STORE = 2
    webhook_create(store=tenant_a.store, url=receiver.url)
    webhook_create(store=tenant_a.store, url=receiver.url)

    with pytest.raises(ConflictError) as refused:
        webhook_create(store=tenant_a.store, url=receiver.url)
    assert refused.value.code == "webhook_limit_reached"


def test_only_the_changeable_fields_can_be_updated(webhook):
    with pytest.raises(ApplicationError) as refused:
        webhook_update(webhook=webhook, changes={"secret": "mine", "description": "x"})
    assert refused.value.code == "immutable_field" and refused.value.details == {"secret": ["Cannot be changed."]}

    changed = webhook_update(webhook=webhook, changes={"description": "Billing", "event_types": ["user.erased"]})
    assert (changed.description, changed.event_types) == ("Billing", ["user.erased"])


# --- Addresses -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("url", [
    "http://127.0.0.1:8000/hook",
    "http://localhost/hook",
    "http://10.0.0.5/hook",
    "http://192.168.1.20/hook",
    "http://172.16.0.1/hook",
    "http://169.254.169.254/latest/meta-data/",  # a cloud's metadata service
    "http://100.64.0.1/hook",  # carrier-grade NAT
    "http://0.0.0.0/hook",
    "http://[::1]/hook",
    "http://[fe80::1]/hook",
    "http://[fd00::1]/hook",
    "http://[::ffff:127.0.0.1]/hook",  # IPv4-mapped loopback
    "http://0x7f.1/hook",  # 127.0.0.1 written the way inet_aton also reads
    "http://[64:ff9b::a00:1]/hook",  # NAT64 of 10.0.0.1
    "http://[2002:a00:1::]/hook",  # 6to4 of 10.0.0.1
])
def test_private_loopback_and_link_local_addresses_are_refused(tenant_a, settings, url):
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = False

    with pytest.raises(ApplicationError) as refused:
        webhook_create(store=tenant_a.store, url=url)

    assert refused.value.code in ("webhook_url_refused", "invalid_webhook_url"), refused.value.message
    if refused.value.code == "webhook_url_refused":
        assert "public addresses only" in refused.value.message
    assert not Webhook.objects.exists()


def test_a_public_address_is_accepted(tenant_a, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = False

    webhook = webhook_create(store=tenant_a.store, url="https://93.184.216.34/hooks/memoryhub")

    assert webhook.url == "https://93.184.216.34/hooks/memoryhub"
    with pytest.raises(ApplicationError) as refused:
        webhook_update(webhook=webhook, changes={"url": "http://10.1.2.3/hook"})
    assert refused.value.code == "webhook_url_refused"


def test_the_address_is_checked_again_when_sending(webhook, receiver, settings):
    [delivery] = schedule(store_event(webhook.store))
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = False  # e.g. the host's DNS now points inside

    attempted = attempt_now(delivery)

    assert receiver.requests == []
    assert attempted.status == WebhookDelivery.Status.QUEUED and attempted.attempts == 1  # retried later
    assert attempted.last_error.startswith("Not sent: The host '127.0.0.1' is or resolves to 127.0.0.1")


# --- Scheduling ----------------------------------------------------------------------------------------------


def test_webhooks_receive_the_event_types_they_name(tenant_a, receiver):
    everything = webhook_create(store=tenant_a.store, url=receiver.url)
    deletions = webhook_create(store=tenant_a.store, url=receiver.url, event_types=["memory.deleted"])
    disabled = webhook_create(store=tenant_a.store, url=receiver.url)
    webhook_update(webhook=disabled, changes={"is_active": False})

    deliveries = schedule(store_event(tenant_a.store, EventType.MEMORY_CREATED),
                           store_event(tenant_a.store, EventType.MEMORY_DELETED))

    assert sorted((d.webhook_id == everything.pk, d.event_type) for d in deliveries) == [
        (False, "memory.deleted"), (True, "memory.created"), (True, "memory.deleted")]
    assert deletions.deliveries.get().event_type == "memory.deleted"
    assert not disabled.deliveries.exists()


def test_an_event_goes_only_to_its_own_stores_webhooks(tenant_a, tenant_b, receiver):
    own = webhook_create(store=tenant_a.store, url=receiver.url)
    other = webhook_create(store=tenant_b.store, url=receiver.url)

    schedule(store_event(tenant_a.store), store_event(tenant_a.store, EventType.MEMORY_UPDATED))

    assert own.deliveries.count() == 2 and not other.deliveries.exists()


def test_scheduling_costs_one_query_for_a_store_without_webhooks(tenant_a, tenant_b, receiver,
                                                                 django_assert_num_queries):
    webhook_create(store=tenant_b.store, url=receiver.url)
    events = [store_event(tenant_a.store, content=f"fact {n}") for n in range(100)]

    with django_assert_num_queries(1):
        assert schedule(*events) == []


def test_scheduling_many_events_writes_them_in_one_insert(webhook, django_assert_num_queries):
    with django_assert_num_queries(4):  # the webhooks, a savepoint, one INSERT, its release
        one = schedule(store_event(webhook.store))
    with django_assert_num_queries(4):
        hundred = schedule(*[store_event(webhook.store, content=f"fact {n}") for n in range(100)])

    assert len(one) == 1 and len(hundred) == 100
    assert webhook.deliveries.count() == 101


@pytest.mark.django_db(transaction=True)
def test_deliveries_are_written_with_the_change_and_enqueued_once_it_commits(tenant_a, receiver):
    webhook = webhook_create(store=tenant_a.store, url=receiver.url)

    with transaction.atomic():
        events_publish([store_event(tenant_a.store)])
        # An outbox: the delivery commits (or rolls back) with the change; nothing is sent before the commit.
        assert WebhookDelivery.objects.filter(webhook=webhook).count() == 1
        assert not OrmQ.objects.exists()

    delivery = WebhookDelivery.objects.get(webhook=webhook)
    assert [(task.func(), task.args()) for task in OrmQ.objects.all()] == [
        ("apps.memories.tasks.deliver_webhook", (str(delivery.pk),))]


def test_a_rolled_back_change_leaves_no_delivery(tenant_a, receiver):
    webhook_create(store=tenant_a.store, url=receiver.url)

    with pytest.raises(RuntimeError), transaction.atomic():
        events_publish([store_event(tenant_a.store)])
        raise RuntimeError("rolled back")

    assert not WebhookDelivery.objects.exists() and not OrmQ.objects.exists()


def test_collected_events_are_published_together_when_the_block_ends(webhook, django_assert_num_queries):
    with transaction.atomic():
        with events_collected():
            with django_assert_num_queries(0):
                events_publish([store_event(webhook.store, content="first")])
                with events_collected():  # nested: the outer block publishes
                    events_publish([store_event(webhook.store, content="second")])
                events_publish([store_event(webhook.store, content="third")])
            assert not webhook.deliveries.exists()
        assert webhook.deliveries.count() == 3

    with pytest.raises(RuntimeError), transaction.atomic(), events_collected():
        events_publish([store_event(webhook.store, content="rolled back")])
        raise RuntimeError("nothing of this block is published")
    assert webhook.deliveries.count() == 3


def test_an_extraction_job_publishes_its_events_in_one_batch(tenant_a, receiver):
    from apps.conversations.services.messages import MessageInput, messages_ingest
    from apps.extraction.services import extraction_job_run
    from apps.memories.services import stores

    webhook = webhook_create(store=tenant_a.store, url=receiver.url)
    stores.store_update(store=tenant_a.store, changes={"extraction_config": {"enabled": True, "every_n_turns": 1}})
    result = messages_ingest(store=tenant_a.store, session_external_id="chat-1", user_id="alice", messages=[
        MessageInput(role="user", content="My name is Alice Moreau. I live in Lyon and I work at Renault.")])
    with CaptureQueriesContext(connection) as queries:
        extraction_job_run(job_id=result.extraction_job.pk)

    assert sum('FROM "memories_webhook"' in query["sql"] for query in queries.captured_queries) == 1
    event_types = sorted(webhook.deliveries.values_list("event_type", flat=True))
    assert event_types.count("memory.created") >= 3 and "extraction_job.finished" in event_types


def test_each_delivery_records_whose_data_it_holds(webhook):
    store = webhook.store
    session = Event(type=EventType.SESSION_PAUSED, store_id=str(store.pk), store_name=store.name,
                    data={"session": {"id": "chat-1", "user_id": "bob"}})
    erased = Event(type=EventType.USER_ERASED, store_id=str(store.pk), store_name=store.name,
                   data={"user_id": "carol"})
    job = Event(type=EventType.JOB_FAILED, store_id=str(store.pk), store_name=store.name,
                data={"job": {"id": "j-1", "error": "the model was down"}})

    deliveries = schedule(store_event(store, user_id="alice"), session, erased, job)

    assert [delivery.user_id for delivery in deliveries] == ["alice", "bob", "carol", ""]


# --- Erasure and housekeeping --------------------------------------------------------------------------------


def test_erasing_a_user_forgets_the_deliveries_holding_their_data(tenant_a, tenant_b, receiver):
    own = webhook_create(store=tenant_a.store, url=receiver.url)
    other_store = webhook_create(store=tenant_b.store, url=receiver.url)
    schedule(store_event(tenant_a.store, user_id="alice"), store_event(tenant_a.store, user_id="alice", content="more"),
              store_event(tenant_a.store, user_id="bob"), store_event(tenant_b.store, user_id="alice"))

    forgotten = webhook_deliveries_forget(store=tenant_a.store, user_id="alice")

    assert forgotten == 2
    assert list(own.deliveries.values_list("user_id", flat=True)) == ["bob"]
    assert other_store.deliveries.count() == 1  # another store's alice is another customer


def test_erasing_a_user_through_the_api_forgets_their_deliveries(tenant_a, receiver):
    webhook = webhook_create(store=tenant_a.store, url=receiver.url, event_types=["memory.created"])
    schedule(store_event(tenant_a.store, user_id="alice"), store_event(tenant_a.store, user_id="bob"))

    response = tenant_a.client("admin").delete("/api/v1/stores/main/users/alice")

    assert response.status_code == 200, response.content
    assert list(webhook.deliveries.values_list("user_id", flat=True)) == ["bob"]


def test_the_sweep_enqueues_lost_deliveries_again_and_deletes_old_ones(webhook, settings):
    lost, recent, old = schedule(*[store_event(webhook.store, content=f"fact {n}") for n in range(3)])
    long_ago = timezone.now() - timedelta(minutes=30)
    WebhookDelivery.objects.filter(pk=lost.pk).update(next_attempt_at=long_ago, updated_at=long_ago)
    WebhookDelivery.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=31))
    queued_before = OrmQ.objects.count()

    assert webhook_sweep() == {"requeued": 1, "purged": 1}

    assert OrmQ.objects.count() == queued_before + 1
    assert set(WebhookDelivery.objects.values_list("pk", flat=True)) == {lost.pk, recent.pk}
    assert webhook_sweep() == {"requeued": 0, "purged": 0}  # marked: not enqueued again at once


def test_erasing_a_memory_for_good_deletes_the_deliveries_that_hold_its_words(webhook, add_memory):
    # Words no hex id can contain, so the check below cannot be matched by a memory's UUID.
    erased = add_memory(webhook.store, "Alice's card is the green Visa.")
    kept = add_memory(webhook.store, "Alice likes tea.")
    assert WebhookDelivery.objects.filter(event_type=EventType.MEMORY_CREATED).count() == 2

    erased_id = str(erased.pk)
    memory_hard_delete(memory=erased)

    payloads = [delivery.payload for delivery in WebhookDelivery.objects.all()]
    assert "green Visa" not in str(payloads)
    assert [p["data"]["memory"]["id"] for p in payloads if p["type"] == EventType.MEMORY_CREATED] == [str(kept.pk)]
    deleted = next(p for p in payloads if p["type"] == EventType.MEMORY_DELETED)
    assert deleted["data"] == {"memory": {"id": erased_id, "user_id": "alice"}, "erased": True}
