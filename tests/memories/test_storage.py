"""How memories are stored: the whole row in its page, so searches never read the TOAST table for a memory of
an ordinary size (migration 0010)."""

from django.db import connection

from apps.core.actors import Actor
from apps.memories.services import MemoryInput, memory_bulk_create, store_create


def _storage(memory_id) -> tuple:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_column_toast_chunk_id(embedding), pg_column_compression(embedding), "
            "pg_column_toast_chunk_id(search_vector), pg_column_compression(search_vector), "
            "pg_column_toast_chunk_id(content), vector_dims(embedding) FROM memories_memory WHERE id = %s",
            [memory_id],
        )
        return cursor.fetchone()


def test_a_memory_of_an_ordinary_size_is_stored_whole_in_its_row(tenant_a):
    # About 2.2 kB with its 384 numbers: past PostgreSQL's default 2 kB TOAST target.
    content = "The customer prefers morning calls and invoices by email to the finance team. " * 6
    [written] = memory_bulk_create(store=tenant_a.store, actor=Actor.system(),
                                   items=[MemoryInput(user_id="u1", content=content)])
    assert _storage(written.memory.pk) == (None, None, None, None, None, 384)


def test_a_row_too_large_for_a_page_moves_its_text_out_and_keeps_its_embedding(tenant_a):
    store = store_create(tenant=tenant_a.tenant, name="wide", embedding_provider="hash", embedding_dimension=1536)
    # 6 kB of embedding and 8,000 characters of varied text cannot share an 8 kB page.
    content = " ".join(f"word{index} of the record number {index * 7919 % 10007}" for index in range(260))[:8000]
    [written] = memory_bulk_create(store=store, actor=Actor.system(), items=[MemoryInput(user_id="u1", content=content)])
    embedding_chunk, embedding_compression, _, _, content_chunk, dimensions = _storage(written.memory.pk)
    assert (embedding_chunk, embedding_compression, dimensions) == (None, None, 1536)
    assert content_chunk is not None
