"""API rate limits: requests per minute per API key and kind of request (reads, writes, searches, flushes), at
the tenant's rates (apps.tenancy.limits), and requests without a valid key per client address.

Counters live in the "shared" cache (settings.CACHES: an unlogged table of the database, or Redis), so every web
process counts against the same limit. Each counter is one number per key, kind of request and minute of the clock,
incremented atomically once per request (apps.core.cache.count_up: unlike DRF's own throttles, a read and then a
write, concurrent requests of one key cannot each see the same count and pass the limit together). A request past
the limit is refused and says how long until the minute ends (Retry-After).
"""

import math

from django.conf import settings
from django.core.cache import caches
from rest_framework import exceptions
from rest_framework.throttling import SimpleRateThrottle

from apps.core.cache import count_up
from apps.tenancy.limits import tenant_limits

WINDOW_SECONDS = 60
CACHE_ALIAS = "shared"
FAILED_AUTHENTICATION = "failed_authentication"


class RateLimited(exceptions.Throttled):
    """429 in the API's error shape (code rate_limited), with Retry-After and the limit in `details`."""

    extra_detail_singular = "Retry in {wait} second."
    extra_detail_plural = "Retry in {wait} seconds."

    def __init__(self, message: str, *, scope: str, limit: int, wait: float):
        super().__init__(wait=max(wait, 1), detail=message)
        self.details = {"scope": scope, "limit": limit, "retry_after": self.wait}


class _MinuteCounter(SimpleRateThrottle):
    """DRF's throttle interface (allow_request, wait) over a count per minute of the clock in the shared cache.
    The rate is not DRF's per-scope setting but the request's own (its tenant's), so the throttle has no rate
    until it sees the request."""

    cache_format = "throttle:%(scope)s:%(ident)s:%(minute)s"

    def __init__(self):
        self.limit: int | None = None
        self.remaining_seconds: float | None = None

    @property
    def cache(self):
        return caches[CACHE_ALIAS]

    def count(self, scope: str, ident, limit: int) -> bool:
        """Count one request against `limit` for this minute; False when it is past the limit."""
        self.scope, self.limit = scope, limit
        now = self.timer()
        minute = int(now // WINDOW_SECONDS)
        ends = (minute + 1) * WINDOW_SECONDS
        key = self.cache_format % {"scope": scope, "ident": ident, "minute": minute}
        # A second past the minute's end, so the counter cannot expire between its creation and its increment.
        used = count_up(self.cache, key, timeout=math.ceil(ends - now) + 1)
        if used > limit:
            self.remaining_seconds = ends - now
            return False
        return True

    def wait(self) -> float | None:
        return self.remaining_seconds


class ApiKeyRateThrottle(_MinuteCounter):
    """Requests per minute of one API key, per kind of request (the view's throttle_scope), at its tenant's rate."""

    def allow_request(self, request, view) -> bool:
        return request.auth is None or self.allow_key(request.auth, view.throttle_scope(request))

    def allow_key(self, api_key, scope: str) -> bool:
        if not settings.MEMORYHUB_THROTTLE:
            return True
        limit = tenant_limits(api_key.tenant).requests_per_minute[scope]
        return limit is None or self.count(scope, api_key.pk, limit)

    def refusal(self) -> RateLimited:
        return RateLimited(
            f"Too many {self.scope} with this API key: its limit is {self.limit} a minute.",
            scope=self.scope, limit=self.limit, wait=self.remaining_seconds,
        )


class FailedAuthenticationThrottle(_MinuteCounter):
    """Requests per minute from one client address that bring no API key or one that is wrong or revoked. Counted
    after the failure (a valid key is never held up by its address): past the limit they are 429, not 401."""

    def allow_request(self, request, view) -> bool:
        limit = settings.MEMORYHUB_THROTTLE_FAILED_AUTH_PER_MINUTE
        if not (settings.MEMORYHUB_THROTTLE and limit):
            return True
        return self.count(FAILED_AUTHENTICATION, self.get_ident(request), limit)

    def refusal(self) -> RateLimited:
        return RateLimited(
            f"Too many requests without a valid API key from your address: the limit is {self.limit} a minute.",
            scope=FAILED_AUTHENTICATION, limit=self.limit, wait=self.remaining_seconds,
        )


def api_key_rate_check(api_key, scope: str) -> None:
    """Count one request of `api_key` of kind `scope` made outside the API's views (the MCP tools, which are the same
    operations); RateLimited past the key's limit, as the API's views refuse it."""
    throttle = ApiKeyRateThrottle()
    if not throttle.allow_key(api_key, scope):
        raise throttle.refusal()
