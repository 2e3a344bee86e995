"""The section of docs/performance.md that bench/working_state.py owns: setup, one table of operations, terminate."""

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from extraction_report import worker_description
from load import percentile
from report import environment as page_environment
from report import ms, server_description, setup_table, write_section

HEADING = "## Working state and lifecycle"
SECTION = "working-state"


@dataclass(frozen=True)
class Layout:
    """The sizes the text states: the sessions bench/working_state.py builds and the store's limits."""

    state_keys: int  # working-memory keys of a full session (bench/working_state.py STATE_KEYS)
    state_notes: int  # scratchpad entries of a full session (STATE_NOTES)
    keys_per_session: int  # a new-key writer moves to a new session after this many keys (KEYS_PER_SESSION)
    limits: object  # the store's apps.memories.store_settings.WorkingStateSettings (working_state_settings_for)


def environment(
    args, *, store, layout: Layout, memory_types: Counter, seed_seconds: float, load_at_start
) -> dict[str, str]:
    from django.conf import settings

    mix = ", ".join(f"{count} {kind}s" for kind, count in sorted(memory_types.items()))
    embedder = f"{store.embedding_provider} embedder" + (f" `{store.embedding_model}`" if store.embedding_model else "")
    return page_environment(
        script="working_state.py",
        data=(
            f"store `bench-working-state`, created afresh: **{embedder}, {store.embedding_dimension} dimensions** "
            f"(as `bench/search.py` and `bench/extraction.py`; the server's default for new stores, "
            f"`MEMORYHUB_DEFAULT_EMBEDDER`, is `{settings.MEMORYHUB_DEFAULT_EMBEDDER}`), "
            "rules extractor with `every_n_turns` 1000 and no idle sweep, so only terminate extracts; sessions of "
            f"{layout.state_keys} working-memory keys, a task state and {layout.state_notes} scratchpad entries; "
            "the context user has "
            f"{sum(memory_types.values()):,} memories ({mix}) from `bench/corpus.py` (seed {args.seed}), posted "
            f"through `POST .../memories/bulk` in {seed_seconds:.1f} s"
        ),
        server=f"{server_description(args.web_workers)}; for the terminate runs also {worker_description()}",
        load_at_start=load_at_start,
    )


def job_timings(store, terminate_rows) -> dict[int, dict[str, list[float]]]:
    """Per concurrency: the final extraction jobs' wait for the worker and run time, from their rows."""
    from apps.extraction.models import ExtractionJob

    timings = {}
    for row in terminate_rows:
        ids = [job for _, extraction in row.notes["answers"] for job in extraction.get("jobs", [])]
        jobs = ExtractionJob.objects.filter(store=store, pk__in=ids)
        timings[row.phase.concurrency] = {
            "server_ms": [float(duration) for duration, _ in row.notes["answers"]],
            "claim_ms": [(job.started_at - job.created_at).total_seconds() * 1000 for job in jobs if job.started_at],
            "job_ms": [float(job.duration_ms) for job in jobs if job.duration_ms is not None],
            "jobs": [len(ids)],
            "added": [sum(job.added for job in jobs)],
        }
    return timings


def _rate(row) -> str:
    return f"{row.phase.per_second:,.1f}" + (" cycles/s" if row.cycle else "")


def _non_2xx(row) -> str:
    statuses = row.statuses
    if not statuses:
        return "0"
    return (
        f"**{sum(statuses.values())}** ("
        + ", ".join(f"{status or 'no response'}: {count}" for status, count in sorted(statuses.items()))
        + ")"
    )


