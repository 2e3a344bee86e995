"""examples/langgraph_memory_agent.py runs as documented, against a live server, with the scripted model."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "langgraph_memory_agent.py"


def test_the_langgraph_example_stores_a_fact_and_recalls_it_in_a_new_run(live_server, tenant_a, hub):
    env = {**os.environ, "MEMORYHUB_URL": live_server.base_url, "MEMORYHUB_API_KEY": tenant_a.keys["write"]}
    result = subprocess.run([sys.executable, str(EXAMPLE), "--store", "main", "--user", "alice"], env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    first, second = result.stdout.split("--- run 2")
    assert "stored alice/memories/" in first and "memoryhub has the put: True" in first
    assert "recalled (score" not in first and "(nothing yet)" in first
    assert "recalled (score" in second and "The user drinks green tea every morning" in second
    assert "model> You usually drink green tea in the morning." in second
    [memory] = hub.memories.list("main", user_id="alice").items
    assert memory.content == "The user drinks green tea every morning" and memory.metadata["langgraph_key"]
