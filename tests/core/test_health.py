"""/healthz, /readyz, the workers' heartbeat, and the 503 answered while the database cannot be reached.

The readiness checks run in process first (a heartbeat row, a queued job: cheap and exact), then against real
processes: a server with and without a qcluster worker, a worker busy with a slow job, a server whose database is
cut by a proxy (tests/fakes/database_proxy.py) and one on a database that was never migrated.
"""

import threading
import uuid
from datetime import timedelta

import django.db
import httpx
import psycopg
import pytest
from django.conf import settings as django_settings
from django.test import Client
from django.utils import timezone
from psycopg import sql
from rest_framework.test import APIClient

from apps.core.health import is_database_unavailable, worker_heartbeat_record
from apps.core.models import WorkerHeartbeat
from apps.extraction.models import ExtractionJob
from tests.fakes.database_proxy import DatabaseProxy
from tests.fakes.llm_server import FakeLLMServer, Reply
from tests.processes import LiveServer, server_and_worker, wait_for

MESSAGES_URL = "/api/v1/stores/main/sessions/{session}/messages"


def _beat(seconds_ago: float = 0) -> None:
    worker_heartbeat_record(name=f"test-host:{uuid.uuid4().hex[:6]}", started_at=timezone.now())
    WorkerHeartbeat.objects.update(seen_at=timezone.now() - timedelta(seconds=seconds_ago))


def _readyz(client=None):
    response = (client or APIClient()).get("/readyz")
    assert response["Content-Type"] == "application/json" and "no-cache" in response["Cache-Control"]
    return response.status_code, response.json()


# --- In process ---------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)  # jobs run inline when their transaction commits
def test_a_task_run_inline_starts_no_worker_threads_in_the_calling_process(tenant_a, inline_extraction):
    # q2 sends post_spawn for a synchronous task too (EXTRACTION_RUN_INLINE); a web process is no worker.
    client = tenant_a.client("write")
    response = client.post(MESSAGES_URL.format(session="inline"), {
        "user_id": "alice", "messages": [{"role": "user", "content": "I live in Oslo"}]}, format="json")
    assert response.status_code == 202, response.content
    assert ExtractionJob.objects.get().status == "succeeded"  # it ran, here
    names = {thread.name for thread in threading.enumerate()}
    assert not names & {"worker heartbeat", "extraction lease sweep"}, names
    assert not WorkerHeartbeat.objects.exists()


@pytest.mark.django_db
def test_healthz_answers_without_touching_the_database(client, django_assert_num_queries):
    with django_assert_num_queries(0):
        response = client.get("/healthz")
    assert (response.status_code, response.json()) == (200, {"status": "ok"})


@pytest.mark.django_db
def test_ready_when_a_worker_beat_recently_and_the_queue_is_short(settings, django_assert_max_num_queries):
    settings.WORKER_HEARTBEAT_SECONDS = 5
    _beat(seconds_ago=3)
    _readyz()  # the first in a process also reads the applied migrations, once
    with django_assert_max_num_queries(3):  # SELECT 1, the last heartbeat, the oldest waiting job
        status, body = _readyz()
    assert status == 200, body
    assert (body["status"], body["failing"]) == ("ready", [])
    assert set(body["checks"]) == {"database", "migrations", "worker", "queue"}
    assert all(check["ok"] for check in body["checks"].values())
    assert body["checks"]["worker"]["last_seen_seconds"] == pytest.approx(3, abs=1)
    assert body["checks"]["queue"] == {"ok": True, "lag_seconds": 0.0, "max_lag_seconds": 120.0}


@pytest.mark.django_db
@pytest.mark.parametrize("seconds_ago", [None, 16], ids=["never", "too_long_ago"])
def test_not_ready_without_a_recent_worker_heartbeat(settings, seconds_ago):
    settings.WORKER_HEARTBEAT_SECONDS = 5  # alive: seen within three beats
    if seconds_ago is not None:
        _beat(seconds_ago=seconds_ago)
    status, body = _readyz()
    assert status == 503 and (body["status"], body["failing"]) == ("not_ready", ["worker"])
    assert body["checks"]["worker"]["ok"] is False and body["checks"]["worker"]["max_age_seconds"] == 15
    assert body["checks"]["database"]["ok"] and body["checks"]["queue"]["ok"]


