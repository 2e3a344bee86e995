"""Live-event benchmark: how long a committed change takes to reach an open websocket; writes its section of
docs/performance.md.

    .venv/bin/python bench/live_events.py [--samples 200] [--listeners 3] [--smoke]

Starts uvicorn (--web-workers, default 2) and one django-q2 worker against the bench database
(memoryhub_bench), on the default channel layer (PostgreSQL LISTEN/NOTIFY; set REDIS_URL to measure Redis),
opens --listeners websockets on one store with an API key, then measures two paths:
- API: a memory added with POST .../memories; from the moment the 201 arrives (the change committed before
  it was sent) until each listener has the memory.created event.
- Worker: a user message posted; the worker extracts its fact; from the memory's commit (the job's
  `finished_at`, set in the committing transaction) until each listener has the event.
"""

import argparse
import json
import threading
import time
import uuid

import httpx
import report
from harness import (
    ROOT,
    bench_tenant_and_key,
    exit_status,
    log,
    migrate,
    parse_args,
    production_env,
    result_line,
    run_main,
)
from harness import start as harness_start
from load import percentile

STORE = "bench-live"
SMOKE = {"samples": 5, "listeners": 1}
TARGET_P95_MS = 1000.0


def options(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--web-workers", type=int, default=2, help="uvicorn worker processes (default 2)")
    parser.add_argument("--samples", type=int, default=200, help="changes per path (default 200)")
    parser.add_argument("--listeners", type=int, default=3, help="websockets listening on the store (default 3)")
    parser.add_argument("--interval", type=float, default=0.05, help="seconds between changes (default 0.05)")
    parser.add_argument("--timeout", type=float, default=15.0, help="give up on an event after this many seconds")
    return parse_args(parser, argv, smoke=SMOKE)


class Listener(threading.Thread):
    """One websocket on the store; records when each memory.created event arrived, by memory id."""

    def __init__(self, url: str, raw_key: str):
        super().__init__(daemon=True)
        self.url, self.raw_key = url, raw_key
        self.arrivals: dict[str, float] = {}
        self.ready = threading.Event()
        self.stopping = threading.Event()
        self.error: Exception | None = None

    def run(self) -> None:
        from websockets.sync.client import connect

        try:
            with connect(self.url, additional_headers={"Authorization": f"Bearer {self.raw_key}"},
                         open_timeout=10) as websocket:
                if json.loads(websocket.recv(timeout=10))["type"] != "subscribed":
                    raise RuntimeError("not subscribed")
                self.ready.set()
                while not self.stopping.is_set():
                    try:
                        frame = json.loads(websocket.recv(timeout=0.2))
                    except TimeoutError:
                        continue
                    if frame.get("type") == "memory.created":
                        self.arrivals.setdefault(frame["data"]["memory"]["id"], time.time())
        except Exception as exc:  # noqa: BLE001 - reported by the phase
            self.error = exc
            self.ready.set()


def prepare():
    from apps.memories.models import MemoryStore
    from apps.memories.services import store_create, store_delete

    migrate()
    tenant, raw_key = bench_tenant_and_key(key_name="bench-live-events")
    old = MemoryStore.objects.filter(tenant=tenant, name=STORE).first()
    if old is not None:
        store_delete(store=old)
    store = store_create(tenant=tenant, name=STORE, embedding_provider="hash")
    return store, raw_key


def wait_for_arrivals(listeners, memory_ids, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(memory_id in listener.arrivals for listener in listeners for memory_id in memory_ids):
            return
        time.sleep(0.05)


def delays_ms(listeners, committed_at: dict[str, float]) -> tuple[list[float], int]:
    delays, missing = [], 0
    for listener in listeners:
        for memory_id, at in committed_at.items():
            if memory_id in listener.arrivals:
                delays.append(max(0.0, (listener.arrivals[memory_id] - at) * 1000))
            else:
                missing += 1
    return delays, missing


def api_path(client: httpx.Client, listeners, args) -> tuple[list[float], int]:
    committed_at: dict[str, float] = {}
    for index in range(args.samples):
        response = client.post(f"/api/v1/stores/{STORE}/memories",
                               json={"user_id": f"user-{index % 20}", "content": f"Live fact number {index}."})
        answered = time.time()
        if response.status_code == 201:
            committed_at[response.json()["memory"]["id"]] = answered
        time.sleep(args.interval)
    wait_for_arrivals(listeners, committed_at, args.timeout)
    delays, missing = delays_ms(listeners, committed_at)
    return delays, missing + (args.samples - len(committed_at)) * len(listeners)


def worker_path(client: httpx.Client, listeners, store, args) -> tuple[list[float], int]:
    from apps.extraction.models import ExtractionJob
    from apps.memories.models import Memory

    run = uuid.uuid4().hex[:8]
    for index in range(args.samples):
        client.post(f"/api/v1/stores/{STORE}/sessions/live-{run}-{index}/messages",
                    json={"user_id": f"worker-user-{index}",
                          "messages": [{"role": "user", "content": f"My email is person{index}.{run}@example.com."}]})
        time.sleep(args.interval)
    deadline = time.monotonic() + args.timeout + args.samples * 0.1
    jobs = ExtractionJob.objects.filter(store=store, session__external_id__startswith=f"live-{run}-")
    while time.monotonic() < deadline and jobs.filter(status__in=ExtractionJob.OPEN_STATUSES).exists():
        time.sleep(0.2)
    finished = dict(jobs.filter(status=ExtractionJob.Status.SUCCEEDED).values_list("session__external_id",
                                                                                    "finished_at"))
    committed_at = {
        str(memory_id): finished[session_id].timestamp()
        for memory_id, session_id in Memory.objects.filter(store=store, session_id__startswith=f"live-{run}-")
        .values_list("id", "session_id")
        if session_id in finished
    }
    wait_for_arrivals(listeners, committed_at, args.timeout)
    delays, missing = delays_ms(listeners, committed_at)
    return delays, missing + (args.samples - len(committed_at)) * len(listeners)


def section(args, env, results) -> report.Section:
    rows, targets = [], []
    for name, (delays, missing) in results.items():
        p50, p95 = percentile(delays, 50), percentile(delays, 95)
        rows.append([name, len(delays), missing, report.number(p50), report.number(p95),
                     report.number(max(delays) if delays else 0)])
        targets.append(report.target(f"Live event delay p95, {name}", p95, unit="ms", at_most=TARGET_P95_MS,
                                     ok=not missing and bool(delays)))
    return report.Section(
        name="live-events",
        title="Live events",
        intro=f"Written by `bench/live_events.py` on {env['Date']}. {args.listeners} websocket listener(s) on one "
        "store, the web server and one django-q2 worker as in production (`DEBUG=false`), on this machine.",
        setup=env,
        targets=targets,
        tables=[report.Table("From commit to an open websocket",
                             ["Path", "Events heard", "Missed", "p50 ms", "p95 ms", "max ms"], rows,
                             note="API: from the 201 of POST .../memories (sent after the commit). Worker: from the "
                             "extraction job's `finished_at`, set in the transaction that commits the memory.")],
    )


def main(argv=None) -> int:
    args = options(argv)
    load_at_start = harness_start("memoryhub live-event benchmark")

    from load import QCluster, Server

    started = time.perf_counter()
    store, raw_key = prepare()
    results = {}
    with Server(root=ROOT, web_workers=args.web_workers, env=production_env(), log=log) as server, \
            QCluster(root=ROOT, env=production_env(Q_WORKERS="1"), log=log):
        ws_url = server.url.replace("http://", "ws://") + f"/ws/stores/{STORE}/events/"
        listeners = [Listener(ws_url, raw_key) for _ in range(args.listeners)]
        for listener in listeners:
            listener.start()
        for listener in listeners:
            listener.ready.wait(15)
        errors = [listener.error for listener in listeners if listener.error]
        if errors:
            raise RuntimeError(f"a listener could not subscribe: {errors[0]!r}")
        with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {raw_key}"}, timeout=10) as client:
            log(f"API path: {args.samples} memories added, {args.listeners} listener(s) ...")
            results["API add"] = api_path(client, listeners, args)
            log(f"worker path: {args.samples} messages extracted by the worker ...")
            results["worker extraction"] = worker_path(client, listeners, store, args)
        for listener in listeners:
            listener.stopping.set()
    for name, (delays, missing) in results.items():
        result_line(name, failed=missing, p50=percentile(delays, 50), p95=percentile(delays, 95),
                    details=f"{len(delays)} events heard")
    env = report.environment(script="live_events.py", data=f"{args.samples} changes per path",
                             server=report.server_description(args.web_workers), load_at_start=load_at_start,
                             worker=report.worker_description())
    report.publish(section(args, env, results), args.report, log=log, started=started)
    return exit_status()


if __name__ == "__main__":
    run_main(main, on_interrupt="the server and the worker were stopped")
