"""GET /api/v1/key: what the calling key may do."""

from rest_framework.test import APIClient

from apps.tenancy.services import api_key_issue


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
