"""Extraction benchmark of memoryhub over real HTTP with a real worker; writes its section of docs/performance.md.

    .venv/bin/python bench/extraction.py [--ingest-duration 10] [--lag-samples 100] [--backlog-sessions 500] [--smoke]
    .venv/bin/python bench/extraction.py --workers 1,2,4     # also: throughput on the Redis broker, 1, 2, 4 workers

Starts uvicorn (--web-workers, default 2) and one django-q2 worker (`manage.py qcluster` with Q_WORKERS=1)
against its own database (memoryhub_bench), and measures: message ingest latency (POST .../messages), the
lag from a message's 202 until its fact is searchable, and how many user turns one worker extracts per
second from a backlog. Job timings come from the ExtractionJob rows. With --workers, the backlog is drained
again on the Redis broker (a redis-server of its own, REDIS_URL for the web server and the worker) by a cluster
of each of those sizes, with the CPU time of PostgreSQL, the workers and everything else sampled meanwhile: how
throughput scales with workers, and what it runs out of. See bench/README.md.
"""

import argparse
import collections
import random
import threading
import time
from dataclasses import dataclass, field

import report
from conversations import AGENT_ID, SessionStream, SupportConversations, messages_path, post_batch
from harness import (
    ROOT,
    bench_tenant_and_key,
    exit_status,
    int_list,
    log,
    migrate,
    parse_args,
    phase_line,
    production_env,
    result_line,
    run_main,
)
from harness import start as harness_start
from jobs import (
    delete_store,
    open_jobs,
    other_queue_readers,
    purge_queue,
    queued_tasks,
    throughput_stats,
    wait_for_jobs,
    wipe_conversations,
)
from load import percentile

KEY_NAME = "bench/extraction.py"
STORE_PREFIX = "bench-extraction-"
INGEST_STORE = "bench-extraction-ingest"
LAG_STORE = "bench-extraction-lag"
BACKLOG_STORE = "bench-extraction-backlog"
DIMENSION = 384
# The service's extraction targets.
TARGET_INGEST_P95_MS = 30.0
TARGET_LAG_P95_S = 1.5
TARGET_TURNS_PER_SECOND = 200.0
# Short timeouts: with extraction broken, a smoke run fails in seconds instead of waiting 15 s per lag sample.
SMOKE = dict(web_workers=1, ingest_concurrency="1", ingest_duration=0.5, ingest_warmup=0.1, batches_per_session=2,
             ingest_users=5, lag_samples=3, lag_loaded_samples=2, lag_load_rate=20.0, lag_users=2, lag_timeout=3.0,
             backlog_sessions=5, backlog_users=2, backlog_concurrency=2, drain_timeout=30.0)