def test_not_ready_when_the_oldest_due_job_waited_too_long(tenant_a, settings):
    settings.READINESS_MAX_QUEUE_LAG_SECONDS = 60
    _beat()
    client = tenant_a.client("write")
    for session in ("s-1", "s-2"):
        response = client.post(MESSAGES_URL.format(session=session),
                               {"user_id": "alice", "messages": [{"role": "user", "content": "I live in Paris"}]},
                               format="json")
        assert response.status_code == 202, response.content
    waiting, retrying = ExtractionJob.objects.order_by("created_at")
    assert _readyz()[0] == 200  # queued a moment ago

    ExtractionJob.objects.filter(pk=waiting.pk).update(created_at=timezone.now() - timedelta(seconds=90))
    status, body = _readyz()
    assert status == 503 and body["failing"] == ["queue"]
    assert body["checks"]["queue"]["lag_seconds"] == pytest.approx(90, abs=2)
    assert body["checks"]["queue"]["max_lag_seconds"] == 60

    # A job waiting for its retry is not late; once its retry is due it is, from then on.
    ExtractionJob.objects.filter(pk=waiting.pk).update(status="succeeded")
    ExtractionJob.objects.filter(pk=retrying.pk).update(created_at=timezone.now() - timedelta(seconds=600),
                                                        run_after=timezone.now() + timedelta(seconds=30))
    assert _readyz()[0] == 200
    ExtractionJob.objects.filter(pk=retrying.pk).update(run_after=timezone.now() - timedelta(seconds=70))
    status, body = _readyz()
    assert status == 503 and body["checks"]["queue"]["lag_seconds"] == pytest.approx(70, abs=2)

    settings.READINESS_MAX_QUEUE_LAG_SECONDS = 0  # not checked
    status, body = _readyz()
    assert status == 200 and body["checks"]["queue"]["max_lag_seconds"] is None


@pytest.mark.django_db
def test_the_readiness_answer_needs_no_api_key_and_says_nothing_of_tenants(tenant_a):
    _beat()
    status, body = _readyz(APIClient(HTTP_AUTHORIZATION="Bearer not-a-key"))
    assert status == 200
    assert "acme" not in str(body) and "main" not in str(body)


@pytest.mark.django_db
def test_a_heartbeat_is_one_row_per_worker_process_and_old_ones_are_forgotten():
    started = timezone.now() - timedelta(minutes=5)
    worker_heartbeat_record(name="host:1", started_at=started)
    worker_heartbeat_record(name="host:1", started_at=timezone.now())  # the same process beating again
    (row,) = WorkerHeartbeat.objects.all()
    assert row.started_at == started and row.seen_at > started


