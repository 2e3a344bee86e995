"""The webhooks page of a store: tenant admins only; every change through apps.memories.services.webhooks."""

import pytest

from apps.memories.models import Webhook, WebhookDelivery
from apps.memories.services.webhooks import webhook_create

JSON = {"HTTP_ACCEPT": "application/json"}


@pytest.fixture
def hook(tenant_a, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = True
    webhook = webhook_create(store=tenant_a.store, url="http://127.0.0.1:9/hook", description="CRM")
    delivery = WebhookDelivery.objects.create(webhook=webhook, event_id="e1", event_type="memory.created",
                                              payload={"id": "e1"}, status="failed", attempts=6,
                                              response_status=500, last_error="HTTP 500 from the receiver")
    return webhook, delivery


def webhook_routes(store, webhook, delivery):
    base = f"/review/stores/{store.pk}/webhooks/"
    return [
        ("webhooks", "get", base, None),
        ("webhook-create", "post", base + "add/", {"url": "http://127.0.0.1:9/other", "event_types": ["memory.created"]}),
        ("webhook-toggle", "post", f"{base}{webhook.pk}/toggle/", {"enable": "0"}),
        ("webhook-rotate", "post", f"{base}{webhook.pk}/rotate/", {}),
        ("webhook-test", "post", f"{base}{webhook.pk}/test/", {}),
        ("webhook-delete", "post", f"{base}{webhook.pk}/delete/", {}),
        ("webhook-delivery-retry", "post", f"{base}{webhook.pk}/deliveries/{delivery.pk}/retry/", {}),
    ]


def _rows(store):
    return (list(Webhook.objects.filter(store=store).order_by("pk").values()),
            list(WebhookDelivery.objects.filter(webhook__store=store).order_by("pk").values()))


@pytest.mark.parametrize("index", range(7))
def test_only_the_tenants_admins_manage_its_webhooks(index, tenant_a, hook, browsers, django_capture_on_commit_callbacks):
    name, method, path, data = webhook_routes(tenant_a.store, *hook)[index]
    before = _rows(tenant_a.store)
    call = (lambda client: client.get(path)) if method == "get" else (lambda client: client.post(path, data))
    assert call(browsers.anonymous).status_code == 302
    for client in (browsers.outsider, browsers.other_admin):
        assert call(client).status_code == 404, name
    assert call(browsers.reviewer).status_code == 403, name
    assert _rows(tenant_a.store) == before
    with django_capture_on_commit_callbacks(execute=False):
        response = call(browsers.admin)
    assert response.status_code == (200 if method == "get" else 302), (name, response.content[:300])


def test_the_page_lists_webhooks_and_the_delivery_log(tenant_a, hook, browsers):
    webhook, delivery = hook
    body = browsers.admin.get(f"/review/stores/{tenant_a.store.pk}/webhooks/?webhook={webhook.pk}").content.decode()
    assert "http://127.0.0.1:9/hook" in body and "CRM" in body and "HTTP 500 from the receiver" in body
    assert 'data-testid="delivery-retry"' in body
    assert 'data-testid="store-webhooks-link"' in browsers.admin.get("/review/overview/").content.decode()
    assert 'data-testid="store-webhooks-link"' not in browsers.reviewer.get("/review/overview/").content.decode()


def test_create_disable_enable_and_delete(tenant_a, hook, browsers, settings):
    base = f"/review/stores/{tenant_a.store.pk}/webhooks/"
    created = browsers.admin.post(base + "add/", {"url": "http://127.0.0.1:9/new", "event_types": ["memory.created"]},
                                  **JSON)
    assert created.status_code == 200 and created.json()["webhook"]["secret"].startswith("whsec_")
    webhook = Webhook.objects.get(url="http://127.0.0.1:9/new")
    assert webhook.event_types == ["memory.created"]
    browsers.admin.post(f"{base}{webhook.pk}/toggle/", {"enable": "0"})
    assert Webhook.objects.get(pk=webhook.pk).is_active is False
    browsers.admin.post(f"{base}{webhook.pk}/toggle/", {"enable": "1"})
    assert Webhook.objects.get(pk=webhook.pk).is_active is True
    browsers.admin.post(f"{base}{webhook.pk}/delete/")
    assert not Webhook.objects.filter(pk=webhook.pk).exists()


def test_a_refused_url_is_reported(tenant_a, browsers, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = False
    response = browsers.admin.post(f"/review/stores/{tenant_a.store.pk}/webhooks/add/",
                                   {"url": "http://127.0.0.1:9/x"}, **JSON)
    assert response.status_code == 400 and response.json()["error"]["code"] == "webhook_url_refused"
    assert not Webhook.objects.exists()


def test_a_failed_delivery_is_sent_again(tenant_a, hook, browsers, django_capture_on_commit_callbacks):
    webhook, delivery = hook
    with django_capture_on_commit_callbacks(execute=False):
        response = browsers.admin.post(
            f"/review/stores/{tenant_a.store.pk}/webhooks/{webhook.pk}/deliveries/{delivery.pk}/retry/", **JSON)
    assert response.status_code == 200 and WebhookDelivery.objects.get(pk=delivery.pk).status == "queued"
