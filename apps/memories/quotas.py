"""A tenant's quotas of memories and stores (apps.tenancy.limits), checked in the transaction that adds them,
and what the tenant uses of them.

Every memory row counts, whatever its status: a deleted, rejected or superseded memory keeps its content, vector
and history until it is removed for good (hard delete, erasing its user, deleting its store). Every way of adding
memories goes through memory_bulk_create (API, MCP, admin, console, extraction, a session's episode) or, for
import_store, checks here before its batch is written, so the quota holds for all of them: past it, an extraction
job fails and is retried like any other failure, and an import stops with its earlier batches kept.
"""

from dataclasses import dataclass

from apps.core.errors import ConflictError
from apps.memories.models import Memory, MemoryStore
from apps.tenancy.limits import tenant_limits
from apps.tenancy.models import Tenant


@dataclass(frozen=True)
class TenantUsage:
    memories: int
    stores: int


def tenant_usage(tenant: Tenant) -> TenantUsage:
    """How many memories (any status) and stores the tenant holds."""
    return TenantUsage(
        memories=Memory.objects.filter(store__tenant=tenant).count(),
        stores=MemoryStore.objects.filter(tenant=tenant).count(),
    )


def _lock_quota(tenant_id) -> None:
    # The tenant's row, locked until the adding transaction ends: two concurrent adds count one after the other,
    # so together they cannot pass the quota. FOR NO KEY UPDATE: a store's insert (a foreign key to this row)
    # does not wait for it.
    list(Tenant.objects.select_for_update(no_key=True).filter(pk=tenant_id).values_list("pk"))


def check_store_quota(tenant: Tenant) -> None:
    """Refuse a new store past the tenant's max_stores; call inside the transaction that creates it."""
    limit = tenant_limits(tenant).max_stores
    if limit is None:
        return
    _lock_quota(tenant.pk)
    used = MemoryStore.objects.filter(tenant=tenant).count()
    if used >= limit:
        raise ConflictError(
            f"Tenant {tenant.slug!r} has {used} stores, its quota; delete one before creating another.",
            code="store_quota_reached",
            details={"stores": used, "limit": limit},
        )


def check_memory_quota(store: MemoryStore, adding: int) -> None:
    """Refuse `adding` new memories past the tenant's max_memories; call inside the transaction that adds them."""
    limit = tenant_limits(store.tenant).max_memories
    if limit is None or adding <= 0:
        return
    _lock_quota(store.tenant_id)
    used = Memory.objects.filter(store__tenant_id=store.tenant_id).count()
    if used + adding > limit:
        raise ConflictError(
            f"Tenant {store.tenant.slug!r} holds {used} memories and its quota is {limit}: {adding} more do not fit. "
            "Memories count until they are removed for good (hard delete, erasing their user, deleting the store).",
            code="memory_quota_reached",
            details={"memories": used, "adding": adding, "limit": limit},
        )