class _DatabaseGoneAfterTheView:
    """A middleware whose own database work fails after the view answered (as a session saved at the end of an
    admin page would): Django turns that into its 500, which no process_exception sees."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        self.get_response(request)
        error = django.db.OperationalError("could not save the session")
        error.__cause__ = psycopg.OperationalError("connection failed: Connection refused")
        raise error


def test_a_database_failure_outside_the_view_is_a_503_too(db, settings):
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, f"{__name__}._DatabaseGoneAfterTheView"]

    response = Client(raise_request_exception=False).get("/healthz")

    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert response.json()["error"]["code"] == "database_unavailable"


def test_only_errors_of_reaching_the_database_count_as_unavailable():
    from django.db import DataError, IntegrityError, InterfaceError, OperationalError
    from psycopg_pool import PoolTimeout

    def wrapped(django_class, cause):
        error = django_class(str(cause))
        error.__cause__ = cause
        return error

    refused = psycopg.OperationalError("connection failed: Connection refused")
    assert is_database_unavailable(wrapped(OperationalError, refused))
    assert is_database_unavailable(wrapped(OperationalError, PoolTimeout("couldn't get a connection after 1.50 sec")))
    assert is_database_unavailable(wrapped(OperationalError, psycopg.errors.AdminShutdown("terminating connection")))
    assert is_database_unavailable(InterfaceError("connection already closed"))
    # The database answered, and refused: a 500 (or the 4xx the API makes of it), not "come back later".
    assert not is_database_unavailable(wrapped(OperationalError, psycopg.errors.QueryCanceled("statement timeout")))
    assert not is_database_unavailable(wrapped(OperationalError, psycopg.errors.DeadlockDetected("deadlock")))
    assert not is_database_unavailable(wrapped(IntegrityError, psycopg.errors.UniqueViolation("duplicate")))
    assert not is_database_unavailable(wrapped(DataError, psycopg.errors.NumericValueOutOfRange("out of range")))
    assert not is_database_unavailable(RuntimeError("something else"))


# --- Real processes -----------------------------------------------------------------------------------


def _http_readyz(base_url: str) -> tuple[int, dict]:
    response = httpx.get(f"{base_url}/readyz", timeout=10)
    return response.status_code, response.json()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_server_with_a_live_worker_is_ready_and_without_one_is_not(tmp_path, settings):
    with server_and_worker(tmp_path) as (server, worker):
        status, body = wait_for(lambda: (result := _http_readyz(server.base_url))[0] == 200 and result,
                                timeout=30, what="/readyz to see the worker's heartbeat", cluster=worker)
        assert body["status"] == "ready" and body["checks"]["worker"]["last_seen_seconds"] <= 15
        beats = list(WorkerHeartbeat.objects.values_list("name", flat=True))
        pids = {process.pid for process in worker.processes()}
        assert beats and all(int(name.rsplit(":", 1)[1]) in pids for name in beats)  # the worker processes beat

        worker.stop()
        # Three beats missed: no worker is seen any more.
        status, body = wait_for(lambda: (result := _http_readyz(server.base_url))[0] == 503 and result,
                                timeout=40, what="/readyz to miss the worker", cluster=server)
        assert body["failing"] == ["worker"] and body["checks"]["database"]["ok"]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_worker_busy_too_long_makes_the_queue_fail_readiness_until_it_catches_up(tenant_a, tmp_path, settings,
                                                                                     configure_store):
    env = {"READINESS_MAX_QUEUE_LAG_SECONDS": "2"}
    with FakeLLMServer(default=Reply.memories()) as llm:
        settings.LLM_BASE_URL = llm.openai_base_url
        configure_store(tenant_a.store, extraction_config={"extractor": "llm"})
        llm.script(Reply.slow(8))  # the first job holds the only worker process; the next one waits
        llm_env = {"LLM_PROVIDER": "openai", "LLM_BASE_URL": llm.openai_base_url, "LLM_API_KEY": "sk-test",
                   "LLM_MODEL": "gpt-test-mini", "LLM_TIMEOUT_SECONDS": "30", "LLM_MAX_RETRIES": "0"}
        with server_and_worker(tmp_path, workers=1, Q_TIMEOUT_SECONDS="60", Q_RETRY_SECONDS="90", **env,
                               **llm_env) as (server, worker):
            wait_for(lambda: _http_readyz(server.base_url)[0] == 200, timeout=30,
                     what="the worker's first heartbeat", cluster=worker)
            client = tenant_a.client("write")
            for session in ("busy", "waiting"):
                client.post(MESSAGES_URL.format(session=session),
                            {"user_id": "alice", "messages": [{"role": "user", "content": "I live in Oslo"}]},
                            format="json")
            status, body = wait_for(lambda: (result := _http_readyz(server.base_url))[0] == 503 and result,
                                    timeout=30, what="the waiting job to be late", cluster=worker)
            assert body["failing"] == ["queue"] and body["checks"]["queue"]["lag_seconds"] >= 2
            assert body["checks"]["worker"]["ok"]  # its heartbeat goes on while it runs the slow job

            wait_for(lambda: _http_readyz(server.base_url)[0] == 200, timeout=40,
                     what="the worker to catch up", cluster=worker)
            # Ready again once the waiting job has started (its lag is over), not necessarily finished.
            wait_for(lambda: not ExtractionJob.objects.exclude(status="succeeded").exists(), timeout=30,
                     what="both jobs to succeed", cluster=worker)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_while_the_database_is_down_requests_get_a_503_with_retry_after_and_recover_by_themselves(
    tenant_a, tmp_path, settings
):
    database_name = settings.DATABASES["default"]["NAME"]
    headers = {"Authorization": f"Bearer {tenant_a.keys['write']}"}
    with DatabaseProxy.for_test_database() as proxy:
        server = LiveServer(database_name=database_name, log_dir=tmp_path)
        server.start(DATABASE_URL=proxy.database_url(database_name))
        try:
            api = httpx.Client(base_url=server.base_url, headers=headers, timeout=4)  # the bound: seconds, not 10
            assert api.get("/api/v1/stores/main/memories").status_code == 200

            proxy.down()
            # The first finds its pooled connection cut; the next ones wait for the pool, which cannot connect.
            for _ in range(3):
                response = api.get("/api/v1/stores/main/memories")
                assert response.status_code == 503, response.text
                assert response.json()["error"]["code"] == "database_unavailable"
                assert response.headers["Retry-After"] == "5"
            write = api.post("/api/v1/stores/main/memories", json={"user_id": "alice", "content": "Alice is here"},
                             headers={"Idempotency-Key": "while-down"})
            assert write.status_code == 503 and write.json()["error"]["code"] == "database_unavailable"
            assert httpx.get(f"{server.base_url}/healthz", timeout=4).status_code == 200  # the process is alive
            status, body = _http_readyz(server.base_url)
            assert status == 503 and body["failing"][0] == "database"
            assert "connection" in body["checks"]["database"]["error"]

            proxy.up()
            wait_for(lambda: api.get("/api/v1/stores/main/memories").status_code == 200, timeout=30,
                     what="the server to find its database again", cluster=server)
            retried = api.post("/api/v1/stores/main/memories", json={"user_id": "alice", "content": "Alice is here"},
                               headers={"Idempotency-Key": "while-down"})
            assert retried.status_code == 201, retried.text  # nothing was kept of the refused attempt
            assert "Traceback" not in server.log() and " 500" not in server.log()
        finally:
            server.stop()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_database_without_the_migrations_is_not_ready(tmp_path):
    unmigrated = f"test_recovery_unmigrated_{uuid.uuid4().hex[:6]}"
    server = LiveServer(database_name=unmigrated, log_dir=tmp_path)  # the embedded server creates it, empty
    try:
        server.start()
        status, body = _http_readyz(server.base_url)
    finally:
        server.stop()
        _drop_database(unmigrated)
    assert status == 503 and body["failing"] == ["migrations", "worker", "queue"]
    assert body["checks"]["database"] == {"ok": True}
    assert body["checks"]["migrations"]["ok"] is False and body["checks"]["migrations"]["pending"] > 50
    assert body["checks"]["worker"]["error"] == "migrations are not applied"


def _drop_database(name: str) -> None:
    database = django_settings.DATABASES["default"]
    with psycopg.connect(host=database["HOST"], port=database["PORT"], user=database["USER"],
                         password=database["PASSWORD"] or None, dbname="postgres", autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.mark.django_db
def test_health_endpoints_are_exempt_from_the_https_redirect(settings, client):
    settings.SECURE_SSL_REDIRECT = True
    assert client.get("/healthz").status_code == 200
    assert client.get("/readyz").status_code != 301

