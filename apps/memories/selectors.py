"""Reads of stores and memories (search, a read too, has its own module: apps.memories.search)."""

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db import connection
from django.db.models import QuerySet
from django.db.models.fields.json import KeyTextTransform

from apps.core.errors import ApplicationError, NotFoundError
from apps.core.sql import RowLoader
from apps.memories.models import Memory, MemoryRevision, MemoryStore, Webhook, WebhookDelivery
from apps.tenancy.selectors import tenants_for_user


def store_list(*, api_key) -> QuerySet[MemoryStore]:
    stores = MemoryStore.objects.for_tenant(api_key.tenant)
    if api_key.store_names:
        stores = stores.filter(name__in=api_key.store_names)
    return stores.select_related("tenant")


_STORE_ROWS = RowLoader(MemoryStore)
# Written out once: nearly every API call runs it.
_STORE_SQL = (f'SELECT {_STORE_ROWS.select_list("s")} FROM "{MemoryStore._meta.db_table}" s '
              "WHERE s.tenant_id = %s AND s.name = %s")


def store_get(*, api_key, name: str) -> MemoryStore:
    """The store `name` of the key's tenant; a store of another tenant is simply not found."""
    with connection.cursor() as cursor:
        cursor.execute(_STORE_SQL, [api_key.tenant_id, name])
        row = cursor.fetchone()
    if row is None:
        raise NotFoundError(f"Store {name!r} not found.", code="store_not_found")
    store = _STORE_ROWS.load(row)
    store.tenant = api_key.tenant
    if not api_key.allows_store(store.name):
        raise ApplicationError(
            f"This API key is not allowed to use store {name!r}.", code="permission_denied", status_code=403
        )
    return store


@dataclass(frozen=True)
class MemoryFilters:
    user_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    memory_type: str | None = None
    status: str | None = None
    tag: str | None = None
    metadata: dict | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    include_expired: bool = False


def memory_list(*, store: MemoryStore, filters: MemoryFilters) -> QuerySet[Memory]:
    memories = Memory.objects.filter(store=store).defer("embedding", "search_vector")
    if filters.status:
        memories = memories.filter(status=filters.status)
    else:
        memories = memories.exclude(status=Memory.Status.DELETED)
    for name in ("user_id", "agent_id", "session_id", "memory_type"):
        value = getattr(filters, name)
        if value is not None:
            memories = memories.filter(**{name: value})
    if filters.tag:
        memories = memories.filter(tags__contains=[filters.tag])
    for index, (key, value) in enumerate((filters.metadata or {}).items()):
        # Text comparison (->>) because query-string values are strings: ?metadata.plan=pro, ?metadata.n=3
        alias = f"metadata_key_{index}"
        memories = memories.alias(**{alias: KeyTextTransform(key, "metadata")}).filter(**{alias: value})
    if filters.created_after:
        memories = memories.filter(created_at__gte=filters.created_after)
    if filters.created_before:
        memories = memories.filter(created_at__lt=filters.created_before)
    if not filters.include_expired:
        memories = memories.not_expired()
    return memories


def memory_get(*, store: MemoryStore, memory_id) -> Memory:
    memory = Memory.objects.filter(store=store, pk=memory_id).defer("embedding", "search_vector").first()
    if memory is None:
        raise NotFoundError(f"Memory {memory_id} not found in store {store.name!r}.", code="memory_not_found")
    memory.store = store
    return memory


def memory_history(*, memory: Memory) -> QuerySet[MemoryRevision]:
    return MemoryRevision.objects.filter(memory=memory).order_by("id")


def store_for_listener(*, store_ref: str, user=None, api_key=None) -> MemoryStore | None:
    """The store whose live events `user` (staff) or `api_key` (read scope) may receive; None when it is not
    theirs or does not exist. `store_ref` is the store's id, or its name (a name must be unambiguous among
    the user's tenants)."""
    if api_key is not None:
        if not api_key.has_scope("read"):
            return None
        stores = MemoryStore.objects.for_tenant(api_key.tenant)
    elif user is not None:
        stores = MemoryStore.objects.filter(tenant__in=tenants_for_user(user))
    else:
        return None
    try:
        store_id = uuid.UUID(store_ref)
    except ValueError:
        matches = list(stores.filter(name=store_ref)[:2])
    else:
        matches = list(stores.filter(pk=store_id))
    if len(matches) != 1:
        return None
    store = matches[0]
    if api_key is not None and not api_key.allows_store(store.name):
        return None
    return store


# --- Webhooks ---------------------------------------------------------------------------------------


def webhook_list(*, store: MemoryStore) -> QuerySet[Webhook]:
    """The store's webhooks, oldest first (each with `store` set, for rendering without a query)."""
    webhooks = Webhook.objects.filter(store=store).order_by("created_at", "id")
    return webhooks.select_related("store")


def webhook_get(*, store: MemoryStore, webhook_id) -> Webhook:
    """One webhook of `store`; another store's (or tenant's) is simply not found."""
    webhook = Webhook.objects.filter(store=store, pk=webhook_id).first()
    if webhook is None:
        raise NotFoundError(f"Webhook {webhook_id} not found in store {store.name!r}.", code="webhook_not_found")
    webhook.store = store
    return webhook


def webhook_delivery_list(*, webhook: Webhook, status: str | None = None) -> QuerySet[WebhookDelivery]:
    """The webhook's delivery log, newest first, optionally in one status."""
    deliveries = WebhookDelivery.objects.filter(webhook=webhook)
    if status:
        deliveries = deliveries.filter(status=status)
    return deliveries.order_by("-created_at", "-id")


def webhook_delivery_get(*, webhook: Webhook, delivery_id) -> WebhookDelivery:
    delivery = WebhookDelivery.objects.filter(webhook=webhook, pk=delivery_id).first()
    if delivery is None:
        raise NotFoundError(f"Delivery {delivery_id} not found for webhook {webhook.pk}.", code="delivery_not_found")
    delivery.webhook = webhook
    return delivery
