"""The webhook API: every endpoint's access (no key 401, read or write key 403, another tenant 404, admin
allowed, and a refused call changes nothing), and what it answers, bad input included."""

import pytest
from rest_framework.test import APIClient

from apps.memories.events import Event, EventType
from apps.memories.models import Webhook, WebhookDelivery
from apps.memories.services.webhooks import webhook_create, webhook_deliveries_schedule

SCOPES = ("read", "write", "admin")
W = "/api/v1/stores/main/webhooks"
PUBLIC_URL = "https://93.184.216.34/hooks/memoryhub"  # an address literal: no DNS needed, and public


def _endpoints(webhook_id, delivery_id):
    w = f"{W}/{webhook_id}"
    return [
        # (method, path, body, required scope, the other tenant's status: 404 for a call naming this tenant's
        # webhook; otherwise the call acts on the other tenant's own store, named "main" too)
        ("get", W, None, "admin", 200),
        ("post", W, {"url": PUBLIC_URL}, "admin", 201),
        ("get", w, None, "admin", 404),
        ("patch", w, {"description": "changed"}, "admin", 404),
        ("delete", w, None, "admin", 404),
        ("post", f"{w}/rotate-secret", None, "admin", 404),
        ("post", f"{w}/test", None, "admin", 404),
        ("get", f"{w}/deliveries", None, "admin", 404),
        ("post", f"{w}/deliveries/{delivery_id}/retry", None, "admin", 404),
    ]


def _call(client, method, path, body):
    return getattr(client, method)(path, body, format="json") if body is not None else getattr(client, method)(path)


@pytest.fixture
def webhook(tenant_a):
    return webhook_create(store=tenant_a.store, url=PUBLIC_URL, description="CRM sync")


@pytest.fixture
def failed_delivery(tenant_a, webhook):
    event = Event(type=EventType.MEMORY_CREATED, store_id=str(tenant_a.store.pk), store_name="main",
                  data={"memory": {"id": "m-1", "user_id": "alice", "content": "Alice drinks green tea"}})
    [delivery] = webhook_deliveries_schedule(events=[event])
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        status=WebhookDelivery.Status.FAILED, attempts=6, response_status=500, next_attempt_at=None,
        last_error="The receiver answered 500 Internal Server Error.",
    )
    delivery.refresh_from_db()
    return delivery


def _webhook_state(world):
    """Every webhook row of `world`'s store, and their deliveries, that another tenant's call must not touch."""
    return {
        "webhooks": list(Webhook.objects.filter(store=world.store).order_by("pk").values()),
        "deliveries": list(WebhookDelivery.objects.filter(webhook__store=world.store).order_by("pk").values()),
    }


@pytest.mark.parametrize("index", range(len(_endpoints("ID", "DELIVERY"))),
                         ids=[f"{method.upper()} {path}" for method, path, *_ in _endpoints("ID", "DELIVERY")])
def test_webhook_endpoint_access(index, tenant_a, tenant_b, webhook, failed_delivery):
    method, path, body, required, other_tenant_status = _endpoints(webhook.pk, failed_delivery.pk)[index]
    before = _webhook_state(tenant_a)
    assert before["webhooks"] and before["deliveries"]

    anonymous = _call(APIClient(), method, path, body)
    assert anonymous.status_code == 401 and anonymous.json()["error"]["code"] == "not_authenticated"
    for scope in SCOPES[:SCOPES.index(required)]:
        response = _call(tenant_a.client(scope), method, path, body)
        assert response.status_code == 403, (scope, response.content)
        assert response.json()["error"]["code"] == "permission_denied"
    other = _call(tenant_b.client("admin"), method, path, body)
    assert other.status_code == other_tenant_status, other.content
    if other_tenant_status == 404:
        assert other.json()["error"]["code"] == "webhook_not_found"
    else:
        # Acting on its own store, the other tenant sees nothing of this tenant's webhook.
        assert str(webhook.pk) not in other.content.decode() and webhook.secret not in other.content.decode()
    assert _webhook_state(tenant_a) == before  # no refused call (no key, too small a scope, another tenant) wrote

    response = _call(tenant_a.client(required), method, path, body)
    assert response.status_code in (200, 201, 202), response.content
    assert "error" not in response.json()


def test_the_secret_is_shown_on_creation_and_rotation_only(tenant_a):
    client = tenant_a.client("admin")

    created = client.post(W, {"url": PUBLIC_URL, "event_types": ["memory.created", "user.erased"],
                              "description": "CRM sync"}, format="json")

    assert created.status_code == 201, created.content
    body = created.json()
    secret = body["secret"]
    assert secret.startswith("whsec_")
    assert body["url"] == PUBLIC_URL and body["store"] == "main"
    assert body["event_types"] == ["memory.created", "user.erased"]
    assert body["is_active"] is True and body["consecutive_failures"] == 0
    shown = client.get(f"{W}/{body['id']}").json()
    listed = client.get(W).json()["results"]
    assert "secret" not in shown and [webhook["id"] for webhook in listed] == [body["id"]]
    assert secret not in client.get(W).content.decode()
    rotated = client.post(f"{W}/{body['id']}/rotate-secret")
    assert rotated.status_code == 200 and rotated.json()["secret"] not in (secret, None)
    assert Webhook.objects.get().secret == rotated.json()["secret"]


