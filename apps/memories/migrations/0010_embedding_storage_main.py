"""Memories stored whole in their row: no compression or out-of-line (TOAST) values below a page.

A memory with a 384-dimension embedding is about 2.2 kB, past PostgreSQL's 2 kB default TOAST target. With
pgvector's EXTERNAL storage every embedding went out of line: an exact search of a user's 400 memories read
400 values from the TOAST table (about 1.7 ms of a 3 ms vector search) and each insert wrote one there. With
the embedding kept in the row, the toaster compressed the full-text vector instead, which every keyword
search then decompressed. toast_tuple_target at its maximum leaves every value of a row that fits a page as
it is; a larger row (a 1536-dimension embedding with a long content) still has values moved out, its content
and lexemes first: the embedding's storage is MAIN, moved out only as the last resort.
Rows written before keep their values as they are until rewritten: VACUUM FULL memories_memory (which locks the
table while it rewrites it and its indexes) or pg_repack; left as they are, they are only slower to search.
Both changes are catalogue updates, but take the table's strongest lock: behind a long transaction the migration
gives up after lock_timeout instead of holding every request up; run it again when the table is quiet.
"""

from django.db import migrations

FORWARD = [
    "SET LOCAL lock_timeout = '10s'",
    "ALTER TABLE memories_memory ALTER COLUMN embedding SET STORAGE MAIN",
    "ALTER TABLE memories_memory SET (toast_tuple_target = 8160)",
]
REVERSE = [
    "ALTER TABLE memories_memory RESET (toast_tuple_target)",
    "ALTER TABLE memories_memory ALTER COLUMN embedding SET STORAGE EXTERNAL",
]


class Migration(migrations.Migration):
    dependencies = [("memories", "0009_live_messages_purge_schedule")]

    operations = [migrations.RunSQL(FORWARD, REVERSE)]
