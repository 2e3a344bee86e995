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
from datetime import datetime

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from psycopg.types.json import Jsonb

from apps.core import metrics
from apps.core.embeddings import vector_literal
from apps.core.errors import ApplicationError
from apps.core.sql import RowLoader, server_binding_cursor
from apps.memories.models import FULL_TEXT_CONFIG, Memory, MemoryStore

SEARCH_MODES = ("hybrid", "vector", "keyword")
# Okapi BM25's saturation and length normalisation: Lucene's (Anserini's) values for short passages, which
# memories are (the textbook 1.2 and 0.75 suit long documents).
BM25_K1 = 0.9
BM25_B = 0.4
_DEFAULT_EF_SEARCH = 40  # pgvector's default hnsw.ef_search
# With superseded memories asked for, a current fact outranks an old value of about the same relevance.
SUPERSEDED_SCORE_FACTOR = 0.5


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
    include_superseded: bool = False
    valid_at: datetime | None = None  # memories that held at that moment (superseded ones included)
    created_after: datetime | None = None
    created_before: datetime | None = None
    # Ranking; None: the store's search_defaults (apps.memories.store_settings).
    fusion_k: int | None = None
    vector_weight: float | None = None
    keyword_weight: float | None = None
    candidate_depth: int | None = None
    explain: bool = False


@dataclass(frozen=True)
class Ranking:
    """How a search ranked: reciprocal rank fusion of each signal's best `candidate_depth` memories."""

    fusion_k: int
    vector_weight: float
    keyword_weight: float
    candidate_depth: int


@dataclass(frozen=True)
class SearchHit:
    memory: Memory
    score: float
    vector_rank: int | None
    keyword_rank: int | None
    similarity: float | None
    keyword_score: float | None = None  # the BM25 score


@dataclass(frozen=True)
class SearchResult:
    hits: list[SearchHit]
    ranking: Ranking
    # With `explain`: the query's terms and their statistics in the searched scope (keyword signal).
    terms: list[dict] | None = None
    documents: int | None = None
    average_length: float | None = None


# A page's memories: every column but the embedding and the lexemes.
_PAGE_ROWS = RowLoader(Memory, fields=(
    "id", "created_at", "updated_at", "store_id", "user_id", "agent_id", "session_id", "content", "memory_type",
    "metadata", "tags", "importance", "confidence", "status", "source", "provenance", "valid_from", "valid_to",
    "expires_at", "superseded_by_id", "content_hash", "embedding_dimension",
))


def memory_query_vector(*, store: MemoryStore, query: str) -> list[float]:
    """The query's embedding with the store's embedder, for several searches of one query."""
    return store.embedder.embed_query(query)


def memory_search(
    *, store: MemoryStore, search: SearchQuery, query_vector: list[float] | None = None
) -> list[SearchHit]:
    """Rank a store's live memories against a query by vector similarity, BM25 full text, or both (RRF)."""
    return memory_search_explained(store=store, search=search, query_vector=query_vector).hits


def memory_search_explained(
    *, store: MemoryStore, search: SearchQuery, query_vector: list[float] | None = None
) -> SearchResult:
    """memory_search, with the ranking it used and, if `search.explain`, the keyword statistics behind it."""
    if search.mode not in SEARCH_MODES:
        raise ApplicationError(f"Unknown search mode {search.mode!r}.", code="validation_error")
    # memoryhub_search_duration_seconds{mode}: every search, whoever asks (the API, MCP tools, context building).
    with metrics.timed(metrics.SEARCH_DURATION, mode=search.mode):
        return _search_explained(store=store, search=search, query_vector=query_vector)


def _search_explained(*, store: MemoryStore, search: SearchQuery, query_vector: list[float] | None) -> SearchResult:
    ranking = _ranking(store, search)
    where, params = _filter_sql(store, search)
    # Each signal's pool does not depend on the page size, so the first 10 hits of a limit-20 search are
    # those of the limit-10 search (a page larger than the pool widens it).
    candidates = max(ranking.candidate_depth, search.limit)
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
        params["stats_rows"] = settings.SEARCH_KEYWORD_STATS_MAX_ROWS
        ctes.append(_keyword_hits_cte(where))
    ctes.append(_fused_cte(search.mode, ranking, params))
    sql = _page_sql(ctes, search, params)
    through_index = search.mode != "keyword" and search.user_id is None and search.session_id is None
    hits = _run(sql, params, candidates, store, through_index=through_index)
    if not (search.explain and search.mode in ("hybrid", "keyword")):
        return SearchResult(hits=hits, ranking=ranking)
    return SearchResult(hits=hits, ranking=ranking, **_keyword_statistics(where, params))