def options(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--web-workers", type=int, default=2, help="uvicorn worker processes (default 2)")
    parser.add_argument("--ingest-concurrency", default="1,4", help="ingest concurrencies (default 1,4)")
    parser.add_argument("--ingest-duration", type=float, default=10.0, help="measured seconds per ingest phase")
    parser.add_argument("--ingest-warmup", type=float, default=2.0, help="unmeasured seconds before each phase")
    parser.add_argument("--batches-per-session", type=int, default=4, help="10-message batches per ingest session")
    parser.add_argument("--ingest-users", type=int, default=200, help="users the ingest sessions belong to")
    parser.add_argument("--lag-samples", type=int, default=100, help="lag samples with an idle worker")
    parser.add_argument(
        "--lag-loaded-samples", type=int, default=50, help="lag samples under background ingest (0: skip that run)"
    )
    parser.add_argument(
        "--lag-load-rate", type=float, default=5.0, help="background ingest during the loaded lag run, batches/s"
    )
    parser.add_argument("--lag-users", type=int, default=20, help="users the lag samples rotate over")
    parser.add_argument("--lag-poll", type=float, default=0.02, help="seconds between searches for the fact")
    parser.add_argument("--lag-timeout", type=float, default=15.0, help="give up on a fact after this many seconds")
    parser.add_argument("--backlog-sessions", type=int, default=500, help="sessions (one 10-message batch each)")
    parser.add_argument("--backlog-users", type=int, default=100, help="users the backlog sessions belong to")
    parser.add_argument("--backlog-concurrency", type=int, default=4, help="concurrency of the backlog ingest")
    parser.add_argument("--drain-timeout", type=float, default=900.0, help="longest wait for the worker to finish")
    parser.add_argument("--seed", type=int, default=1234, help="random seed of the conversations")
    parser.add_argument("--workers", default="",
                        help="also drain the backlog on the Redis broker with clusters of these sizes, e.g. 1,2,4")
    args = parse_args(parser, argv, smoke=SMOKE)
    args.ingest_concurrency = int_list(parser, "--ingest-concurrency", args.ingest_concurrency)
    args.workers = int_list(parser, "--workers", args.workers) if args.workers else []
    for name in ("batches_per_session", "ingest_users", "lag_users", "backlog_sessions", "backlog_users"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.lag_samples < 1 or args.lag_loaded_samples < 0 or args.lag_load_rate <= 0:
        parser.error("need --lag-samples >= 1, --lag-loaded-samples >= 0 and --lag-load-rate > 0")
    return args


def search_path(store: str) -> str:
    return f"/api/v1/stores/{store}/search"


def prepare(args) -> tuple:
    from apps.memories import services as memory_services
    from apps.memories.models import MemoryStore

    log("migrating ...")
    migrate()
    tenant, raw_key = bench_tenant_and_key(key_name=KEY_NAME)
    readers = other_queue_readers()
    if readers:
        log(f"  warning: {readers} other session(s) poll the django-q2 queue of this database: is a worker running?")
    stale = purge_queue()
    if stale:
        log(f"  removed {stale} task(s) left in the django-q2 queue")
    for store in MemoryStore.objects.filter(tenant=tenant, name__startswith=STORE_PREFIX):
        log(f"  deleting the store {store.name!r} of an earlier run ...")
        delete_store(store)
    stores = {
        name: memory_services.store_create(
            tenant=tenant,
            name=name,
            description="bench/extraction.py",
            embedding_provider="hash",
            embedding_dimension=DIMENSION,
            extraction_config={"enabled": True, "extractor": "rules"},
        )
        for name in (INGEST_STORE, LAG_STORE, BACKLOG_STORE)
    }
    return tenant, raw_key, stores


# --- Message ingest ---------------------------------------------------------------------------------


@dataclass
class IngestRun:
    extraction: bool
    worker_running: bool
    phase: object  # load.PhaseResult
    open_jobs_after: int

    @property
    def label(self) -> str:
        if not self.extraction:
            return "extraction off"
        return f"extraction on, worker {'running' if self.worker_running else 'stopped'}"

    @property
    def messages_per_second(self) -> float:
        return 10 * self.phase.per_second

    def percentile(self, p: float, *, created_job: bool) -> float:
        """Latency percentile of the requests that created an extraction job (or of those that did not)."""
        return percentile([o.latency_ms for o in self.phase.outcomes if o.ok and (o.items > 0) == created_job], p)


def run_ingest(server, headers, store, conversations, args, *, extraction: bool, worker_running: bool) -> list:
    import httpx
    from load import run_phase

    with httpx.Client(base_url=server.url, headers=headers, timeout=30) as client:
        response = client.patch(f"/api/v1/stores/{store.name}", json={"extraction_config": {"enabled": extraction}})
        response.raise_for_status()
    mode = ("on-running" if worker_running else "on-stopped") if extraction else "off"
    runs = []
    for concurrency in args.ingest_concurrency:
        phase = run_phase(
            name=f"ingest {mode}",
            url=server.url,
            headers=headers,
            request=post_batch,
            concurrency=concurrency,
            warmup=args.ingest_warmup,
            duration=args.ingest_duration,
            max_requests=1_000_000,
            make_rng=lambda index, concurrency=concurrency: SessionStream(
                conversations,
                store=store.name,
                prefix=f"ingest-{mode}-c{concurrency}-t{index}",
                users=args.ingest_users,
                batches_per_session=args.batches_per_session,
                seed=f"{args.seed}:ingest:{mode}:{concurrency}:{index}",
            ),
        )
        run = IngestRun(extraction, worker_running, phase, open_jobs_after=open_jobs(store))
        runs.append(run)
        phase_line(f"ingest, {run.label}", phase, count="batches", details=f"jobs={phase.items}")
    return runs


# --- Extraction lag ---------------------------------------------------------------------------------


@dataclass
class LagSample:
    lag_s: float | None  # 202 received -> the fact found by search; None: not found within --lag-timeout
    claim_s: float | None  # 202 received -> the worker claimed the job (job.started_at)
    run_s: float | None  # claimed -> the job finished (job.finished_at, just before its commit)
    visible_s: float | None  # finished -> the client's search found the fact
    polls: int
    job_status: str


@dataclass
class LagRun:
    name: str
    samples: list[LagSample]
    background: dict = field(default_factory=dict)

    PARTS = ("lag_s", "claim_s", "run_s", "visible_s")

    def found(self, name: str = "lag_s") -> list[float]:
        return [getattr(sample, name) for sample in self.samples if getattr(sample, name) is not None]

    @property
    def timeouts(self) -> int:
        return sum(1 for sample in self.samples if sample.lag_s is None)

    @property
    def failed(self) -> int:
        """Samples whose fact was not found or whose job did not succeed, plus failed background requests."""
        missed = sum(1 for sample in self.samples if sample.lag_s is None or sample.job_status != "succeeded")
        return missed + self.background.get("errors", 0)


def measure_lag(client, *, store: str, user_id: str, session: str, seq: int, identifier: str, args) -> LagSample:
    from apps.extraction.models import ExtractionJob

    body = {
        "user_id": user_id,
        "agent_id": AGENT_ID,
        "run_id": "lag",
        "messages": [{"role": "user", "content": f"My order number is {identifier}.", "seq": seq}],
    }
    response = client.post(messages_path(store, session), json=body)
    acked, acked_wall = time.perf_counter(), time.time()
    if response.status_code != 202:
        raise RuntimeError(f"message ingest answered HTTP {response.status_code}: {response.text[:300]}")
    job_id = response.json().get("extraction_job")
    if job_id is None:
        raise RuntimeError(f"no extraction job was scheduled for {session} (another one still open?)")
    query = {"query": identifier, "mode": "keyword", "user_id": user_id, "limit": 10}
    polls, seen, seen_wall = 0, None, None
    next_poll = acked
    while True:
        polls += 1
        found = client.post(search_path(store), json=query)
        if found.status_code == 200 and any(
            identifier in hit["memory"]["content"] for hit in found.json().get("results", [])
        ):
            seen, seen_wall = time.perf_counter(), time.time()
            break
        if time.perf_counter() - acked > args.lag_timeout:
            break
        next_poll += args.lag_poll
        time.sleep(max(0.0, next_poll - time.perf_counter()))
    job = ExtractionJob.objects.get(pk=job_id)
    started = job.started_at.timestamp() if job.started_at else None
    finished = job.finished_at.timestamp() if job.finished_at else None
    return LagSample(
        lag_s=None if seen is None else seen - acked,
        claim_s=None if started is None else started - acked_wall,
        run_s=None if started is None or finished is None else finished - started,
        visible_s=None if finished is None or seen_wall is None else seen_wall - finished,
        polls=polls,
        job_status=job.status,
    )


class BackgroundIngest(threading.Thread):
    """Open-loop ingest at a fixed rate of 10-message batches, a new session each, until stopped."""

    def __init__(self, *, url: str, headers: dict, stream: SessionStream, rate: float):
        super().__init__(daemon=True)
        self.url, self.headers, self.stream, self.rate = url, headers, stream, rate
        self.stopping = threading.Event()
        self.sent = self.errors = 0
        self.elapsed = 0.0

    def run(self) -> None:
        import httpx

        started = time.perf_counter()
        due = started
        with httpx.Client(base_url=self.url, headers=self.headers, timeout=30) as client:
            while not self.stopping.is_set():
                outcome = post_batch(client, self.stream)
                self.sent += 1
                self.errors += not outcome.ok
                due += 1 / self.rate
                self.stopping.wait(max(0.0, due - time.perf_counter()))
        self.elapsed = time.perf_counter() - started

    def stop(self) -> None:
        self.stopping.set()
        self.join()


def run_lag(server, headers, store, conversations, args, *, worker) -> list[LagRun]:
    import httpx

    rng = random.Random(f"{args.seed}:lag")
    users = [conversations.user_id(100_000 + index) for index in range(args.lag_users)]
    next_seq = {}
    with httpx.Client(base_url=server.url, headers=headers, timeout=30) as client:
        # Each user first tells one ordinary conversation (name, city...), as a returning customer would have.
        for index, user_id in enumerate(users):
            session = f"lag-{index:03d}"
            turns = conversations.batch(user=100_000 + index, session=session, index=0)
            body = {
                "user_id": user_id,
                "agent_id": AGENT_ID,
                "run_id": "lag",
                "messages": [{"role": turn.role, "content": turn.text, "seq": seq} for seq, turn in enumerate(turns)],
            }
            client.post(messages_path(store.name, session), json=body).raise_for_status()
            next_seq[session] = len(turns)
        wait_for_jobs(store, timeout=args.drain_timeout, worker=worker, label="(lag warm-up)")

        def samples(count: int, name: str) -> list[LagSample]:
            taken = []
            for number in range(count):
                index = number % len(users)
                session = f"lag-{index:03d}"
                identifier = f"ZX-{rng.randrange(10**6, 10**7)}"
                taken.append(
                    measure_lag(
                        client,
                        store=store.name,
                        user_id=users[index],
                        session=session,
                        seq=next_seq[session],
                        identifier=identifier,
                        args=args,
                    )
                )
                next_seq[session] += 1
                # A random pause: the worker is idle again, and the next message lands at a random
                # point of the broker's poll cycle.
                time.sleep(rng.uniform(0.2, 0.5))
                if (number + 1) % 25 == 0:
                    log(f"    {name}: {number + 1}/{count} samples")
            return taken

        runs = [LagRun("idle worker", samples(args.lag_samples, "idle worker"))]
        if args.lag_loaded_samples:
            stream = SessionStream(
                conversations,
                store=store.name,
                prefix="lag-load",
                users=args.ingest_users,
                batches_per_session=1,
                seed=f"{args.seed}:lag-load",
            )
            background = BackgroundIngest(url=server.url, headers=headers, stream=stream, rate=args.lag_load_rate)
            background.start()
            try:
                time.sleep(10 / args.lag_load_rate)  # let the background load settle: 10 batches
                name = f"background ingest {args.lag_load_rate:g} batches/s"
                loaded = samples(args.lag_loaded_samples, name)
                backlog = open_jobs(store)
            finally:
                background.stop()
            runs.append(
                LagRun(
                    name,
                    loaded,
                    background={
                        "batches_per_second": background.sent / background.elapsed if background.elapsed else 0.0,
                        "errors": background.errors,
                        "open_jobs_at_end": backlog,
                    },
                )
            )
            wait_for_jobs(store, timeout=args.drain_timeout, worker=worker, label="(after the loaded lag run)")
    for run in runs:
        lags = run.found()
        background = f", {run.background['errors']} background errors" if run.background else ""
        result_line(
            f"lag, {run.name}",
            failed=run.failed,
            p50=percentile(lags, 50),
            p95=percentile(lags, 95),
            unit="s",
            digits=3,
            details=f"max={max(lags, default=float('nan')):.3f} s  {len(lags)} found, {run.timeouts} timeouts"
            + background,
        )
    return runs


# --- Extraction throughput --------------------------------------------------------------------------


@dataclass
class Throughput:
    sessions_posted: int
    ingest_seconds: float
    ingest_errors: int
    jobs: int
    succeeded: int
    failed: int
    retried: int
    user_turns: int
    launched_at: float  # wall clock
    first_claim_at: float
    last_finished_at: float
    job_ms: list[int]
    gap_ms: list[float]  # from one job's finished_at to the next one's started_at
    added: int
    updated: int
    unchanged: int
    deleted: int
    tasks_left: int  # django-q2 tasks still queued when every job was done: duplicates

    @property
    def startup_seconds(self) -> float:
        return self.first_claim_at - self.launched_at

    @property
    def wall_seconds(self) -> float:
        return self.last_finished_at - self.launched_at

    @property
    def working_seconds(self) -> float:
        return self.last_finished_at - self.first_claim_at

    @property
    def turns_per_second(self) -> float:
        return self.user_turns / self.wall_seconds

    @property
    def turns_per_working_second(self) -> float:
        return self.user_turns / self.working_seconds

    @property
    def in_job_share(self) -> float:
        return sum(self.job_ms) / 1000 / self.working_seconds


def run_throughput(server, headers, store, conversations, args, *, worker_env, label="throughput") -> Throughput:
    from load import QCluster, run_phase

    log(f"  ingesting {args.backlog_sessions} sessions x 10 messages with the worker stopped ...")
    phase = run_phase(
        name="backlog ingest",
        url=server.url,
        headers=headers,
        request=post_batch,
        concurrency=args.backlog_concurrency,
        warmup=0.0,
        duration=3600.0,
        max_requests=args.backlog_sessions,
        make_rng=lambda index: SessionStream(
            conversations,
            store=store.name,
            prefix=f"backlog-t{index}",
            users=args.backlog_users,
            batches_per_session=1,
            seed=f"{args.seed}:backlog:{index}",
        ),
    )
    queued = open_jobs(store)
    log(
        f"  {phase.requests} sessions posted in {phase.elapsed:.1f} s ({phase.errors} errors); {queued} jobs queued, "
        f"{queued_tasks()} django-q2 tasks; starting the worker ..."
    )
    with QCluster(root=ROOT, env=worker_env, log=log) as worker:
        wait_for_jobs(store, timeout=args.drain_timeout, worker=worker, label="(backlog)")
        tasks_left = queued_tasks()
        launched_at = worker.started_at
    stats = throughput_stats(store)
    result = Throughput(
        sessions_posted=phase.requests,
        ingest_seconds=phase.elapsed,
        ingest_errors=phase.errors,
        jobs=stats["jobs"],
        succeeded=stats["succeeded"],
        failed=stats["failed"],
        retried=stats["retried"],
        user_turns=stats["user_turns"],
        launched_at=launched_at,
        first_claim_at=stats["first_claim"].timestamp(),
        last_finished_at=stats["last_finished"].timestamp(),
        job_ms=stats["job_ms"],
        gap_ms=stats["gap_ms"],
        added=stats["added"],
        updated=stats["updated"],
        unchanged=stats["unchanged"],
        deleted=stats["deleted"],
        tasks_left=tasks_left,
    )
    result_line(
        f"{label}, job duration",
        failed=result.failed + result.ingest_errors,
        p50=percentile(result.job_ms, 50),
        p95=percentile(result.job_ms, 95),
        details=f"{result.user_turns} user turns in {result.succeeded} jobs ({result.failed} failed, "
        f"{result.ingest_errors} ingest errors): {result.wall_seconds:.1f} s from worker start "
        f"({result.startup_seconds:.1f} s of it starting up): {result.turns_per_second:.0f} user turns/s; "
        f"{result.turns_per_working_second:.0f}/s once working",
    )
    return result


class CpuSampler:
    """CPU seconds spent, by kind of process, while it runs: PostgreSQL, the django-q2 cluster, the rest."""

    def __init__(self, interval: float = 0.5):
        import psutil

        self._psutil = psutil
        self.interval = interval
        self.seconds: collections.Counter = collections.Counter()
        self._last: dict[int, float] = {}
        self._counting = False  # the first sample is the baseline
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.wall = 0.0

    def __enter__(self) -> "CpuSampler":
        self._started = time.monotonic()
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()
        self.wall = time.monotonic() - self._started

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def _sample(self) -> None:
        for process in self._psutil.process_iter(["name", "cmdline", "cpu_times"]):
            times = process.info["cpu_times"]
            if times is None:
                continue
            used = times.user + times.system
            # A process first seen after the baseline started meanwhile: all its time is the window's.
            before = self._last.get(process.pid, 0.0 if self._counting else used)
            self._last[process.pid] = used
            if used > before:
                self.seconds[self._kind(process.info)] += used - before
        self._counting = True

    @staticmethod
    def _kind(info: dict) -> str:
        if info["name"] == "postgres":
            return "PostgreSQL"
        command = " ".join(info["cmdline"] or [])
        if "qcluster" in command:
            return "workers"
        if "uvicorn" in command:
            return "web"
        return "other"

    def share(self, kind: str) -> float:
        """Cores busy with `kind`, on average."""
        return self.seconds[kind] / self.wall if self.wall else 0.0


def run_scaling(headers, store, conversations, args) -> list[tuple[int, Throughput, CpuSampler]]:
    """The backlog drained on the Redis broker by clusters of each size in --workers."""
    from load import RedisServer, Server

    results = []
    with RedisServer(root=ROOT, log=log) as redis:
        env = production_env(REDIS_URL=redis.url)
        with Server(root=ROOT, web_workers=args.web_workers, env=env, log=log) as server:
            for workers in args.workers:
                wipe_conversations(store)
                log(f"  Redis broker, {workers} worker(s):")
                with CpuSampler() as cpu:
                    throughput = run_throughput(
                        server, headers, store, conversations, args,
                        worker_env=production_env(REDIS_URL=redis.url, Q_WORKERS=str(workers)),
                        label=f"redis, {workers} worker(s)",
                    )
                results.append((workers, throughput, cpu))
    return results


def scaling_table(scaling) -> report.Table:
    cpus = report.cpu_count()
    base = scaling[0][1].turns_per_working_second if scaling else 0
    rows = []
    for workers, throughput, cpu in scaling:
        rows.append([
            workers, throughput.succeeded, throughput.failed, report.number(throughput.turns_per_second, 0),
            report.number(throughput.turns_per_working_second, 0),
            f"{throughput.turns_per_working_second / base:.2f}×" if base else "–",
            f"{percentile(throughput.job_ms, 50)}, {percentile(throughput.job_ms, 95)}",
            *(report.number(cpu.share(kind), 2) for kind in ("workers", "PostgreSQL", "web", "other")),
        ])
    return report.Table(
        "Extraction throughput on the Redis broker, by number of workers",
        ["Workers", "Jobs", "Failed", "Turns/s from start", "Turns/s working", "Speed-up", "Job p50, p95 ms",
         "Cores: workers", "Cores: PostgreSQL", "Cores: web", "Cores: other"],
        rows,
        note=f"The same backlog ({scaling[0][1].sessions_posted} sessions of 10 messages) drained by one cluster of each size, "
        f"on this machine's {cpus} CPUs. Cores: CPU seconds per second of the drain, by process kind (sampled with "
        "psutil): what the extraction runs out of is where the columns add up to the CPUs.",
    )


# --- Report ---------------------------------------------------------------------------------------


def section(args, *, env, ingest_runs, lag_runs, throughput, scaling=()) -> report.Section:
    t = throughput
    targets = [
        report.target(f"Message ingest p95, {run.label}, concurrency {run.phase.concurrency}", run.phase.percentile(95),
                      unit="ms", at_most=TARGET_INGEST_P95_MS, ok=not run.phase.errors)
        for run in ingest_runs
    ]
    targets += [
        report.target(f"Extraction lag p95, {run.name}", percentile(run.found(), 95), unit="s",
                      at_most=TARGET_LAG_P95_S, digits=3, ok=not run.failed)
        for run in lag_runs
    ]
    targets.append(report.target("Extraction throughput per worker, from its start", t.turns_per_second,
                                 unit="user turns/s", at_least=TARGET_TURNS_PER_SECOND, digits=0, ok=not t.failed))
    ingest_rows = [
        [*report.phase_row(run.label, run.phase), run.phase.items, run.percentile(50, created_job=True),
         run.percentile(50, created_job=False), report.number(run.messages_per_second, 0), run.open_jobs_after]
        for run in ingest_runs
    ]
    lag_rows = []
    for run in lag_runs:
        lag, claim, job, found = ([1000 * value for value in run.found(name)] for name in LagRun.PARTS)
        lag_rows.append([run.name, len(run.samples), run.timeouts, *(percentile(lag, p) for p in (50, 95, 100)),
                         percentile(claim, 50), percentile(claim, 95), percentile(job, 50), percentile(job, 95),
                         percentile(found, 50), sum(sample.polls for sample in run.samples) / len(run.samples)])
    means = [report.number(1000 * sum(values) / len(values), 0) if values else "–"
             for values in map(lag_runs[0].found, LagRun.PARTS)]
    throughput_rows = {
        "Sessions posted with the worker stopped": f"{t.sessions_posted}, {t.ingest_errors} errors",
        "Jobs succeeded, failed, retried": f"{t.succeeded}, {t.failed}, {t.retried}",
        "User turns extracted": t.user_turns,
        "Memories added, updated, unchanged, deleted": f"{t.added}, {t.updated}, {t.unchanged}, {t.deleted}",
        "Worker start to first claim, s": t.startup_seconds,
        "Worker start to last job finished, s": t.wall_seconds,
        "User turns/s from worker start": f"**{t.turns_per_second:.0f}**",
        "User turns/s from first claim": report.number(t.turns_per_working_second, 0),
        "Job `duration_ms` p50, p95": f"{percentile(t.job_ms, 50)}, {percentile(t.job_ms, 95)}",
        "Share of the working time inside jobs": f"{t.in_job_share:.0%}",
        "Gap between jobs p50, p95 ms": ", ".join(report.number(percentile(t.gap_ms, p)) for p in (50, 95)),
        "django-q2 tasks left when every job was done": t.tasks_left,
    }
    return report.Section(
        name="extraction",
        title="Extraction",
        intro=f"Written by `bench/extraction.py` on {env['Date']}. The web server and one django-q2 worker run as in "
        "production (`DEBUG=false`) on this machine, with the client.",
        setup=env,
        targets=targets,
        tables=[
            report.Table("Message ingest over HTTP",
                         [*report.PHASE_COLUMNS, "Jobs", "p50 ms with a job", "p50 ms without", "Messages/s",
                          "Open after"],
                         ingest_rows,
                         note=f"10 messages a request, a new session every {args.batches_per_session} batches; "
                         f"{args.ingest_warmup:g} s warm-up, then {args.ingest_duration:g} s per phase. Jobs: requests "
                         "that created an extraction job; open after: jobs not done when the phase ended."),
            report.Table("Extraction lag",
                         ["Run", "Samples", "Not found", "p50 ms", "p95 ms", "max ms", "To claim p50 ms",
                          "To claim p95 ms", "Job p50 ms", "Job p95 ms", "To found p50 ms", "Searches per sample"],
                         lag_rows,
                         note="From a message's 202 until a keyword search finds its fact; to claim: until the job's "
                         "`started_at`; job: on to its `finished_at`; to found: on to the search that found it."),
            report.Table("Extraction throughput", ["", ""], [list(item) for item in throughput_rows.items()]),
            *([scaling_table(scaling)] if scaling else []),
        ],
        notes=[
            *(f"Background ingest during *{run.name}*: {run.background['batches_per_second']:.1f} batches/s achieved, "
              f"{run.background['errors']} errors, {run.background['open_jobs_at_end']} jobs open at its end."
              for run in lag_runs if run.background),
            "Where the idle lag goes (means): {} ms = {} ms until the worker claims the job + {} ms running it + {} ms "
            "until the search finds it.".format(*means),
            report.first_errors([(run.label, run.phase) for run in ingest_runs]),
        ],
    )


# --- Main -------------------------------------------------------------------------------------------


def main(argv=None) -> int:
    args = options(argv)
    load_at_start = harness_start("memoryhub extraction benchmark")

    from load import QCluster, Server

    from apps.memories.models import Memory

    started = time.perf_counter()
    tenant, raw_key, stores = prepare(args)
    memories_at_start = Memory.objects.count()
    conversations = SupportConversations(args.seed)
    headers = {"Authorization": f"Bearer {raw_key}"}
    server_env = production_env()
    worker_env = production_env(Q_WORKERS="1")
    ingest_store = stores[INGEST_STORE]
    try:
        log(f"starting uvicorn with {args.web_workers} web worker(s) ...")
        with Server(root=ROOT, web_workers=args.web_workers, env=server_env, log=log) as server:
            log(f"server on {server.url}; message ingest (10 messages a request):")
            ingest_runs = run_ingest(
                server, headers, ingest_store, conversations, args, extraction=False, worker_running=False
            )
            ingest_runs += run_ingest(
                server, headers, ingest_store, conversations, args, extraction=True, worker_running=False
            )
            purge_queue()  # the jobs of the stopped-worker phase are never run
            wipe_conversations(ingest_store)
            log("starting the worker (manage.py qcluster, Q_WORKERS=1) ...")
            with QCluster(root=ROOT, env=worker_env, log=log) as worker:
                ingest_runs += run_ingest(
                    server, headers, ingest_store, conversations, args, extraction=True, worker_running=True
                )
                worker.stop()
                purge_queue()
                wipe_conversations(ingest_store)
                log("extraction lag (worker restarted):")
                worker.start()
                lag_runs = run_lag(server, headers, stores[LAG_STORE], conversations, args, worker=worker)
            log("extraction throughput:")
            throughput = run_throughput(
                server, headers, stores[BACKLOG_STORE], conversations, args, worker_env=worker_env
            )
        log("server and worker stopped")
        scaling = []
        if args.workers:
            log(f"extraction throughput on the Redis broker, {', '.join(map(str, args.workers))} worker(s):")
            scaling = run_scaling(headers, stores[BACKLOG_STORE], conversations, args)
        env = report.environment(
            script="extraction.py",
            data=f"support conversations from `bench/conversations.py` (seed {args.seed}) in 10-message batches; "
            f"rules extractor, hash embedder, {DIMENSION} dimensions; {memories_at_start:,} memories of other stores "
            "in the table (HNSW index) at start",
            server=report.server_description(args.web_workers),
            worker=report.worker_description(),
            load_at_start=load_at_start,
        )
    finally:
        purge_queue()
        for store in stores.values():
            delete_store(store)

    results = section(args, env=env, ingest_runs=ingest_runs, lag_runs=lag_runs, throughput=throughput,
                      scaling=scaling)
    report.publish(results, args.report, log=log, started=started)
    return exit_status()


if __name__ == "__main__":
    run_main(main, on_interrupt="the server and worker were stopped")
