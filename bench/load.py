"""The real server and worker in subprocesses, and closed-loop HTTP load against the server."""

import itertools
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class ManagedProcess:
    """A subprocess in its own process group, logging to a temporary file; stopped on exit, whatever happened.

    Its own session: a Ctrl-C in the terminal reaches only the benchmark, which then stops the process
    (and all its children, via the process group) in order. The log is kept, and its tail printed, only
    if it shows problems.
    """

    label = "process"

    def __init__(self, *, root: Path, env: dict[str, str], log=print):
        self.root = root
        self.env = env
        self.log = log
        self.process: subprocess.Popen | None = None
        self.log_file = None
        self.started_at = 0.0  # wall clock (time.time()) at launch, comparable with database timestamps

    def argv(self) -> list[str]:
        raise NotImplementedError

    def wait_until_ready(self) -> None:
        """Return when the process can do its work; raise if it died."""

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def start(self) -> None:
        self.log_file = tempfile.NamedTemporaryFile(
            prefix=f"memoryhub-bench-{self.label}-", suffix=".log", delete=False
        )
        self.started_at = time.time()
        self.process = subprocess.Popen(
            self.argv(),
            cwd=self.root,
            env=self.env,
            stdout=self.log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            self.wait_until_ready()
        except BaseException:
            self.stop()
            raise

    def check_alive(self) -> None:
        if self.process is None or self.process.poll() is not None:
            code = None if self.process is None else self.process.returncode
            raise RuntimeError(f"the {self.label} exited with code {code}:\n{self.log_tail()}")

    def log_tail(self, lines: int = 40) -> str:
        if self.log_file is None:
            return ""
        text = Path(self.log_file.name).read_text(errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, timeout: float = 20.0) -> None:
        process, self.process = self.process, None
        try:
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    self.log(f"  the {self.label} did not stop in {timeout:.0f} s; killing it")
        finally:
            if process is not None:
                # Whatever is left of the process group (a stuck worker) goes too, even if logging failed.
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                process.wait()
            self._close_log()

    def harmless(self, line: str) -> bool:
        """A warning of the process's own that says nothing about the run (a subclass names them)."""
        return False

    def _close_log(self) -> None:
        if self.log_file is None:
            return
        self.log_file.close()
        text = Path(self.log_file.name).read_text(errors="replace")
        name, self.log_file = self.log_file.name, None
        if any(_TROUBLE.search(line) and not self.harmless(line) for line in text.splitlines()):
            tail = _indent("\n".join(text.splitlines()[-30:]))
            self.log(f"  the {self.label} logged problems ({name}); last lines:\n{tail}")
        else:
            os.unlink(name)


class Server(ManagedProcess):
    """`uvicorn memoryhub.asgi:application` on a free port."""

    label = "server"

    def __init__(self, *, root: Path, web_workers: int, env: dict[str, str], log=print):
        super().__init__(root=root, env=env, log=log)
        self.web_workers = web_workers
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"

    def argv(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "uvicorn",
            "memoryhub.asgi:application",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--workers",
            str(self.web_workers),
            "--no-access-log",
        ]

    def wait_until_ready(self, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.check_alive()
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.25)
        raise RuntimeError(f"the server did not answer within {timeout:.0f} s:\n{self.log_tail()}")


class QCluster(ManagedProcess):
    """`manage.py qcluster`, the django-q2 worker cluster (Q_WORKERS worker processes, from `env`).

    It has no health endpoint: it is ready when it picks up work, which the caller can observe in
    its own tables (a job's started_at).
    """

    label = "worker"

    def argv(self) -> list[str]:
        return [sys.executable, "manage.py", "qcluster"]

    def wait_until_ready(self) -> None:
        time.sleep(0.5)  # an import error or a bad setting ends it at once
        self.check_alive()


class RedisServer(ManagedProcess):
    """Debian's `redis-server` on a free port, without persistence: the broker and channel layer of a scale-out."""

    label = "redis"

    def __init__(self, *, root: Path, log=print):
        super().__init__(root=root, env=dict(os.environ), log=log)
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def argv(self) -> list[str]:
        executable = shutil.which("redis-server")
        if executable is None:
            raise RuntimeError("redis-server is not installed (make system-test-deps installs it)")
        return [executable, "--port", str(self.port), "--save", "", "--appendonly", "no"]

    def harmless(self, line: str) -> bool:
        # The kernel's vm.overcommit_memory, which matters to background saves: this one saves nothing.
        return "Memory overcommit must be enabled" in line

    def wait_until_ready(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.check_alive()
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as connection:
                    connection.sendall(b"PING\r\n")
                    if connection.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server did not answer within {timeout:.0f} s")


_TROUBLE = re.compile(r"Traceback|\b(ERROR|CRITICAL|WARNING)\b")


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def percentile(values, p: float) -> float:
    """The nearest-rank percentile (p in 0..100); nan for no values."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


@dataclass
class Outcome:
    latency_ms: float
    ok: bool  # HTTP status as expected and the body as expected
    empty: bool = False
    error: str = ""
    items: int = 0  # what the request wrote, for write phases


@dataclass
class PhaseResult:
    name: str
    concurrency: int
    elapsed: float
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def requests(self) -> int:
        return len(self.outcomes)

    @property
    def errors(self) -> int:
        return sum(1 for outcome in self.outcomes if not outcome.ok)

    @property
    def empty(self) -> int:
        return sum(1 for outcome in self.outcomes if outcome.empty)

    @property
    def items(self) -> int:
        return sum(outcome.items for outcome in self.outcomes)

    @property
    def first_error(self) -> str:
        return next((outcome.error for outcome in self.outcomes if not outcome.ok), "")

    def percentile(self, p: float) -> float:
        return percentile([outcome.latency_ms for outcome in self.outcomes if outcome.ok], p)

    @property
    def per_second(self) -> float:
        return self.requests / self.elapsed if self.elapsed > 0 else math.nan


# A request: given a client and a per-thread random source, do one call and say how it went.
Request = Callable[[httpx.Client, object], Outcome]


def run_phase(
    *,
    name: str,
    url: str,
    headers: dict[str, str],
    request: Request,
    concurrency: int,
    warmup: float,
    duration: float,
    max_requests: int,
    timeout: float = 60.0,
    make_rng: Callable[[int], object],
) -> PhaseResult:
    """Closed loop: `concurrency` threads, each with its own keep-alive client, send back to back."""
    budget = itertools.count()
    window: dict[str, float] = {}
    # The barrier's action runs once, before any thread passes: every thread sees the same start.
    start_gate = threading.Barrier(concurrency + 1, action=lambda: window.__setitem__("start", time.perf_counter()))
    per_thread: list[list[Outcome]] = [[] for _ in range(concurrency)]
    finished_at = [0.0] * concurrency
    failures: list[BaseException] = []

    def worker(index: int) -> None:
        rng = make_rng(index)
        try:
            with httpx.Client(base_url=url, headers=headers, timeout=timeout) as client:
                warm_until = time.perf_counter() + warmup
                while time.perf_counter() < warm_until:
                    request(client, rng)
                start_gate.wait()
                deadline = window["start"] + duration
                outcomes = per_thread[index]
                while time.perf_counter() < deadline and next(budget) < max_requests:
                    outcomes.append(request(client, rng))
                finished_at[index] = time.perf_counter()
        except BaseException as exc:  # surfaced below; a dead thread must not hang the barrier
            failures.append(exc)
            start_gate.abort()

    threads = [threading.Thread(target=worker, args=(index,), daemon=True) for index in range(concurrency)]
    for thread in threads:
        thread.start()
    try:
        start_gate.wait()
    except threading.BrokenBarrierError:
        pass
    for thread in threads:
        thread.join()
    if failures:
        raise RuntimeError(f"phase {name!r} failed: {failures[0]!r}") from failures[0]
    result = PhaseResult(name=name, concurrency=concurrency, elapsed=max(finished_at) - window["start"])
    for outcomes in per_thread:
        result.outcomes.extend(outcomes)
    return result


def timed_post(
    client: httpx.Client, path: str, body: dict, *, expect_status: int
) -> tuple[float, httpx.Response | None, str]:
    """(latency in ms, response or None, error text or "")."""
    return timed_request(client, "POST", path, body, expect_status=expect_status)


def timed_request(
    client: httpx.Client, method: str, path: str, body: dict | None = None, *, expect_status: int
) -> tuple[float, httpx.Response | None, str]:
    """(latency in ms, response or None, error text or "") of one request, with a JSON body unless `body` is None."""
    started = time.perf_counter()
    try:
        response = client.request(method, path, json=body)
    except httpx.HTTPError as exc:
        return (time.perf_counter() - started) * 1000, None, f"{type(exc).__name__}: {exc}"
    latency_ms = (time.perf_counter() - started) * 1000
    if response.status_code != expect_status:
        return latency_ms, response, f"HTTP {response.status_code}: {response.text[:300]}"
    return latency_ms, response, ""


def timed_search(client: httpx.Client, path: str, body: dict, *, empty_is_error: bool) -> Outcome:
    """One search request's outcome: failed on an error or an answer without a results list, and, when
    `empty_is_error`, on no results."""
    latency_ms, response, error = timed_post(client, path, body, expect_status=200)
    if error:
        return Outcome(latency_ms, ok=False, error=error)
    results = response.json().get("results")
    if not isinstance(results, list):
        return Outcome(latency_ms, ok=False, error=f"no results list in {response.text[:200]}")
    if not results and empty_is_error:
        return Outcome(latency_ms, ok=False, empty=True, error=f"no results for {body}")
    return Outcome(latency_ms, ok=True, empty=not results)