def write(path: Path, *, args, env, layout: Layout, rows, jobs, probe) -> None:
    """Write bench/working_state.py's section of the page at `path`."""
    concurrencies = " and ".join(str(concurrency) for concurrency in args.concurrency)
    lines = [
        HEADING,
        "",
        f"Written by `bench/working_state.py` on {env['Date']}; run it again to refresh this section. Latencies are "
        "client-side, over HTTP on loopback, against the server (and, for terminate, one django-q2 worker) as in "
        "production (`DEBUG=false`) on this machine, with the client. There are no targets for these operations "
        "yet; the numbers describe, they do not judge.",
        "",
        "### Setup",
        "",
        *setup_table(env),
        "",
        "### Operations over HTTP",
        "",
        f"Concurrency {concurrencies}: that many threads, each with its own keep-alive connection and (except where "
        f"noted) its own session, send back to back; {args.warmup:g} s warm-up, then {args.requests} requests "
        f"(or cycles) per phase; the terminate phases take {args.terminate_sessions} sessions each. Errors: "
        "responses with another status than expected or a wrong body; *non-2xx* counts the responses outside "
        "200–299 among them, by status. Per second: requests per second, or cycles per second for the steps "
        "of a cycle (each cycle makes each of its requests once).",
        "",
        "| Operation | Concurrency | Requests | Errors | Non-2xx | p50 ms | p95 ms | p99 ms | Per second |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        phase = row.phase
        lines.append(
            f"| {row.operation} | {phase.concurrency} | {phase.requests:,} | {phase.errors} | {_non_2xx(row)} | "
            f"{ms(phase.percentile(50))} | {ms(phase.percentile(95))} | {ms(phase.percentile(99))} | {_rate(row)} |"
        )
    failing = [row for row in rows if row.phase.errors]
    if failing:
        lines += ["", "First error per failing phase:", ""]
        lines += [f"- {row.operation} c={row.phase.concurrency}: `{row.phase.first_error[:300]}`" for row in failing]
    lines += ["", "What each request does:", "", *_operation_notes(args, layout, rows)]
    lines += _terminate_lines(args, rows, jobs, probe)
    write_section(path, SECTION, lines)


def _note(rows, operation: str, key: str) -> dict[int, object]:
    return {row.phase.concurrency: row.notes.get(key) for row in rows if row.operation.startswith(operation)}


def _by_concurrency(values: dict[int, object]) -> str:
    return ", ".join(f"{value:,} at c={concurrency}" for concurrency, value in values.items())


def _operation_notes(args, layout: Layout, rows) -> list[str]:
    limits = layout.limits
    return [
        "- *PUT working-memory key (new key)*: `PUT …/sessions/{id}/working-memory/k-<n>` "
        '`{"value": {...}}`, a value of about 200 bytes as compact JSON (an order id, a status, a customer, an '
        f"item and a note), a new key every time (201); a thread's session grows to {layout.keys_per_session:,} "
        f"keys before it moves to a new one (the limit is {limits.max_items:,}).",
        "- *PUT working-memory key (overwrite)*: the same value size, always the key `current` of the thread's "
        "session (200; the version goes up). *One shared key*: every thread writes the key `current` of one "
        "session, so the writes queue on that session's row lock.",
        f"- *GET working-memory key*: one of the {layout.state_keys} keys of a full session.",
        '- *POST scratchpad (append)*: `{"content": <about 170 characters>, "metadata": {"step": n}}` to a '
        f"full session ({layout.state_notes} entries to start with; the oldest are dropped beyond "
        f"{limits.scratchpad_max_entries:,}; dropped: {_by_concurrency(_note(rows, 'POST scratchpad', 'dropped'))}).",
        "- *Checkpoints*: a cycle on a full session: `POST …/checkpoints` (201), `POST …/checkpoints/{id}/restore` "
        f"`{{}}` (replaces the working state with the snapshot, the same {layout.state_keys} keys, task and "
        f"{layout.state_notes} entries), then "
        "`DELETE …/checkpoints/{id}`, so every cycle sees the same session. Median snapshot size in bytes "
        f"(`size_bytes`): {_by_concurrency(_note(rows, 'POST checkpoints (create)', 'snapshot_bytes'))}.",
        "- *Pause + resume*: a cycle on a full session: `POST …/pause` (takes an automatic checkpoint), then "
        "`POST …/resume` `{}` (restores the latest checkpoint). Automatic checkpoints are kept up to the cap of "
        f"{limits.max_checkpoints:,} per session; after that a pause replaces the oldest (replaced: "
        f"{_by_concurrency(_note(rows, 'POST pause', 'pruned'))}). The cycle row is the sum of the two.",
        f"- *POST context*: `POST /api/v1/stores/bench-working-state/context` with `format` xml, `token_budget` "
        f"{args.token_budget:,}, `session_id` of a full session of the context user and a random query from "
        "`bench/corpus.py`; three searches (facts and preferences, episodes, procedures; the query embedded "
        "once) plus the working state. An error: more tokens than the budget, or no memory included. Median "
        f"tokens estimated {_by_concurrency(_note(rows, 'POST context', 'tokens'))}; median memories included "
        f"{_by_concurrency(_note(rows, 'POST context', 'memories'))}.",
        "- *POST terminate*: below.",
    ]


def _terminate_lines(args, rows, jobs, probe) -> list[str]:
    lines = [
        "",
        "### Terminate",
        "",
        f"Each session first gets one batch of 10 messages (5 user and 5 assistant turns from "
        "`bench/conversations.py`; no extraction job, see `every_n_turns`) and a task state, outside the "
        f'measurement. Then `POST …/terminate` `{{"lessons": [...], "wait": {args.terminate_wait:g}}}`: it '
        "marks the session terminated, schedules the final extraction of the 10 messages, waits (inside the "
        "request, re-reading the job's row in a sleep loop, `extraction_flush_and_wait`) for the worker to "
        "finish it, writes the episode memory and answers. An error: not 200, or the "
        "extraction not run or not complete. One terminate before the measurement waits for the worker's "
        "start-up. Server ms: the response's `duration_ms`; to claim: the job's `created_at` to `started_at` "
        "(the worker's poll and hand-over); job: its `duration_ms`.",
        "",
        "| Concurrency | Sessions | Errors | p50 ms | p95 ms | Server ms p50 / p95 | To claim ms p50 / p95 | "
        "Job ms p50 / p95 | Jobs | Memories added | Per second |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        if not row.operation.startswith("POST terminate"):
            continue
        phase, timing = row.phase, jobs.get(row.phase.concurrency, {})

        def pair(name: str, timing=timing) -> str:
            values = timing.get(name, [])
            return f"{ms(percentile(values, 50))} / {ms(percentile(values, 95))}"

        lines.append(
            f"| {phase.concurrency} | {phase.requests} | {phase.errors} | {ms(phase.percentile(50))} | "
            f"{ms(phase.percentile(95))} | {pair('server_ms')} | {pair('claim_ms')} | {pair('job_ms')} | "
            f"{sum(timing.get('jobs', []))} | {sum(timing.get('added', []))} | {phase.per_second:,.2f} |"
        )
    if probe:
        lines += [
            "",
            "While the terminates ran, and for 2 s before each run, another client read one working-memory key "
            f"every {args.probe_interval * 1000:g} ms on a new connection each time (so either web worker may answer "
            "it), to see whether requests that wait for an extraction slow down the others.",
            "",
            "| Probe | Requests | Non-2xx | p50 ms | p95 ms | max ms | Over 100 ms |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for label, samples in probe.items():
            latencies = [sample.latency_ms for sample in samples if sample.ok]
            bad = sum(1 for sample in samples if not 200 <= sample.status < 300)
            lines.append(
                f"| {label} | {len(samples)} | {bad} | {ms(percentile(latencies, 50))} | "
                f"{ms(percentile(latencies, 95))} | {ms(max(latencies, default=float('nan')))} | "
                f"{sum(1 for latency in latencies if latency > 100)} |"
            )
    return lines
