"""The section of docs/performance.md that bench/extraction.py owns: targets, setup and its three measurements."""

import math
from pathlib import Path

from load import percentile
from report import environment as page_environment
from report import ms, server_description, setup_table, targets_table, verdict, write_section

# The service's extraction targets.
TARGET_INGEST_P95_MS = 30.0
TARGET_LAG_P95_S = 1.5
TARGET_TURNS_PER_SECOND = 200.0

HEADING = "## Extraction"


def worker_description() -> str:
    from django.conf import settings
    from django_q.conf import Conf

    cluster = settings.Q_CLUSTER
    broker = "Redis" if cluster.get("redis") else f"ORM ({cluster.get('orm')})"
    return (
        f"`manage.py qcluster`, Q_WORKERS=1, {broker} broker: poll {Conf.POLL:g} s, bulk {Conf.BULK}, "
        f"queue_limit {cluster.get('queue_limit', 1)}, save_limit {Conf.SAVE_LIMIT}, recycle {Conf.RECYCLE}, "
        f"timeout {Conf.TIMEOUT} s"
    )


def environment(args, *, memories_at_start: int, load_at_start) -> dict[str, str]:
    env = page_environment(
        script="extraction.py",
        data=(
            f"support conversations from `bench/conversations.py` (seed {args.seed}) in 10-message batches "
            "(5 user + 5 assistant turns); rules extractor, hash embedder, 384 dimensions; "
            f"{memories_at_start:,} memories of other stores in the table (HNSW index) at start"
        ),
        server=server_description(args.web_workers),
        load_at_start=load_at_start,
    )
    with_worker = {}
    for key, value in env.items():
        with_worker[key] = value
        if key == "Server":
            with_worker["Worker"] = worker_description()
    return with_worker


def _s(value: float) -> str:
    return "–" if math.isnan(value) else f"{value:.3f}"


def targets(ingest_runs, lag_runs, throughput) -> list[tuple[str, str, str]]:
    rows = []
    for run in ingest_runs:
        p95 = run.phase.percentile(95)
        rows.append(
            (
                f"Message ingest p95 <= {TARGET_INGEST_P95_MS:g} ms ({run.label}, concurrency {run.phase.concurrency})",
                f"{p95:.1f} ms",
                verdict(run.phase.errors == 0 and p95 <= TARGET_INGEST_P95_MS),
            )
        )
    for run in lag_runs:
        p95 = percentile(run.found(), 95)
        rows.append(
            (
                f"Extraction lag p95 <= {TARGET_LAG_P95_S:g} s ({run.name})",
                f"{p95:.3f} s" + (f", {run.timeouts} not found" if run.timeouts else ""),
                verdict(run.timeouts == 0 and p95 <= TARGET_LAG_P95_S),
            )
        )
    rows.append(
        (
            f"Extraction throughput >= {TARGET_TURNS_PER_SECOND:g} user turns/s per worker (from worker start)",
            f"{throughput.turns_per_second:.0f} user turns/s ({throughput.turns_per_working_second:.0f}/s once working)",
            verdict(throughput.failed == 0 and throughput.turns_per_second >= TARGET_TURNS_PER_SECOND),
        )
    )
    return rows


