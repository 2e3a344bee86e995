"""`manage.py serve` (what `make run` ends in) runs web + worker and stops both within seconds on Ctrl-C or SIGTERM,
a task still running included, leaving no process behind."""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import psutil
import pytest
from django_q.models import OrmQ
from django_q.tasks import async_task

from apps.core.management.commands.serve import STOP_GRACE_SECONDS
from tests.processes import ROOT, database_env, free_port, still_running

# Transactional: serve's processes use the test database and see only committed rows.
pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# serve gives a running task a few seconds to finish; the rest is margin for a busy machine.
STOPPED_WITHIN_SECONDS = 12  # 5 s grace, then SIGTERM to the groups; CI machines are slow


def touch_then_sleep(path: str, seconds: float) -> None:
    """A q2 task standing in for a long extraction job (a model loading, an LLM call): it says it started."""
    Path(path).touch()
    time.sleep(seconds)


class Serve:
    """`manage.py serve` in its own process group, like a terminal's foreground job, on the test database."""

    def __init__(self, database_name: str):
        self.port = free_port()
        self.lines: list[str] = []
        self.seen: list[psutil.Process] = []  # every process of serve's seen so far, killed at the end
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--port", str(self.port)],
            cwd=ROOT,
            env={
                **os.environ,
                **database_env(database_name),
                "ACCESS_LOG": "false",
                "MEMORYHUB_DEFAULT_EMBEDDER": "hash",
                "Q_WORKERS": "1",
                "LOG_LEVEL": "INFO",  # q2 says when its cluster runs
                "PYTHONUNBUFFERED": "1",
            },
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append(line)

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def wait_until_serving(self, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while not (self._answers_http() and " running." in self.output):  # q2: "Q Cluster <name> [<queue>] running."
            assert self.process.poll() is None, self.output
            assert time.monotonic() < deadline, f"serve did not come up:\n{self.output}"
            time.sleep(0.2)

    def _answers_http(self) -> bool:
        try:
            return httpx.get(f"http://127.0.0.1:{self.port}/healthz", timeout=1).status_code == 200
        except httpx.TransportError:
            return False

    def processes(self) -> list[psutil.Process]:
        parent = psutil.Process(self.process.pid)
        found = [parent, *parent.children(recursive=True)]
        self.seen += [process for process in found if process not in self.seen]
        return found

    def stop_and_time(self, send_signal) -> tuple[float, list[psutil.Process]]:
        """Signal serve, then return how long its processes took to end and any still running after the limit."""
        processes = self.processes()  # before any exits: orphans must be checked too
        started = time.monotonic()
        send_signal(self.process)
        alive = processes
        while alive and time.monotonic() - started < STOPPED_WITHIN_SECONDS + 20:
            alive = [process for process in alive if still_running(process)]
            time.sleep(0.05)
        elapsed = time.monotonic() - started
        self.process.wait(timeout=10)
        self._reader.join(timeout=10)
        return elapsed, [process for process in processes if still_running(process)]

    def kill(self) -> None:
        """Whatever is left, orphans included: the test database is flushed after the test."""
        if self.process.poll() is None:
            self.processes()
        for process in self.seen:
            try:
                process.kill()
            except psutil.NoSuchProcess:
                pass
        psutil.wait_procs(self.seen, timeout=10)
        self.process.wait(timeout=10)


def ctrl_c(process: subprocess.Popen) -> None:
    os.killpg(process.pid, signal.SIGINT)  # what a terminal does: SIGINT to its foreground process group


def sigterm(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGTERM)  # what `kill`, systemd or docker stop do


@pytest.fixture
def serve(settings):
    server = Serve(settings.DATABASES["default"]["NAME"])
    yield server
    server.kill()


def test_serve_answers_http_and_stops_cleanly_on_ctrl_c(serve):
    serve.wait_until_serving()
    commands = [" ".join(process.cmdline()) for process in serve.processes()]
    assert any("uvicorn" in command for command in commands)
    assert any("qcluster" in command for command in commands)

    elapsed, alive = serve.stop_and_time(ctrl_c)

    assert not alive and elapsed < STOPPED_WITHIN_SECONDS, (elapsed, alive, serve.output)
    assert serve.process.returncode == 0, serve.output
    assert "memoryhub stopped." in serve.output and "killing" not in serve.output
    assert "still busy" not in serve.output  # idle: both stopped on the first SIGTERM


@pytest.mark.parametrize("send_signal", [ctrl_c, sigterm])
def test_serve_stops_within_seconds_while_a_task_runs_and_the_task_is_delivered_again(serve, tmp_path, send_signal):
    serve.wait_until_serving()
    started = tmp_path / "task-started"
    async_task(f"{__name__}.touch_then_sleep", str(started), 120)
    deadline = time.monotonic() + 30
    while not started.exists():
        assert time.monotonic() < deadline, f"the worker did not start the task:\n{serve.output}"
        time.sleep(0.1)

    elapsed, alive = serve.stop_and_time(send_signal)

    print(f"serve stopped in {elapsed:.1f} s ({send_signal.__name__}, a task running)")
    assert not alive and elapsed < STOPPED_WITHIN_SECONDS, (elapsed, alive, serve.output)
    assert serve.process.returncode == 0, serve.output
    assert "memoryhub stopped." in serve.output and "killing" not in serve.output
    # How it stopped: the worker, busy with the task past the grace period, was ended (not left to finish).
    busy = f"worker still busy after {STOP_GRACE_SECONDS} s; ending it (its unfinished task runs again later)."
    assert busy in serve.output and "web still busy" not in serve.output, serve.output
    # Not acknowledged: the broker delivers the task again once its lock expires (Q_RETRY_SECONDS).
    assert OrmQ.objects.count() == 1


def _child(serve: Serve, command: str) -> psutil.Process:
    """serve's direct child running `command` ("qcluster" or "uvicorn")."""
    (child,) = [process for process in psutil.Process(serve.process.pid).children()
                if command in " ".join(process.cmdline())]
    return child


def test_serve_restarts_a_child_that_dies_and_says_why(serve, tmp_path):
    serve.wait_until_serving()
    worker = _child(serve, "qcluster")
    worker.kill()  # SIGKILL: out of memory, or an operator's mistake

    deadline = time.monotonic() + 60
    while "worker restarted" not in serve.output:
        assert serve.process.poll() is None, serve.output  # serve itself goes on
        assert time.monotonic() < deadline, serve.output
        time.sleep(0.2)
    assert f"worker (pid {worker.pid}) was killed by SIGKILL after running" in serve.output
    assert "restarting it in 1 s" in serve.output
    new_worker = _child(serve, "qcluster")
    assert new_worker.pid != worker.pid

    # The restarted worker runs tasks, and the web server answered throughout.
    marker = tmp_path / "ran"
    async_task("tests.core.test_serve.touch_then_sleep", str(marker), 0)
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert time.monotonic() < deadline, serve.output
        time.sleep(0.2)
    assert httpx.get(f"http://127.0.0.1:{serve.port}/healthz", timeout=5).status_code == 200

    web = _child(serve, "uvicorn")
    web.kill()
    deadline = time.monotonic() + 60
    while not serve._answers_http() or "web restarted" not in serve.output:
        assert time.monotonic() < deadline, serve.output
        time.sleep(0.2)
    assert f"web (pid {web.pid}) was killed by SIGKILL" in serve.output