def search_explanation(result: SearchResult, search: SearchQuery) -> tuple[list[dict], dict]:
    """For `explain`: each hit's rank, score and share of the fused score per signal, and the search's ranking
    settings with the query terms' statistics (keyword signal)."""
    ranking = result.ranking
    hybrid = search.mode == "hybrid"
    # The fused score of a memory first in both lists: each signal's share is divided by it, as the score is.
    best = (ranking.vector_weight + ranking.keyword_weight) / (ranking.fusion_k + 1)
    per_hit = []
    for hit in result.hits:
        signals: dict = {}
        # The shares add up to the score: a superseded memory's are scaled as its score is.
        factor = 1.0
        if hit.memory.status == Memory.Status.SUPERSEDED and search.include_superseded and search.valid_at is None:
            factor = signals["superseded_factor"] = SUPERSEDED_SCORE_FACTOR
        if hit.vector_rank is not None:
            share = (ranking.vector_weight / (ranking.fusion_k + hit.vector_rank) / best if hybrid
                     else hit.similarity)
            signals["vector"] = {"rank": hit.vector_rank, "similarity": hit.similarity,
                                 "contribution": share * factor}
        if hit.keyword_rank is not None:
            share = (ranking.keyword_weight / (ranking.fusion_k + hit.keyword_rank) / best if hybrid
                     else hit.score / factor)
            signals["keyword"] = {"rank": hit.keyword_rank, "score": hit.keyword_score,
                                  "contribution": share * factor}
        per_hit.append(signals)
    summary: dict = {"candidate_depth": ranking.candidate_depth}
    if hybrid:
        summary.update(fusion="reciprocal_rank", fusion_k=ranking.fusion_k, vector_weight=ranking.vector_weight,
                       keyword_weight=ranking.keyword_weight)
    if search.mode in ("hybrid", "keyword"):
        summary["keyword"] = {"scoring": "bm25", "k1": BM25_K1, "b": BM25_B, "documents": result.documents,
                              "average_length": result.average_length, "terms": result.terms or []}
    return per_hit, summary


def _ranking(store: MemoryStore, search: SearchQuery) -> Ranking:
    from apps.memories.store_settings import search_settings_for  # it imports SEARCH_MODES from here

    defaults = search_settings_for(store)
    ranking = Ranking(
        fusion_k=defaults.fusion_k if search.fusion_k is None else search.fusion_k,
        vector_weight=defaults.vector_weight if search.vector_weight is None else search.vector_weight,
        keyword_weight=defaults.keyword_weight if search.keyword_weight is None else search.keyword_weight,
        candidate_depth=defaults.candidate_depth if search.candidate_depth is None else search.candidate_depth,
    )
    if search.mode == "hybrid" and ranking.vector_weight + ranking.keyword_weight <= 0:
        raise ApplicationError("Hybrid search needs a positive vector_weight or keyword_weight.",
                               code="validation_error")
    return ranking


def _filter_sql(store: MemoryStore, search: SearchQuery) -> tuple[str, dict]:
    """The WHERE clause both signals share: the store, live statuses, not expired, and the caller's filters."""
    statuses = [Memory.Status.ACTIVE]
    if search.include_pending:
        statuses.append(Memory.Status.PENDING_REVIEW)
    if search.include_superseded or search.valid_at is not None:
        statuses.append(Memory.Status.SUPERSEDED)
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
    if search.valid_at is not None:
        clauses.append("m.valid_from <= %(valid_at)s AND (m.valid_to IS NULL OR m.valid_to > %(valid_at)s)")
        params["valid_at"] = search.valid_at
    if search.created_after is not None:
        clauses.append("m.created_at > %(created_after)s")
        params["created_after"] = search.created_after
    if search.created_before is not None:
        clauses.append("m.created_at < %(created_before)s")
        params["created_before"] = search.created_before
    return " AND ".join(clauses), params


