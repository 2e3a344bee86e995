"""Delivering webhooks, through the service the worker's task calls: a signed POST to a real local receiver,
retries with backoff, final failure, disabling after repeated failure, a duplicated task, the receiver's
checks as the README publishes them. A retry is made due by travelling to its time; tests/memories/
test_webhooks_worker.py makes the attempts in a real qcluster.
"""

import re
import threading
from datetime import timedelta
from pathlib import Path

import pytest
import time_machine
from django.utils import timezone
from django_q.models import Schedule

from apps.core.errors import ConflictError
from apps.memories.models import WebhookDelivery
from apps.memories.services.webhooks import (
    webhook_create,
    webhook_delivery_retry,
    webhook_rotate_secret,
    webhook_send_test,
    webhook_update,
)
from tests.fakes.webhook_receiver import Reply
from tests.memories.test_webhooks import attempt_now, attempt_when_due, schedule, store_event


def test_an_event_is_delivered_as_a_signed_post(webhook, receiver):
    event = store_event(webhook.store)
    [delivery] = schedule(event)

    delivered = attempt_now(delivery)

    [request] = receiver.requests
    assert request.verified(webhook.secret) == event.as_dict()
    assert request.path == "/hooks/memoryhub"
    assert request.headers["content-type"] == "application/json"
    assert request.headers["memoryhub-event"] == "memory.created"
    assert request.headers["memoryhub-delivery"] == str(delivery.pk)
    assert request.headers["user-agent"].startswith("memoryhub-webhooks/")
    assert request.headers["host"] == f"127.0.0.1:{receiver.port}"
    assert delivered.status == WebhookDelivery.Status.SUCCEEDED
    assert (delivered.attempts, delivered.response_status, delivered.last_error) == (1, 200, "")
    assert delivered.delivered_at is not None and delivered.duration_ms is not None
    assert delivered.next_attempt_at is None


def test_a_tampered_body_or_another_secret_does_not_verify(webhook, receiver):
    [delivery] = schedule(store_event(webhook.store))
    attempt_now(delivery)
    [request] = receiver.requests

    with pytest.raises(AssertionError, match="does not verify"):
        request.verified("whsec_someone-elses")
    tampered = type(request)(request.method, request.path, request.headers,
                             request.body.replace(b"green tea", b"black tea"), request.received_at)
    with pytest.raises(AssertionError, match="does not verify"):
        tampered.verified(webhook.secret)


