"""Health: /healthz (the process answers), /readyz (it can do its work), the q2 workers' heartbeat, and the 503 that
replaces a 500 while the database cannot be reached.

Readiness runs named checks; core's own are the database, the migrations and a recent worker heartbeat, and an app
above adds its own in its AppConfig.ready (extraction adds the queue lag), as Django's system checks are registered.
"""

import logging
import os
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

import psycopg
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db import InterfaceError as DjangoInterfaceError
from django.db import OperationalError as DjangoOperationalError
from django.db.migrations.executor import MigrationExecutor
from django.db.models import Max
from django.http import JsonResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from psycopg_pool import PoolTimeout

from apps.core.background import start_periodic_in_cluster_worker
from apps.core.errors import error_body, json_server_error
from apps.core.models import WorkerHeartbeat

logger = logging.getLogger(__name__)

# What a client waits before trying again while the database is unreachable: the pool reconnects on its own.
DATABASE_RETRY_AFTER_SECONDS = 5
# A worker is alive when its heartbeat is younger than this many of its periods (a beat may be late by a round).
HEARTBEAT_MISSED_BEATS = 3
# Rows of workers gone this long are deleted by the others' beats.
HEARTBEAT_FORGET_AFTER = timedelta(days=1)


# --- The database is unreachable: 503 -------------------------------------------------------------

# Connection failures carry no SQLSTATE, or one of class 08; 57P01-03: the server is shutting down or starting.
_UNAVAILABLE_SQLSTATES = ("57P01", "57P02", "57P03")


def is_database_unavailable(exc: BaseException) -> bool:
    """Whether `exc` says the database cannot be reached (down, restarting, unreachable, or no pooled connection
    came free in time), as opposed to a query the database refused."""
    if isinstance(exc, DjangoInterfaceError | psycopg.InterfaceError):
        return True  # a connection that was closed under the request
    original = exc.__cause__ if isinstance(exc, DjangoOperationalError) else exc
    if isinstance(original, PoolTimeout):
        return True
    if isinstance(original, psycopg.OperationalError):
        sqlstate = original.sqlstate
        return sqlstate is None or sqlstate.startswith("08") or sqlstate in _UNAVAILABLE_SQLSTATES
    return False


def database_unavailable_response() -> JsonResponse:
    response = JsonResponse(
        error_body("database_unavailable", "The database cannot be reached at the moment; retry shortly."),
        status=503,
    )
    response["Retry-After"] = str(DATABASE_RETRY_AFTER_SECONDS)
    return response


def server_error(request) -> JsonResponse:
    """handler500: Django calls it inside the except block of any request's unhandled exception, including one
    raised by a middleware after the view (a session saved at the end of an admin page), which
    DatabaseUnavailableMiddleware never sees: the database being unreachable is a 503 there too."""
    exception = sys.exc_info()[1]
    if exception is not None and is_database_unavailable(exception):
        return database_unavailable_response()
    return json_server_error(request)


class DatabaseUnavailableMiddleware:
    """A request that fails because the database cannot be reached gets a 503 with Retry-After instead of a 500:
    nothing it did was committed, and the same request will work once the database is back."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not is_database_unavailable(exception):
            return None
        logger.warning("%s %s: database unavailable: %s", request.method, request.path, exception)
        return database_unavailable_response()


# --- Worker heartbeat -----------------------------------------------------------------------------


def worker_heartbeat_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def worker_heartbeat_record(*, name: str, started_at) -> None:
    """Record that the worker process `name` is alive now (one upsert)."""
    now = timezone.now()
    WorkerHeartbeat.objects.bulk_create(
        [WorkerHeartbeat(name=name, started_at=started_at, seen_at=now)],
        update_conflicts=True, unique_fields=["name"], update_fields=["seen_at"],
    )


def worker_heartbeats_forget_old() -> int:
    deleted, _ = WorkerHeartbeat.objects.filter(seen_at__lt=timezone.now() - HEARTBEAT_FORGET_AFTER).delete()
    return deleted


def start_worker_heartbeat(**signal_kwargs) -> None:
    """django-q2's post_spawn, in each worker process it starts: beat every WORKER_HEARTBEAT_SECONDS from a thread
    (which beats on while the worker runs a long task)."""
    name, started_at = worker_heartbeat_name(), timezone.now()

    def beat():
        worker_heartbeat_record(name=name, started_at=started_at)
        worker_heartbeats_forget_old()  # an indexed delete that finds nothing, but for workers gone a day

    start_periodic_in_cluster_worker("worker heartbeat", settings.WORKER_HEARTBEAT_SECONDS, beat)


# --- Readiness ------------------------------------------------------------------------------------


@dataclass
class CheckResult:
    ok: bool
    details: dict = field(default_factory=dict)


_checks: dict[str, Callable[[], CheckResult]] = {}
_migrations_applied = False  # once true, true for the life of the process: migrations are not rolled back live


def register_readiness_check(name: str, check: Callable[[], CheckResult]) -> None:
    """Add a check to /readyz (from an AppConfig.ready); it runs after the database is known to answer."""
    _checks[name] = check


def _database_check() -> CheckResult:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return CheckResult(True)


def _migrations_check() -> CheckResult:
    global _migrations_applied
    if not _migrations_applied:
        executor = MigrationExecutor(connections[DEFAULT_DB_ALIAS])
        pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
        if pending:
            return CheckResult(False, {"pending": len(pending)})
        _migrations_applied = True
    return CheckResult(True)


def _worker_check() -> CheckResult:
    last_seen = WorkerHeartbeat.objects.aggregate(last=Max("seen_at"))["last"]
    max_age = settings.WORKER_HEARTBEAT_SECONDS * HEARTBEAT_MISSED_BEATS
    if last_seen is None:
        return CheckResult(False, {"last_seen_seconds": None, "max_age_seconds": max_age})
    age = max((timezone.now() - last_seen).total_seconds(), 0.0)
    return CheckResult(age <= max_age, {"last_seen_seconds": round(age, 1), "max_age_seconds": max_age})


def readiness() -> tuple[bool, dict[str, dict]]:
    """Run every check; (all passed, {name: {"ok": ..., details...}}). A check that cannot run fails with its error."""
    results: dict[str, CheckResult] = {}
    checks = {"database": _database_check, "migrations": _migrations_check, "worker": _worker_check, **_checks}
    for name, check in checks.items():
        if name != "database" and not results["database"].ok:
            results[name] = CheckResult(False, {"error": "the database cannot be reached"})
            continue
        if name not in ("database", "migrations") and not results["migrations"].ok:
            results[name] = CheckResult(False, {"error": "migrations are not applied"})
            continue
        try:
            results[name] = check()
        except Exception as exc:  # noqa: BLE001 - a check that cannot run is a failed check, named in the answer
            results[name] = CheckResult(False, {"error": f"{exc.__class__.__name__}: {exc}".strip()[:500]})
    return all(result.ok for result in results.values()), {
        name: {"ok": result.ok, **result.details} for name, result in results.items()
    }


# --- Views (no authentication: they say nothing about anyone's data) ------------------------------


@never_cache
def healthz(request):
    """The process is alive and answers; touches nothing else (a load balancer's liveness probe)."""
    return JsonResponse({"status": "ok"})


@never_cache
def readyz(request):
    """200 when this server can do its work (database, migrations, a live worker, a short queue), 503 naming what
    fails otherwise."""
    ready, checks = readiness()
    failing = [name for name, check in checks.items() if not check["ok"]]
    body = {"status": "ready" if ready else "not_ready", "failing": failing, "checks": checks}
    return JsonResponse(body, status=200 if ready else 503)