def _vector_hits_cte(dimension: int, where: str, *, exact_when_few: bool) -> str:
    """The nearest memories by cosine distance, through the HNSW index of the store's dimension; with
    `exact_when_few`, exact over a scope of at most SEARCH_EXACT_MAX_ROWS memories.

    One statement either way: `vector_scope` counts the filtered memories (up to one past the limit) and
    a one-time filter on that count lets only one of the two branches run.
    """
    # `dimension` comes from the database (one of SUPPORTED_DIMENSIONS): the cast must match the
    # partial index's expression for the planner to use it.
    def distance(table: str) -> str:
        return f"{table}.embedding::vector({dimension}) <=> %(query_vector)s::vector({dimension})"

    def nearest_by_index(condition: str = "TRUE") -> str:
        return f"""SELECT m.id, m.created_at, m.content_hash, m.status, ({distance("m")}) AS distance
             FROM memories_memory m
             WHERE m.embedding_dimension = {dimension} AND {where} AND {condition}
             ORDER BY {distance("m")}
             LIMIT %(candidates)s"""

    # Ties go to the newer memory, then by content, as in the page (_page_sql): ranks follow the page's order.
    ranked = "row_number() OVER (ORDER BY distance, created_at DESC, content_hash, id) AS rank"
    if not exact_when_few:
        return f"""vector_hits AS MATERIALIZED (
        SELECT id, created_at, content_hash, status, distance, {ranked}
        FROM ({nearest_by_index()}) nearest
    )"""
    # The scope is read once, embeddings included: the exact branch ranks it without going back to the table.
    return f"""vector_scope AS MATERIALIZED (
        SELECT m.id, m.created_at, m.content_hash, m.status, m.embedding FROM memories_memory m
        WHERE m.embedding_dimension = {dimension} AND {where}
        LIMIT %(exact_max_rows)s + 1
    ),
    vector_hits AS MATERIALIZED (
        SELECT id, created_at, content_hash, status, distance, {ranked}
        FROM (
            (SELECT id, created_at, content_hash, status, distance
             FROM (
                 SELECT s.id, s.created_at, s.content_hash, s.status, ({distance("s")}) AS distance
                 FROM vector_scope s
                 WHERE (SELECT count(*) FROM vector_scope) <= %(exact_max_rows)s
             ) scoped
             ORDER BY distance, created_at DESC, content_hash, id
             LIMIT %(candidates)s)
            UNION ALL
            ({nearest_by_index("(SELECT count(*) FROM vector_scope) > %(exact_max_rows)s")})
        ) nearest
    )"""


