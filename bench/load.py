"""The real server in a subprocess, and closed-loop HTTP load against it."""

import itertools
import math
import os
import re
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


class Server:
    """`uvicorn memoryhub.asgi:application` on a free port; stopped on exit, whatever happened."""

    def __init__(self, *, root: Path, web_workers: int, env: dict[str, str], log=print):
        self.root = root
        self.web_workers = web_workers
        self.env = env
        self.log = log
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None
        self.log_file = None

    def __enter__(self) -> "Server":
        self.log_file = tempfile.NamedTemporaryFile(prefix="memoryhub-bench-server-", suffix=".log", delete=False)
        argv = [
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
        # Its own session: a Ctrl-C in the terminal reaches only this script, which then stops the
        # server (and every worker, via the process group) in order.
        self.process = subprocess.Popen(
            argv,
            cwd=self.root,
            env=self.env,
            stdout=self.log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            self._wait_until_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def _wait_until_ready(self, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited with code {self.process.returncode}:\n{self.log_tail()}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.25)
        raise RuntimeError(f"the server did not answer within {timeout:.0f} s:\n{self.log_tail()}")

    def log_tail(self, lines: int = 40) -> str:
        if self.log_file is None:
            return ""
        text = Path(self.log_file.name).read_text(errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.log("  the server did not stop in 20 s; killing it")
        if process is not None:
            # Whatever is left of the server's own process group (a stuck worker) goes too.
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            process.wait()
        if self.log_file is not None:
            self.log_file.close()
            text = Path(self.log_file.name).read_text(errors="replace")
            if _TROUBLE.search(text):
                tail = _indent(self.log_tail(30))
                self.log(f"  the server logged problems ({self.log_file.name}); last lines:\n{tail}")
            else:
                os.unlink(self.log_file.name)
            self.log_file = None


_TROUBLE = re.compile(r"Traceback|\b(ERROR|CRITICAL|WARNING)\b")


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


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
        values = sorted(outcome.latency_ms for outcome in self.outcomes if outcome.ok)
        if not values:
            return math.nan
        return values[max(0, math.ceil(p / 100 * len(values)) - 1)]

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
    started = time.perf_counter()
    try:
        response = client.post(path, json=body)
    except httpx.HTTPError as exc:
        return (time.perf_counter() - started) * 1000, None, f"{type(exc).__name__}: {exc}"
    latency_ms = (time.perf_counter() - started) * 1000
    if response.status_code != expect_status:
        return latency_ms, response, f"HTTP {response.status_code}: {response.text[:300]}"
    return latency_ms, response, ""
