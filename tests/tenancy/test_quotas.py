"""Tenant quotas: stores and memories (every status counts) refused past the tenant's own or the server's quota, on
every way of adding them, exactly under concurrency; request bodies past the tenant's size refused."""

import threading

import pytest
from django.db import connection

from apps.conversations.services import MessageInput, messages_ingest
from apps.core.actors import Actor
from apps.core.errors import ConflictError
from apps.extraction.models import ExtractionJob
from apps.extraction.services import extraction_job_run
from apps.memories.models import Memory
from apps.memories.services import MemoryInput, memory_bulk_create, memory_create, store_create
from apps.tenancy.services import tenant_limits_set


def _add(client, content, store="main"):
    return client.post(f"/api/v1/stores/{store}/memories", {"user_id": "u", "content": content}, format="json")


def test_a_store_past_the_quota_is_refused(tenant_a, tenant_b):
    tenant_limits_set(tenant=tenant_a.tenant, limits={"max_stores": 2})
    client = tenant_a.client("admin")
    assert client.post("/api/v1/stores", {"name": "second"}, format="json").status_code == 201
    refused = client.post("/api/v1/stores", {"name": "third"}, format="json")
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "store_quota_reached"
    assert refused.json()["error"]["details"] == {"stores": 2, "limit": 2}
    assert not tenant_a.tenant.stores.filter(name="third").exists()
    # Another tenant has its own quota (the server's default: none).
    assert tenant_b.client("admin").post("/api/v1/stores", {"name": "third"}, format="json").status_code == 201


def test_memories_past_the_quota_are_refused_one_or_in_bulk(tenant_a, add_memory):
    tenant_limits_set(tenant=tenant_a.tenant, limits={"max_memories": 3})
    deleted = add_memory(tenant_a.store, "An old fact")
    deleted.status = Memory.Status.DELETED
    deleted.save(update_fields=["status"])  # still held: it counts
    client = tenant_a.client("write")
    assert _add(client, "Fact one").status_code == 201

    bulk = client.post("/api/v1/stores/main/memories/bulk", {"memories": [
        {"user_id": "u", "content": "Fact two"}, {"user_id": "u", "content": "Fact three"}]}, format="json")
    assert bulk.status_code == 409
    error = bulk.json()["error"]
    assert error["code"] == "memory_quota_reached"
    assert error["details"] == {"memories": 2, "adding": 2, "limit": 3}
    assert Memory.objects.filter(store__tenant=tenant_a.tenant).count() == 2  # the batch wrote nothing

    assert _add(client, "Fact two").status_code == 201
    assert _add(client, "Fact two").status_code == 200  # a duplicate adds nothing, so it is not refused
    assert _add(client, "Fact four").status_code == 409


def test_the_server_default_applies_and_a_tenant_zero_lifts_it(tenant_a, tenant_b, settings):
    settings.MEMORYHUB_MAX_MEMORIES = 1
    tenant_limits_set(tenant=tenant_b.tenant, limits={"max_memories": 0})
    assert [_add(tenant_a.client("write"), f"Fact {n}").status_code for n in range(2)] == [201, 409]
    assert [_add(tenant_b.client("write"), f"Fact {n}").status_code for n in range(2)] == [201, 201]


def test_the_quota_holds_for_every_writer_not_only_the_api(tenant_a, add_memory):
    tenant_limits_set(tenant=tenant_a.tenant, limits={"max_memories": 1})
    add_memory(tenant_a.store, "The one that fits")
    with pytest.raises(ConflictError) as refused:
        memory_create(store=tenant_a.store, item=MemoryInput(user_id="u", content="One more"), actor=Actor.system())
    assert refused.value.code == "memory_quota_reached"
    other = store_create(tenant=tenant_a.tenant, name="other", embedding_provider="hash")
    with pytest.raises(ConflictError):
        memory_bulk_create(store=other, items=[MemoryInput(user_id="u", content="Elsewhere")], actor=Actor.system())


def test_extraction_past_the_quota_fails_its_run_and_adds_nothing(tenant_a, add_memory, settings):
    settings.EXTRACTION_RUN_INLINE = True  # no retry scheduled: the test runs the job itself
    tenant_limits_set(tenant=tenant_a.tenant, limits={"max_memories": 1})
    add_memory(tenant_a.store, "The one that fits")
    ingest = messages_ingest(store=tenant_a.store, session_external_id="chat-1", user_id="alice",
                             messages=[MessageInput(role="user", content="I live in Oslo and I work at Acme")])
    job = extraction_job_run(job_id=ingest.extraction_job.pk).job
    assert job.status == ExtractionJob.Status.QUEUED  # retried later, like any failure: memories may be freed
    assert "holds 1 memories and its quota is 1" in job.error
    assert Memory.objects.filter(store__tenant=tenant_a.tenant).count() == 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_adds_cannot_pass_the_quota_together(tenant_a):
    tenant_limits_set(tenant=tenant_a.tenant, limits={"max_memories": 5})
    barrier = threading.Barrier(8)
    outcomes = []

    def add(number):
        try:
            barrier.wait()
            memory_create(store=tenant_a.store, item=MemoryInput(user_id="u", content=f"Fact number {number}"),
                          actor=Actor.system())
            outcomes.append("added")
        except ConflictError as error:
            outcomes.append(error.code)
        finally:
            connection.close()

    threads = [threading.Thread(target=add, args=(number,)) for number in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["added"] * 5 + ["memory_quota_reached"] * 3
    assert Memory.objects.filter(store__tenant=tenant_a.tenant).count() == 5


def test_a_body_past_the_tenants_size_is_refused_before_anything_runs(tenant_a, tenant_b):
    tenant_limits_set(tenant=tenant_a.tenant, limits={"max_request_bytes": 200})
    client = tenant_a.client("write")
    assert _add(client, "short").status_code == 201
    refused = _add(client, "x" * 300)
    assert refused.status_code == 413
    error = refused.json()["error"]
    assert error["code"] == "request_too_large" and error["details"]["limit"] == 200
    assert error["details"]["size"] > 300
    assert not tenant_a.store.memories.filter(content="x" * 300).exists()
    assert _add(tenant_b.client("write"), "x" * 300).status_code == 201


def test_a_tenant_size_above_the_servers_is_the_servers(tenant_a, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    tenant_limits_set(tenant=tenant_a.tenant, limits={"max_request_bytes": 10_000})
    refused = _add(tenant_a.client("write"), "x" * 2000)
    assert refused.status_code == 413 and refused.json()["error"]["code"] == "payload_too_large"
    assert tenant_a.client("read").get("/api/v1/key").json()["limits"]["max_request_bytes"] == 1024
