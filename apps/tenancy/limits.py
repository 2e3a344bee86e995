"""A tenant's limits in force: its own (Tenant fields, set in the admin) or the server's defaults (settings).

None means no limit: a tenant's 0, a default of 0, or, for the request rates, throttling turned off
(MEMORYHUB_THROTTLE=false). The request size is never above the server's own (MEMORYHUB_MAX_REQUEST_BYTES),
which Django enforces before any tenant is known.
"""

from dataclasses import dataclass

from django.conf import settings

from apps.core.errors import PayloadTooLargeError
from apps.tenancy.models import Tenant

# The kinds of API request counted separately, with the Tenant field and the setting of each one's rate.
THROTTLE_SCOPES = {
    "reads": "MEMORYHUB_THROTTLE_READS_PER_MINUTE",
    "writes": "MEMORYHUB_THROTTLE_WRITES_PER_MINUTE",
    "searches": "MEMORYHUB_THROTTLE_SEARCHES_PER_MINUTE",
    "flushes": "MEMORYHUB_THROTTLE_FLUSHES_PER_MINUTE",
}


@dataclass(frozen=True)
class TenantLimits:
    requests_per_minute: dict[str, int | None]  # per API key, by scope (THROTTLE_SCOPES)
    max_memories: int | None
    max_stores: int | None
    max_request_bytes: int


def _in_force(own: int | None, default: int) -> int | None:
    value = default if own is None else own
    return value or None


def tenant_limits(tenant: Tenant) -> TenantLimits:
    """The limits `tenant` works under now."""
    rates = {
        scope: _in_force(getattr(tenant, f"{scope}_per_minute"), getattr(settings, setting))
        if settings.MEMORYHUB_THROTTLE else None
        for scope, setting in THROTTLE_SCOPES.items()
    }
    server_bytes = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    own_bytes = _in_force(tenant.max_request_bytes, server_bytes)
    return TenantLimits(
        requests_per_minute=rates,
        max_memories=_in_force(tenant.max_memories, settings.MEMORYHUB_MAX_MEMORIES),
        max_stores=_in_force(tenant.max_stores, settings.MEMORYHUB_MAX_STORES),
        max_request_bytes=min(own_bytes or server_bytes, server_bytes),
    )


def refuse_oversized_body(tenant: Tenant, size: int) -> None:
    """PayloadTooLargeError (413 request_too_large) for a request body of `size` bytes past the tenant's limit."""
    limit = tenant_limits(tenant).max_request_bytes
    if size > limit:
        raise PayloadTooLargeError(
            f"The request body is {size} bytes; this tenant's limit is {limit}.",
            code="request_too_large", details={"limit": limit, "size": size},
        )
