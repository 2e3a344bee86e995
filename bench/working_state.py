"""Working-state and lifecycle benchmark of memoryhub over real HTTP; writes its section of docs/performance.md.

    .venv/bin/python bench/working_state.py [--requests 300] [--concurrency 1,4] [--terminate-sessions 30] [--smoke]

Starts uvicorn (--web-workers, default 2) against its own database (memoryhub_bench), creates the store
bench-working-state afresh, and measures per session: working-memory PUT and GET, scratchpad append,
checkpoint create/restore, pause/resume, context assembly (POST .../context) for a user with 1,000
memories, and terminate (final extraction by one django-q2 worker, then the episode memory).
See bench/README.md.
"""

import argparse
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

import report
from conversations import SessionStream, SupportConversations
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
from jobs import delete_store, other_queue_readers, purge_queue
from load import Outcome, PhaseResult, percentile, run_phase, timed_request

KEY_NAME = "bench/working_state.py"
STORE = "bench-working-state"
DIMENSION = 384
AGENT_ID = "bench-agent"
KEYS_PER_SESSION = 900  # fresh-key writers move to a new session before the store's 1,000-key limit
CONTEXT_USER = 0  # corpus user index of the user whose memories context assembly ranks
SMOKE = dict(web_workers=1, concurrency="2", requests=5, warmup=0.0, state_keys=5, state_notes=5,
             context_memories=20, terminate_sessions=2, probe_idle=0.2)


