"""examples/openai_agents_memory.py runs as documented, against a live server, with the scripted model."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "openai_agents_memory.py"


def test_the_openai_agents_example_keeps_the_history_and_memoryhub_extracts_the_allergy(
        live_server, tenant_a, tmp_path):
    env = {**os.environ, "MEMORYHUB_URL": live_server.base_url, "MEMORYHUB_API_KEY": tenant_a.keys["write"]}
    env.pop("OPENAI_API_KEY", None)
    result = subprocess.run([sys.executable, str(EXAMPLE), "--store", "main", "--user", "alice",
                             "--spool", str(tmp_path / "example.spool")], env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    output = result.stdout
    # The second run was given the first from memoryhub, and answered with it.
    given = output.split("what the model was given on the second run:")[1].split("memoryhub session")[0]
    assert "user: Hi! Please remember that I'm allergic to latex." in given
    assert "assistant: Thanks, I've noted" in given
    assert "agent> Nitrile gloves, since you're allergic to latex." in output
    assert "holds 4 items" in output
    extracted = output.split("memoryhub extracted the conversation (complete: True):")[1]
    assert "latex" in extracted.lower()
