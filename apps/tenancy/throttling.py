"""API rate limits: requests per minute per API key and kind of request (reads, writes, searches, flushes), at
the tenant's rates (apps.tenancy.limits), and requests without a valid key per client address.

Counters live in the "shared" cache (settings.CACHES: an unlogged table of the database, or Redis), so every web
process counts against the same limit. Each counter is one small value per key and kind of request for the current
minute of the clock, read and written once per request; a refusal does not count, and says how long until the
minute ends (Retry-After). Like DRF's own throttles, the read and the write are two steps: concurrent requests of
one key can each read the same count, so a burst may pass a few requests past the limit, never many fewer.
"""

import math

from django.conf import settings
from django.core.cache import caches
from rest_framework import exceptions
from rest_framework.throttling import SimpleRateThrottle

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

    cache_format = "throttle:%(scope)s:%(ident)s"

    def __init__(self):
        self.limit: int | None = None
        self.remaining_seconds: float | None = None

    @property
    def cache(self):
        return caches[CACHE_ALIAS]

    def count(self, scope: str, ident, limit: int) -> bool:
        """Count one request against `limit` for this minute; False (not counted) when the limit is reached."""
        self.scope, self.limit = scope, limit
        now = self.timer()
        minute = int(now // WINDOW_SECONDS)
        ends = (minute + 1) * WINDOW_SECONDS
        key = self.cache_format % {"scope": scope, "ident": ident}
        counted_minute, used = self.cache.get(key) or (minute, 0)
        if counted_minute != minute:
            used = 0
        if used >= limit:
            self.remaining_seconds = ends - now
            return False
        self.cache.set(key, (minute, used + 1), timeout=math.ceil(ends - now))
        return True

    def wait(self) -> float | None:
        return self.remaining_seconds


class ApiKeyRateThrottle(_MinuteCounter):
    """Requests per minute of one API key, per kind of request (the view's throttle_scope), at its tenant's rate."""

    def allow_request(self, request, view) -> bool:
        if request.auth is None or not settings.MEMORYHUB_THROTTLE:
            return True
        scope = view.throttle_scope(request)
        limit = tenant_limits(request.auth.tenant).requests_per_minute[scope]
        return limit is None or self.count(scope, request.auth.pk, limit)

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
