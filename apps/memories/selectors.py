"""Reads of stores and memories, including hybrid search."""

from dataclasses import dataclass
from datetime import datetime

from django.db import connection, transaction
from django.db.models import QuerySet
from django.db.models.fields.json import KeyTextTransform
from django.utils import timezone

from apps.core.embeddings import vector_literal
from apps.core.errors import ApplicationError, NotFoundError
from apps.memories.models import FULL_TEXT_CONFIG, Memory, MemoryRevision, MemoryStore

# Reciprocal rank fusion constant (Cormack et al. 2009); 60 is the customary value.
RRF_K = 60
_DEFAULT_EF_SEARCH = 40  # pgvector's default hnsw.ef_search


def store_list(*, api_key) -> QuerySet[MemoryStore]:
    stores = MemoryStore.objects.for_tenant(api_key.tenant)
    if api_key.store_names:
        stores = stores.filter(name__in=api_key.store_names)
    return stores.select_related("tenant")


def store_get(*, api_key, name: str) -> MemoryStore:
    """The store `name` of the key's tenant; a store of another tenant is simply not found."""
    store = MemoryStore.objects.for_tenant(api_key.tenant).select_related("tenant").filter(name=name).first()
    if store is None:
        raise NotFoundError(f"Store {name!r} not found.", code="store_not_found")
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


# --- Search -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SearchQuery:
    query: str
    mode: str = "hybrid"
    limit: int = 10
    min_score: float | None = None
    user_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    memory_types: tuple[str, ...] = ()
    metadata: dict | None = None
    tags: tuple[str, ...] = ()
    include_pending: bool = False


@dataclass(frozen=True)
class SearchHit:
    memory: Memory
    score: float
    vector_rank: int | None
    keyword_rank: int | None
    similarity: float | None


_MEMORY_COLUMNS = (
    "id, created_at, updated_at, store_id, user_id, agent_id, session_id, content, memory_type, metadata, "
    "tags, importance, confidence, status, source, provenance, valid_from, valid_to, expires_at, "
    "superseded_by_id, content_hash, embedding_dimension"
)


def _filter_sql(store: MemoryStore, search: SearchQuery) -> tuple[str, dict]:
    statuses = [Memory.Status.ACTIVE] + ([Memory.Status.PENDING_REVIEW] if search.include_pending else [])
    clauses = [
        "m.store_id = %(store_id)s",
        "m.status = ANY(%(statuses)s)",
        "(m.expires_at IS NULL OR m.expires_at > %(now)s)",
    ]
    params: dict = {"store_id": store.pk, "statuses": statuses, "now": timezone.now()}
    for name in ("user_id", "agent_id", "session_id"):
        value = getattr(search, name)
        if value is not None:
            clauses.append(f"m.{name} = %({name})s")
            params[name] = value
    if search.memory_types:
        clauses.append("m.memory_type = ANY(%(memory_types)s)")
        params["memory_types"] = list(search.memory_types)
    if search.metadata:
        from psycopg.types.json import Jsonb

        clauses.append("m.metadata @> %(metadata)s")
        params["metadata"] = Jsonb(search.metadata)
    if search.tags:
        clauses.append("m.tags @> %(tags)s::varchar(64)[]")
        params["tags"] = list(search.tags)
    return " AND ".join(clauses), params


def memory_query_vector(*, store: MemoryStore, query: str) -> list[float]:
    """The query's embedding with the store's embedder, for several searches of one query."""
    return store.embedder.embed_query(query)


