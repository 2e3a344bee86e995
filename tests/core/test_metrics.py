"""GET /metrics: who may read it, and what it counts (apps/core/metrics.py).

In this process prometheus_client counts for the process alone (no PROMETHEUS_MULTIPROC_DIR), and the counters
live as long as it does: the tests compare a series before and after what they do. The last tests run a real
web server and q2 worker sharing a multiprocess directory, as `manage.py serve` runs them, and read on the web
server what the worker observed.
"""

from datetime import timedelta

import httpx
import pytest
from django.test import Client
from django.urls import path
from django.utils import timezone
from django_q.tasks import async_task
from prometheus_client.parser import text_string_to_metric_families

from apps.conversations.models import Session
from apps.extraction.models import ExtractionJob
from memoryhub.urls import urlpatterns as memoryhub_urlpatterns
from tests.processes import server_and_worker, wait_for

SEARCH_ROUTE = "/api/v1/stores/<slug:store_name>/search"
MEMORIES_ROUTE = "/api/v1/stores/<slug:store_name>/memories"


def samples(text: str) -> dict[tuple[str, frozenset], float]:
    """Every sample of a Prometheus text exposition: (name, labels) -> value."""
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(scraped: dict, name: str, **labels) -> float:
    return scraped.get((name, frozenset(labels.items())), 0.0)


def scrape(client) -> dict:
    response = client.get("/metrics")
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain")
    return samples(response.content.decode())


# --- Who may read it --------------------------------------------------------------------------------------


def test_metrics_refuse_a_request_without_credentials_with_a_json_401(db):
    response = Client().get("/metrics")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"
    assert response["WWW-Authenticate"] == 'Bearer realm="memoryhub"'


def test_metrics_need_an_admin_scope_key_when_no_token_is_configured(tenant_a):
    refused = tenant_a.client("write").get("/metrics")
    assert refused.status_code == 403
    assert refused.json()["error"] == {"code": "permission_denied", "message": "This API key lacks the 'admin' scope.",
                                       "details": {}}
    assert "memoryhub_http_requests_total" in tenant_a.client("admin").get("/metrics").content.decode()


def test_with_a_metrics_token_only_the_token_opens_metrics(tenant_a, settings):
    settings.METRICS_TOKEN = "scrape-secret-1"
    assert Client(headers={"Authorization": "Bearer scrape-secret-1"}).get("/metrics").status_code == 200
    for credential in ("Bearer scrape-secret-2", f"Bearer {tenant_a.keys['admin']}", "Basic c2NyYXBl"):
        response = Client(headers={"Authorization": credential}).get("/metrics")
        assert response.status_code == 401, credential
        assert response.json()["error"] == {"code": "authentication_failed", "message": "Invalid metrics token.",
                                            "details": {}}
    missing = Client().get("/metrics")
    assert missing.status_code == 401
    assert "MEMORYHUB_METRICS_TOKEN" in missing.json()["error"]["message"]


def test_errors_are_json_whatever_the_scraper_accepts(db):
    response = Client().get("/metrics", headers={"Accept": "application/openmetrics-text; version=1.0.0"})
    assert response.status_code == 401 and response.json()["error"]["code"] == "not_authenticated"


def test_metrics_switched_off_answer_404_and_count_nothing(tenant_a, settings):
    admin = tenant_a.client("admin")
    before = scrape(admin)
    settings.METRICS_ENABLED = False
    assert admin.post("/api/v1/stores/main/search", {"query": "tea"}, format="json").status_code == 200
    response = admin.get("/metrics")
    assert response.status_code == 404 and "METRICS_ENABLED" in response.json()["error"]["message"]
    settings.METRICS_ENABLED = True
    after = scrape(admin)
    labels = {"route": SEARCH_ROUTE, "method": "POST", "status": "2xx"}
    assert value(after, "memoryhub_http_requests_total", **labels) == value(before, "memoryhub_http_requests_total",
                                                                            **labels)
    assert value(after, "memoryhub_search_duration_seconds_count", mode="hybrid") == value(
        before, "memoryhub_search_duration_seconds_count", mode="hybrid")


# --- What it counts ---------------------------------------------------------------------------------------


