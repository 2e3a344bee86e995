"""Every endpoint: no key -> 401, bad/revoked key -> 401, missing scope -> 403, other tenant -> 404."""

import uuid

import pytest
from rest_framework.test import APIClient

from apps.conversations.services import MessageInput, messages_ingest
from apps.core.actors import Actor
from apps.extraction.models import ExtractionJob
from apps.memories.models import Memory, MemoryRevision, MemoryStore
from apps.memories.services import MemoryInput, memory_create
from apps.tenancy.models import ApiKey
from apps.tenancy.services import api_key_issue, api_key_revoke

SCOPES = ("read", "write", "admin")


def _endpoints(memory_id, job_id):
    m = f"/api/v1/stores/main/memories/{memory_id}"
    j = f"/api/v1/jobs/{job_id}"
    return [
        # (method, path, body, required scope, what the other tenant's admin key gets: None if the call
        # names nothing of a tenant, a status if it acts on B's own objects, or the code of the 404).
        # Tenant B has a store named "main" too: store-level calls act on B's own store, calls naming
        # tenant A's memory or job are 404. Session routes: tests/conversations/test_access.py.
        ("get", "/api/v1/key", None, "read", None),
        ("get", "/api/v1/stores", None, "read", None),
        ("post", "/api/v1/stores", {"name": "fresh"}, "admin", None),
        ("get", "/api/v1/stores/main", None, "read", 200),
        ("patch", "/api/v1/stores/main", {"description": "x"}, "admin", 200),
        ("delete", "/api/v1/stores/main", None, "admin", 200),
        ("get", "/api/v1/stores/main/memories", None, "read", 200),
        ("post", "/api/v1/stores/main/memories", {"user_id": "u", "content": "new fact"}, "write", 201),
        ("post", "/api/v1/stores/main/memories/bulk", {"memories": [{"user_id": "u", "content": "x y"}]}, "write", 201),
        ("get", m, None, "read", "memory_not_found"),
        ("patch", m, {"importance": 0.9}, "write", "memory_not_found"),
        ("delete", m, None, "write", "memory_not_found"),
        ("delete", m + "?hard=true", None, "admin", "memory_not_found"),
        ("get", m + "/history", None, "read", "memory_not_found"),
        ("post", "/api/v1/stores/main/search", {"query": "tea"}, "read", 200),
        ("delete", "/api/v1/stores/main/users/alice", None, "admin", 200),
        ("get", "/api/v1/stores/main/user-export/alice", None, "admin", 200),
        ("get", "/api/v1/jobs", None, "read", 200),
        ("get", j, None, "read", "job_not_found"),
        ("post", f"{j}/retry", None, "write", "job_not_found"),
    ]


def _call(client, method, path, body):
    return getattr(client, method)(path, body, format="json") if body is not None else getattr(client, method)(path)


@pytest.fixture
def memory(tenant_a):
    item = MemoryInput(user_id="alice", content="Alice drinks green tea")
    return memory_create(store=tenant_a.store, item=item, actor=Actor.system()).memory


@pytest.fixture
def job(tenant_a):
    """A failed extraction job of tenant A, as a run that used up its attempts leaves it."""
    ingest = messages_ingest(store=tenant_a.store, session_external_id="chat-1", user_id="alice",
                             messages=[MessageInput(role="user", content="I live in Oslo")])
    assert ingest.extraction_job is not None  # the store extracts after every user turn
    ExtractionJob.objects.filter(pk=ingest.extraction_job.pk).update(
        status=ExtractionJob.Status.FAILED, attempts=3, error="the model was down"
    )
    return ingest.extraction_job


def _rows(queryset):
    rows = []
    for row in queryset.order_by("pk").values():
        row.pop("search_vector", None)  # generated from content, which is compared
        if row.get("embedding") is not None:
            row["embedding"] = [float(x) for x in row["embedding"]]
        rows.append(row)
    return rows


def _snapshot(world, memory, job):
    """Everything of `world`'s store that another tenant's call must not touch."""
    return {
        "store": list(MemoryStore.objects.filter(pk=world.store.pk).values()),
        "memories": _rows(Memory.objects.filter(store_id=world.store.pk)),
        "memory": _rows(Memory.objects.filter(pk=memory.pk)),
        "revisions": list(MemoryRevision.objects.filter(store_id=world.store.pk).order_by("pk").values()),
        "jobs": list(ExtractionJob.objects.filter(store_id=world.store.pk).order_by("pk").values()),
        "job": list(ExtractionJob.objects.filter(pk=job.pk).values()),
    }


def _endpoint_ids():
    return [f"{method.upper()} {path}" for method, path, *_ in _endpoints("ID", "JOB")]


