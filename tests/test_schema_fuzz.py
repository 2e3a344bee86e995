"""Schema-based fuzzing: schemathesis runs every operation of the OpenAPI schema against a live server.

Every answer must be a documented status code, with a documented content type and a body that matches
the documented schema, and none may be a server error. The run is reproducible: fixed seed, bounded
examples, one worker, no example database.
"""

import json
import os
import subprocess
import sys

import httpx
import pytest
from django.conf import settings

from apps.tenancy.limits import THROTTLE_SCOPES
from apps.tenancy.services import api_key_issue, tenant_create
from tests.processes import ROOT, LiveServer

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SEED = 20240611
MAX_EXAMPLES = 12
CHECKS = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"


@pytest.fixture
def server(django_db_setup, tmp_path):
    server = LiveServer(database_name=settings.DATABASES["default"]["NAME"], log_dir=tmp_path)
    try:
        # Extraction runs in the web process: flush and terminate find their jobs done, not waiting for a worker.
        yield server.start(EXTRACTION_RUN_INLINE="true")
    finally:
        server.stop()


def _seed(base_url: str, api_key: str) -> dict[str, str]:
    """A store with memories, sessions with messages, working state, a checkpoint, an extraction job, and webhooks
    (at a public address literal: the server refuses private ones, and needs no DNS for it) with a delivery."""
    session = "chat-1"
    with httpx.Client(base_url=f"{base_url}/api/v1/", headers={"Authorization": f"Bearer {api_key}"}) as http:

        def call(method, path, body=None, **params):
            response = http.request(method, path, json=body, params=params)
            assert response.status_code < 300, (method, path, response.status_code, response.text)
            return response.json()

        for name in ("main", "scratch"):
            call("POST", "stores", {"name": name, "embedding_provider": "hash"})
        memory = call("POST", "stores/main/memories", {"user_id": "alice", "content": "Alice likes green tea",
                                                        "tags": ["drinks"], "metadata": {"plan": "pro"}})
        call("POST", "stores/main/memories/bulk", {"memories": [
            {"user_id": "alice", "content": "Alice lives in Paris"},
            {"user_id": "bob", "content": "Bob plays football on Sundays", "memory_type": "episode"}]})
        for target in (session, "chat-end", "chat-terminate"):
            call("POST", f"stores/main/sessions/{target}/spawn", {
                "user_id": "alice", "agent_id": "support-bot",
                "task_state": {"description": "Replace the kettle", "total_steps": 3},
                "working_memory": [{"key": "order", "value": {"id": "A-1009"}}]})
            call("POST", f"stores/main/sessions/{target}/messages", {"user_id": "alice", "run_id": "r1", "messages": [
                {"role": "user", "seq": 0, "content": "My name is Alice and I prefer email over phone calls"},
                {"role": "assistant", "seq": 1, "content": "Thanks Alice"}]})
        call("POST", f"stores/main/sessions/{session}/scratchpad", {"content": "Warranty valid until May"})
        checkpoint = call("POST", f"stores/main/sessions/{session}/checkpoints", {"description": "before"})
        job = call("GET", "jobs", store="main")["results"][0]
        webhook = call("POST", "stores/main/webhooks", {"url": "https://93.184.216.34/hooks/memoryhub"})
        spare_webhook = call("POST", "stores/main/webhooks", {"url": "https://93.184.216.34/hooks/spare"})
        delivery = call("POST", f"stores/main/webhooks/{webhook['id']}/test")
    return {"memory_id": memory["memory"]["id"], "checkpoint_id": checkpoint["id"], "job_id": job["id"],
            "session_id": session, "webhook_id": webhook["id"], "delivery_id": delivery["id"],
            "spare_webhook_id": spare_webhook["id"]}


def _config(values: dict[str, str]) -> str:
    """schemathesis.toml: path parameters that name the seeded objects, so operations reach real data.
    Destructive operations get their own targets, so the others keep finding theirs."""
    values = dict(values)
    spare_webhook_id = values.pop("spare_webhook_id")
    lines = ['hooks = "tests.schemathesis_hooks"', "",
             "[cache]", "enabled = false  # no failures replayed from earlier runs: every run is the same", "",
             "[parameters]", '"path.store_name" = "main"']
    lines += [f'"path.{name}" = "{value}"' for name, value in values.items()]
    for operation, parameter, value in (
        ("DELETE /api/v1/stores/{store_name}", "store_name", "scratch"),
        ("DELETE /api/v1/stores/{store_name}/sessions/{session_id}", "session_id", "chat-end"),
        ("POST /api/v1/stores/{store_name}/sessions/{session_id}/terminate", "session_id", "chat-terminate"),
        ("DELETE /api/v1/stores/{store_name}/webhooks/{webhook_id}", "webhook_id", spare_webhook_id),
    ):
        lines += ["", "[[operations]]", f'include-name = "{operation}"',
                  f'parameters = {{ "path.{parameter}" = "{value}" }}']
    return "\n".join(lines) + "\n"


def test_every_operation_answers_as_documented(server, tmp_path):
    tenant = tenant_create(name="Fuzz", slug="fuzz")
    # No request rates (0 = none): a 429 answers before the logic the fuzzer is here to reach, and which
    # operations met one depended on where the minute boundaries fell, so runs differed.
    for scope in THROTTLE_SCOPES:
        setattr(tenant, f"{scope}_per_minute", 0)
    tenant.save()
    api_key = api_key_issue(tenant=tenant, name="fuzz", scopes=["admin"]).raw_key
    values = _seed(server.base_url, api_key)
    config = tmp_path / "schemathesis.toml"
    config.write_text(_config(values))
    report = tmp_path / "report.json"
    python_path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))  # for the hooks

    run = subprocess.run(
        [sys.executable, "-m", "schemathesis.cli", "--config-file", str(config), "--no-color", "run",
         f"{server.base_url}/api/v1/schema", "--header", f"Authorization: Bearer {api_key}",
         "--checks", CHECKS, "--phases", "examples,coverage,fuzzing", "--seed", str(SEED),
         "--max-examples", str(MAX_EXAMPLES), "--workers", "1", "--generation-database", "none",
         "--report", "json", "--report-json-path", str(report), "--request-timeout", "30"],
        # In tmp_path: schemathesis and hypothesis keep their caches in the working directory.
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": python_path}, capture_output=True, text=True, timeout=600,
    )

    output = run.stdout + run.stderr
    (tmp_path / "schemathesis.log").write_text(output)
    server.assert_running()
    assert run.returncode == 0, output
    summary = json.loads(report.read_text())
    assert summary["operations"]["tested"] == summary["operations"]["total"] == 57, summary["operations"]
    assert summary["failures"] == [] and summary["errors"] == [], output
    assert summary["test_cases"]["generated"] > 57 * MAX_EXAMPLES, summary["test_cases"]
