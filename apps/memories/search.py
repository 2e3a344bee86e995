"""Hybrid search: a store's live memories ranked by vector similarity, full text, or both fused.

Both signals are ranked in the database. Vector similarity is exact for a search scoped to a user or a
session that holds at most SEARCH_EXACT_MAX_ROWS memories: every one is compared with the query. Otherwise
it goes through the partial HNSW index of the store's dimension, with pgvector's iterative scan so filters
do not starve the result. HNSW is approximate: an element whose graph neighbours were all deleted, or were
inserted by transactions that rolled back, is unreachable until VACUUM repairs the graph, so a memory
written a moment ago could be missing from an index scan. Full text goes through the GIN index. The query is one statement of CTEs, each built by one function below: the filter
both signals share, the vector candidates, the keyword candidates, their fusion, and the final page.
"""

from dataclasses import dataclass

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from psycopg.types.json import Jsonb

from apps.core.embeddings import vector_literal
from apps.core.errors import ApplicationError
from apps.memories.models import FULL_TEXT_CONFIG, Memory, MemoryStore

SEARCH_MODES = ("hybrid", "vector", "keyword")
# Reciprocal rank fusion constant (Cormack et al. 2009); 60 is the customary value.
RRF_K = 60
_DEFAULT_EF_SEARCH = 40  # pgvector's default hnsw.ef_search


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
    "id", "created_at", "updated_at", "store_id", "user_id", "agent_id", "session_id", "content", "memory_type",
    "metadata", "tags", "importance", "confidence", "status", "source", "provenance", "valid_from", "valid_to",
    "expires_at", "superseded_by_id", "content_hash", "embedding_dimension",
)


def memory_query_vector(*, store: MemoryStore, query: str) -> list[float]:
    """The query's embedding with the store's embedder, for several searches of one query."""
    return store.embedder.embed_query(query)


def memory_search(
    *, store: MemoryStore, search: SearchQuery, query_vector: list[float] | None = None
) -> list[SearchHit]:
    """Rank a store's live memories against a query by vector similarity, full text, or both (RRF)."""
    if search.mode not in SEARCH_MODES:
        raise ApplicationError(f"Unknown search mode {search.mode!r}.", code="validation_error")
    where, params = _filter_sql(store, search)
    # Each signal contributes a candidate pool a few times the page size, so fusion has overlap.
    candidates = min(max(search.limit * 4, 40), 400)
    params.update({"candidates": candidates, "limit": search.limit, "exact_max_rows": settings.SEARCH_EXACT_MAX_ROWS})
    ctes = []
    if search.mode in ("hybrid", "vector"):
        if query_vector is None:
            query_vector = memory_query_vector(store=store, query=search.query)
        params["query_vector"] = vector_literal(query_vector)
        # Counting a store-wide scope would read thousands of rows on every search; a user's or a session's
        # memories are few and found through an index.
        scoped = search.user_id is not None or search.session_id is not None
        ctes.append(_vector_hits_cte(int(store.embedding_dimension), where, exact_when_few=scoped))
    if search.mode in ("hybrid", "keyword"):
        params["text"] = search.query
        ctes.append(_keyword_hits_cte(where))
    ctes.append(_fused_cte(search.mode, params))
    sql = _page_sql(ctes, search.min_score, params)
    return _hits(_run(sql, params, candidates), store)


def _filter_sql(store: MemoryStore, search: SearchQuery) -> tuple[str, dict]:
    """The WHERE clause both signals share: the store, live statuses, not expired, and the caller's filters."""
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
        clauses.append("m.metadata @> %(metadata)s")
        params["metadata"] = Jsonb(search.metadata)
    if search.tags:
        clauses.append("m.tags @> %(tags)s::varchar(64)[]")
        params["tags"] = list(search.tags)
    return " AND ".join(clauses), params