def write(path: Path, *, args, env, ingest_runs, lag_runs, throughput, verdicts) -> None:
    """Write bench/extraction.py's section of the page at `path`."""
    from django_q.conf import Conf

    lines = [
        HEADING,
        "",
        f"Written by `bench/extraction.py` on {env['Date']}; run it again to refresh this section. The web server "
        "and one django-q2 worker run as in production (`DEBUG=false`) on this machine, with the client.",
        "",
        "### Targets",
        "",
        *targets_table(verdicts),
        "",
        f"The targets: message ingest p95 <= {TARGET_INGEST_P95_MS:g} ms per 10-message request; a fact searchable "
        f"within {TARGET_LAG_P95_S:g} s (p95) of its message's 202; >= {TARGET_TURNS_PER_SECOND:g} user turns "
        "extracted per second per worker. Errors, or facts never found, count as a miss.",
        "",
        "### Setup",
        "",
        *setup_table(env),
        "",
        "### Message ingest over HTTP",
        "",
        "`POST /api/v1/stores/{store}/sessions/{session_id}/messages` with 10 messages (5 user + 5 assistant turns, "
        f"`run_id` and `seq` set), a new session every {args.batches_per_session} batches, over {args.ingest_users} "
        f"users; {args.ingest_warmup:g} s warm-up, then {args.ingest_duration:g} s per phase. *Extraction off*: the "
        'store\'s `extraction_config` is `{"enabled": false}`, so no job is scheduled. *Extraction on* (every user '
        "turn triggers, the default): a request that finds no open job for its session creates one and enqueues "
        "it; *worker stopped* measures only that, *worker running* also has the worker extracting on the same "
        "CPUs. Jobs: requests that created a job; p50 job / no job: the median of those requests and of the "
        "others; open after: jobs not yet done when the phase ended (the stopped-worker phases add up).",
        "",
        "| Extraction | Worker | Concurrency | Requests | Errors | Jobs | p50 ms | p95 ms | p99 ms | "
        "p50 ms job / no job | Requests/s | Messages/s | Open after |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for run in ingest_runs:
        phase = run.phase
        worker = "–" if not run.extraction else ("running" if run.worker_running else "stopped")
        split = "–"
        if run.extraction:
            split = f"{ms(run.percentile(50, created_job=True))} / {ms(run.percentile(50, created_job=False))}"
        lines.append(
            f"| {'on' if run.extraction else 'off'} | {worker} | {phase.concurrency} | {phase.requests:,} | "
            f"{phase.errors} | {phase.items:,} | {ms(phase.percentile(50))} | {ms(phase.percentile(95))} | "
            f"{ms(phase.percentile(99))} | {split} | {phase.per_second:,.1f} | {run.messages_per_second:,.0f} | "
            f"{run.open_jobs_after:,} |"
        )
    errors = [run for run in ingest_runs if run.phase.errors]
    if errors:
        lines += ["", "First error per failing phase:", ""]
        lines += [f"- {run.label} c={run.phase.concurrency}: `{run.phase.first_error[:300]}`" for run in errors]
    lines += [
        "",
        "### Extraction lag",
        "",
        "One user message `My order number is ZX-<7 random digits>.` to a session of one of "
        f"{args.lag_users} users (each told one ordinary conversation first), then `POST .../search` "
        f'`{{"mode": "keyword", "user_id": ...}}` every {args.lag_poll * 1000:g} ms until a result contains the '
        f"number (gives up after {args.lag_timeout:g} s). Samples are 0.2–0.5 s apart, so the worker is idle "
        "when each message arrives, unless a background ingest runs. The parts come from the job's row: "
        "*to claim* is the 202 to `started_at` (the worker's conditional UPDATE), *job* is `started_at` to "
        "`finished_at` (set just before the job's transaction commits), *to found* is `finished_at` to the "
        "search that found the fact.",
        "",
        "| Run | Samples | Not found | p50 s | p95 s | max s | To claim p50 / p95 s | Job p50 / p95 s | "
        "To found p50 s | Searches per sample |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for run in lag_runs:
        lags, claims, jobs, visible = run.found(), run.found("claim_s"), run.found("run_s"), run.found("visible_s")
        polls = sum(sample.polls for sample in run.samples) / len(run.samples)
        lines.append(
            f"| {run.name} | {len(run.samples)} | {run.timeouts} | {_s(percentile(lags, 50))} | "
            f"{_s(percentile(lags, 95))} | {_s(max(lags, default=math.nan))} | "
            f"{_s(percentile(claims, 50))} / {_s(percentile(claims, 95))} | "
            f"{_s(percentile(jobs, 50))} / {_s(percentile(jobs, 95))} | {_s(percentile(visible, 50))} | {polls:.1f} |"
        )
    for run in lag_runs:
        if run.background:
            background = run.background
            lines += [
                "",
                f"Background ingest during the *{run.name}* run: {background['batches_per_second']:.1f} batches/s "
                f"achieved ({5 * background['batches_per_second']:.0f} user turns/s, a new session and job per "
                f"batch), {background['errors']} errors, {background['open_jobs_at_end']} jobs open at its end.",
            ]
    idle = lag_runs[0]
    mean = {name: _mean(idle.found(name)) for name in ("lag_s", "claim_s", "run_s", "visible_s")}
    lines += [
        "",
        f"Where the idle lag goes (means over {len(idle.found())} samples): {mean['lag_s'] * 1000:.0f} ms in all = "
        f"{mean['claim_s'] * 1000:.0f} ms until the worker claims the job + {mean['run_s'] * 1000:.0f} ms running "
        f"it + {mean['visible_s'] * 1000:.0f} ms until the client's search finds it. The django-q2 ORM broker polls "
        f"its table and sleeps `Conf.POLL` = {Conf.POLL:g} s after each empty poll, so a message waits "
        f"{Conf.POLL / 2 * 1000:.0f} ms on average (up to {Conf.POLL * 1000:.0f} ms) before the worker sees its "
        "task; then the task passes from the pusher process to the worker process through a multiprocessing queue.",
        "",
        "### Extraction throughput",
        "",
        f"{throughput.sessions_posted} sessions of one 10-message batch each (over {args.backlog_users} users) were "
        f"posted with the worker stopped ({throughput.ingest_seconds:.1f} s at concurrency {args.backlog_concurrency}, "
        f"{throughput.ingest_errors} errors); then one worker was started and timed until every job was done. "
        "User turns: the user messages inside the succeeded jobs' (from_seq, to_seq].",
        "",
        "| | |",
        "|---|---|",
        f"| Jobs | {throughput.jobs} ({throughput.succeeded} succeeded, {throughput.failed} failed, "
        f"{throughput.retried} needed a retry) |",
        f"| User turns extracted | {throughput.user_turns:,} |",
        f"| Memories | {throughput.added:,} added, {throughput.updated:,} updated (superseded an older value), "
        f"{throughput.unchanged:,} unchanged (duplicates), {throughput.deleted:,} deleted |",
        f"| Worker start to first claim | {throughput.startup_seconds:.1f} s (process start, Django setup) |",
        f"| Worker start to last job finished | {throughput.wall_seconds:.1f} s: "
        f"**{throughput.turns_per_second:.0f} user turns/s**, {throughput.jobs / throughput.wall_seconds:.1f} jobs/s |",
        f"| First claim to last job finished | {throughput.working_seconds:.1f} s: "
        f"{throughput.turns_per_working_second:.0f} user turns/s, "
        f"{throughput.jobs / throughput.working_seconds:.1f} jobs/s |",
        f"| Job duration (`duration_ms`) | p50 {percentile(throughput.job_ms, 50)} ms, "
        f"p95 {percentile(throughput.job_ms, 95)} ms, max {max(throughput.job_ms, default=0)} ms |",
        f"| Time inside jobs (`duration_ms`) | {throughput.in_job_share:.0%} of the working time; the rest is each "
        "job's claim (before `duration_ms` starts) and commit (after it), and django-q2 between jobs |",
        f"| Gap between jobs (`finished_at`, set before the commit, to the next `started_at`) | p50 {ms(percentile(throughput.gap_ms, 50))} ms, "
        f"p95 {ms(percentile(throughput.gap_ms, 95))} ms |",
        f"| django-q2 tasks still queued when every job was done | {throughput.tasks_left} |",
    ]
    write_section(path, "extraction", lines)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else math.nan
