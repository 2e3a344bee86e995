"""The Python client against a live server's rate limits: a 429 is waited out for its Retry-After and the call
succeeds; with no retries left the client raises RateLimited carrying it; key_info reports the limits."""

import logging
import time

import pytest

from apps.tenancy.services import tenant_limits_set
from apps.tenancy.throttling import WINDOW_SECONDS
from memoryhub_client import RateLimited

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def _seconds_left_in_the_minute() -> float:
    return WINDOW_SECONDS - time.time() % WINDOW_SECONDS


def test_the_client_waits_out_a_429_and_succeeds(live_server, hub_for, tenant_a, caplog):
    tenant_limits_set(tenant=tenant_a.tenant, limits={"searches_per_minute": 1})
    hub = hub_for(tenant_a.keys["read"], max_retries=2, max_backoff_seconds=10)
    # The count is per minute of the clock: start late in one, so the refusal asks for a wait of a few seconds.
    if _seconds_left_in_the_minute() > 5:
        time.sleep(_seconds_left_in_the_minute() - 3.5)
    hub.search("main", "tea", user_id="alice")
    with caplog.at_level(logging.WARNING, logger="memoryhub_client"):
        hits = hub.search("main", "tea", user_id="alice")  # refused once, retried in the next minute
    assert hits == []
    retries = [record.getMessage() for record in caplog.records if record.name == "memoryhub_client"]
    assert len(retries) == 1 and "HTTP 429" in retries[0], retries


def test_without_retries_the_client_raises_rate_limited_with_retry_after(live_server, hub_for, tenant_a):
    tenant_limits_set(tenant=tenant_a.tenant, limits={"writes_per_minute": 1, "max_memories": 100})
    if _seconds_left_in_the_minute() < 5:
        time.sleep(_seconds_left_in_the_minute() + 0.5)  # both calls in one minute
    hub = hub_for(tenant_a.keys["write"], max_retries=0)
    hub.memories.add("main", user_id="alice", content="Alice likes tea")
    with pytest.raises(RateLimited) as refused:
        hub.memories.add("main", user_id="alice", content="Alice lives in Oslo")
    assert refused.value.status_code == 429 and refused.value.code == "rate_limited"
    assert 1 <= refused.value.retry_after <= WINDOW_SECONDS
    assert refused.value.body["error"]["details"]["scope"] == "writes"

    info = hub.key_info()
    assert info.limits["requests_per_minute"]["writes"] == 1 and info.limits["max_memories"] == 100
    assert info.usage == {"memories": 1, "stores": 1}
