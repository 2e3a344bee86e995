"""GET /api/v1/key: what the calling key may do, the limits in force and what its tenant uses of them."""

from rest_framework.test import APIClient

from apps.memories.models import Memory
from apps.memories.services import store_create
from apps.tenancy.services import api_key_issue, tenant_limits_set


def test_key_info_names_tenant_scopes_and_stores(tenant_a):
    body = tenant_a.client("read").get("/api/v1/key").json()
    assert (body["name"], body["tenant"], body["scopes"], body["can_write"], body["stores"]) == (
        "acme-read", "acme", ["read"], False, None)
    assert tenant_a.client("write").get("/api/v1/key").json()["can_write"] is True
    limited = api_key_issue(tenant=tenant_a.tenant, name="limited", scopes=["write"], store_names=["main"]).raw_key
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {limited}")
    assert client.get("/api/v1/key").json()["stores"] == ["main"]
    assert APIClient().get("/api/v1/key").status_code == 401


def test_key_info_reports_the_server_defaults_and_the_usage(tenant_a, add_memory, settings):
    add_memory(tenant_a.store, "Alice likes tea")
    deleted = add_memory(tenant_a.store, "Alice lives in Paris")
    Memory.objects.filter(pk=deleted.pk).update(status=Memory.Status.DELETED)
    body = tenant_a.client("read").get("/api/v1/key").json()
    assert body["limits"] == {
        "requests_per_minute": {"reads": 600, "writes": 300, "searches": 300, "flushes": 30},
        "max_memories": None,
        "max_stores": None,
        "max_request_bytes": settings.DATA_UPLOAD_MAX_MEMORY_SIZE,
    }
    assert body["usage"] == {"memories": 2, "stores": 1}


def test_key_info_reports_the_tenants_own_limits_and_no_rates_when_throttling_is_off(tenant_a, tenant_b, settings):
    tenant_limits_set(tenant=tenant_a.tenant, limits={
        "reads_per_minute": 0, "writes_per_minute": 50, "max_memories": 1000, "max_stores": 3,
        "max_request_bytes": 4096})
    store_create(tenant=tenant_a.tenant, name="second", embedding_provider="hash")
    body = tenant_a.client("read").get("/api/v1/key").json()
    assert body["limits"] == {
        "requests_per_minute": {"reads": None, "writes": 50, "searches": 300, "flushes": 30},
        "max_memories": 1000, "max_stores": 3, "max_request_bytes": 4096,
    }
    assert body["usage"] == {"memories": 0, "stores": 2}
    assert tenant_b.client("read").get("/api/v1/key").json()["usage"] == {"memories": 0, "stores": 1}

    settings.MEMORYHUB_THROTTLE = False
    rates = tenant_a.client("read").get("/api/v1/key").json()["limits"]["requests_per_minute"]
    assert rates == {"reads": None, "writes": None, "searches": None, "flushes": None}
