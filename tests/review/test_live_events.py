"""Live events between real processes: a memory extracted by a django-q2 worker process reaches a websocket
client of the uvicorn web process, over the default PostgreSQL channel layer and over Redis."""

import json
import time

import httpx
import pytest
from django.conf import settings
from websockets.sync.client import connect

from apps.extraction.models import ExtractionJob
from apps.memories.models import Memory
from tests.processes import LiveServer, QCluster, redis_server

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def redis_url(tmp_path):
    with redis_server(tmp_path) as url:
        yield url


@pytest.fixture
def processes(tmp_path):
    started = []

    def start(**env):
        database_name = settings.DATABASES["default"]["NAME"]
        server = LiveServer(database_name=database_name, log_dir=tmp_path).start(**env)
        worker = QCluster(database_name=database_name, log_dir=tmp_path).start(workers=1, **env)
        started.extend([worker, server])
        return server, worker

    yield start
    for process in started:
        process.stop()


def _receive_until(websocket, wanted, timeout=20.0) -> list[dict]:
    """Frames until one matches `wanted`; all of them, in order."""
    frames, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        frame = json.loads(websocket.recv(timeout=max(0.1, deadline - time.monotonic())))
        frames.append(frame)
        if wanted(frame):
            return frames
    raise AssertionError(f"no matching event within {timeout} s: {frames}")


def _a_worker_extracts_and_the_listener_hears_it(server, worker, tenant, ws_auth):
    ws_url = server.base_url.replace("http://", "ws://") + "/ws/stores/main/events/"
    headers = {"Authorization": f"Bearer {tenant.keys['read']}"} if ws_auth == "header" else {}
    with connect(ws_url, additional_headers=headers, open_timeout=10) as websocket:
        if ws_auth == "message":
            websocket.send(json.dumps({"type": "auth", "api_key": tenant.keys["read"]}))
        assert json.loads(websocket.recv(timeout=10))["type"] == "subscribed"

        posted = time.monotonic()
        response = httpx.post(
            f"{server.base_url}/api/v1/stores/main/sessions/live-1/messages",
            headers={"Authorization": f"Bearer {tenant.keys['write']}"},
            json={"user_id": "dana", "messages": [{"role": "user", "content": "My email is dana@example.com."}]},
            timeout=10,
        )
        assert response.status_code == 202, response.text
        frames = _receive_until(websocket, lambda frame: frame["type"] == "extraction_job.finished")
        heard_after = time.monotonic() - posted

    by_type = {frame["type"]: frame for frame in frames}
    assert by_type["session.created"]["data"]["session"] == {
        "id": "live-1", "user_id": "dana", "agent_id": "", "status": "active"}
    created = by_type["memory.created"]["data"]["memory"]
    assert created["user_id"] == "dana" and created["status"] == "active"
    assert "dana@example.com" in Memory.objects.get(pk=created["id"]).content
    job = ExtractionJob.objects.get()
    assert by_type["extraction_job.finished"]["data"]["job"]["id"] == str(job.pk)
    assert by_type["extraction_job.finished"]["data"]["job"]["added"] >= 1
    assert job.q_task_id  # run by the worker process, not in the web request
    assert [frame["type"] for frame in frames].index("memory.created") < [
        frame["type"] for frame in frames].index("extraction_job.finished")
    assert heard_after < 20
    worker.assert_running()


def test_an_extracted_memory_reaches_a_websocket_over_postgresql(processes, tenant_a):
    server, worker = processes()
    _a_worker_extracts_and_the_listener_hears_it(server, worker, tenant_a, ws_auth="header")


def test_an_extracted_memory_reaches_a_websocket_over_redis(processes, tenant_a, redis_url):
    server, worker = processes(REDIS_URL=redis_url)
    _a_worker_extracts_and_the_listener_hears_it(server, worker, tenant_a, ws_auth="message")
