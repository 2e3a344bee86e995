"""Create, change and delete memory stores."""

import uuid

from django.conf import settings
from django.db import IntegrityError, transaction

from apps.core.admin_log import admin_log_forget
from apps.core.embeddings import get_embedder, resolve_embedding_config
from apps.core.errors import ApplicationError, ConflictError
from apps.memories.models import MemoryStore
from apps.memories.quotas import check_store_quota
from apps.memories.store_settings import store_settings_validate
from apps.tenancy.models import Tenant


def store_create(
    *,
    tenant: Tenant,
    name: str,
    description: str = "",
    embedding_provider: str | None = None,
    embedding_model: str | None = None,
    embedding_dimension: int | None = None,
    review_policy: str = MemoryStore.ReviewPolicy.AUTO,
    search_defaults: dict | None = None,
    max_content_length: int | None = None,
    extraction_config: dict | None = None,
    working_memory_config: dict | None = None,
    store_id: uuid.UUID | None = None,
) -> MemoryStore:
    """Create a memory store; its embedder is fixed from here on. `store_id`: an import recreating an exported
    store keeps its id (and so its memories' ids: apps.portability)."""
    provider = embedding_provider or settings.MEMORYHUB_DEFAULT_EMBEDDER
    model, dimension = resolve_embedding_config(
        provider=provider, model=embedding_model, dimension=embedding_dimension
    )
    if MemoryStore.objects.filter(tenant=tenant, name=name).exists():
        raise ConflictError(f"A store named {name!r} already exists.", code="store_exists")
    try:
        with transaction.atomic():
            check_store_quota(tenant)
            return MemoryStore.objects.create(
                **({"id": store_id} if store_id else {}),
                tenant=tenant,
                name=name,
                description=description,
                embedding_provider=provider,
                embedding_model=model,
                embedding_dimension=dimension,
                review_policy=review_policy,
                search_defaults=store_settings_validate("search_defaults", search_defaults or {}),
                max_content_length=max_content_length or settings.MEMORYHUB_DEFAULT_MAX_CONTENT_LENGTH,
                extraction_config=store_settings_validate("extraction_config", extraction_config),
                working_memory_config=store_settings_validate("working_memory_config", working_memory_config),
            )
    except IntegrityError as exc:  # a concurrent create of the same name
        raise ConflictError(f"A store named {name!r} already exists.", code="store_exists") from exc


_IMMUTABLE_STORE_FIELDS = ("name", "embedding_provider", "embedding_model", "embedding_dimension")
_MUTABLE_STORE_FIELDS = (
    "description",
    "review_policy",
    "search_defaults",
    "max_content_length",
    "extraction_config",
    "working_memory_config",
)


def store_update(*, store: MemoryStore, changes: dict) -> MemoryStore:
    """Change a store's description, review policy, search defaults or limits."""
    changes = dict(changes)  # validated values replace the given ones here, not in the caller's dict
    fixed = [name for name in _IMMUTABLE_STORE_FIELDS if name in changes and changes[name] != getattr(store, name)]
    if fixed:
        raise ApplicationError(
            f"{', '.join(fixed)} cannot change after a store is created.",
            code="immutable_field",
            details={name: ["Fixed at creation."] for name in fixed},
        )
    for name in ("extraction_config", "working_memory_config"):
        if name in changes:
            change = changes[name] or {}
            if not isinstance(change, dict):
                store_settings_validate(name, change)  # raises: must be a JSON object
            # Overrides over server defaults: a change names only some keys; null returns one to its default.
            merged = {**getattr(store, name), **change}
            changes[name] = store_settings_validate(
                name, {key: value for key, value in merged.items() if value is not None},
                chosen={key for key, value in change.items() if value is not None},
            )
    if "search_defaults" in changes:  # replaced whole, as given
        changes["search_defaults"] = store_settings_validate("search_defaults", changes["search_defaults"])
    updated = [name for name in _MUTABLE_STORE_FIELDS if name in changes]
    for name in updated:
        setattr(store, name, changes[name])
    if updated:
        store.save(update_fields=[*updated, "updated_at"])
    return store


def store_delete(*, store: MemoryStore) -> dict:
    """Delete a store with all its memories and their history."""
    with transaction.atomic():
        memories = store.memories.count()
        admin_log_forget(MemoryStore.objects.filter(pk=store.pk))  # its memories, sessions... quoted there
        store.delete()
    return {"memories": memories}


# Embedders whose model runs in this process and takes a while to load; the others (hash, an HTTP API) are ready.
_LOADED_MODEL_PROVIDERS = ("local",)


def store_embedders_load() -> list[str]:
    """Load (and run once) the models of the embedders that stores use, so that the first search a new process
    serves does not wait for them (about a second for MiniLM). Returns the embedders loaded, as provider:model."""
    loaded = []
    in_use = (
        MemoryStore.objects.filter(embedding_provider__in=_LOADED_MODEL_PROVIDERS)
        .values_list("embedding_provider", "embedding_model", "embedding_dimension")
        .order_by()
        .distinct()
    )
    for provider, model, dimension in in_use:
        get_embedder(provider=provider, model=model, dimension=int(dimension)).embed(["warm up"])
        loaded.append(f"{provider}:{model}")
    return loaded
