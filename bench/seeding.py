"""Load a benchmark store fast: hash embeddings computed here, rows streamed in with binary COPY.

Going through `memory_bulk_create` would cost a revision row, a duplicate check and an ORM object per
memory; the search benchmark only needs the memories, so they are written the way a restore would be.
The HNSW and full-text indexes are dropped before the load and rebuilt after it, as pgvector advises
for bulk loads: one parallel index build is many times faster than a million incremental inserts.
"""

import random
import struct
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta

from corpus import Corpus, MemoryDraft
from django.db import connection, transaction
from django.utils import timezone
from psycopg.adapt import Dumper
from psycopg.pq import Format
from psycopg.types import TypeInfo
from psycopg.types.json import Jsonb

from apps.core.embeddings import get_embedder
from apps.memories import services
from apps.memories.models import Memory, MemoryStore
from apps.memories.normalise import content_hash

FULL_TEXT_INDEX = "memory_search_vector"

# (column, PostgreSQL type) in COPY order; search_vector is generated and left out.
COPY_COLUMNS = (
    ("id", "uuid"),
    ("created_at", "timestamptz"),
    ("updated_at", "timestamptz"),
    ("store_id", "uuid"),
    ("user_id", "varchar"),
    ("agent_id", "varchar"),
    ("session_id", "varchar"),
    ("content", "text"),
    ("memory_type", "varchar"),
    ("metadata", "jsonb"),
    ("tags", "varchar[]"),
    ("importance", "float8"),
    ("confidence", "float8"),
    ("status", "varchar"),
    ("source", "varchar"),
    ("provenance", "jsonb"),
    ("valid_from", "timestamptz"),
    ("expires_at", "timestamptz"),
    ("content_hash", "varchar"),
    ("embedding", "vector"),
    ("embedding_dimension", "int2"),
)


class PackedVector(bytes):
    """A vector already in pgvector's binary wire format (dimension, unused, float4 values)."""

    @classmethod
    def pack(cls, values: list[float]) -> "PackedVector":
        return cls(struct.pack(f">HH{len(values)}f", len(values), 0, *values))


def _vector_dumper(oid: int) -> type[Dumper]:
    class PackedVectorDumper(Dumper):
        format = Format.BINARY

        def dump(self, obj):
            return obj

    PackedVectorDumper.oid = oid
    return PackedVectorDumper


@dataclass
class SeedResult:
    rows: int
    users: int
    load_seconds: float  # generate + embed + COPY
    index_seconds: float
    analyze_seconds: float

    @property
    def total_seconds(self) -> float:
        return self.load_seconds + self.index_seconds + self.analyze_seconds


def hnsw_index_name(dimension: int) -> str:
    return f"memory_embedding_hnsw_{dimension}"


def existing_indexes() -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname FROM pg_indexes WHERE tablename = %s", [Memory._meta.db_table])
        return {row[0] for row in cursor.fetchall()}