def _keyword_hits_cte(where: str) -> str:
    """The memories matching any of the query's words, ranked by Okapi BM25 over PostgreSQL's lexemes.

    Term statistics come from the searched scope itself, so a user's own vocabulary (their name, the months
    of their conversations) weighs little, whatever the rest of the store holds: a memory matching no query
    word cannot contain one, so the matches give each word's document frequency exactly, and the scope gives
    the document count and average length: exactly when it holds at most SEARCH_KEYWORD_STATS_MAX_ROWS memories
    (a user's, typically), else from a sample of that many (a store-wide search).
    A memory's length is its number of distinct lexemes, and a word counts once in it however often it is
    repeated: memories are short, a repeated word in one is rare, and counting repeats (which needs each
    memory's positions unpacked) made searches slower and no better on the dev conversations.
    """
    # plainto_tsquery ANDs the words; OR them instead so a memory matching some words still ranks.
    return f"""keyword_query AS MATERIALIZED (
        SELECT replace(plainto_tsquery('{FULL_TEXT_CONFIG}', %(text)s)::text, '&', '|')::tsquery AS query,
               tsvector_to_array(to_tsvector('{FULL_TEXT_CONFIG}', %(text)s)) AS terms
    ),
    keyword_matches AS MATERIALIZED (
        SELECT m.id, m.created_at, m.content_hash, m.status, tsvector_to_array(m.search_vector) AS lexemes
        FROM memories_memory m, keyword_query q
        WHERE m.search_vector @@ q.query AND {where}
    ),
    keyword_scope AS MATERIALIZED (
        SELECT count(*)::float8 AS sampled, count(*) FILTER (WHERE sampled.matches)::float8 AS sampled_matches,
               COALESCE(avg(document_length), 1)::float8 AS average_length
        FROM (SELECT length(m.search_vector) AS document_length, m.search_vector @@ q.query AS matches
              FROM memories_memory m, keyword_query q
              WHERE {where} LIMIT %(stats_rows)s) sampled
    ),
    keyword_documents AS MATERIALIZED (
        -- The whole scope when it fits the sample; beyond, its size estimated from the share of the sample
        -- that matches the query, against the exact number of matches.
        SELECT s.average_length, CASE
                   WHEN s.sampled < %(stats_rows)s THEN s.sampled
                   WHEN s.sampled_matches = 0 THEN s.sampled + (SELECT count(*) FROM keyword_matches)
                   ELSE greatest(s.sampled, s.sampled * (SELECT count(*) FROM keyword_matches) / s.sampled_matches)
               END AS documents
        FROM keyword_scope s
    ),
    keyword_match_terms AS MATERIALIZED (
        -- Each match with each query word it holds: read once for the document frequencies and the scores.
        SELECT km.id, t.term
        FROM keyword_matches km, keyword_query q, unnest(q.terms) t(term)
        WHERE t.term = ANY(km.lexemes)
    ),
    keyword_terms AS MATERIALIZED (
        SELECT t.term, count(mt.id)::float8 AS document_frequency
        FROM keyword_query q CROSS JOIN unnest(q.terms) t(term)
             LEFT JOIN keyword_match_terms mt ON mt.term = t.term
        GROUP BY t.term
    ),
    keyword_idf AS MATERIALIZED (
        SELECT term, document_frequency,
               ln(1 + (greatest(d.documents, document_frequency) - document_frequency + 0.5)
                      / (document_frequency + 0.5)) AS idf
        FROM keyword_terms, keyword_documents d
        WHERE document_frequency > 0
    ),
    keyword_hits AS MATERIALIZED (
        -- A word counts once per memory: a memory's score is its length factor times its query words' IDF.
        SELECT id, created_at, content_hash, status, keyword_score,
               row_number() OVER (ORDER BY keyword_score DESC, created_at DESC, content_hash, id) AS rank
        FROM (
            SELECT km.id, km.created_at, km.content_hash, km.status,
                   {BM25_K1 + 1} / (1 + {BM25_K1} * ({1 - BM25_B} + {BM25_B} * cardinality(km.lexemes)
                                                       / greatest(d.average_length, 1)))
                   * COALESCE(held.idf, 0) AS keyword_score
            FROM keyword_matches km
                 CROSS JOIN keyword_documents d
                 LEFT JOIN (SELECT mt.id, sum(i.idf) AS idf
                            FROM keyword_match_terms mt JOIN keyword_idf i ON i.term = mt.term
                            GROUP BY mt.id) held ON held.id = km.id
        ) scored
        ORDER BY keyword_score DESC, created_at DESC, content_hash, id
        LIMIT %(candidates)s
    )"""


def _keyword_statistics(where: str, params: dict) -> dict:
    """The query's terms with their document frequency and IDF in the searched scope, for `explain`."""
    sql = f"""WITH {_keyword_hits_cte(where)}
        SELECT t.term, t.document_frequency, COALESCE(i.idf, ln(1 + (d.documents + 0.5) / 0.5)), d.documents,
               d.average_length
        FROM keyword_terms t LEFT JOIN keyword_idf i ON i.term = t.term, keyword_documents d
        ORDER BY t.term"""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    terms = [{"term": term, "documents": int(frequency), "idf": round(float(idf), 4)}
             for term, frequency, idf, _, _ in rows]
    if rows:
        return {"terms": terms, "documents": int(rows[0][3]), "average_length": float(rows[0][4])}
    return {"terms": [], "documents": None, "average_length": None}


