"""memoryhub processes for tests: a `manage.py qcluster` worker and a uvicorn web server, on the test database.

Both are subprocesses attached to the database the test run created (EMBEDDED_PG_DATABASE, or the
DATABASE_URL pointed at it), so tests that use them need transactional databases: the processes see only
committed rows, and the test sees theirs.
"""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx
import psutil
import pytest

ROOT = Path(__file__).resolve().parents[1]

# The lease of a running job is the q2 timeout; the broker re-delivers an unacknowledged task after the
# retry period, which must outlast the lease plus the moment between dequeue and claim.
Q_TIMEOUT_SECONDS = 4
Q_RETRY_SECONDS = 7


def outside_env() -> dict[str, str]:
    """This process's environment without a model for the llm extractor: a test that wants one passes it (the
    stores' default extractor, auto, would otherwise call whatever model the developer's shell names)."""
    return {name: value for name, value in os.environ.items() if name not in ("LLM_API_KEY", "LLM_BASE_URL")}


def database_env(database_name: str) -> dict[str, str]:
    """Environment that points a memoryhub process at `database_name` on the server the tests use."""
    url = os.environ.get("DATABASE_URL")
    if url:  # an external PostgreSQL: point the URL at the test database instead
        return {"DATABASE_URL": urlunsplit(urlsplit(url)._replace(path=f"/{database_name}"))}
    return {"EMBEDDED_PG_DATABASE": database_name}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def still_running(process: psutil.Process) -> bool:
    """Whether `process` has not ended yet; an exited child its parent has not reaped yet (a zombie) has."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


class QCluster:
    """A `manage.py qcluster` subprocess in its own process group, output in a log file per start."""

    def __init__(self, *, database_name: str, log_dir: Path):
        self.database_name = database_name
        self.log_dir = log_dir
        self.process: subprocess.Popen | None = None
        self.starts = 0
        self._log_file = None

    def _database_env(self) -> dict[str, str]:
        return database_env(self.database_name)

    def start(self, *, workers: int = 1, **env: str) -> "QCluster":
        assert self.process is None, "the cluster is already running"
        self.starts += 1
        self._log_file = open(self.log_dir / f"qcluster-{self.starts}.log", "wb")  # noqa: SIM115 - closed in stop
        environment = {
            **outside_env(),
            **self._database_env(),
            "Q_WORKERS": str(workers),
            "Q_TIMEOUT_SECONDS": str(Q_TIMEOUT_SECONDS),
            "Q_RETRY_SECONDS": str(Q_RETRY_SECONDS),
            "Q_SAVE_LIMIT": "250",  # keep task results: these tests read them
            "EXTRACTION_RUN_INLINE": "false",
            "EXTRACTION_RETRY_BACKOFF_SECONDS": "1",
            "MEMORYHUB_DEFAULT_EMBEDDER": "hash",
            "LOG_LEVEL": "WARNING",
            "PYTHONUNBUFFERED": "1",
            **env,
        }
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "qcluster"],
            cwd=ROOT,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: one signal reaches sentinel, pusher, monitor, workers
        )
        return self

    def processes(self) -> list[psutil.Process]:
        """The cluster's processes: the parent and every child it forked."""
        try:
            parent = psutil.Process(self.process.pid)
            return [parent, *parent.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def stop(self, *, grace_seconds: float = 15) -> None:
        """SIGTERM to the main process (q2 stops its workers, then itself), then SIGKILL whatever is left."""
        self._end(grace_seconds=grace_seconds)

    def kill(self) -> None:
        """SIGKILL the whole process group at once, like the OOM killer or a lost machine."""
        self._end(grace_seconds=None)

    def _end(self, *, grace_seconds: float | None) -> None:
        if self.process is None:
            return
        members = self.processes()  # before any exits: orphaned workers must be checked too
        if grace_seconds is not None:
            # Not the whole group: q2 children killed under the sentinel's feet make its shutdown hang.
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=grace_seconds)
            except subprocess.TimeoutExpired:
                pass
        self._signal_group(signal.SIGKILL)
        self.process.wait(timeout=10)
        _, alive = psutil.wait_procs(members, timeout=10)
        self.process = None
        self._log_file.close()
        assert not [p for p in alive if still_running(p)], alive

    def _signal_group(self, signum: int) -> None:
        try:
            os.killpg(self.process.pid, signum)
        except ProcessLookupError:
            pass  # every process of the group has exited already

    def assert_running(self) -> None:
        assert self.process is not None and self.process.poll() is None, f"qcluster exited:\n{self.log()}"

    def log(self) -> str:
        return "\n".join(
            f"--- qcluster-{index}.log\n" + (self.log_dir / f"qcluster-{index}.log").read_text(errors="replace")
            for index in range(1, self.starts + 1)
        )