@pytest.mark.parametrize(("body", "code", "field"), [
    ({"url": "ftp://example.com/hook"}, "invalid_webhook_url", "url"),
    ({"url": "http://10.0.0.8/hook"}, "webhook_url_refused", "url"),
    ({"url": "http://169.254.169.254/latest/meta-data/"}, "webhook_url_refused", "url"),
    ({"url": PUBLIC_URL, "event_types": ["memory.exploded"]}, "validation_error", "event_types"),
    ({"url": PUBLIC_URL, "event_types": "memory.created"}, "validation_error", "event_types"),
    ({"url": PUBLIC_URL, "secret": "mine"}, "validation_error", "secret"),
    ({}, "validation_error", "url"),
])
def test_bad_input_is_a_400_naming_the_problem(tenant_a, body, code, field):
    response = tenant_a.client("admin").post(W, body, format="json")

    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == code and field in error["details"], error
    assert not Webhook.objects.exists()


def test_a_webhook_is_disabled_and_enabled_again_through_patch(tenant_a, webhook):
    client = tenant_a.client("admin")
    Webhook.objects.filter(pk=webhook.pk).update(consecutive_failures=3)

    disabled = client.patch(f"{W}/{webhook.pk}", {"is_active": False}, format="json").json()
    enabled = client.patch(f"{W}/{webhook.pk}", {"is_active": True}, format="json").json()

    assert disabled["is_active"] is False and disabled["disabled_reason"] == "Disabled by an administrator."
    assert disabled["disabled_at"] is not None and disabled["consecutive_failures"] == 3
    assert enabled["is_active"] is True and enabled["disabled_reason"] == "" and enabled["disabled_at"] is None
    assert enabled["consecutive_failures"] == 0
    empty = client.patch(f"{W}/{webhook.pk}", {}, format="json")
    assert empty.status_code == 400 and empty.json()["error"]["code"] == "validation_error"
    refused = client.patch(f"{W}/{webhook.pk}", {"url": "http://127.0.0.1/hook"}, format="json")
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "webhook_url_refused"


def test_the_delivery_log_pages_newest_first_and_filters_by_status(tenant_a, webhook, failed_delivery):
    client = tenant_a.client("admin")
    test = client.post(f"{W}/{webhook.pk}/test")
    assert test.status_code == 202 and test.json()["event_type"] == "ping" and test.json()["status"] == "queued"

    page = client.get(f"{W}/{webhook.pk}/deliveries", {"page_size": 1}).json()
    failed = client.get(f"{W}/{webhook.pk}/deliveries", {"status": "failed"}).json()

    assert [delivery["event_type"] for delivery in page["results"]] == ["ping"] and page["next"]
    second = client.get(page["next"]).json()
    assert [delivery["id"] for delivery in second["results"]] == [str(failed_delivery.pk)]
    [shown] = failed["results"]
    assert shown["last_error"] == "The receiver answered 500 Internal Server Error."
    assert (shown["user_id"], shown["attempts"], shown["response_status"]) == ("alice", 6, 500)
    assert shown["payload"]["data"]["memory"]["content"] == "Alice drinks green tea"
    bad = client.get(f"{W}/{webhook.pk}/deliveries", {"status": "lost"})
    assert bad.status_code == 400 and "status" in bad.json()["error"]["details"]


def test_only_a_failed_delivery_can_be_retried(tenant_a, webhook, failed_delivery):
    client = tenant_a.client("admin")
    retry = f"{W}/{webhook.pk}/deliveries/{failed_delivery.pk}/retry"

    first = client.post(retry)
    again = client.post(retry)

    assert first.status_code == 202 and first.json()["status"] == "queued" and first.json()["attempts"] == 0
    assert again.status_code == 409 and again.json()["error"]["code"] == "delivery_not_failed"


def test_deleting_a_webhook_deletes_its_delivery_log(tenant_a, webhook, failed_delivery):
    client = tenant_a.client("admin")

    response = client.delete(f"{W}/{webhook.pk}")

    assert response.json() == {"deleted": True, "id": str(webhook.pk)}
    assert not WebhookDelivery.objects.exists()
    assert client.get(f"{W}/{webhook.pk}").json()["error"]["code"] == "webhook_not_found"


def test_a_delivery_of_another_webhook_is_not_found(tenant_a, webhook, failed_delivery):
    other = webhook_create(store=tenant_a.store, url=PUBLIC_URL)

    response = tenant_a.client("admin").post(f"{W}/{other.pk}/deliveries/{failed_delivery.pk}/retry")

    assert response.status_code == 404 and response.json()["error"]["code"] == "delivery_not_found"
