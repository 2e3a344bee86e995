"""`manage.py serve` (what `make run` ends in) runs web + worker and stops both on Ctrl-C."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
import pytest

from tests.processes import free_port

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_serve_answers_http_and_stops_cleanly_on_ctrl_c():
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--port", str(port)],
        cwd=ROOT,
        env={**os.environ, "ACCESS_LOG": "false"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group, like a terminal's foreground job
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "server did not come up"
            assert process.poll() is None, process.stdout.read()
            time.sleep(0.3)

        children = psutil.Process(process.pid).children(recursive=True)
        commands = [" ".join(child.cmdline()) for child in children]
        assert any("uvicorn" in command for command in commands)
        assert any("qcluster" in command for command in commands)

        os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C does
        output, _ = process.communicate(timeout=30)
        assert process.returncode == 0, output
        assert "memoryhub stopped." in output
        assert not [child for child in children if child.is_running() and child.status() != psutil.STATUS_ZOMBIE]
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
