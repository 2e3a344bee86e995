"""examples/strands_support_agent.py runs as documented, against a live server, with the scripted model."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "strands_support_agent.py"


def test_the_strands_example_teaches_one_agent_and_reminds_the_next(live_server, tenant_a, tmp_path):
    env = {**os.environ, "MEMORYHUB_URL": live_server.base_url, "MEMORYHUB_API_KEY": tenant_a.keys["write"]}
    result = subprocess.run([sys.executable, str(EXAMPLE), "--store", "main", "--user", "alice",
                             "--spool", str(tmp_path / "example.spool")], env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    output = result.stdout
    assert "memoryhub extracted the conversation (complete: True)" in output
    extracted = output.split("memoryhub extracted the conversation")[1].split("customer>")[0]
    assert "dark mode" in extracted and "Alice" in extracted
    injected = output.split("what the model was given before answering:")[1]
    assert "<memory>" in injected and "dark mode" in injected.split("search_memory returned")[0]
    assert "memory_id" in output.split("search_memory returned:")[1]
