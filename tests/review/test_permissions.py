"""Every console route for every role: anonymous, staff of no tenant, another tenant's admin, a reviewer and
an admin of the tenant. A refused action changes no row of the store (the snapshot), not just its answer."""

import uuid

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from apps.memories.models import Memory, Webhook, WebhookDelivery
from tests.review.conftest import snapshot
from tests.review.test_webhooks import webhook_routes


# (name, method, path, data); paths are filled from the review world's objects.
def _routes(w):
    store, memory, session, job = w.store.pk, w.pending.pk, w.session.external_id, w.job.pk
    return [
        ("queue", "get", "/review/", None),
        ("overview", "get", "/review/overview/", None),
        ("jobs", "get", "/review/jobs/", None),
        ("customers", "get", "/review/customers/?q=ali", None),
        ("customer", "get", "/review/customers/alice/", None),
        ("pending-count", "get", "/review/queue/count/", None),
        ("memory", "get", f"/review/memories/{memory}/", None),
        ("memory-history", "get", f"/review/memories/{memory}/history/", None),
        ("queue-card", "get", f"/review/queue/cards/{memory}/", None),
        ("session", "get", f"/review/stores/{store}/sessions/{session}/", None),
        ("memory-approve", "post", f"/review/memories/{memory}/approve/", {}),
        ("memory-reject", "post", f"/review/memories/{memory}/reject/", {"reason": "wrong city"}),
        ("memory-edit-approve", "post", f"/review/memories/{memory}/edit-approve/",
         {"content": "Lives in Paris, France", "memory_type": "fact"}),
        ("memory-edit", "post", f"/review/memories/{w.active.pk}/edit/", {"content": "Lived in Berlin", "memory_type": "fact"}),
        ("memory-delete", "post", f"/review/memories/{w.active.pk}/delete/", {"reason": "outdated"}),
        ("memory-restore", "post", f"/review/memories/{w.deleted.pk}/restore/", {}),
        ("queue-bulk", "post", "/review/queue/bulk/", {"decision": "approve", "memory": [str(memory)]}),
        ("memory-add", "post", "/review/memories/add/",
         {"store": str(store), "user_id": "alice", "content": "Prefers email", "memory_type": "preference"}),
        ("customer-forget", "post", "/review/forget-customer/", {"user_id": "alice", "confirm": "alice"}),
        ("job-retry", "post", f"/review/jobs/{job}/retry/", {}),
    ]


OBJECT_PAGES = {"memory", "memory-history", "queue-card", "session"}
ADMIN_ONLY = {"customer-forget", "job-retry"}
LOGIN_AND_LOGOUT = {"login", "logout"}


def _call(client, method, path, data):
    return client.get(path) if method == "get" else client.post(path, data)


def test_every_console_route_is_in_a_matrix(review_world):
    """This one and tests/review/test_webhooks.py's: a new console route cannot ship without its access test
    (the console's counterpart of tests/core/test_route_coverage.py, which covers /api/v1)."""
    named = set()
    for pattern in get_resolver().url_patterns:
        if isinstance(pattern, URLResolver) and getattr(pattern, "namespace", None) == "review":
            named |= {entry.name for entry in pattern.url_patterns if isinstance(entry, URLPattern)}
    covered = {name for name, *_ in _routes(review_world)}
    covered |= {name for name, *_ in webhook_routes(review_world.store, Webhook(pk=uuid.uuid4()),
                                                    WebhookDelivery(pk=uuid.uuid4()))}
    assert named - LOGIN_AND_LOGOUT == covered


@pytest.mark.parametrize("index", range(20))
def test_anonymous_is_sent_to_the_login_page(index, review_world, browsers):
    name, method, path, data = _routes(review_world)[index]
    before = snapshot(review_world.store)
    response = _call(browsers.anonymous, method, path, data)
    assert response.status_code == 302 and response["Location"].startswith("/review/login/?next="), name
    assert snapshot(review_world.store) == before


@pytest.mark.parametrize("who", ["outsider", "other_admin"])
@pytest.mark.parametrize("index", range(20))
def test_staff_of_another_tenant_see_and_change_nothing_of_it(index, who, review_world, browsers):
    name, method, path, data = _routes(review_world)[index]
    before = snapshot(review_world.store)
    response = _call(getattr(browsers, who), method, path, data)
    if name == "customer-forget":
        # Forgetting works on the caller's own tenants only: none for an outsider, globex's for its admin.
        assert response.status_code == (403 if who == "outsider" else 302)
    elif method == "post" or name in OBJECT_PAGES:
        assert response.status_code == 404, (name, response.status_code)
    else:
        assert response.status_code == 200, name
        body = response.content.decode()
        assert "Lives in Paris" not in body and "s-1" not in body, name
    assert snapshot(review_world.store) == before


@pytest.mark.parametrize("index", range(20))
def test_a_reviewer_reviews_but_neither_forgets_nor_retries(index, review_world, browsers):
    name, method, path, data = _routes(review_world)[index]
    before = snapshot(review_world.store)
    response = _call(browsers.reviewer, method, path, data)
    if name in ADMIN_ONLY:
        assert response.status_code == 403, name
        assert snapshot(review_world.store) == before
    elif method == "post":
        assert response.status_code == 302, (name, response.content[:500])
        assert snapshot(review_world.store) != before, name
    else:
        assert response.status_code == 200, name


@pytest.mark.parametrize("index", range(20))
def test_a_tenant_admin_may_do_everything(index, review_world, browsers):
    name, method, path, data = _routes(review_world)[index]
    response = _call(browsers.admin, method, path, data)
    assert response.status_code == (302 if method == "post" else 200), (name, response.content[:500])


def test_a_reviewer_sees_the_stores_objects(review_world, browsers):
    body = browsers.reviewer.get("/review/").content.decode()
    assert "Lives in Paris" in body and 'data-testid="forget-section"' not in body
    customer = browsers.reviewer.get("/review/customers/alice/").content.decode()
    assert "Lives in Berlin" in customer and 'data-testid="forget-section"' not in customer
    assert 'data-testid="forget-section"' in browsers.admin.get("/review/customers/alice/").content.decode()


def test_a_json_caller_gets_json_errors(review_world, browsers):
    url = f"/review/memories/{review_world.pending.pk}/approve/"
    refused = browsers.other_admin.post(url, HTTP_ACCEPT="application/json")
    assert refused.status_code == 404 and refused.json()["error"]["code"] == "not_found"
    anonymous = browsers.anonymous.post(url, HTTP_ACCEPT="application/json")
    assert anonymous.status_code == 401
    assert Memory.objects.get(pk=review_world.pending.pk).status == "pending_review"


def test_pages_need_csrf_tokens_for_actions(review_world, tenant_a):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(tenant_a.reviewer)
    response = client.post(f"/review/memories/{review_world.pending.pk}/approve/")
    assert response.status_code == 403
    assert Memory.objects.get(pk=review_world.pending.pk).status == "pending_review"