class LiveServer:
    """`uvicorn memoryhub.asgi:application` on a free port of 127.0.0.1, in its own process group."""

    def __init__(self, *, database_name: str, log_dir: Path):
        self.database_name = database_name
        self.log_dir = log_dir
        self.process: subprocess.Popen | None = None
        self.port: int | None = None
        self.starts = 0
        self._log_file = None

    @property
    def base_url(self) -> str:
        assert self.port is not None, "the server is not running"
        return f"http://127.0.0.1:{self.port}"

    def start(self, *, startup_timeout: float = 60, **env: str) -> "LiveServer":
        """Start the server and return once /healthz answers; a port taken meanwhile is retried with another."""
        for _ in range(3):
            self._spawn(env)
            if self._wait_until_healthy(startup_timeout):
                return self
            self.stop()  # it exited early: the port was taken between free_port() and the bind
        pytest.fail(f"the memoryhub server did not start:\n{self.log()}")

    def _spawn(self, env: dict[str, str]) -> None:
        assert self.process is None, "the server is already running"
        self.starts += 1
        self.port = free_port()
        self._log_file = open(self.log_dir / f"server-{self.starts}.log", "wb")  # noqa: SIM115 - closed in stop
        environment = {
            **outside_env(),
            **database_env(self.database_name),
            "MEMORYHUB_DEFAULT_EMBEDDER": "hash",
            "EXTRACTION_RUN_INLINE": "false",  # jobs go to the broker, for the worker
            "LOG_LEVEL": "WARNING",
            "PYTHONUNBUFFERED": "1",
            **env,
        }
        self.process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "memoryhub.asgi:application", "--host", "127.0.0.1",
             "--port", str(self.port), "--no-access-log", "--log-level", "warning"],
            cwd=ROOT,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def _wait_until_healthy(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                if httpx.get(f"{self.base_url}/healthz", timeout=2).status_code == 200:
                    return True
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        pytest.fail(f"the memoryhub server did not answer /healthz within {timeout}s:\n{self.log()}")

    def stop(self, *, grace_seconds: float = 10) -> None:
        """SIGTERM (uvicorn finishes open requests), then SIGKILL the process group."""
        if self.process is None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=grace_seconds)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait(timeout=10)
        self.process = None
        self._log_file.close()

    def assert_running(self) -> None:
        assert self.process is not None and self.process.poll() is None, f"server exited:\n{self.log()}"

    def log(self) -> str:
        return "\n".join(
            f"--- server-{index}.log\n" + (self.log_dir / f"server-{index}.log").read_text(errors="replace")
            for index in range(1, self.starts + 1)
        )


def wait_for(predicate, *, timeout: float, what: str, cluster: QCluster | LiveServer | None = None,
             interval: float = 0.1):
    """Poll until `predicate()` is truthy and return it; fail after `timeout` seconds (or if the process died)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if cluster is not None:
            cluster.assert_running()
        if time.monotonic() >= deadline:
            log = f"\n{cluster.log()}" if cluster is not None else ""
            pytest.fail(f"timed out after {timeout}s waiting for {what}{log}")
        time.sleep(interval)


class LiveProcesses:
    """A running web server and worker on the test database, as a test module's fixture yields them."""

    def __init__(self, server: LiveServer, worker: QCluster):
        self.server = server
        self.worker = worker

    @property
    def base_url(self) -> str:
        return self.server.base_url

    def assert_running(self) -> None:
        self.server.assert_running()
        self.worker.assert_running()

    def log(self) -> str:
        return f"{self.server.log()}\n{self.worker.log()}"


@contextlib.contextmanager
def server_and_worker(log_dir: Path, *, workers: int = 1, **env: str):
    """A uvicorn server and a qcluster worker on the test database, stopped (before the database is dropped:
    both hold connections to it) on the way out. For module-scoped fixtures: a worker left running would take
    the jobs of other test modules."""
    from django.conf import settings

    database_name = settings.DATABASES["default"]["NAME"]
    server = LiveServer(database_name=database_name, log_dir=log_dir)
    worker = QCluster(database_name=database_name, log_dir=log_dir)
    try:
        server.start(**env)
        worker.start(workers=workers, **env)
        yield server, worker
    finally:
        worker.stop()
        server.stop()


@contextlib.contextmanager
def redis_server(data_dir: Path):
    """A redis-server of its own on a free port, without persistence; yields its URL. (The Makefile installs
    Debian's redis-server.)"""
    import shutil

    executable = shutil.which("redis-server")
    assert executable, "redis-server is not installed: `make test` installs it"
    port = free_port()
    process = subprocess.Popen([executable, "--port", str(port), "--save", "", "--appendonly", "no",
                                "--dir", str(data_dir)], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: _redis_answers(port), timeout=10, what="redis-server to answer")
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(10)


def _redis_answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as connection:
            connection.sendall(b"PING\r\n")
            return connection.recv(16).startswith(b"+PONG")
    except OSError:
        return False
