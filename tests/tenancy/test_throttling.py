"""API rate limits: per API key and kind of request at the tenant's rates, and per address for requests without a
valid key; 429 in the error shape with Retry-After. The counters are in the shared cache (the database's table
here), inside each test's transaction."""

from datetime import UTC, datetime

import pytest
import time_machine
from django.core.cache import caches
from rest_framework.test import APIClient

from apps.core.cache import count_up
from apps.tenancy.services import api_key_issue, tenant_limits_set

# Twenty seconds into a minute: a whole test runs within it, and a refusal waits 40 s.
MINUTE_START = datetime(2030, 1, 1, 12, 0, 0, tzinfo=UTC)
IN_THE_MINUTE = datetime(2030, 1, 1, 12, 0, 20, tzinfo=UTC)
NEXT_MINUTE = datetime(2030, 1, 1, 12, 1, 0, 500_000, tzinfo=UTC)


@pytest.fixture
def clock():
    with time_machine.travel(IN_THE_MINUTE, tick=False) as traveller:
        yield traveller


def _search(client):
    return client.post("/api/v1/stores/main/search", {"query": "tea"}, format="json")


def _add(client, number):
    return client.post("/api/v1/stores/main/memories", {"user_id": "u", "content": f"fact {number}"}, format="json")


def test_a_key_past_its_rate_gets_429_with_retry_after_in_the_error_shape(tenant_a, clock):
    tenant_limits_set(tenant=tenant_a.tenant, limits={"writes_per_minute": 3})
    client = tenant_a.client("write")
    assert [_add(client, n).status_code for n in range(3)] == [201, 201, 201]

    refused = _add(client, 3)
    assert refused.status_code == 429
    assert refused["Retry-After"] == "40"
    assert refused.json() == {"error": {
        "code": "rate_limited",
        "message": "Too many writes with this API key: its limit is 3 a minute. Retry in 40 seconds.",
        "details": {"scope": "writes", "limit": 3, "retry_after": 40},
    }}
    assert tenant_a.store.memories.count() == 3  # the refused write did nothing

    # Other kinds of request have counters of their own; so does another key of the tenant.
    assert client.get("/api/v1/stores/main/memories").status_code == 200
    assert _search(client).status_code == 200
    assert _add(tenant_a.client("admin"), 4).status_code == 201

    clock.move_to(NEXT_MINUTE)
    assert _add(client, 5).status_code == 201


def test_searches_reads_and_flushes_are_counted_apart(tenant_a, clock):
    tenant_limits_set(tenant=tenant_a.tenant, limits={
        "reads_per_minute": 2, "searches_per_minute": 1, "flushes_per_minute": 1})
    client = tenant_a.client("write")
    assert _search(client).status_code == 200
    context = client.post("/api/v1/stores/main/context", {"query": "tea", "user_id": "u"}, format="json")
    assert context.status_code == 429 and context.json()["error"]["details"]["scope"] == "searches"

    assert [client.get("/api/v1/key").status_code for _ in range(3)] == [200, 200, 429]

    spawned = client.post("/api/v1/stores/main/sessions/chat-1/spawn", {"user_id": "u"}, format="json")
    assert spawned.status_code == 201  # a write: not a flush
    assert client.post("/api/v1/stores/main/sessions/chat-1/flush").status_code == 200
    terminated = client.post("/api/v1/stores/main/sessions/chat-1/terminate", {}, format="json")
    assert terminated.status_code == 429 and terminated.json()["error"]["details"]["scope"] == "flushes"


def test_rates_come_from_the_tenant_or_the_server_and_zero_lifts_them(tenant_a, tenant_b, settings, clock):
    settings.MEMORYHUB_THROTTLE_SEARCHES_PER_MINUTE = 2
    tenant_limits_set(tenant=tenant_b.tenant, limits={"searches_per_minute": 0})
    assert [_search(tenant_a.client("read")).status_code for _ in range(3)] == [200, 200, 429]
    assert {_search(tenant_b.client("read")).status_code for _ in range(5)} == {200}

    tenant_limits_set(tenant=tenant_a.tenant, limits={"searches_per_minute": 5})
    assert _search(tenant_a.client("read")).status_code == 200


def test_throttling_turned_off_refuses_nothing(tenant_a, settings, clock):
    settings.MEMORYHUB_THROTTLE = False
    tenant_limits_set(tenant=tenant_a.tenant, limits={"reads_per_minute": 1})
    assert {tenant_a.client("read").get("/api/v1/key").status_code for _ in range(3)} == {200}
    bogus = APIClient(HTTP_AUTHORIZATION="Bearer mh_nothing_real")
    assert {bogus.get("/api/v1/key").status_code for _ in range(40)} == {401}


def test_a_refusal_waits_until_the_minute_ends(tenant_a):
    tenant_limits_set(tenant=tenant_a.tenant, limits={"reads_per_minute": 1})
    client = tenant_a.client("read")
    with time_machine.travel(MINUTE_START.replace(second=58, microsecond=600_000), tick=False):
        assert client.get("/api/v1/key").status_code == 200
        refused = client.get("/api/v1/key")
    assert refused["Retry-After"] == "2" and refused.json()["error"]["details"]["retry_after"] == 2


def test_three_hundred_bad_keys_from_one_address_are_refused_past_the_limit(tenant_a, clock):
    answers = []
    client = APIClient()  # one: each new client's handler has WhiteNoise scan the static files again
    for number in range(300):
        client.credentials(HTTP_AUTHORIZATION=f"Bearer mh_guess_{number}")
        answers.append(client.get("/api/v1/stores").status_code)
    assert answers == [401] * 30 + [429] * 270  # MEMORYHUB_THROTTLE_FAILED_AUTH_PER_MINUTE

    refused = APIClient(HTTP_AUTHORIZATION="Bearer mh_guess").get("/api/v1/stores")
    assert refused["Retry-After"] == "40"
    assert refused.json()["error"]["code"] == "rate_limited"
    assert refused.json()["error"]["details"] == {"scope": "failed_authentication", "limit": 30, "retry_after": 40}
    # Requests without any key count too, and a valid key from the same address is not held up.
    assert APIClient().get("/api/v1/stores").status_code == 429
    assert tenant_a.client("read").get("/api/v1/stores").status_code == 200
    # Another address has its own count.
    assert APIClient(REMOTE_ADDR="192.0.2.7").get("/api/v1/stores").status_code == 401

    clock.move_to(NEXT_MINUTE)
    assert APIClient(HTTP_AUTHORIZATION="Bearer mh_guess").get("/api/v1/stores").status_code == 401


def test_a_forwarded_for_header_does_not_give_a_new_address(db, settings, clock):
    settings.MEMORYHUB_THROTTLE_FAILED_AUTH_PER_MINUTE = 2
    statuses = [APIClient(HTTP_X_FORWARDED_FOR=f"198.51.100.{n}").get("/api/v1/stores").status_code
                for n in range(3)]
    assert statuses == [401, 401, 429]


def test_counters_are_in_the_shared_cache(tenant_a, clock):
    key = api_key_issue(tenant=tenant_a.tenant, name="counted", scopes=["read"])
    client = APIClient(HTTP_AUTHORIZATION=f"Bearer {key.raw_key}")
    for _ in range(3):
        client.get("/api/v1/key")
    minute = int(IN_THE_MINUTE.timestamp() // 60)
    assert count_up(caches["shared"], f"throttle:reads:{key.api_key.pk}:{minute}", timeout=60) == 4