def _vector_hits_cte(dimension: int, where: str, *, exact_when_few: bool) -> str:
    """The nearest memories by cosine distance, through the HNSW index of the store's dimension; with
    `exact_when_few`, exact over a scope of at most SEARCH_EXACT_MAX_ROWS memories.

    One statement either way: `vector_scope` counts the filtered memories (up to one past the limit) and
    a one-time filter on that count lets only one of the two branches run.
    """
    # `dimension` comes from the database (one of SUPPORTED_DIMENSIONS): the cast must match the
    # partial index's expression for the planner to use it.
    distance = f"m.embedding::vector({dimension}) <=> %(query_vector)s::vector({dimension})"

    def nearest_by_index(condition: str = "TRUE") -> str:
        return f"""SELECT m.id, ({distance}) AS distance
             FROM memories_memory m
             WHERE m.embedding_dimension = {dimension} AND {where} AND {condition}
             ORDER BY {distance}
             LIMIT %(candidates)s"""

    if not exact_when_few:
        return f"""vector_hits AS MATERIALIZED (
        SELECT id, distance, row_number() OVER (ORDER BY distance, id) AS rank
        FROM ({nearest_by_index()}) nearest
    )"""
    return f"""vector_scope AS MATERIALIZED (
        SELECT m.id FROM memories_memory m
        WHERE m.embedding_dimension = {dimension} AND {where}
        LIMIT %(exact_max_rows)s + 1
    ),
    vector_hits AS MATERIALIZED (
        SELECT id, distance, row_number() OVER (ORDER BY distance, id) AS rank
        FROM (
            (SELECT id, distance
             FROM (
                 -- OFFSET 0 keeps the sort on the computed distances: the index cannot serve it.
                 SELECT m.id, ({distance}) AS distance
                 FROM memories_memory m
                 WHERE m.id IN (SELECT id FROM vector_scope)
                   AND (SELECT count(*) FROM vector_scope) <= %(exact_max_rows)s
                 OFFSET 0
             ) scoped
             ORDER BY distance, id
             LIMIT %(candidates)s)
            UNION ALL
            ({nearest_by_index("(SELECT count(*) FROM vector_scope) > %(exact_max_rows)s")})
        ) nearest
    )"""


def _keyword_hits_cte(where: str) -> str:
    """The memories matching any of the query's words, best full-text rank first, through the GIN index."""
    # plainto_tsquery ANDs the words; OR them instead so a memory matching some words still ranks.
    return f"""keyword_hits AS MATERIALIZED (
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


def _fused_cte(mode: str, params: dict) -> str:
    """One row per candidate with its ranks and score: reciprocal rank fusion in hybrid mode, normalised so
    a memory first in both lists scores 1; the similarity or the keyword score in a single mode."""
    if mode == "hybrid":
        params["rrf_k"] = RRF_K
        return """fused AS (
            SELECT COALESCE(v.id, k.id) AS id, v.rank AS vector_rank, k.rank AS keyword_rank,
                   1 - v.distance AS similarity,
                   (COALESCE(1.0 / (%(rrf_k)s + v.rank), 0) + COALESCE(1.0 / (%(rrf_k)s + k.rank), 0))
                       / (2.0 / (%(rrf_k)s + 1)) AS score
            FROM vector_hits v FULL OUTER JOIN keyword_hits k ON v.id = k.id
        )"""
    if mode == "vector":
        return """fused AS (
            SELECT id, rank AS vector_rank, NULL::bigint AS keyword_rank, 1 - distance AS similarity,
                   1 - distance AS score
            FROM vector_hits
        )"""
    return """fused AS (
        SELECT id, NULL::bigint AS vector_rank, rank AS keyword_rank, NULL::float AS similarity,
               keyword_score AS score
        FROM keyword_hits
    )"""


def _page_sql(ctes: list[str], min_score: float | None, params: dict) -> str:
    """The statement: the CTEs, then the best `limit` memories above `min_score`, with their ranks."""
    min_score_clause = ""
    if min_score is not None:
        min_score_clause = "WHERE f.score >= %(min_score)s"
        params["min_score"] = min_score
    return f"""
        WITH {", ".join(ctes)}
        SELECT {", ".join("m." + column for column in _MEMORY_COLUMNS)},
               f.score AS search_score, f.vector_rank, f.keyword_rank, f.similarity
        FROM fused f JOIN memories_memory m ON m.id = f.id
        {min_score_clause}
        ORDER BY f.score DESC, m.id
        LIMIT %(limit)s
    """


def _run(sql: str, params: dict, candidates: int) -> list[Memory]:
    if candidates <= _DEFAULT_EF_SEARCH:
        # hnsw.iterative_scan is set on every connection (settings.DATABASES OPTIONS), so the common
        # case is a single statement.
        return list(Memory.objects.raw(sql, params))
    # A wider candidate pool than HNSW's default search breadth: widen it for this query only.
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT set_config('hnsw.ef_search', %s, true)", [str(candidates)])
        return list(Memory.objects.raw(sql, params))


def _hits(rows: list[Memory], store: MemoryStore) -> list[SearchHit]:
    hits = []
    for memory in rows:
        memory.store = store
        hits.append(SearchHit(
            memory=memory,
            score=float(memory.search_score),
            vector_rank=memory.vector_rank,
            keyword_rank=memory.keyword_rank,
            similarity=None if memory.similarity is None else float(memory.similarity),
        ))
    return hits