@pytest.mark.parametrize("index", range(len(_endpoints("x", "y"))), ids=_endpoint_ids())
def test_endpoint_access_matrix(index, tenant_a, tenant_b, memory, job):
    method, path, body, required, other_tenant = _endpoints(memory.pk, job.pk)[index]

    anonymous = APIClient()
    response = _call(anonymous, method, path, body)
    assert response.status_code == 401, response.content
    assert response.json()["error"]["code"] == "not_authenticated"

    bogus = APIClient()
    bogus.credentials(HTTP_AUTHORIZATION="Bearer mh_nothing_real")
    assert _call(bogus, method, path, body).status_code == 401

    rank = SCOPES.index(required)
    for scope in SCOPES[:rank]:
        response = _call(tenant_a.client(scope), method, path, body)
        assert response.status_code == 403, (scope, response.content)
        assert response.json()["error"]["code"] == "permission_denied"

    if other_tenant is not None:
        # The other tenant has a store named "main" too, but never sees or changes this tenant's objects.
        before = _snapshot(tenant_a, memory, job)
        assert all(before.values())
        response = _call(tenant_b.client("admin"), method, path, body)
        if isinstance(other_tenant, str):
            assert response.status_code == 404, response.content
            assert response.json()["error"]["code"] == other_tenant
        else:
            assert response.status_code == other_tenant, response.content
            # The answer comes from B's own store: nothing of A's appears in it.
            for own_id in (memory.pk, tenant_a.store.pk, job.pk):
                assert str(own_id) not in response.content.decode()
        assert _snapshot(tenant_a, memory, job) == before

    response = _call(tenant_a.client(required), method, path, body)
    assert response.status_code in (200, 201), response.content
    body = response.json()
    # Not the error shape {"error": {"code": ...}} (a job's own "error" is a string: its last failure).
    assert not isinstance(body, dict) or not isinstance(body.get("error"), dict), response.content


def test_other_tenants_store_is_404(tenant_a, tenant_b):
    created = tenant_a.client().post("/api/v1/stores", {"name": "private"}, format="json")
    assert created.status_code == 201, created.content
    response = tenant_b.client("admin").get("/api/v1/stores/private")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "store_not_found"
    names = [store["name"] for store in tenant_b.client("read").get("/api/v1/stores").json()["results"]]
    assert "private" not in names


def test_other_tenants_memory_is_404_even_by_id(tenant_a, tenant_b, memory):
    response = tenant_b.client("admin").get(f"/api/v1/stores/main/memories/{memory.pk}")
    assert response.status_code == 404
    response = tenant_b.client("admin").patch(
        f"/api/v1/stores/main/memories/{memory.pk}", {"content": "hijacked"}, format="json"
    )
    assert response.status_code == 404
    memory.refresh_from_db()
    assert memory.content == "Alice drinks green tea"


def test_revoked_key_is_rejected(tenant_a):
    issued = api_key_issue(tenant=tenant_a.tenant, name="temp", scopes=["read"])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.raw_key}")
    assert client.get("/api/v1/stores").status_code == 200
    api_key_revoke(api_key=issued.api_key)
    response = client.get("/api/v1/stores")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication_failed"


def test_store_limited_key_sees_only_its_stores(tenant_a):
    created = tenant_a.client().post("/api/v1/stores", {"name": "other"}, format="json")
    assert created.status_code == 201, created.content
    issued = api_key_issue(tenant=tenant_a.tenant, name="limited", scopes=["write"], store_names=["main"])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.raw_key}")
    listed = [store["name"] for store in client.get("/api/v1/stores").json()["results"]]
    assert listed == ["main"]
    assert client.get("/api/v1/stores/main/memories").status_code == 200
    response = client.post("/api/v1/stores/other/memories", {"user_id": "u", "content": "x"}, format="json")
    assert response.status_code == 403


def test_wrong_auth_scheme_is_401(tenant_a):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {tenant_a.keys['admin']}")
    response = client.get("/api/v1/stores")
    assert response.status_code == 401
    assert "Bearer" in response.json()["error"]["message"]


def test_keys_are_stored_hashed_and_touch_last_used(tenant_a):
    raw = tenant_a.keys["read"]
    key = ApiKey.objects.get(prefix=raw[: len("mh_") + 8])
    assert raw not in (key.key_hash, key.prefix)
    assert key.last_used_at is None
    tenant_a.client("read").get("/api/v1/stores")
    key.refresh_from_db()
    assert key.last_used_at is not None


def test_unknown_memory_id_is_404(tenant_a):
    response = tenant_a.client().get(f"/api/v1/stores/main/memories/{uuid.uuid4()}")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "memory_not_found"
