"""Every benchmark script runs end to end at its `--smoke` size against the test database, so none can rot.

Times are not checked (a benchmark never fails on them). Checked: the script exits 0, prints its p50/p95
lines with no failed request, and writes its section and summary rows to the page it was given, leaving
docs/performance.md alone. The scripts start their own server and worker subprocesses on the test
database, so the test is transactional: they see only committed rows, and the flush afterwards removes
the bench tenant and stores they leave.
"""

import os
import re
import signal
import subprocess
import sys

import pytest
from django.conf import settings

from tests.processes import ROOT, database_env

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PERCENTILES = re.compile(r"p50=\s*[\d.]+\s+p95=\s*[\d.]+")


@pytest.mark.parametrize(
    ("script", "section"),
    [("search.py", "search"), ("extraction.py", "extraction"), ("working_state.py", "working-state")],
)
def test_benchmark_runs_at_smoke_size_and_writes_its_section(script, section, tmp_path):
    page = tmp_path / "performance.md"
    docs_page = (ROOT / "docs" / "performance.md").read_bytes()
    env = {**os.environ, **database_env(settings.DATABASES["default"]["NAME"]), "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [sys.executable, f"bench/{script}", "--smoke", "--report", str(page)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        output, _ = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        # SIGTERM, not SIGKILL: the script stops its server and worker subprocesses on the way out.
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=30)
        pytest.fail(f"bench/{script} --smoke took over 120 s:\n{output[-4000:]}")

    assert process.returncode == 0, output[-4000:]
    errors = [int(count) for count in re.findall(r"errors=(\d+)", output)]
    assert PERCENTILES.search(output) and errors and not any(errors), output[-4000:]
    text = page.read_text()
    assert f"<!-- section:{section} -->" in text and f"<!-- /section:{section} -->" in text
    assert re.search(rf"^\| {section} \| .+ \| .+ ms", text, re.MULTILINE), text[:3000]
    assert (ROOT / "docs" / "performance.md").read_bytes() == docs_page