def memory_search(
    *, store: MemoryStore, search: SearchQuery, query_vector: list[float] | None = None
) -> list[SearchHit]:
    """Rank a store's live memories against a query by vector similarity, full text, or both (RRF).

    Both signals are ranked in the database, each through its own index: the partial HNSW index of
    the store's dimension (with pgvector's iterative scan so filters do not starve the result) and
    the GIN full-text index. The two candidate lists are fused with reciprocal rank fusion.
    """
    if search.mode not in ("hybrid", "vector", "keyword"):
        raise ApplicationError(f"Unknown search mode {search.mode!r}.", code="validation_error")
    where, params = _filter_sql(store, search)
    # Each signal contributes a candidate pool a few times the page size, so fusion has overlap.
    candidates = min(max(search.limit * 4, 40), 400)
    params.update({"candidates": candidates, "limit": search.limit, "text": search.query, "rrf_k": RRF_K})

    dimension = int(store.embedding_dimension)  # from the database, one of SUPPORTED_DIMENSIONS
    ctes = []
    if search.mode in ("hybrid", "vector"):
        if query_vector is None:
            query_vector = memory_query_vector(store=store, query=search.query)
        params["query_vector"] = vector_literal(query_vector)
        ctes.append(
            f"""vector_hits AS MATERIALIZED (
                SELECT id, distance, row_number() OVER (ORDER BY distance, id) AS rank
                FROM (
                    SELECT m.id, (m.embedding::vector({dimension}) <=> %(query_vector)s::vector({dimension})) AS distance
                    FROM memories_memory m
                    WHERE m.embedding_dimension = {dimension} AND {where}
                    ORDER BY m.embedding::vector({dimension}) <=> %(query_vector)s::vector({dimension})
                    LIMIT %(candidates)s
                ) nearest
            )"""
        )
    if search.mode in ("hybrid", "keyword"):
        # plainto_tsquery ANDs the words; OR them instead so a memory matching some words still ranks.
        ctes.append(
            f"""keyword_hits AS MATERIALIZED (
                SELECT id, keyword_score, row_number() OVER (ORDER BY keyword_score DESC, id) AS rank
                FROM (
                    SELECT m.id, ts_rank_cd(m.search_vector, q.query, 32) AS keyword_score
                    FROM memories_memory m,
                         (SELECT replace(plainto_tsquery('{FULL_TEXT_CONFIG}', %(text)s)::text, '&', '|')::tsquery
                              AS query) q
                    WHERE m.search_vector @@ q.query AND {where}
                    ORDER BY keyword_score DESC
                    LIMIT %(candidates)s
                ) matched
            )"""
        )
    if search.mode == "hybrid":
        fused = """fused AS (
                SELECT COALESCE(v.id, k.id) AS id, v.rank AS vector_rank, k.rank AS keyword_rank,
                       1 - v.distance AS similarity,
                       (COALESCE(1.0 / (%(rrf_k)s + v.rank), 0) + COALESCE(1.0 / (%(rrf_k)s + k.rank), 0))
                           / (2.0 / (%(rrf_k)s + 1)) AS score
                FROM vector_hits v FULL OUTER JOIN keyword_hits k ON v.id = k.id
            )"""
    elif search.mode == "vector":
        fused = """fused AS (
                SELECT id, rank AS vector_rank, NULL::bigint AS keyword_rank, 1 - distance AS similarity,
                       1 - distance AS score
                FROM vector_hits
            )"""
    else:
        fused = """fused AS (
                SELECT id, NULL::bigint AS vector_rank, rank AS keyword_rank, NULL::float AS similarity,
                       keyword_score AS score
                FROM keyword_hits
            )"""
    ctes.append(fused)
    min_score_clause = ""
    if search.min_score is not None:
        min_score_clause = "WHERE f.score >= %(min_score)s"
        params["min_score"] = search.min_score
    sql = f"""
        WITH {", ".join(ctes)}
        SELECT {", ".join("m." + column.strip() for column in _MEMORY_COLUMNS.split(","))},
               f.score AS search_score, f.vector_rank, f.keyword_rank, f.similarity
        FROM fused f JOIN memories_memory m ON m.id = f.id
        {min_score_clause}
        ORDER BY f.score DESC, m.id
        LIMIT %(limit)s
    """
    if candidates > _DEFAULT_EF_SEARCH:
        # A wider candidate pool than HNSW's default search breadth: widen it for this query only.
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT set_config('hnsw.ef_search', %s, true)", [str(candidates)])
            rows = list(Memory.objects.raw(sql, params))
    else:
        # hnsw.iterative_scan is set on every connection (settings.DATABASES OPTIONS), so the common
        # case is a single statement.
        rows = list(Memory.objects.raw(sql, params))
    hits = []
    for memory in rows:
        memory.store = store
        hits.append(
            SearchHit(
                memory=memory,
                score=float(memory.search_score),
                vector_rank=memory.vector_rank,
                keyword_rank=memory.keyword_rank,
                similarity=None if memory.similarity is None else float(memory.similarity),
            )
        )
    return hits