def ensure_indexes(names: list[str], *, expected_rows: int, log=print) -> float:
    """(Re)create the named model indexes that are missing, from the model's own definitions."""
    missing = [name for name in names if name not in existing_indexes()]
    started = time.perf_counter()
    for name in missing:
        index = next(index for index in Memory._meta.indexes if index.name == name)
        with connection.schema_editor(atomic=False) as editor:
            statement = str(index.create_sql(Memory, editor))
        # An HNSW build that does not fit in maintenance_work_mem slows down sharply; ~3 KB a row
        # covers a 384-dimension graph. The setting is local to this transaction.
        memory_mb = min(4096, max(256, expected_rows * 3 // 1024))
        log(f"  building index {name} (maintenance_work_mem={memory_mb}MB) ...")
        index_started = time.perf_counter()
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"SET LOCAL maintenance_work_mem = '{memory_mb}MB'")
            cursor.execute("SET LOCAL max_parallel_maintenance_workers = 2")
            cursor.execute(statement)
        log(f"  built {name} in {time.perf_counter() - index_started:.1f} s")
    return time.perf_counter() - started


def drop_indexes(names: list[str]) -> None:
    with connection.cursor() as cursor:
        for name in names:
            cursor.execute(f'DROP INDEX IF EXISTS "{name}"')


def delete_store(store: MemoryStore) -> None:
    """Delete a store and its rows. Raw DELETEs: the ORM's cascade loads every row into Python first."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM memories_memoryrevision WHERE store_id = %s", [store.pk])
        cursor.execute("DELETE FROM memories_memory WHERE store_id = %s", [store.pk])
    services.store_delete(store=store)


def seed_store(
    store: MemoryStore, *, corpus: Corpus, n: int, users: int, chunk_rows: int = 20_000, log=print
) -> SeedResult:
    """Write `n` memories over `users` users into an empty store, streaming in chunks of users."""
    dimension = store.embedding_dimension
    embedder = get_embedder(provider=store.embedding_provider, model=store.embedding_model, dimension=dimension)
    counts = corpus.user_counts(n, users)
    heavy_indexes = [hnsw_index_name(dimension), FULL_TEXT_INDEX]
    drop_indexes(heavy_indexes)

    connection.ensure_connection()
    vector_info = TypeInfo.fetch(connection.connection, "vector")
    if vector_info is None:
        raise RuntimeError("the pgvector extension is not installed in this database")
    column_list = ", ".join(column for column, _ in COPY_COLUMNS)
    copy_types = [vector_info.oid if kind == "vector" else kind for _, kind in COPY_COLUMNS]

    started = time.perf_counter()
    written = 0
    next_user = 0
    rng = random.Random(f"{corpus.seed}:rows")
    now = timezone.now()
    while next_user < users:
        # Several users per chunk, shuffled, so one user's memories do not sit on adjacent heap pages
        # (in a live store they arrive interleaved with everyone else's over months).
        drafts: list[MemoryDraft] = []
        while next_user < users and (not drafts or len(drafts) + counts[next_user] <= chunk_rows):
            drafts.extend(corpus.memories_for_user(next_user, counts[next_user]))
            next_user += 1
        rng.shuffle(drafts)
        with transaction.atomic(), connection.cursor() as cursor:
            raw_cursor = cursor.cursor
            raw_cursor.adapters.register_dumper(PackedVector, _vector_dumper(vector_info.oid))
            with raw_cursor.copy(f"COPY {Memory._meta.db_table} ({column_list}) FROM STDIN (FORMAT BINARY)") as copy:
                copy.set_types(copy_types)
                for start in range(0, len(drafts), 1000):
                    batch = drafts[start : start + 1000]
                    vectors = embedder.embed([draft.content for draft in batch])
                    for draft, vector in zip(batch, vectors, strict=False):
                        copy.write_row(_row(draft, PackedVector.pack(vector), store, dimension, rng, now))
        written += len(drafts)
        elapsed = time.perf_counter() - started
        log(f"  seeded {written:,}/{n:,} memories ({written / elapsed:,.0f}/s)")
    load_seconds = time.perf_counter() - started

    index_seconds = ensure_indexes(heavy_indexes, expected_rows=n, log=log)
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(f"VACUUM (ANALYZE) {Memory._meta.db_table}")
    analyze_seconds = time.perf_counter() - started
    log(f"  VACUUM (ANALYZE) in {analyze_seconds:.1f} s")
    return SeedResult(
        rows=written,
        users=users,
        load_seconds=load_seconds,
        index_seconds=index_seconds,
        analyze_seconds=analyze_seconds,
    )


def _row(draft: MemoryDraft, vector: PackedVector, store: MemoryStore, dimension: int, rng: random.Random, now):
    created = now - timedelta(seconds=rng.uniform(60, 365 * 86400))
    expires_at = None
    if rng.random() < 0.03:  # a few memories carry an expiry; about half have already passed it
        expires_at = created + timedelta(days=rng.uniform(1, 400))
    tags = [draft.tag] + (["important"] if draft.importance >= 0.85 else [])
    return (
        uuid.uuid4(),
        created,
        created,
        store.pk,
        draft.user_id,
        draft.agent_id,
        draft.session_id,
        draft.content,
        draft.memory_type,
        Jsonb({"channel": draft.channel, "lang": "en"}),
        tags,
        draft.importance,
        draft.confidence,
        Memory.Status.ACTIVE.value,
        Memory.Source.IMPORT.value,
        Jsonb({"generator": "bench/search.py"}),
        created,
        expires_at,
        content_hash(draft.content),
        vector,
        dimension,
    )
