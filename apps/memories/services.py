"""Every change to stores and memories; each memory change writes a MemoryRevision."""

import uuid
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.conversations.config import working_state_overrides_validate
from apps.core.actors import Actor
from apps.core.bulk import copy_rows
from apps.core.embeddings import resolve_embedding_config
from apps.core.errors import ApplicationError, ConflictError, PayloadTooLargeError
from apps.extraction.config import extraction_overrides_validate
from apps.memories.models import Memory, MemoryRevision, MemoryStore
from apps.memories.normalise import content_hash
from apps.tenancy.models import Tenant

SEARCH_MODES = ("hybrid", "vector", "keyword")

# --- Stores -----------------------------------------------------------------------------------------


def _validate_search_defaults(search_defaults: dict) -> dict:
    allowed = {"mode", "limit", "min_score"}
    unknown = sorted(set(search_defaults) - allowed)
    if unknown:
        raise ApplicationError(
            f"Unknown search default(s): {', '.join(unknown)}; allowed: mode, limit, min_score.",
            code="validation_error",
        )
    mode = search_defaults.get("mode", "hybrid")
    if mode not in SEARCH_MODES:
        raise ApplicationError(f"search_defaults.mode must be one of {', '.join(SEARCH_MODES)}.", code="validation_error")
    limit = search_defaults.get("limit", 10)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 100:
        raise ApplicationError("search_defaults.limit must be an integer from 1 to 100.", code="validation_error")
    min_score = search_defaults.get("min_score", 0.0)
    if isinstance(min_score, bool) or not isinstance(min_score, (int, float)) or not -1 <= min_score <= 1:
        raise ApplicationError("search_defaults.min_score must be a number from -1 to 1.", code="validation_error")
    return dict(search_defaults)


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
) -> MemoryStore:
    """Create a memory store; its embedder is fixed from here on."""
    provider = embedding_provider or settings.MEMORYHUB_DEFAULT_EMBEDDER
    model, dimension = resolve_embedding_config(
        provider=provider, model=embedding_model, dimension=embedding_dimension
    )
    if MemoryStore.objects.filter(tenant=tenant, name=name).exists():
        raise ConflictError(f"A store named {name!r} already exists.", code="store_exists")
    try:
        with transaction.atomic():
            return MemoryStore.objects.create(
                tenant=tenant,
                name=name,
                description=description,
                embedding_provider=provider,
                embedding_model=model,
                embedding_dimension=dimension,
                review_policy=review_policy,
                search_defaults=_validate_search_defaults(search_defaults or {}),
                max_content_length=max_content_length or settings.MEMORYHUB_DEFAULT_MAX_CONTENT_LENGTH,
                extraction_config=extraction_overrides_validate(extraction_config),
                working_memory_config=working_state_overrides_validate(working_memory_config),
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
    fixed = [name for name in _IMMUTABLE_STORE_FIELDS if name in changes and changes[name] != getattr(store, name)]
    if fixed:
        raise ApplicationError(
            f"{', '.join(fixed)} cannot change after a store is created.",
            code="immutable_field",
            details={name: ["Fixed at creation."] for name in fixed},
        )
    for name, validate in (("extraction_config", extraction_overrides_validate),
                           ("working_memory_config", working_state_overrides_validate)):
        if name in changes:
            # Overrides over server defaults: a change names only some keys; null returns one to its default.
            merged = {**getattr(store, name), **(changes[name] or {})}
            changes[name] = validate({key: value for key, value in merged.items() if value is not None})
    if "search_defaults" in changes:
        changes["search_defaults"] = _validate_search_defaults(changes["search_defaults"])
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
        store.delete()
    return {"memories": memories}


# --- Memories ---------------------------------------------------------------------------------------


@dataclass
class MemoryInput:
    user_id: str
    content: str
    memory_type: str = Memory.Type.FACT
    agent_id: str = ""
    session_id: str = ""
    metadata: dict = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    importance: float = 0.5
    confidence: float = 1.0
    status: str = Memory.Status.ACTIVE
    source: str = Memory.Source.API
    provenance: dict = field(default_factory=dict)
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    expires_at: datetime | None = None


@dataclass(frozen=True)
class MemoryWriteResult:
    memory: Memory
    duplicate: bool


SNAPSHOT_FIELDS = (
    "content",
    "provenance",
    "superseded_by_id",
    "memory_type",
    "status",
    "metadata",
    "tags",
    "importance",
    "confidence",
    "agent_id",
    "session_id",
    "valid_from",
    "valid_to",
    "expires_at",
)


def memory_snapshot(memory: Memory) -> dict:
    snapshot = {}
    for name in SNAPSHOT_FIELDS:
        value = getattr(memory, name)
        if isinstance(value, datetime):
            value = value.isoformat()
        elif isinstance(value, uuid.UUID):
            value = str(value)
        snapshot[name] = value
    return snapshot


def _revision(
    *, memory: Memory, action: str, actor: Actor, before: dict | None, after: dict | None, reason: str = "",
    context: dict | None = None,
) -> MemoryRevision:
    changed = sorted(name for name in SNAPSHOT_FIELDS if (before or {}).get(name) != (after or {}).get(name))
    return MemoryRevision(
        memory=memory,
        store_id=memory.store_id,
        user_id=memory.user_id,
        action=action,
        changed_fields=changed,
        before=before,
        after=after,
        actor_type=actor.kind,
        actor_id=actor.id,
        actor_label=actor.label,
        reason=reason,
        context=context or {},
    )


def _check_content(store: MemoryStore, content: str) -> None:
    if not content.strip():
        raise ApplicationError("content must not be blank.", code="validation_error", details={"content": ["Blank."]})
    if len(content) > store.max_content_length:
        raise PayloadTooLargeError(
            f"content is {len(content)} characters; this store allows {store.max_content_length}.",
            code="content_too_long",
            details={"content": [f"At most {store.max_content_length} characters."]},
        )


def _embed(store: MemoryStore, texts: list[str], known: dict[str, list[float]] | None = None) -> list[list[float]]:
    """Vectors for `texts`; those in `known` (computed already by the caller) are not embedded again."""
    known = known or {}
    missing = list(dict.fromkeys(text for text in texts if text not in known))
    fresh = dict(zip(missing, store.embedder.embed(missing), strict=True)) if missing else {}
    return [known[text] if text in known else fresh[text] for text in texts]


def _find_live_duplicates(store: MemoryStore, keys: set[tuple[str, str]]) -> dict[tuple[str, str], Memory]:
    if not keys:
        return {}
    user_ids = {user_id for user_id, _ in keys}
    hashes = {digest for _, digest in keys}
    existing = Memory.objects.filter(
        store=store, user_id__in=user_ids, content_hash__in=hashes, status__in=Memory.LIVE_STATUSES
    ).defer("embedding", "search_vector")  # parsing 384 floats per row costs more than the query
    return {(memory.user_id, memory.content_hash): memory for memory in existing}


def memory_bulk_create(
    *,
    store: MemoryStore,
    items: list[MemoryInput],
    actor: Actor,
    reason: str = "",
    context: dict | None = None,
    item_notes: list[tuple[str, dict]] | None = None,
    vectors: dict[str, list[float]] | None = None,
) -> list[MemoryWriteResult]:
    """Create memories in one transaction; content already known for that user returns the existing row.

    `item_notes` gives each item its own revision (reason, context), e.g. the messages it came from.
    `vectors` maps contents to embeddings the caller already computed with the store's embedder.
    """
    notes = item_notes or [(reason, context or {})] * len(items)
    if len(items) > settings.MEMORYHUB_MAX_BULK:
        raise PayloadTooLargeError(
            f"{len(items)} memories in one request; the limit is {settings.MEMORYHUB_MAX_BULK}.",
            code="batch_too_large",
        )
    for item in items:
        _check_content(store, item.content)
    digests = [content_hash(item.content) for item in items]

    # Embedding can be slow (a model, or an HTTP API) so it happens before the transaction opens;
    # only texts that are not already known are embedded.
    known = _find_live_duplicates(store, {(item.user_id, digest) for item, digest in zip(items, digests, strict=False)})
    to_embed: dict[tuple[str, str], str] = {}
    for item, digest in zip(items, digests, strict=False):
        key = (item.user_id, digest)
        if key not in known and key not in to_embed:
            to_embed[key] = item.content
    embedded = _embed(store, list(to_embed.values()), vectors) if to_embed else []
    vectors = dict(zip(to_embed, embedded, strict=True))

    # Two writers of the same new content can both pass the duplicate check; the partial unique
    # index stops the second, which then runs again and finds the first one's row.
    for attempt in range(3):
        try:
            return _insert_memories(
                store=store, items=items, digests=digests, vectors=vectors, actor=actor,
                notes=notes, candidate_keys=set(to_embed) | set(known),
            )
        except IntegrityError as exc:
            if attempt == 2:
                raise ConflictError(
                    "The same memory was written concurrently; retry the request.", code="concurrent_write"
                ) from exc
    raise AssertionError("unreachable")


@transaction.atomic
def _insert_memories(
    *, store, items, digests, vectors, actor, notes, candidate_keys
) -> list[MemoryWriteResult]:
    now = timezone.now()
    known = _find_live_duplicates(store, candidate_keys)
    # Rare: a duplicate seen before the transaction was deleted since; embed those now, in one call.
    unembedded = {
        (item.user_id, digest): item.content
        for item, digest in zip(items, digests, strict=False)
        if (item.user_id, digest) not in known and (item.user_id, digest) not in vectors
    }
    if unembedded:
        vectors = {**vectors, **dict(zip(unembedded, _embed(store, list(unembedded.values())), strict=True))}
    results: list[MemoryWriteResult] = []
    new_memories: list[Memory] = []
    created_here: dict[tuple[str, str], Memory] = {}
    for index, (item, digest) in enumerate(zip(items, digests, strict=False)):
        key = (item.user_id, digest)
        if key in known:
            results.append(MemoryWriteResult(memory=known[key], duplicate=True))
            continue
        if key in created_here:
            results.append(MemoryWriteResult(memory=created_here[key], duplicate=True))
            continue
        memory = Memory(
            store=store,
            user_id=item.user_id,
            agent_id=item.agent_id,
            session_id=item.session_id,
            content=item.content,
            memory_type=item.memory_type,
            metadata=item.metadata,
            tags=item.tags,
            importance=item.importance,
            confidence=item.confidence,
            status=item.status,
            source=item.source,
            provenance=item.provenance,
            valid_from=item.valid_from or now,
            valid_to=item.valid_to,
            expires_at=item.expires_at,
            content_hash=digest,
            embedding=vectors[key],
            embedding_dimension=store.embedding_dimension,
            created_at=now,
            updated_at=now,
        )
        created_here[key] = memory
        new_memories.append((memory, notes[index]))
        results.append(MemoryWriteResult(memory=memory, duplicate=False))
    revisions = [
        _revision(
            memory=memory,
            action=MemoryRevision.Action.CREATE,
            actor=actor,
            before=None,
            after=memory_snapshot(memory),
            reason=note_reason,
            context=note_context,
        )
        for memory, (note_reason, note_context) in new_memories
    ]
    copy_rows(Memory, [memory for memory, _ in new_memories], exclude=("search_vector",))
    copy_rows(MemoryRevision, revisions, exclude=("id",))
    return results


def memory_create(
    *, store: MemoryStore, item: MemoryInput, actor: Actor, reason: str = "", context: dict | None = None,
    vectors: dict[str, list[float]] | None = None,
) -> MemoryWriteResult:
    """Create one memory, or return the live memory with the same normalised content for that user."""
    return memory_bulk_create(
        store=store, items=[item], actor=actor, reason=reason, context=context, vectors=vectors
    )[0]


_EDITABLE_FIELDS = (
    "provenance",
    "superseded_by",
    "content",
    "memory_type",
    "metadata",
    "tags",
    "importance",
    "confidence",
    "status",
    "agent_id",
    "session_id",
    "valid_to",
    "expires_at",
)

def memory_update(
    *, memory: Memory, changes: dict, actor: Actor, reason: str = "", context: dict | None = None
) -> Memory:
    """Edit a memory's content, metadata, tags, scores or status; re-embeds changed content."""
    unknown = sorted(set(changes) - set(_EDITABLE_FIELDS))
    if unknown:
        raise ApplicationError(f"Cannot change {', '.join(unknown)}.", code="validation_error")
    store = memory.store
    new_vector = None
    new_hash = None
    if "content" in changes and changes["content"] != memory.content:
        _check_content(store, changes["content"])
        new_hash = content_hash(changes["content"])
        new_vector = _embed(store, [changes["content"]])[0]

    with transaction.atomic():
        # Without the vector: an edit that keeps the content neither reads nor rewrites it.
        locked = (
            Memory.objects.select_for_update(of=("self",))
            .select_related("store")
            .defer("embedding", "search_vector")
            .get(pk=memory.pk)
        )
        before = memory_snapshot(locked)
        for name, value in changes.items():
            setattr(locked, name, value)
        if new_hash is not None:
            locked.content_hash = new_hash
            locked.embedding = new_vector
        after = memory_snapshot(locked)
        if before == after:
            return locked
        # Only new content, or a memory coming back to life, can collide with another live memory.
        becomes_live = before["status"] not in Memory.LIVE_STATUSES and locked.status in Memory.LIVE_STATUSES
        if locked.status in Memory.LIVE_STATUSES and (new_hash is not None or becomes_live):
            clash = (
                Memory.objects.filter(
                    store_id=locked.store_id,
                    user_id=locked.user_id,
                    content_hash=locked.content_hash,
                    status__in=Memory.LIVE_STATUSES,
                )
                .exclude(pk=locked.pk)
                .first()
            )
            if clash:
                raise ConflictError(
                    "Another live memory of this user already has this content.",
                    code="duplicate_memory",
                    details={"existing_id": str(clash.pk)},
                )
        locked.save()
        _revision(
            memory=locked,
            action=_action_for(before, after),
            actor=actor,
            before=before,
            after=after,
            reason=reason,
            context=context,
        ).save()
        if before["status"] != Memory.Status.ACTIVE and after["status"] == Memory.Status.ACTIVE:
            _supersede_on_approval(memory=locked, actor=actor, context=context)
    return locked


def _action_for(before: dict, after: dict) -> str:
    if before["status"] != after["status"]:
        if after["status"] == Memory.Status.DELETED:
            return MemoryRevision.Action.DELETE
        if before["status"] == Memory.Status.DELETED:
            return MemoryRevision.Action.RESTORE
        if set(k for k in after if before[k] != after[k]) == {"status"}:
            return MemoryRevision.Action.STATUS_CHANGE
    return MemoryRevision.Action.UPDATE


def memory_set_status(
    *, memory: Memory, status: str, actor: Actor, reason: str = "", context: dict | None = None
) -> Memory:
    """Move a memory to another status (approve, reject, soft delete, restore)."""
    if status not in Memory.Status.values:
        raise ApplicationError(f"Unknown status {status!r}.", code="validation_error")
    return memory_update(memory=memory, changes={"status": status}, actor=actor, reason=reason, context=context)


def memory_supersede(*, old: Memory, new: Memory, actor: Actor, reason: str = "", context: dict | None = None) -> Memory:
    """Retire `old` in favour of `new`: superseded, valid until now, linked to its successor."""
    return memory_update(
        memory=old,
        changes={"status": Memory.Status.SUPERSEDED, "valid_to": timezone.now(), "superseded_by": new},
        actor=actor,
        reason=reason or "superseded by a newer value",
        context=context,
    )


def memory_invalidate(*, memory: Memory, actor: Actor, reason: str = "", context: dict | None = None) -> Memory:
    """End a memory's validity because it no longer holds (an explicit retraction)."""
    return memory_update(
        memory=memory,
        changes={"status": Memory.Status.DELETED, "valid_to": timezone.now()},
        actor=actor,
        reason=reason or "retracted",
        context=context,
    )


def memory_add_provenance(*, memory: Memory, source: dict, actor: Actor, context: dict | None = None) -> Memory:
    """Record that another conversation confirmed a memory (no new row for a repeated fact)."""
    provenance = dict(memory.provenance or {})
    sources = list(provenance.get("sources", []))
    if source in sources:
        return memory
    sources.append(source)
    provenance["sources"] = sources
    return memory_update(
        memory=memory, changes={"provenance": provenance}, actor=actor, reason="confirmed again", context=context
    )


def _supersede_on_approval(*, memory: Memory, actor: Actor, context: dict | None) -> None:
    """A reviewed memory that replaces an older value retires that value only once it is approved."""
    old_id = (memory.metadata or {}).get("supersedes")
    if not old_id:
        return
    old = Memory.objects.filter(
        pk=old_id, store_id=memory.store_id, user_id=memory.user_id, status=Memory.Status.ACTIVE
    ).first()
    if old is not None:
        memory_supersede(old=old, new=memory, actor=actor, context=context)


def memory_approve(*, memory: Memory, actor: Actor, reason: str = "") -> Memory:
    """Publish a memory held for review."""
    return memory_set_status(memory=memory, status=Memory.Status.ACTIVE, actor=actor, reason=reason or "approved")


def memory_reject(*, memory: Memory, actor: Actor, reason: str = "") -> Memory:
    """Refuse a memory held for review; it stays in history but is never searched."""
    return memory_set_status(memory=memory, status=Memory.Status.REJECTED, actor=actor, reason=reason or "rejected")


def memory_delete(*, memory: Memory, actor: Actor, reason: str = "") -> Memory:
    """Soft-delete: the memory leaves search and lists but keeps its history and can be restored."""
    return memory_set_status(memory=memory, status=Memory.Status.DELETED, actor=actor, reason=reason)


def memory_restore(*, memory: Memory, actor: Actor, reason: str = "") -> Memory:
    """Bring back a soft-deleted (or rejected) memory as active."""
    return memory_set_status(memory=memory, status=Memory.Status.ACTIVE, actor=actor, reason=reason or "restored")


def memory_hard_delete(*, memory: Memory) -> None:
    """Remove a memory and its whole history for good."""
    with transaction.atomic():
        MemoryRevision.objects.filter(memory=memory).delete()
        memory.delete()


def user_erase(*, store: MemoryStore, user_id: str) -> dict:
    """Forget everything about one user of a store: every memory and revision, and every session with
    its messages, working state, checkpoints, event log and extraction jobs."""
    with transaction.atomic():
        # Sessions first, locked like every writer of their rows locks them (so none adds a row
        # mid-delete); deleting them cascades to the jobs that could otherwise add memories back.
        session_ids = list(store.sessions.select_for_update().filter(user_id=user_id).values_list("pk", flat=True))
        _, sessions = store.sessions.filter(pk__in=session_ids).delete()
        revisions, _ = MemoryRevision.objects.filter(store=store, user_id=user_id).delete()
        _, deleted = Memory.objects.filter(store=store, user_id=user_id).delete()
    return {
        "memories": deleted.get(Memory._meta.label, 0),
        "revisions": revisions,
        "sessions": sessions.get("conversations.Session", 0),
        "messages": sessions.get("conversations.Message", 0),
    }
