"""The tenant's limits hold on /mcp as on the REST API: each tool call counts against the key's rate of its kind,
wrong keys against the client's address, and a body past the tenant's size is refused before anything runs."""

import json
from datetime import UTC, datetime

import pytest
import time_machine

from apps.memories.models import Memory
from apps.tenancy.services import tenant_limits_set

pytestmark = pytest.mark.django_db

IN_THE_MINUTE = datetime(2030, 1, 1, 12, 0, 20, tzinfo=UTC)  # a whole test runs within one minute of the clock


@pytest.fixture(autouse=True)
def clock():
    with time_machine.travel(IN_THE_MINUTE, tick=False) as traveller:
        yield traveller


def _post(client, api_key, tool, arguments):
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    return client.post("/mcp", json.dumps(message), content_type="application/json",
                       headers={"Authorization": f"Bearer {api_key}"})


def _result(client, api_key, tool, arguments):
    response = _post(client, api_key, tool, arguments)
    assert response.status_code == 200, response.content
    return response.json()["result"]


def test_tool_calls_count_against_the_keys_rate_of_their_kind(client, tenant_a):
    tenant_limits_set(tenant=tenant_a.tenant, limits={"writes_per_minute": 2, "searches_per_minute": 1})
    key = tenant_a.keys["write"]

    added = [_result(client, key, "add_memory", {"store": "main", "user_id": "u", "content": f"Fact {n}"})
             for n in range(3)]

    assert [result["isError"] for result in added] == [False, False, True]
    assert added[2]["content"][0]["text"].startswith(
        "rate_limited: Too many writes with this API key: its limit is 2 a minute. Retry in 40 seconds.")
    assert Memory.objects.filter(store=tenant_a.store).count() == 2
    searched = [_result(client, key, tool, {"store": "main", "query": "fact"})
                for tool in ("search_memories", "get_context")]
    assert [result["isError"] for result in searched] == [False, True]  # one count for both: searches
    assert "Too many searches" in searched[1]["content"][0]["text"]
    assert _result(client, key, "get_memories", {"store": "main"})["isError"] is False  # reads: their own count


def test_wrong_keys_are_counted_per_address_and_refused_with_429(client, tenant_a, settings):
    settings.MEMORYHUB_THROTTLE_FAILED_AUTH_PER_MINUTE = 2

    responses = [_post(client, "mh_guess", "list_stores", {}) for _ in range(3)]

    assert [response.status_code for response in responses] == [401, 401, 429]
    refused = responses[2]
    assert refused["Retry-After"] == "40"
    assert refused.json()["error"]["data"]["error"]["code"] == "rate_limited"
    assert _post(client, tenant_a.keys["read"], "list_stores", {}).status_code == 200  # a valid key still passes


def test_a_body_past_the_tenants_size_is_refused_before_the_tool_runs(client, tenant_a):
    tenant_limits_set(tenant=tenant_a.tenant, limits={"max_request_bytes": 300})

    response = _post(client, tenant_a.keys["write"], "add_memory",
                     {"store": "main", "user_id": "u", "content": "x" * 400})

    assert response.status_code == 413
    error = response.json()["error"]["data"]["error"]
    assert error["code"] == "request_too_large" and error["details"]["limit"] == 300
    assert not Memory.objects.exists()
