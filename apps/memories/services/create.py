"""Adding memories: one, or many in one transaction, with duplicates of live content returned, not copied."""

from dataclasses import dataclass, field, replace
from datetime import datetime

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from apps.core.actors import Actor
from apps.core.bulk import copy_rows
from apps.core.errors import ApplicationError, ConflictError, PayloadTooLargeError
from apps.core.identifiers import normalise_identifier
from apps.core.sql import RowLoader
from apps.memories.events import EventType, memory_event
from apps.memories.models import Memory, MemoryRevision, MemoryStore
from apps.memories.normalise import content_hash
from apps.memories.quotas import check_memory_quota
from apps.memories.services.events import events_publish
from apps.memories.services.revisions import memory_snapshot, revision_for


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


def check_content(store: MemoryStore, content: str) -> None:
    if not content.strip():
        raise ApplicationError("content must not be blank.", code="validation_error", details={"content": ["Blank."]})
    if len(content) > store.max_content_length:
        raise PayloadTooLargeError(
            f"content is {len(content)} characters; this store allows {store.max_content_length}.",
            code="content_too_long",
            details={"content": [f"At most {store.max_content_length} characters."]},
        )


def embed_texts(store: MemoryStore, texts: list[str], known: dict[str, list[float]] | None = None) -> list[list[float]]:
    """Vectors for `texts`; those in `known` (computed already by the caller) are not embedded again."""
    known = known or {}
    missing = list(dict.fromkeys(text for text in texts if text not in known))
    fresh = dict(zip(missing, store.embedder.embed(missing), strict=True)) if missing else {}
    return [known[text] if text in known else fresh[text] for text in texts]


def _with_normalised_ids(item: MemoryInput) -> MemoryInput:
    """The item with its ids in NFC (apps.core.identifiers), whoever the caller: API, admin, task or command."""
    return replace(
        item,
        user_id=normalise_identifier(item.user_id),
        agent_id=normalise_identifier(item.agent_id),
        session_id=normalise_identifier(item.session_id),
    )


# Every column but the embedding and the lexemes: parsing 384 floats per row costs more than the query. The
# statement is written out once (each add runs it, twice): compiling the queryset took ten times its run.
_LIVE_ROWS = RowLoader(Memory, fields=tuple(
    field.attname for field in Memory._meta.concrete_fields if field.attname not in ("embedding", "search_vector")
))
_LIVE_DUPLICATES_SQL = (
    f'SELECT {_LIVE_ROWS.select_list("m")} FROM "{Memory._meta.db_table}" m '
    "WHERE m.store_id = %s AND m.user_id = ANY(%s) AND m.content_hash = ANY(%s) "
    # Spelled as the partial unique index's predicate (unique_live_memory_content), which the planner then uses.
    "AND m.status IN ({})".format(", ".join(f"'{status}'" for status in Memory.LIVE_STATUSES))
)


def _find_live_duplicates(store: MemoryStore, keys: set[tuple[str, str]]) -> dict[tuple[str, str], Memory]:
    if not keys:
        return {}
    user_ids = sorted({user_id for user_id, _ in keys})
    hashes = sorted({digest for _, digest in keys})
    with connection.cursor() as cursor:
        cursor.execute(_LIVE_DUPLICATES_SQL, [store.pk, user_ids, hashes])
        rows = cursor.fetchall()
    found = {}
    for row in rows:
        memory = _LIVE_ROWS.load(row)
        memory.store = store
        key = (memory.user_id, memory.content_hash)
        if key in keys:  # a user's hash of another user's content is not a duplicate
            found[key] = memory
    return found


def memory_bulk_create(
    *,
    store: MemoryStore,
    items: list[MemoryInput],
    actor: Actor,
    reason: str = "",
    context: dict | None = None,
    item_notes: list[tuple[str, dict]] | None = None,
    vectors: dict[str, list[float]] | None = None,
    checked_new: bool = False,
) -> list[MemoryWriteResult]:
    """Create memories in one transaction; content already known for that user returns the existing row.

    `item_notes` gives each item its own revision (reason, context), e.g. the messages it came from.
    `vectors` maps contents to embeddings the caller already computed with the store's embedder.
    `checked_new`: the caller has just looked for these contents among the user's live memories, in the same
    transaction, and found none (extraction's consolidation does); the insert then skips its own look, and the
    unique index still stops a duplicate another writer committed meanwhile (the retry looks again).
    """
    notes = item_notes or [(reason, context or {})] * len(items)
    if len(items) > settings.MEMORYHUB_MAX_BULK:
        raise PayloadTooLargeError(
            f"{len(items)} memories in one request; the limit is {settings.MEMORYHUB_MAX_BULK}.",
            code="batch_too_large",
        )
    for item in items:
        check_content(store, item.content)
    items = [_with_normalised_ids(item) for item in items]
    digests = [content_hash(item.content) for item in items]

    # Embedding can be slow (a model, or an HTTP API) so it happens before the transaction opens;
    # only texts that are not already known are embedded. When the caller has every vector already, there is
    # nothing to spare: the check inside the transaction is the one that counts.
    keys = {(item.user_id, digest) for item, digest in zip(items, digests, strict=False)}
    given = vectors or {}
    known = {} if checked_new or all(item.content in given for item in items) else _find_live_duplicates(store, keys)
    to_embed: dict[tuple[str, str], str] = {}
    for item, digest in zip(items, digests, strict=False):
        key = (item.user_id, digest)
        if key not in known and key not in to_embed:
            to_embed[key] = item.content
    embedded = embed_texts(store, list(to_embed.values()), vectors) if to_embed else []
    vectors = dict(zip(to_embed, embedded, strict=True))

    # Two writers of the same new content can both pass the duplicate check; the partial unique
    # index stops the second, which then runs again and finds the first one's row.
    for attempt in range(3):
        try:
            return _insert_memories(
                store=store, items=items, digests=digests, vectors=vectors, actor=actor,
                notes=notes, candidate_keys=set() if checked_new and attempt == 0 else set(to_embed) | set(known),
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
        vectors = {**vectors, **dict(zip(unembedded, embed_texts(store, list(unembedded.values())), strict=True))}
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
        revision_for(
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
    check_memory_quota(store, adding=len(new_memories))
    copy_rows(Memory, [memory for memory, _ in new_memories], exclude=("search_vector",))
    copy_rows(MemoryRevision, revisions, exclude=("id",))
    events_publish([memory_event(EventType.MEMORY_CREATED, memory) for memory, _ in new_memories])
    return results


def memory_create(
    *, store: MemoryStore, item: MemoryInput, actor: Actor, reason: str = "", context: dict | None = None,
    vectors: dict[str, list[float]] | None = None,
) -> MemoryWriteResult:
    """Create one memory, or return the live memory with the same normalised content for that user."""
    return memory_bulk_create(
        store=store, items=[item], actor=actor, reason=reason, context=context, vectors=vectors
    )[0]