def test_requests_are_counted_by_route_template_method_and_status_class(tenant_a):
    admin = tenant_a.client("admin")
    before = scrape(admin)
    for user in ("alice", "bob"):  # two paths, one route
        assert admin.post("/api/v1/stores/main/memories", {"user_id": user, "content": f"{user} likes tea"},
                          format="json").status_code == 201
    assert admin.post("/api/v1/stores/main/memories", {"user_id": "alice"}, format="json").status_code == 400
    assert admin.get("/api/v1/stores/nowhere/memories").status_code == 404
    after = scrape(admin)

    def grew(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    assert grew("memoryhub_http_requests_total", route=MEMORIES_ROUTE, method="POST", status="2xx") == 2
    assert grew("memoryhub_http_requests_total", route=MEMORIES_ROUTE, method="POST", status="4xx") == 1
    assert grew("memoryhub_http_requests_total", route=MEMORIES_ROUTE, method="GET", status="4xx") == 1
    assert grew("memoryhub_http_request_duration_seconds_count", route=MEMORIES_ROUTE, method="POST") == 3
    assert grew("memoryhub_http_request_duration_seconds_sum", route=MEMORIES_ROUTE, method="POST") > 0
    assert not [key for key in after if "alice" in str(key) or "/stores/main/" in str(key)]  # no raw paths
    assert grew("memoryhub_embedding_texts_total", provider="hash") == 2
    assert grew("memoryhub_embedding_duration_seconds_count", provider="hash") == 2


def test_searches_are_timed_by_mode(tenant_a):
    admin = tenant_a.client("admin")
    before = scrape(admin)
    for mode in ("hybrid", "keyword", "keyword", "vector"):
        response = admin.post("/api/v1/stores/main/search", {"query": "tea", "mode": mode}, format="json")
        assert response.status_code == 200
    after = scrape(admin)
    for mode, searches in (("hybrid", 1), ("keyword", 2), ("vector", 1)):
        name = "memoryhub_search_duration_seconds_count"
        assert value(after, name, mode=mode) - value(before, name, mode=mode) == searches, mode
        inf = {"mode": mode, "le": "+Inf"}
        assert value(after, "memoryhub_search_duration_seconds_bucket", **inf) == value(after, name, mode=mode)
    grew = value(after, "memoryhub_http_requests_total", route=SEARCH_ROUTE, method="POST", status="2xx") - value(
        before, "memoryhub_http_requests_total", route=SEARCH_ROUTE, method="POST", status="2xx")
    assert grew == 4


def _raise(request):
    raise RuntimeError("boom")


urlpatterns = [*memoryhub_urlpatterns, path("boom", _raise)]
handler500 = "apps.core.errors.json_server_error"


def test_an_unhandled_exception_is_a_5xx_and_counted_by_its_class(tenant_a, settings):
    settings.ROOT_URLCONF = __name__
    admin = tenant_a.client("admin")
    before = scrape(admin)
    response = Client(raise_request_exception=False).get("/boom")
    assert response.status_code == 500 and response.json()["error"]["code"] == "server_error"
    after = scrape(admin)
    assert value(after, "memoryhub_http_exceptions_total", route="/boom", exception="RuntimeError") - value(
        before, "memoryhub_http_exceptions_total", route="/boom", exception="RuntimeError") == 1
    assert value(after, "memoryhub_http_requests_total", route="/boom", method="GET", status="5xx") - value(
        before, "memoryhub_http_requests_total", route="/boom", method="GET", status="5xx") == 1


def test_extraction_jobs_by_state_and_the_oldest_due_job_age_are_read_at_scrape(tenant_a):
    store = tenant_a.store
    sessions = [Session.objects.create(store=store, external_id=f"s{i}", user_id="alice") for i in range(4)]
    now = timezone.now()

    def job(session, status, **fields):
        return ExtractionJob.objects.create(store=store, session=session, from_seq=0, to_seq=1, trigger="turns",
                                            extractor="rules", status=status, **fields)

    waiting = job(sessions[0], "queued")
    ExtractionJob.objects.filter(pk=waiting.pk).update(created_at=now - timedelta(seconds=90))
    job(sessions[1], "queued", run_after=now + timedelta(minutes=5))  # a retry's backoff: not late
    job(sessions[2], "running")
    job(sessions[3], "failed")
    job(sessions[3], "succeeded")  # counted by the runs counter, not here
    scraped = scrape(tenant_a.client("admin"))
    assert {state: value(scraped, "memoryhub_extraction_jobs", state=state)
            for state in ("queued", "running", "failed", "succeeded")} == {
        "queued": 2, "running": 1, "failed": 1, "succeeded": 0}
    assert 90 <= value(scraped, "memoryhub_extraction_lag_seconds") < 150
    assert value(scraped, "memoryhub_scrape_collector_up", collector="extraction_jobs") == 1

    ExtractionJob.objects.filter(pk=waiting.pk).update(status="running")
    assert value(scrape(tenant_a.client("admin")), "memoryhub_extraction_lag_seconds") == 0


def test_queue_depth_counts_the_tasks_waiting_in_the_broker(tenant_a):
    admin = tenant_a.client("admin")
    before = value(scrape(admin), "memoryhub_queue_depth")
    for _ in range(3):
        async_task("math.floor", 1.5)
    assert value(scrape(admin), "memoryhub_queue_depth") == before + 3


@pytest.mark.django_db(transaction=True)  # the job runs when the messages commit
@pytest.mark.usefixtures("inline_extraction")
def test_an_extraction_run_is_counted_and_timed_by_outcome_and_extractor(tenant_a):
    admin = tenant_a.client("admin")
    before = scrape(admin)
    response = tenant_a.client("write").post(
        "/api/v1/stores/main/sessions/chat-1/messages",
        {"user_id": "alice", "messages": [{"role": "user", "content": "My email is alice@example.com"}]},
        format="json",
    )
    assert response.status_code == 202
    assert ExtractionJob.objects.get().status == "succeeded"
    after = scrape(admin)
    labels = {"outcome": "succeeded", "extractor": "rules"}
    assert value(after, "memoryhub_extraction_job_runs_total", **labels) - value(
        before, "memoryhub_extraction_job_runs_total", **labels) == 1
    assert value(after, "memoryhub_extraction_job_duration_seconds_count", **labels) - value(
        before, "memoryhub_extraction_job_duration_seconds_count", **labels) == 1


# --- A web server and a worker: one machine's metrics ---------------------------------------------------


@pytest.fixture(scope="module")
def live_pair(django_db_setup, tmp_path_factory):
    """A uvicorn server and a qcluster worker writing their metrics to one directory, as `serve` runs them."""
    metrics_dir = tmp_path_factory.mktemp("prometheus")
    with server_and_worker(tmp_path_factory.mktemp("logs"), PROMETHEUS_MULTIPROC_DIR=str(metrics_dir)) as pair:
        yield pair


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_web_server_shows_what_the_worker_observed(live_pair, tenant_a):
    server, worker = live_pair
    headers = {"Authorization": f"Bearer {tenant_a.keys['admin']}"}
    with httpx.Client(base_url=server.base_url, headers=headers, timeout=30) as client:
        sent = client.post("/api/v1/stores/main/sessions/chat-9/messages", json={
            "user_id": "carol", "messages": [{"role": "user", "content": "My email is carol@example.com"}]})
        assert sent.status_code == 202, sent.text
        flushed = client.post("/api/v1/stores/main/sessions/chat-9/flush?wait=30").json()
        assert flushed["complete"] is True, flushed
        assert client.post("/api/v1/stores/main/search", json={"query": "email", "mode": "keyword"}).status_code == 200
        scraped = samples(client.get("/metrics").text)

    # Observed in the worker process, read on the web server: the shared directory adds them up.
    assert value(scraped, "memoryhub_extraction_job_runs_total", outcome="succeeded", extractor="rules") == 1
    assert value(scraped, "memoryhub_extraction_job_duration_seconds_count", outcome="succeeded",
                 extractor="rules") == 1
    # The memory's embedding was made by the worker (hash embedder); the server embedded nothing for a keyword search.
    assert value(scraped, "memoryhub_embedding_texts_total", provider="hash") >= 1
    assert value(scraped, "memoryhub_search_duration_seconds_count", mode="keyword") == 1
    assert value(scraped, "memoryhub_http_requests_total", route="/api/v1/stores/<slug:store_name>/sessions/"
                 "<identifier:session_id>/messages", method="POST", status="2xx") == 1
    assert value(scraped, "memoryhub_extraction_jobs", state="queued") == 0
    assert value(scraped, "memoryhub_queue_depth") == 0
    wait_for(lambda: not ExtractionJob.objects.filter(status__in=ExtractionJob.OPEN_STATUSES).exists(),
             timeout=30, what="the worker to finish its jobs", cluster=worker)


class _UnwritableMetric:
    """A metric whose file cannot be written, as in multiprocess mode when its directory went away."""

    def labels(self, **labels):
        raise FileNotFoundError(2, "No such file or directory", "/srv/memoryhub/metrics/counter_4242.db")


def test_a_metric_that_cannot_be_recorded_never_fails_the_request(tenant_a, monkeypatch, caplog):
    from apps.core import metrics

    for name in ("HTTP_REQUESTS", "HTTP_REQUEST_DURATION", "SEARCH_DURATION", "EMBEDDING_DURATION",
                 "EMBEDDING_TEXTS"):
        monkeypatch.setattr(metrics, name, _UnwritableMetric())
    monkeypatch.setattr(metrics, "_recording_failed", False)
    client = tenant_a.client("write")
    with caplog.at_level("WARNING", logger="apps.core.metrics"):
        assert client.post("/api/v1/stores/main/memories", {"user_id": "alice", "content": "Alice likes tea"},
                           format="json").status_code == 201
        response = client.post("/api/v1/stores/main/search", {"user_id": "alice", "query": "tea"}, format="json")
    assert response.status_code == 200 and response.json()["results"], response.content
    warnings = [record.getMessage() for record in caplog.records if record.name == "apps.core.metrics"]
    assert len(warnings) == 1 and "counter_4242.db" in warnings[0], warnings