def options(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--web-workers", type=int, default=2, help="uvicorn worker processes (default 2)")
    parser.add_argument("--concurrency", default="1,4", help="concurrencies of every operation (default 1,4)")
    parser.add_argument("--requests", type=int, default=300, help="measured requests (or cycles) per phase")
    parser.add_argument("--warmup", type=float, default=1.0, help="unmeasured seconds before each phase")
    parser.add_argument("--context-memories", type=int, default=1000, help="memories of the context user")
    parser.add_argument("--token-budget", type=int, default=2000, help="token_budget of POST .../context")
    parser.add_argument("--terminate-sessions", type=int, default=30, help="sessions terminated per concurrency")
    parser.add_argument("--terminate-wait", type=float, default=30.0, help="`wait` of terminate, seconds (<= 60)")
    parser.add_argument("--probe-interval", type=float, default=0.02, help="seconds between probe GETs")
    parser.add_argument("--probe-idle", type=float, default=2.0, help="seconds probed before each terminate run")
    parser.add_argument("--state-keys", type=int, default=50, help="working-memory keys of a full session")
    parser.add_argument("--state-notes", type=int, default=100, help="scratchpad entries of a full session")
    parser.add_argument(
        "--embedder", choices=("hash", "local"), default="hash", help="embedder of the store (default hash)"
    )
    parser.add_argument("--seed", type=int, default=1234, help="random seed of values, memories and messages")
    args = parse_args(parser, argv, smoke=SMOKE)
    args.concurrency = int_list(parser, "--concurrency", args.concurrency)
    for name in ("requests", "context_memories", "terminate_sessions", "web_workers", "state_keys"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if not 0 <= args.terminate_wait <= 60:
        parser.error("--terminate-wait must be from 0 to 60")
    return args


def session_path(session: str) -> str:
    return f"/api/v1/stores/{STORE}/sessions/{session}"


# --- Outcomes ---------------------------------------------------------------------------------------


@dataclass
class Call(Outcome):
    """One HTTP request; `ok` is the expected status with the expected body."""

    status: int = 0  # 0: no response (a transport error)


@dataclass
class Cycle(Outcome):
    """Several requests measured as one sample (e.g. pause then resume); each call is reported too."""

    calls: dict[str, Call] = field(default_factory=dict)


def call(client, method: str, path: str, body: dict | None = None, *, expect: int):
    """(Call, response or None)."""
    latency_ms, response, error = timed_request(client, method, path, body, expect_status=expect)
    status = response.status_code if response is not None else 0
    return Call(latency_ms, ok=not error, error=error, status=status), response


def cycle(calls: dict[str, Call]) -> Cycle:
    first_error = next((step.error for step in calls.values() if not step.ok), "")
    return Cycle(sum(step.latency_ms for step in calls.values()), ok=not first_error, error=first_error, calls=calls)


def steps_of(phase: PhaseResult, name: str) -> PhaseResult:
    """The calls `name` of a phase of cycles, as a phase of their own (same window, so per second = cycles/s)."""
    steps = PhaseResult(name=name, concurrency=phase.concurrency, elapsed=phase.elapsed)
    steps.outcomes = [outcome.calls[name] for outcome in phase.outcomes if name in outcome.calls]
    return steps


def calls_of(outcomes) -> list[Call]:
    flat = []
    for outcome in outcomes:
        flat.extend(outcome.calls.values() if isinstance(outcome, Cycle) else [outcome])
    return flat


@dataclass
class Row:
    """One line of the results table."""

    operation: str
    phase: PhaseResult  # its outcomes are the calls (or cycles) of this operation
    cycle: bool = False  # per second counts cycles of several requests
    notes: dict = field(default_factory=dict)

    @property
    def statuses(self) -> Counter:
        """Responses that were not 2xx, by status (0: no response)."""
        return Counter(step.status for step in calls_of(self.phase.outcomes) if not 200 <= step.status < 300)


# --- Requests and setup -----------------------------------------------------------------------------

NOTE_TOPICS = ("refund", "delivery", "warranty", "invoice", "address", "replacement", "tracking", "discount")


def key_value(rng: random.Random) -> dict:
    """A working-memory value of about 200 bytes as compact JSON."""
    return {
        "order_id": f"A-{rng.randrange(10_000, 100_000)}",
        "status": rng.choice(("awaiting_refund", "shipped", "delayed", "open", "escalated")),
        "customer": {"name": rng.choice(("Anna", "Omar", "Priya", "Jonas")), "city": "Lisbon"},
        "items": [{"sku": f"SKU-{rng.randrange(10_000, 100_000)}", "qty": rng.randint(1, 3)}],
        "note": f"Asked about the {rng.choice(NOTE_TOPICS)}; follow up by {rng.choice(('email', 'phone'))}.",
    }


def note_text(rng: random.Random, number: int) -> str:
    topic = rng.choice(NOTE_TOPICS)
    return (
        f"Step {number}: checked the {topic} for order A-{rng.randrange(10_000, 100_000)}; the customer wants it "
        f"settled this week, so try the {rng.choice(NOTE_TOPICS)} route first and confirm by email."
    )


def task_state(rng: random.Random) -> dict:
    return {
        "description": f"Resolve the customer's {rng.choice(NOTE_TOPICS)} request",
        "total_steps": 6,
        "current_step": rng.randint(1, 5),
    }


def _setup(client, method: str, path: str, body: dict | None, *, expect: int) -> dict:
    step, response = call(client, method, path, body, expect=expect)
    if not step.ok:
        raise RuntimeError(f"setup request {method} {path} failed: {step.error}")
    return response.json()


def spawn(client, session: str, *, user_id: str, rng: random.Random, keys: int = 0, notes: int = 0) -> None:
    """A new session with a task state, `keys` working-memory keys and `notes` scratchpad entries."""
    body = {
        "user_id": user_id,
        "agent_id": AGENT_ID,
        "task_state": task_state(rng),
        "working_memory": [{"key": f"fact-{index:03d}", "value": key_value(rng)} for index in range(keys)],
    }
    _setup(client, "POST", f"{session_path(session)}/spawn", body, expect=201)
    for number in range(notes):
        _setup(client, "POST", f"{session_path(session)}/scratchpad", {"content": note_text(rng, number)}, expect=201)


@dataclass
class ThreadState:
    """What one load thread works on: its session(s), a random source and counters."""

    session: str
    rng: random.Random
    counter: int = 0
    sessions: int = 1


# --- Phases -----------------------------------------------------------------------------------------


class Bench:
    def __init__(self, server, headers: dict, args):
        import httpx

        self.server = server
        self.headers = headers
        self.args = args
        self.rows: list[Row] = []
        self.setup = httpx.Client(base_url=server.url, headers=headers, timeout=120)

    def close(self) -> None:
        self.setup.close()

    def rng(self, *parts) -> random.Random:
        return random.Random(":".join(str(part) for part in (self.args.seed, *parts)))

    def full_sessions(self, prefix: str, count: int, *, rng: random.Random, user_id: str = "bench-user") -> list[str]:
        """`count` sessions with --state-keys working-memory keys, a task state and --state-notes entries."""
        sessions = [f"{prefix}-t{index}" for index in range(count)]
        for session in sessions:
            spawn(self.setup, session, user_id=user_id, rng=rng, keys=self.args.state_keys, notes=self.args.state_notes)
        return sessions

    def run(self, name: str, request, states: list[ThreadState], *, max_requests=None, warmup=None) -> PhaseResult:
        return run_phase(
            name=name,
            url=self.server.url,
            headers=self.headers,
            request=request,
            concurrency=len(states),
            warmup=self.args.warmup if warmup is None else warmup,
            duration=3600.0,
            max_requests=self.args.requests if max_requests is None else max_requests,
            timeout=120.0,
            make_rng=lambda index: states[index],
        )

    def record(self, operation: str, phase: PhaseResult, *, is_cycle: bool = False, **notes) -> Row:
        row = Row(operation, phase, cycle=is_cycle, notes=notes)
        self.rows.append(row)
        statuses = ", ".join(f"{status or 'no response'}: {count}" for status, count in sorted(row.statuses.items()))
        phase_line(operation, phase, count="cycles" if is_cycle else "requests", rate="/s",
                   details=f"non-2xx {{{statuses}}}" if statuses else "")
        return row

    # Working memory, scratchpad

    def working_memory(self, concurrency: int) -> None:
        states = [
            ThreadState(f"wm-c{concurrency}-t{index}", self.rng("wm", concurrency, index))
            for index in range(concurrency)
        ]
        for state in states:
            spawn(self.setup, state.session, user_id="bench-user", rng=state.rng)

        def put_fresh(client, state: ThreadState) -> Outcome:
            state.counter += 1
            session = state.session if state.counter < KEYS_PER_SESSION else f"{state.session}-{state.sessions}"
            if state.counter % KEYS_PER_SESSION == 0:  # the session is nearly full: go on in a new one
                state.sessions += 1
                session = f"{state.session}-{state.sessions}"
                spawn(client, session, user_id="bench-user", rng=state.rng)
            path = f"{session_path(session)}/working-memory/k-{state.counter:06d}"
            return call(client, "PUT", path, {"value": key_value(state.rng)}, expect=201)[0]

        phase = self.run("PUT working-memory key (new key)", put_fresh, states)
        self.record("PUT working-memory key (new key)", phase)

        def put_overwrite(client, state: ThreadState) -> Outcome:
            path = f"{session_path(state.session)}/working-memory/current"
            return call(client, "PUT", path, {"value": key_value(state.rng)}, expect=200)[0]

        for state in states:  # the key exists before the measured overwrites
            path = f"{session_path(state.session)}/working-memory/current"
            _setup(self.setup, "PUT", path, {"value": key_value(state.rng)}, expect=201)
        phase = self.run("PUT working-memory key (overwrite)", put_overwrite, states)
        self.record("PUT working-memory key (overwrite)", phase)

        if concurrency > 1:
            shared = f"wm-shared-c{concurrency}"
            spawn(self.setup, shared, user_id="bench-user", rng=self.rng("shared", concurrency))
            _setup(
                self.setup,
                "PUT",
                f"{session_path(shared)}/working-memory/current",
                {"value": key_value(self.rng("shared"))},
                expect=201,
            )
            shared_states = [
                ThreadState(shared, self.rng("shared", concurrency, index)) for index in range(concurrency)
            ]
            phase = self.run("PUT working-memory key (one shared key)", put_overwrite, shared_states)
            self.record("PUT working-memory key (one shared key)", phase)

        full = self.full_sessions(f"wm-get-c{concurrency}", concurrency, rng=self.rng("get", concurrency))

        def get_key(client, state: ThreadState) -> Outcome:
            key = f"fact-{state.rng.randrange(self.args.state_keys):03d}"
            step, response = call(client, "GET", f"{session_path(state.session)}/working-memory/{key}", expect=200)
            if step.ok and response.json().get("key") != key:
                step.ok, step.error = False, f"asked for {key}, got {response.text[:200]}"
            return step

        states = [ThreadState(session, self.rng("get", concurrency, session)) for session in full]
        self.record("GET working-memory key", self.run("GET working-memory key", get_key, states))

    def scratchpad(self, concurrency: int) -> None:
        full = self.full_sessions(f"pad-c{concurrency}", concurrency, rng=self.rng("pad", concurrency))
        dropped = Counter()

        def append(client, state: ThreadState) -> Outcome:
            state.counter += 1
            body = {
                "content": note_text(state.rng, self.args.state_notes + state.counter),
                "metadata": {"step": state.counter},
            }
            step, response = call(client, "POST", f"{session_path(state.session)}/scratchpad", body, expect=201)
            if step.ok:
                dropped[state.session] += response.json().get("dropped", 0)
            return step

        states = [ThreadState(session, self.rng("pad", concurrency, session)) for session in full]
        phase = self.run("POST scratchpad", append, states)
        self.record("POST scratchpad (append)", phase, dropped=sum(dropped.values()))

    # Checkpoints, lifecycle

    def checkpoints(self, concurrency: int) -> None:
        full = self.full_sessions(f"ckpt-c{concurrency}", concurrency, rng=self.rng("ckpt", concurrency))
        sizes = []

        def create_restore_delete(client, state: ThreadState) -> Outcome:
            base = f"{session_path(state.session)}/checkpoints"
            calls = {}
            calls["create"], response = call(client, "POST", base, {"description": "before the refund"}, expect=201)
            if calls["create"].ok:
                checkpoint = response.json()
                sizes.append(checkpoint.get("size_bytes", 0))
                calls["restore"], _ = call(client, "POST", f"{base}/{checkpoint['id']}/restore", {}, expect=200)
                calls["delete"], _ = call(client, "DELETE", f"{base}/{checkpoint['id']}", expect=200)
            return cycle(calls)

        states = [ThreadState(session, self.rng("ckpt", concurrency, session)) for session in full]
        phase = self.run("checkpoints", create_restore_delete, states)
        size = sorted(sizes)[len(sizes) // 2] if sizes else 0
        self.record("POST checkpoints (create)", steps_of(phase, "create"), is_cycle=True, snapshot_bytes=size)
        self.record("POST checkpoints/{id}/restore", steps_of(phase, "restore"), is_cycle=True)
        self.record("DELETE checkpoints/{id}", steps_of(phase, "delete"), is_cycle=True)

    def pause_resume(self, concurrency: int) -> None:
        full = self.full_sessions(f"life-c{concurrency}", concurrency, rng=self.rng("life", concurrency))
        pruned = []

        def pause_then_resume(client, state: ThreadState) -> Outcome:
            base = session_path(state.session)
            calls = {}
            calls["pause"], response = call(client, "POST", f"{base}/pause", {"description": "waiting"}, expect=200)
            if calls["pause"].ok:
                pruned.append(len(response.json()["data"].get("pruned_checkpoints") or []))
                calls["resume"], _ = call(client, "POST", f"{base}/resume", {}, expect=200)
            return cycle(calls)

        states = [ThreadState(session, self.rng("life", concurrency, session)) for session in full]
        phase = self.run("pause + resume", pause_then_resume, states)
        self.record("POST pause", steps_of(phase, "pause"), is_cycle=True, pruned=sum(pruned))
        self.record("POST resume", steps_of(phase, "resume"), is_cycle=True)
        self.record("pause + resume (one cycle)", phase, is_cycle=True)

    # Context assembly

    def seed_context_user(self, corpus) -> Counter:
        drafts = corpus.memories_for_user(CONTEXT_USER, self.args.context_memories)
        created = 0
        for start in range(0, len(drafts), 500):
            body = {"memories": [draft.bulk_item() for draft in drafts[start : start + 500]]}
            answer = _setup(self.setup, "POST", f"/api/v1/stores/{STORE}/memories/bulk", body, expect=201)
            created += answer.get("created", 0)
        if created != len(drafts):
            raise RuntimeError(f"the bulk API created {created} of {len(drafts)} memories of the context user")
        return Counter(draft.memory_type for draft in drafts)

    def context(self, concurrency: int, *, user_id: str, session: str) -> None:
        from corpus import QUERIES

        budget = self.args.token_budget
        tokens, included = [], []

        def assemble(client, state: ThreadState) -> Outcome:
            body = {
                "query": state.rng.choice(QUERIES),
                "user_id": user_id,
                "session_id": session,
                "token_budget": budget,
                "format": "xml",
            }
            step, response = call(client, "POST", f"/api/v1/stores/{STORE}/context", body, expect=200)
            if not step.ok:
                return step
            answer = response.json()
            memories = sum(1 for entry in answer["included"] if entry["source"] == "memory")
            if answer["tokens_estimated"] > budget:
                step.ok, step.error = False, f"{answer['tokens_estimated']} tokens for a budget of {budget}"
            elif not memories:
                step.ok, step.empty, step.error = False, True, f"no memory included for {body['query']!r}"
            tokens.append(answer["tokens_estimated"])
            included.append(memories)
            return step

        states = [ThreadState(session, self.rng("context", concurrency, index)) for index in range(concurrency)]
        phase = self.run("POST context", assemble, states)
        middle = len(tokens) // 2
        self.record(
            f"POST context (xml, {budget:,} tokens)",
            phase,
            tokens=sorted(tokens)[middle] if tokens else 0,
            memories=sorted(included)[middle] if included else 0,
        )

    # Terminate

    def terminate(self, concurrency: int, conversations, probe) -> Row:
        stream = SessionStream(
            conversations,
            store=STORE,
            prefix=f"end-c{concurrency}",
            users=50,
            batches_per_session=1,
            seed=f"{self.args.seed}:end:{concurrency}",
        )
        sessions = [self.conversation(stream) for _ in range(self.args.terminate_sessions)]
        queue = iter(sessions)
        lock = threading.Lock()
        answers = []

        def end(client, state) -> Outcome:
            with lock:
                session = next(queue)
            step, response = call(
                client, "POST", f"{session_path(session)}/terminate", self.terminate_body(), expect=200
            )
            if step.ok:
                data = response.json()["data"]
                answers.append((response.json()["duration_ms"], data["extraction"]))
                if not (data["extraction"]["ran"] and data["extraction"]["complete"] and data["episode_memory_id"]):
                    step.ok, step.error = False, f"final extraction incomplete: {data['extraction']}"
            return step

        probe.switch(f"idle, before c={concurrency}")
        time.sleep(self.args.probe_idle)
        probe.switch(f"terminates at c={concurrency}")
        phase = self.run("terminate", end, [None] * concurrency, max_requests=len(sessions), warmup=0.0)
        probe.switch("")
        return self.record("POST terminate (10 messages)", phase, answers=answers)

    def conversation(self, stream: SessionStream) -> str:
        """A session with one 10-message batch (not yet extracted) and a task state; returns its id."""
        path, body = stream.next_request()
        answer = _setup(self.setup, "POST", path, body, expect=202)
        if answer.get("extraction_job"):
            raise RuntimeError("message ingest scheduled an extraction job: every_n_turns should prevent it")
        _setup(self.setup, "PUT", f"{session_path(stream.session)}/task-state", task_state(stream.rng), expect=200)
        return stream.session

    def terminate_body(self) -> dict:
        return {"lessons": ["Check the warranty before offering a refund"], "wait": self.args.terminate_wait}


class Probe(threading.Thread):
    """GETs one working-memory key every `interval` s on a new connection each time (so any web worker may
    answer), filing the samples under the current label; an empty label pauses it."""

    def __init__(self, *, url: str, headers: dict, path: str, interval: float):
        super().__init__(daemon=True)
        self.url, self.headers, self.path, self.interval = url, {**headers, "Connection": "close"}, path, interval
        self.label = ""
        self.samples: dict[str, list[Call]] = {}
        self.stopping = threading.Event()

    def switch(self, label: str) -> None:
        self.label = label

    def run(self) -> None:
        import httpx

        with httpx.Client(base_url=self.url, headers=self.headers, timeout=120) as client:
            while not self.stopping.is_set():
                label = self.label
                if label:
                    self.samples.setdefault(label, []).append(call(client, "GET", self.path, expect=200)[0])
                self.stopping.wait(self.interval)

    def stop(self) -> None:
        self.stopping.set()
        self.join()

    def print_results(self) -> None:
        """A result line per label: a probe GET that failed is a failure like any other."""
        for label, samples in self.samples.items():
            latencies = [sample.latency_ms for sample in samples if sample.ok]
            failed = [sample for sample in samples if not sample.ok]
            result_line(f"probe GET, {label}", failed=len(failed), p50=percentile(latencies, 50),
                        p95=percentile(latencies, 95), details=f"{len(samples)} requests",
                        first_error=failed[0].error if failed else "")


# --- Report ---------------------------------------------------------------------------------------

SPLIT_COLUMNS = ["Concurrency", "Server ms p50", "Server ms p95", "To claim ms p50", "To claim ms p95", "Job ms p50",
                 "Job ms p95", "Jobs", "Memories added"]
HEADLINES = ("PUT working-memory key (new key)", "GET working-memory key", "POST context", "POST terminate")


def terminate_split(store, terminate_rows: list[Row]) -> list[list]:
    """SPLIT_COLUMNS per terminate phase: the server's `duration_ms`, the final extraction jobs' wait for the
    worker and their run time (from their rows, so before the store is deleted)."""
    from apps.extraction.models import ExtractionJob

    table = []
    for row in terminate_rows:
        answers = row.notes["answers"]
        ids = [job for _, extraction in answers for job in extraction.get("jobs", [])]
        jobs = list(ExtractionJob.objects.filter(store=store, pk__in=ids))
        server = [float(duration) for duration, _ in answers]
        claim = [(job.started_at - job.created_at).total_seconds() * 1000 for job in jobs if job.started_at]
        run = [float(job.duration_ms) for job in jobs if job.duration_ms is not None]
        split = [percentile(values, p) for values in (server, claim, run) for p in (50, 95)]
        table.append([row.phase.concurrency, *split, len(ids), sum(job.added for job in jobs)])
    return table


def section(args, *, env, rows: list[Row], split: list[list], probe) -> report.Section:
    def non_2xx(row: Row) -> str:
        counts = ", ".join(f"{status or 'no response'}: {count}" for status, count in sorted(row.statuses.items()))
        return f"**{sum(row.statuses.values())}** ({counts})" if counts else "0"

    lowest = min(args.concurrency)
    headlines = [row for row in rows if row.operation.startswith(HEADLINES) and row.phase.concurrency == lowest]

    def noted(operation: str, key: str) -> str:
        return ", ".join(f"{row.notes[key]:,} at c={row.phase.concurrency}" for row in rows
                         if row.operation.startswith(operation))

    probe_rows = []
    for label, samples in probe.items():
        latencies = [sample.latency_ms for sample in samples if sample.ok]
        probe_rows.append([label, len(samples), sum(1 for sample in samples if not 200 <= sample.status < 300),
                           percentile(latencies, 50), percentile(latencies, 95), percentile(latencies, 100),
                           sum(1 for latency in latencies if latency > 100)])
    return report.Section(
        name="working-state",
        title="Working state and lifecycle",
        intro=f"Written by `bench/working_state.py` on {env['Date']}. Latencies are client-side, over HTTP on "
        "loopback, against the server (and, for terminate, one django-q2 worker) as in production (`DEBUG=false`), "
        "with the client on the same machine. No targets yet: the summary shows p95s at the lowest concurrency.",
        setup=env,
        targets=[report.target(f"{row.operation} p95, concurrency {row.phase.concurrency}", row.phase.percentile(95),
                               unit="ms") for row in headlines],
        tables=[
            report.Table("Operations over HTTP", [*report.PHASE_COLUMNS, "Non-2xx"],
                         [[*report.phase_row(row.operation, row.phase), non_2xx(row)] for row in rows],
                         note=f"Each thread has its own connection and (except *one shared key*) its own session; "
                         f"{args.warmup:g} s warm-up, then {args.requests} requests or cycles per phase, "
                         f"{args.terminate_sessions} sessions for terminate. Full sessions have {args.state_keys} "
                         f"keys, a task state and {args.state_notes} scratchpad entries. Per second counts cycles for "
                         "the steps of a cycle."),
            report.Table("Terminate: where the time goes", SPLIT_COLUMNS, split,
                         note="Server: the response's `duration_ms`; to claim: the final job's `created_at` to "
                         "`started_at`; job: its `duration_ms`."),
            report.Table("Probe during terminate",
                         ["Probe", "Requests", "Non-2xx", "p50 ms", "p95 ms", "max ms", "Over 100 ms"], probe_rows,
                         note=f"A working-memory GET every {args.probe_interval * 1000:g} ms on a new connection, "
                         f"{args.probe_idle:g} s before and during each terminate run."),
        ],
        notes=[
            f"Scratchpad entries dropped: {noted('POST scratchpad', 'dropped')}. Median checkpoint `size_bytes`: "
            f"{noted('POST checkpoints (create)', 'snapshot_bytes')}. Automatic checkpoints replaced by pauses: "
            f"{noted('POST pause', 'pruned')}. Context: median tokens {noted('POST context', 'tokens')}, median "
            f"memories included {noted('POST context', 'memories')}.",
            report.first_errors([(row.operation, row.phase) for row in rows]),
        ],
    )


# --- Main -------------------------------------------------------------------------------------------


def prepare(args):
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
    old = MemoryStore.objects.filter(tenant=tenant, name=STORE).first()
    if old is not None:
        log(f"  deleting the store {STORE!r} of an earlier run ...")
        delete_store(old)
    store = memory_services.store_create(
        tenant=tenant,
        name=STORE,
        description="bench/working_state.py",
        embedding_provider=args.embedder,
        embedding_dimension=DIMENSION,
        # No job on ingest (every_n_turns above the 5 user turns of a session, no idle sweep): terminate's
        # final extraction is the one that reads the 10 messages.
        extraction_config={"enabled": True, "extractor": "rules", "every_n_turns": 1000, "idle_seconds": 0},
    )
    return raw_key, store


def main(argv=None) -> int:
    args = options(argv)
    load_at_start = harness_start("memoryhub working-state benchmark")

    from corpus import Corpus
    from django.conf import settings
    from load import QCluster, Server

    started = time.perf_counter()
    raw_key, store = prepare(args)
    headers = {"Authorization": f"Bearer {raw_key}"}
    terminate_rows, probe_samples = [], {}
    try:
        log(f"starting uvicorn with {args.web_workers} web worker(s) ...")
        with Server(root=ROOT, web_workers=args.web_workers, env=production_env(), log=log) as server:
            bench = Bench(server, headers, args)
            try:
                log(f"server on {server.url}; working memory and scratchpad:")
                for concurrency in args.concurrency:
                    bench.working_memory(concurrency)
                for concurrency in args.concurrency:
                    bench.scratchpad(concurrency)
                log(
                    f"checkpoints and pause/resume (sessions of {args.state_keys} keys, a task state, "
                    f"{args.state_notes} scratchpad entries):"
                )
                for concurrency in args.concurrency:
                    bench.checkpoints(concurrency)
                for concurrency in args.concurrency:
                    bench.pause_resume(concurrency)
                corpus = Corpus(args.seed)
                context_user = f"user-{CONTEXT_USER:06d}"
                log(f"seeding {args.context_memories:,} memories of {context_user} through the bulk API ...")
                seeded_at = time.perf_counter()
                memory_types = bench.seed_context_user(corpus)
                seed_seconds = time.perf_counter() - seeded_at
                context_session = bench.full_sessions("ctx", 1, rng=bench.rng("ctx"), user_id=context_user)[0]
                log(f"  seeded in {seed_seconds:.1f} s: {dict(memory_types)}; context assembly:")
                for concurrency in args.concurrency:
                    bench.context(concurrency, user_id=context_user, session=context_session)
                log("terminate (one django-q2 worker, Q_WORKERS=1):")
                conversations = SupportConversations(args.seed)
                probe_session = bench.full_sessions("probe", 1, rng=bench.rng("probe"))[0]
                probe = Probe(
                    url=server.url,
                    headers=headers,
                    interval=args.probe_interval,
                    path=f"{session_path(probe_session)}/working-memory/fact-000",
                )
                with QCluster(root=ROOT, env=production_env(Q_WORKERS="1"), log=log) as worker:
                    # The first job waits for the worker's start-up; a terminate outside the measurement takes it.
                    warm = SessionStream(
                        conversations,
                        store=STORE,
                        prefix="end-warmup",
                        users=1,
                        batches_per_session=1,
                        seed=f"{args.seed}:warmup",
                    )
                    session = bench.conversation(warm)
                    _setup(
                        bench.setup, "POST", f"{session_path(session)}/terminate", bench.terminate_body(), expect=200
                    )
                    probe.start()
                    try:
                        for concurrency in args.concurrency:
                            worker.check_alive()
                            terminate_rows.append(bench.terminate(concurrency, conversations, probe))
                    finally:
                        probe.stop()
                    probe_samples = probe.samples
                    probe.print_results()
            finally:
                bench.close()
        log("server and worker stopped")
        split = terminate_split(store, terminate_rows)
        mix = ", ".join(f"{count} {kind}s" for kind, count in sorted(memory_types.items()))
        embedder = f"{store.embedding_provider} embedder" + (
            f" `{store.embedding_model}`" if store.embedding_model else ""
        )
        env = report.environment(
            script="working_state.py",
            data=f"store `{STORE}`, created afresh: **{embedder}, {store.embedding_dimension} dimensions** (the "
            f"server's default for new stores is `{settings.MEMORYHUB_DEFAULT_EMBEDDER}`), rules extractor that only "
            f"terminate runs; the context user has {sum(memory_types.values()):,} memories ({mix}) from "
            f"`bench/corpus.py` (seed {args.seed}), posted through the bulk API in {seed_seconds:.1f} s",
            server=report.server_description(args.web_workers),
            worker=report.worker_description() + " (for terminate)",
            load_at_start=load_at_start,
        )
    finally:
        purge_queue()
        delete_store(store)

    log(f"non-2xx responses in measured requests: {sum(sum(row.statuses.values()) for row in bench.rows)}")
    results = section(args, env=env, rows=bench.rows, split=split, probe=probe_samples)
    report.publish(results, args.report, log=log, started=started)
    return exit_status()


if __name__ == "__main__":
    run_main(main, on_interrupt="the server and worker were stopped")