def _fused_cte(mode: str, ranking: Ranking, params: dict) -> str:
    """One row per candidate with its ranks, score and sort keys. Hybrid: weighted reciprocal rank fusion,
    normalised so a memory first in both lists scores 1. Vector: the cosine similarity. Keyword: the BM25 score
    divided by the sum of the query terms' IDF (about 1 for a memory holding each query word once)."""
    if mode == "hybrid":
        params.update({"fusion_k": ranking.fusion_k, "vector_weight": ranking.vector_weight,
                       "keyword_weight": ranking.keyword_weight})
        return """fused AS (
            SELECT COALESCE(v.id, k.id) AS id, COALESCE(v.created_at, k.created_at) AS created_at,
                   COALESCE(v.content_hash, k.content_hash) AS content_hash, COALESCE(v.status, k.status) AS status,
                   v.rank AS vector_rank, k.rank AS keyword_rank, 1 - v.distance AS similarity, k.keyword_score,
                   (COALESCE(%(vector_weight)s::float / (%(fusion_k)s + v.rank), 0)
                    + COALESCE(%(keyword_weight)s::float / (%(fusion_k)s + k.rank), 0))
                   / ((%(vector_weight)s::float + %(keyword_weight)s::float) / (%(fusion_k)s + 1)) AS score
            FROM vector_hits v FULL OUTER JOIN keyword_hits k ON v.id = k.id
        )"""
    if mode == "vector":
        return """fused AS (
            SELECT id, created_at, content_hash, status, rank AS vector_rank, NULL::bigint AS keyword_rank,
                   1 - distance AS similarity, NULL::float AS keyword_score, 1 - distance AS score
            FROM vector_hits
        )"""
    return """fused AS (
        SELECT id, created_at, content_hash, status, NULL::bigint AS vector_rank, rank AS keyword_rank,
               NULL::float AS similarity, keyword_score,
               keyword_score / greatest((SELECT sum(idf) FROM keyword_idf), 1e-9) AS score
        FROM keyword_hits
    )"""


def _page_sql(ctes: list[str], search: SearchQuery, params: dict) -> str:
    """The statement: the CTEs, then the best `limit` memories above `min_score`, with their ranks. Ties go
    to the newer memory, then by content: never to a random id. The page is chosen from the candidates'
    own columns, so only its rows are read from the table (by primary key)."""
    score = "f.score"
    if search.include_superseded and search.valid_at is None:
        score = f"f.score * CASE WHEN f.status = 'superseded' THEN {SUPERSEDED_SCORE_FACTOR} ELSE 1 END"
    min_score_clause = ""
    if search.min_score is not None:
        min_score_clause = f"WHERE {score} >= %(min_score)s"
        params["min_score"] = search.min_score
    order = "search_score DESC, created_at DESC, content_hash, id"
    return f"""
        WITH {", ".join(ctes)},
        page AS MATERIALIZED (
            SELECT f.id, f.created_at, f.content_hash, {score} AS search_score, f.vector_rank, f.keyword_rank,
                   f.similarity, f.keyword_score
            FROM fused f
            {min_score_clause}
            ORDER BY {order}
            LIMIT %(limit)s
        )
        SELECT {_PAGE_ROWS.select_list("m")},
               p.search_score, p.vector_rank, p.keyword_rank, p.similarity, p.keyword_score
        FROM page p JOIN memories_memory m ON m.id = p.id
        ORDER BY p.search_score DESC, p.created_at DESC, p.content_hash, p.id
    """


def _run(sql: str, params: dict, candidates: int, store: MemoryStore, *, through_index: bool) -> list[SearchHit]:
    if candidates <= _DEFAULT_EF_SEARCH or not through_index:
        # hnsw.iterative_scan is set on every connection (settings.DATABASES OPTIONS), so the common case is
        # a single statement. A search scoped to a user or a session compares its memories exactly unless it
        # holds thousands, and then the iterative scan still brings the whole pool.
        return _page(sql, params, store)
    # A store-wide search with a pool wider than HNSW's default search breadth: widen it for this query only
    # (connection-wide, it would make the planner shun the index for every search of a mid-sized store).
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT set_config('hnsw.ef_search', %s, true)", [str(candidates)])
        return _page(sql, params, store)


def _page(sql: str, params: dict, store: MemoryStore) -> list[SearchHit]:
    """The page's hits: each row is a memory's columns, then its search columns."""
    with server_binding_cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    hits = []
    for row in rows:
        memory = _PAGE_ROWS.load(row[: len(_PAGE_ROWS)])
        memory.store = store
        score, vector_rank, keyword_rank, similarity, keyword_score = row[len(_PAGE_ROWS):]
        hits.append(SearchHit(
            memory=memory,
            score=float(score),
            vector_rank=vector_rank,
            keyword_rank=keyword_rank,
            similarity=None if similarity is None else float(similarity),
            keyword_score=None if keyword_score is None else float(keyword_score),
        ))
    return hits