def _readme_verifier():
    """verify_memoryhub_webhook, the receiver's code in the README's Webhooks section, as published."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("\n## Webhooks\n", 1)[1].split("\n## ", 1)[0]
    [code] = [block for block in re.findall(r"```python\n(.*?)```", section, re.S) if "def verify_memoryhub" in block]
    namespace = {}
    exec(code, namespace)
    return namespace["verify_memoryhub_webhook"]


def test_the_readme_verifier_accepts_a_delivery_and_refuses_a_forgery_or_a_replay(webhook, receiver):
    verify_as_readme = _readme_verifier()
    [delivery] = schedule(store_event(webhook.store))
    attempt_now(delivery)
    [request] = receiver.requests
    signature = request.headers["memoryhub-signature"]

    assert verify_as_readme(request.body, signature, webhook.secret)["type"] == "memory.created"
    with pytest.raises(ValueError, match="does not match"):
        verify_as_readme(request.body.replace(b"green", b"black"), signature, webhook.secret)
    with pytest.raises(ValueError, match="does not match"):
        verify_as_readme(request.body, signature, "whsec_someone-elses")
    with pytest.raises(ValueError, match="malformed"):
        verify_as_readme(request.body, "v1=" + signature.split("v1=")[1], webhook.secret)
    with time_machine.travel(timezone.now() + timedelta(minutes=6)), pytest.raises(ValueError, match="replay"):
        verify_as_readme(request.body, signature, webhook.secret)


def test_a_published_event_reaches_the_webhook_after_commit(webhook, receiver, django_capture_on_commit_callbacks,
                                                            add_memory):
    with django_capture_on_commit_callbacks(execute=True):
        memory = add_memory(webhook.store, "Alice is allergic to latex")

    delivery = WebhookDelivery.objects.get(webhook=webhook)
    assert (delivery.event_type, delivery.user_id) == ("memory.created", "alice")
    attempt_now(delivery)
    body = receiver.requests[0].verified(webhook.secret)
    assert body["type"] == "memory.created" and body["store"] == "main"
    assert body["data"]["memory"]["id"] == str(memory.pk)
    assert body["data"]["memory"]["content"] == "Alice is allergic to latex"


def test_a_failed_attempt_is_retried_with_backoff_until_it_succeeds(webhook, receiver):
    receiver.fail(2)
    [delivery] = schedule(store_event(webhook.store))
    started = timezone.now()

    first = attempt_now(delivery)

    assert first.status == WebhookDelivery.Status.QUEUED and first.attempts == 1
    assert first.response_status == 500
    assert first.last_error == 'The receiver answered 500 Internal Server Error: {"error": "the receiver is down"}'
    assert timedelta(seconds=9) <= first.next_attempt_at - started <= timedelta(seconds=11)
    retry = Schedule.objects.get(name=f"webhook-{delivery.pk}-2")
    assert (retry.func, retry.args, retry.next_run) == (
        "apps.memories.tasks.deliver_webhook", repr(str(delivery.pk)), first.next_attempt_at)
    assert attempt_now(delivery) is None  # not yet due: a task run early sends nothing
    assert len(receiver.requests) == 1

    second = attempt_when_due(first)
    assert second.attempts == 2 and second.status == WebhookDelivery.Status.QUEUED
    assert timedelta(seconds=39) <= second.next_attempt_at - second.updated_at <= timedelta(seconds=41)  # 10 s × 4

    third = attempt_when_due(second)
    assert third.status == WebhookDelivery.Status.SUCCEEDED and third.attempts == 3
    assert (third.response_status, third.last_error) == (200, "")
    assert len(receiver.requests) == 3
    assert {request.headers["memoryhub-delivery"] for request in receiver.requests} == {str(delivery.pk)}
    webhook.refresh_from_db()
    assert webhook.consecutive_failures == 0


def test_the_backoff_is_capped(webhook, receiver, settings):
    settings.WEBHOOK_BACKOFF_MAX_SECONDS = 30
    receiver.default = Reply.status(503)
    [delivery] = schedule(store_event(webhook.store))
    delivery = attempt_now(delivery)
    delivery = attempt_when_due(delivery)  # 10 s, then 40 s capped to 30 s

    assert timedelta(seconds=29) <= delivery.next_attempt_at - delivery.updated_at <= timedelta(seconds=31)


def test_a_delivery_failing_every_attempt_fails_for_good(webhook, receiver, settings):
    settings.WEBHOOK_MAX_ATTEMPTS = 2
    receiver.default = Reply.status(500, body="<html>\n<h1>Oops</h1>\n" + "x" * 1000 + "</html>")
    [delivery] = schedule(store_event(webhook.store))

    failed = attempt_when_due(attempt_now(delivery))

    assert failed.status == WebhookDelivery.Status.FAILED and failed.attempts == 2
    assert failed.next_attempt_at is None and failed.delivered_at is None
    assert failed.last_error.startswith("The receiver answered 500 Internal Server Error: <html> <h1>Oops</h1> xxx")
    assert len(failed.last_error) < 300
    assert not Schedule.objects.filter(name=f"webhook-{delivery.pk}-3").exists()
    webhook.refresh_from_db()
    assert webhook.consecutive_failures == 1 and webhook.is_active


def test_a_redirect_is_not_followed(webhook, receiver):
    receiver.script(Reply.redirect(receiver.url + "/elsewhere"))
    [delivery] = schedule(store_event(webhook.store))

    attempted = attempt_now(delivery)

    assert len(receiver.requests) == 1
    assert attempted.response_status == 302 and attempted.status == WebhookDelivery.Status.QUEUED
    assert "redirects are not followed" in attempted.last_error and "/elsewhere" in attempted.last_error


def test_a_receiver_that_does_not_answer_in_time_is_a_failedattempt_now(webhook, receiver, settings):
    settings.WEBHOOK_TIMEOUT_SECONDS = 0.3
    receiver.script(Reply.slow(3))
    [delivery] = schedule(store_event(webhook.store))

    attempted = attempt_now(delivery)

    assert attempted.last_error == "No answer within 0.3 s." and attempted.response_status is None
    assert attempted.duration_ms < 2000


def test_a_receiver_that_is_not_listening_is_a_failedattempt_now(webhook, receiver):
    url = receiver.url
    receiver.stop()
    [delivery] = schedule(store_event(webhook.store))

    attempted = attempt_now(delivery)

    assert attempted.status == WebhookDelivery.Status.QUEUED
    assert attempted.last_error.startswith("Could not connect to 127.0.0.1"), attempted.last_error
    assert webhook.url == url


def test_repeated_failures_disable_the_webhook_and_a_success_resets_the_count(webhook, receiver, settings):
    settings.WEBHOOK_MAX_ATTEMPTS = 1
    settings.WEBHOOK_DISABLE_AFTER_FAILURES = 3
    receiver.fail(2)
    for delivery in schedule(*[store_event(webhook.store, content=f"fact {n}") for n in range(3)]):
        attempt_now(delivery)  # fails, fails, succeeds
    webhook.refresh_from_db()
    assert webhook.consecutive_failures == 0 and webhook.is_active

    receiver.fail(3, status_code=502)
    for delivery in schedule(*[store_event(webhook.store, content=f"fact {n}") for n in range(3, 5)]):
        attempt_now(delivery)
    webhook.refresh_from_db()
    assert webhook.consecutive_failures == 2 and webhook.is_active
    [third] = schedule(store_event(webhook.store, content="fact 5"))
    attempt_now(third)

    webhook.refresh_from_db()
    assert not webhook.is_active and webhook.disabled_at is not None
    assert webhook.consecutive_failures == 3
    # The status, not the reply's text (it may echo a customer's words, and this row outlives erasures).
    assert webhook.disabled_reason == ("Disabled after 3 deliveries in a row failed on every attempt; the last: "
                                       "HTTP 502 (see the delivery log).")
    assert schedule(store_event(webhook.store, content="fact 6")) == []  # a disabled webhook gets no deliveries
    with pytest.raises(ConflictError) as refused:
        webhook_send_test(webhook=webhook)
    assert refused.value.code == "webhook_disabled"


def test_enabling_a_webhook_again_resets_its_failure_count(webhook, receiver, settings):
    settings.WEBHOOK_MAX_ATTEMPTS = 1
    settings.WEBHOOK_DISABLE_AFTER_FAILURES = 1
    receiver.fail(1)
    [delivery] = schedule(store_event(webhook.store))
    attempt_now(delivery)
    webhook.refresh_from_db()
    assert not webhook.is_active

    enabled = webhook_update(webhook=webhook, changes={"is_active": True})

    assert enabled.is_active and enabled.consecutive_failures == 0
    assert (enabled.disabled_at, enabled.disabled_reason) == (None, "")
    [delivery] = schedule(store_event(webhook.store))
    assert attempt_now(delivery).status == WebhookDelivery.Status.SUCCEEDED


def test_disabling_by_hand_says_so_and_fails_queued_deliveries_without_counting_them(webhook, receiver):
    [delivery] = schedule(store_event(webhook.store))

    disabled = webhook_update(webhook=webhook, changes={"is_active": False})
    attempted = attempt_now(delivery)

    assert disabled.disabled_reason == "Disabled by an administrator." and disabled.disabled_at is not None
    assert receiver.requests == []
    assert attempted.status == WebhookDelivery.Status.FAILED
    assert attempted.last_error == "Not sent: the webhook is disabled."
    webhook.refresh_from_db()
    assert webhook.consecutive_failures == 0


@pytest.mark.django_db(transaction=True)
def test_a_duplicated_task_does_not_send_twice(tenant_a, receiver):
    webhook = webhook_create(store=tenant_a.store, url=receiver.url)
    receiver.script(Reply.slow(1.0))
    [delivery] = schedule(store_event(tenant_a.store))
    outcomes = {}

    def attempt(name):
        outcomes[name] = attempt_now(delivery)

    first = threading.Thread(target=attempt, args=("first",))
    first.start()
    receiver.wait_for(1)  # the first task is sending
    attempt("duplicate")
    first.join()
    attempt("redelivered")  # e.g. the broker's re-delivery of a task that did finish

    assert len(receiver.requests) == 1
    assert outcomes["duplicate"] is None and outcomes["redelivered"] is None
    assert outcomes["first"].status == WebhookDelivery.Status.SUCCEEDED and outcomes["first"].attempts == 1
    assert webhook.deliveries.get().attempts == 1


def test_an_attempt_whose_worker_died_is_made_again_once_its_lease_expires(webhook, receiver):
    [delivery] = schedule(store_event(webhook.store))
    # What a claim leaves behind when its worker is killed mid-send.
    WebhookDelivery.objects.filter(pk=delivery.pk).update(attempts=1, next_attempt_at=timezone.now()
                                                          + timedelta(minutes=1))

    assert attempt_now(delivery) is None
    with time_machine.travel(timezone.now() + timedelta(minutes=2), tick=True):
        attempted = attempt_now(delivery)

    assert attempted.status == WebhookDelivery.Status.SUCCEEDED and attempted.attempts == 2
    assert len(receiver.requests) == 1


def test_a_rotated_secret_signs_the_deliveries_after_it(webhook, receiver):
    old_secret = webhook.secret
    [delivery] = schedule(store_event(webhook.store))

    rotated = webhook_rotate_secret(webhook=webhook)
    attempt_now(delivery)

    assert rotated.secret != old_secret
    receiver.requests[0].verified(rotated.secret)
    with pytest.raises(AssertionError, match="does not verify"):
        receiver.requests[0].verified(old_secret)


def test_a_test_delivery_is_a_signed_ping(webhook, receiver):
    delivery = webhook_send_test(webhook=webhook)

    assert delivery.status == WebhookDelivery.Status.QUEUED and delivery.event_type == "ping"
    attempt_now(delivery)
    body = receiver.requests[0].verified(webhook.secret)
    assert body["type"] == "ping" and body["store"] == "main"
    assert body["data"]["webhook_id"] == str(webhook.pk)


def test_a_failed_delivery_can_be_sent_again(webhook, receiver, settings):
    settings.WEBHOOK_MAX_ATTEMPTS = 1
    receiver.fail(1)
    [delivery] = schedule(store_event(webhook.store))
    failed = attempt_now(delivery)
    assert failed.status == WebhookDelivery.Status.FAILED

    queued = webhook_delivery_retry(delivery=failed)

    assert (queued.status, queued.attempts) == (WebhookDelivery.Status.QUEUED, 0)
    sent = attempt_now(queued)
    assert sent.status == WebhookDelivery.Status.SUCCEEDED and sent.attempts == 1
    assert receiver.requests[0].body == receiver.requests[1].body  # the same event, as first sent
    with pytest.raises(ConflictError) as refused:
        webhook_delivery_retry(delivery=sent)
    assert refused.value.code == "delivery_not_failed"
