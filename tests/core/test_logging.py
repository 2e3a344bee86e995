"""Structured logs (memoryhub/logging.py): one JSON object per line with the request id, the API key's public prefix
and the tenant, on every line written while a request is served (the access line, a service's, Django's own), the
job id on a job's lines, and never the key itself."""

import io
import json
import logging
import os
import re
import signal
import subprocess
import sys

import httpx
import pytest

from apps.extraction.extractors import get_extractor
from apps.tenancy.models import ApiKey
from apps.tenancy.selectors import api_key_hash
from memoryhub.logging import ContextFilter, JsonFormatter
from tests.fakes.llm_server import FakeLLMServer, Reply
from tests.processes import ROOT, database_env, free_port, outside_env, wait_for

MEMORIES = "/api/v1/stores/main/memories"
GENERATED_ID = re.compile(r"^[0-9a-f]{32}$")


@pytest.fixture
def json_log():
    """What the console handler of LOG_FORMAT=json would write, at INFO, as parsed lines."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(ContextFilter())
    handler.setFormatter(JsonFormatter())
    root, access = logging.getLogger(), logging.getLogger("memoryhub.access")
    levels = root.level, access.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    access.setLevel(logging.INFO)

    def lines() -> list[dict]:
        return [json.loads(line) for line in stream.getvalue().splitlines()]

    lines.text = stream.getvalue
    yield lines
    root.removeHandler(handler)
    root.setLevel(levels[0])
    access.setLevel(levels[1])


def _prefix(raw_key: str) -> str:
    return ApiKey.objects.get(key_hash=api_key_hash(raw_key)).prefix


def _secret(raw_key: str) -> str:
    """The part of the key after its public prefix."""
    return raw_key[len(_prefix(raw_key)):]


def test_an_access_line_names_the_request_the_key_prefix_and_the_tenant_but_never_the_key(tenant_a, json_log):
    raw_key = tenant_a.keys["write"]
    response = tenant_a.client("write").post(MEMORIES, {"user_id": "alice", "content": "Alice likes tea"},
                                             format="json")
    assert response.status_code == 201
    (line,) = [line for line in json_log() if line["logger"] == "memoryhub.access"]
    assert GENERATED_ID.match(response["X-Request-ID"])
    assert line == {
        "timestamp": line["timestamp"], "level": "INFO", "logger": "memoryhub.access",
        "message": f"POST {MEMORIES} 201 {line['duration_ms']:.1f} ms",
        "request_id": response["X-Request-ID"], "api_key_prefix": _prefix(raw_key), "tenant": "acme",
        "method": "POST", "path": MEMORIES, "route": "/api/v1/stores/<slug:store_name>/memories", "status": 201,
        "duration_ms": line["duration_ms"],
    }
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00$", line["timestamp"])
    assert line["duration_ms"] > 0
    assert raw_key not in json_log.text() and _secret(raw_key) not in json_log.text()


def test_lines_django_writes_after_the_view_carry_the_request_too(tenant_a, json_log):
    response = tenant_a.client("read").get("/api/v1/stores/nowhere/memories", headers={"X-Request-ID": "req-42"})
    assert response.status_code == 404 and response["X-Request-ID"] == "req-42"
    warning = next(line for line in json_log() if line["logger"] == "django.request")
    assert warning["message"] == "Not Found: /api/v1/stores/nowhere/memories"
    assert (warning["level"], warning["request_id"], warning["api_key_prefix"], warning["tenant"]) == (
        "WARNING", "req-42", _prefix(tenant_a.keys["read"]), "acme")
    assert warning["status_code"] == 404


@pytest.mark.parametrize("incoming", ["two words", "x" * 129, "line\nbreak", "-starts-with-a-dash", ""])
def test_an_implausible_request_id_is_replaced_by_a_new_one(db, client, incoming, json_log):
    response = client.get("/metrics", headers={"X-Request-ID": incoming})
    assert GENERATED_ID.match(response["X-Request-ID"])
    (line,) = [line for line in json_log() if line["logger"] == "memoryhub.access"]
    assert line["request_id"] == response["X-Request-ID"]


def test_an_unauthenticated_or_refused_request_logs_no_key(tenant_a, client, json_log):
    wrong = "mh_00000000_not-a-real-key-at-all"
    assert client.get(MEMORIES).status_code == 401
    assert client.get(MEMORIES, headers={"Authorization": f"Bearer {wrong}"}).status_code == 401
    access = [line for line in json_log() if line["logger"] == "memoryhub.access"]
    assert [line["status"] for line in access] == [401, 401]
    assert all("api_key_prefix" not in line and "tenant" not in line for line in access)
    assert wrong not in json_log.text()


def test_requests_do_not_share_their_context(tenant_a, tenant_b, json_log):
    tenant_a.client("read").get(MEMORIES, headers={"X-Request-ID": "first"})
    tenant_b.client("read").get(MEMORIES)
    logging.getLogger("tests").info("between requests")
    first, second, between = json_log()
    assert (first["request_id"], first["tenant"]) == ("first", "acme")
    assert second["tenant"] == "globex" and second["request_id"] not in ("first", None)
    assert between["message"] == "between requests" and "request_id" not in between and "tenant" not in between


@pytest.mark.django_db(transaction=True)  # the job runs when the messages commit
@pytest.mark.usefixtures("inline_extraction")
def test_a_jobs_lines_carry_its_id(tenant_a, settings, configure_store, json_log):
    from apps.extraction.models import ExtractionJob

    fact = {"content": "Alice lives in Lisbon", "memory_type": "fact", "confidence": 0.9, "action": "add",
            "target_memory_id": None, "subject": "location", "source_seqs": [1]}
    with FakeLLMServer(default=Reply.memories(fact)) as server:
        settings.LLM_PROVIDER, settings.LLM_MODEL, settings.LLM_MAX_RETRIES = "openai", "gpt-test-mini", 0
        settings.LLM_BASE_URL, settings.LLM_API_KEY = server.openai_base_url, "sk-live"
        get_extractor.cache_clear()  # extractors are built once per process, from the settings
        try:
            configure_store(tenant_a.store, extraction_config={"extractor": "llm"})
            response = tenant_a.client("write").post(
                "/api/v1/stores/main/sessions/chat-1/messages",
                {"user_id": "alice", "messages": [{"role": "user", "content": "I live in Lisbon"}]}, format="json")
        finally:
            get_extractor.cache_clear()
    assert response.status_code == 202
    job = ExtractionJob.objects.get()
    extracted = next(line for line in json_log() if line["logger"].startswith("apps.extraction.extractors.llm"))
    assert "extracted" in extracted["message"] and extracted["job_id"] == str(job.pk)
    access = next(line for line in json_log() if line["logger"] == "memoryhub.access")
    assert "job_id" not in access  # the job's context ended with the job


# --- A real server, configured as in production -----------------------------------------------------------


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_server_with_log_format_json_writes_only_json_lines(tenant_a, tmp_path):
    from django.conf import settings

    raw_key = tenant_a.keys["admin"]
    port = free_port()
    log_path = tmp_path / "uvicorn.log"
    env = {**outside_env(), **database_env(settings.DATABASES["default"]["NAME"]), "LOG_FORMAT": "json",
           "LOG_LEVEL": "INFO", "MEMORYHUB_DEFAULT_EMBEDDER": "hash", "PYTHONUNBUFFERED": "1"}
    with open(log_path, "wb") as log_file:
        # uvicorn at INFO (LiveServer runs it at WARNING): its own start and stop lines must be JSON too.
        process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "memoryhub.asgi:application", "--host", "127.0.0.1", "--port", str(port),
             "--log-level", "info"],
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10,
                              headers={"Authorization": f"Bearer {raw_key}"}) as client:
                wait_for(lambda: _answers(client), timeout=60, what="uvicorn to answer")
                answer = client.post("/api/v1/stores/main/search", json={"query": "tea"},
                                     headers={"X-Request-ID": "trace-7f3a"})
                assert answer.status_code == 200 and answer.headers["X-Request-ID"] == "trace-7f3a"
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)
    text = log_path.read_text()
    lines = [json.loads(line) for line in text.splitlines()]
    assert {"Started server process", "Application startup complete.", "Shutting down"} <= {
        line["message"].split(" [")[0] for line in lines if line["logger"] == "uvicorn.error"}, text
    assert not [line for line in lines if line["logger"] == "uvicorn.access"]  # memoryhub.access replaces it
    assert not [line for line in lines if "color_message" in line]  # uvicorn's message again, with colours
    (search,) = [line for line in lines if line.get("request_id") == "trace-7f3a"]
    assert (search["logger"], search["status"], search["route"]) == (
        "memoryhub.access", 200, "/api/v1/stores/<slug:store_name>/search")
    assert search["api_key_prefix"] == _prefix(raw_key) and search["tenant"] == "acme"
    assert raw_key not in text and _secret(raw_key) not in text


def _answers(client: httpx.Client) -> bool:
    try:
        return client.get("/healthz").status_code == 200
    except httpx.TransportError:
        return False


def _settings_value(name: str, **env) -> subprocess.CompletedProcess:
    code = f"import django; django.setup(); from django.conf import settings; print(settings.{name})"
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "memoryhub.settings", **env}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=environment, capture_output=True, text=True,
                          timeout=120)


def test_logs_are_json_in_production_and_text_in_development_unless_log_format_says():
    production = {"DEBUG": "false", "SECRET_KEY": "x" * 50}
    assert _settings_value("LOG_FORMAT", **production).stdout.strip() == "json"
    assert _settings_value("LOG_FORMAT", DEBUG="true").stdout.strip() == "text"
    assert _settings_value("LOG_FORMAT", **production, LOG_FORMAT="text").stdout.strip() == "text"
    refused = _settings_value("LOG_FORMAT", LOG_FORMAT="xml")
    assert refused.returncode != 0 and "LOG_FORMAT must be one of json, text, got 'xml'" in refused.stderr
