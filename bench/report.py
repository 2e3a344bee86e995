"""The markdown report of bench/search.py: setup, targets, tables and query plans."""

import math
import os
import platform
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The service's performance targets; per-user search latency is specified at 100k memories.
TARGET_N = 100_000
TARGET_P50_MS = 10.0
TARGET_P95_MS = 25.0
TARGET_INGEST_PER_SECOND = 2_000.0


def cpu_count() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def environment(args, *, dimension: int, load_at_start: tuple[float, float, float]) -> dict[str, str]:
    from django.conf import settings
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        pg_version = cursor.fetchone()[0]
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        row = cursor.fetchone()
        pgvector_version = row[0] if row else "?"
        cursor.execute(
            "SELECT name, current_setting(name) FROM pg_settings WHERE name IN "
            "('shared_buffers', 'work_mem', 'effective_cache_size', 'max_connections', 'jit') ORDER BY name"
        )
        pg_settings = ", ".join(f"{name}={value}" for name, value in cursor.fetchall())
    cpu_model = "?"
    memory = "?"
    try:
        cpu_model = next(
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        )
        meminfo = Path("/proc/meminfo").read_text().splitlines()
        kib = int(next(line.split()[1] for line in meminfo if line.startswith("MemTotal")))
        memory = f"{kib / 1024 / 1024:.1f} GiB"
    except (OSError, StopIteration, ValueError):
        pass
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout
        commit += " (uncommitted changes)" if dirty.strip() else ""
    except (OSError, subprocess.CalledProcessError):
        commit = "?"
    database = settings.DATABASES["default"]
    cpus = cpu_count()
    return {
        "Date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "Machine": f"{cpus} CPUs (nproc), {cpu_model}, {memory} RAM, {platform.system()} {platform.release()}",
        "Load average (1, 5, 15 min)": "{:.2f} {:.2f} {:.2f} at start, {:.2f} {:.2f} {:.2f} at end".format(
            *load_at_start, *os.getloadavg()
        ),
        "PostgreSQL": f"{pg_version}, pgvector {pgvector_version}; {pg_settings}",
        "Database": f"{database['NAME']} ({'embedded' if not settings.DATABASE_URL else 'DATABASE_URL'})",
        "Data": (
            f"{args.n:,} memories over {args.users:,} users, hash embedder, {dimension} dimensions, seed {args.seed}"
        ),
        "Server": (
            f"uvicorn, {args.web_workers} web worker(s), DEBUG={os.environ.get('DEBUG', 'false')}, "
            f"DB pool {'on, max ' + str(settings.DB_POOL_MAX_SIZE) + ' per worker' if settings.DB_POOL else 'off'}"
        ),
        "Client": "httpx, one keep-alive client per thread, on the same machine as the server",
        "Python": f"{platform.python_version()}",
        "Commit": commit,
        "Command": "`.venv/bin/python bench/search.py " + " ".join(sys.argv[1:]) + "`",
    }


def targets(search_results, ingest_results, args) -> list[tuple[str, str, str]]:
    note = "" if args.n == TARGET_N else f" (measured at {args.n:,}; the target is set at {TARGET_N:,})"
    rows = []
    for result in search_results:
        if result.name != "per-user hybrid":
            continue
        p50, p95 = result.percentile(50), result.percentile(95)
        clean = result.errors == 0
        rows.append(
            (
                f"Per-user hybrid search p50 <= {TARGET_P50_MS:g} ms at concurrency {result.concurrency}{note}",
                f"{p50:.1f} ms",
                _verdict(clean and p50 <= TARGET_P50_MS),
            )
        )
        rows.append(
            (
                f"Per-user hybrid search p95 <= {TARGET_P95_MS:g} ms at concurrency {result.concurrency}{note}",
                f"{p95:.1f} ms",
                _verdict(clean and p95 <= TARGET_P95_MS),
            )
        )
    for result in ingest_results:
        rows.append(
            (
                f"Bulk ingest >= {TARGET_INGEST_PER_SECOND:,.0f} memories/s (hash embedder) at concurrency "
                f"{result.phase.concurrency}",
                f"{result.per_second:,.0f} memories/s",
                _verdict(result.phase.errors == 0 and result.per_second >= TARGET_INGEST_PER_SECOND),
            )
        )
    return rows


def _verdict(met: bool) -> str:
    return "**MET**" if met else "**MISSED**"


def _ms(value: float) -> str:
    return "–" if math.isnan(value) else f"{value:.1f}"


ANALYSIS_MARKER = "<!-- analysis: kept when bench/search.py rewrites this file -->"


def write_report(
    path: Path,
    *,
    args,
    env,
    seed_result,
    explained,
    search_results,
    ingest_results,
    search_path,
    ingest_path,
    hnsw_index,
) -> None:
    verdicts = targets(search_results, ingest_results, args)
    lines = [
        "# Performance",
        "",
        f"Written by `bench/search.py` on {env['Date']}; run it again to refresh this page "
        "(how, and what it measures: `bench/README.md`). Latencies are client-side, over HTTP on loopback, "
        "and include authentication, the store lookup, embedding the query and serialising the results.",
        "",
        "## Targets",
        "",
        "| Target | Measured | Verdict |",
        "|---|---|---|",
        *[f"| {target} | {measured} | {verdict} |" for target, measured, verdict in verdicts],
        "",
        f"The targets: per-user hybrid search p50 <= {TARGET_P50_MS:g} ms and p95 <= {TARGET_P95_MS:g} ms over HTTP "
        f"with {TARGET_N:,} memories in the store; bulk ingest >= {TARGET_INGEST_PER_SECOND:,.0f} memories/s with "
        "the hash embedder. Each is checked at every concurrency measured; errors in a phase count as a miss.",
        "",
        "## Setup",
        "",
        "| | |",
        "|---|---|",
        *[f"| {key} | {value} |" for key, value in env.items()],
        "",
        "## Seeding",
        "",
    ]
    if seed_result is None:
        lines.append("The store seeded by an earlier run was reused (same N, users and seed); seeding was not timed.")
    else:
        lines += [
            f"{seed_result.rows:,} memories over {seed_result.users:,} users in {seed_result.total_seconds:.1f} s: "
            f"generate + embed + COPY {seed_result.load_seconds:.1f} s "
            f"({seed_result.rows / seed_result.load_seconds:,.0f} memories/s), HNSW and full-text index build "
            f"{seed_result.index_seconds:.1f} s, VACUUM (ANALYZE) {seed_result.analyze_seconds:.1f} s.",
        ]
    lines += [
        "",
        "## Search over HTTP",
        "",
        f"`POST {search_path}`, limit {args.limit}, a random query from "
        f"`bench/corpus.py` and (per user) a random user; {args.warmup:g} s warm-up, then {args.duration:g} s "
        f"or {args.max_requests:,} requests per phase.",
        "",
        "| Phase | Concurrency | Requests | Errors | Empty | p50 ms | p95 ms | p99 ms | Requests/s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for result in search_results:
        lines.append(
            f"| {result.name} | {result.concurrency} | {result.requests:,} | {result.errors} | {result.empty} | "
            f"{_ms(result.percentile(50))} | {_ms(result.percentile(95))} | {_ms(result.percentile(99))} | "
            f"{result.per_second:,.1f} |"
        )
    errors = [result for result in search_results if result.errors]
    if errors:
        lines += ["", "First error per failing phase:", ""]
        lines += [f"- {result.name} c={result.concurrency}: `{result.first_error[:300]}`" for result in errors]
    lines += [
        "",
        "Empty: answered 200 with no results. Expected now and then for keyword search (no word in common with that "
        "user's memories); counted as an error for the other modes.",
        "",
        "## Bulk ingest over HTTP",
        "",
        f"`POST {ingest_path}`, {args.batch_size} new memories per request "
        f"(25 per user), hash embedder; the store is emptied before and deleted after the run.",
        "",
        "| Concurrency | Batches | Memories created | Errors | p50 ms/batch | p95 ms/batch | Memories/s |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for result in ingest_results:
        phase = result.phase
        lines.append(
            f"| {phase.concurrency} | {phase.requests} | {result.memories:,} | {phase.errors} | "
            f"{_ms(phase.percentile(50))} | {_ms(phase.percentile(95))} | {result.per_second:,.0f} |"
        )
    lines += [
        "",
        "## Query plans",
        "",
        "`EXPLAIN (ANALYZE, BUFFERS OFF)` of the SQL `apps.memories.selectors.memory_search` sends, captured with "
        "a Django execute wrapper and run in the same transaction after the same `SET LOCAL`s "
        f"(`hnsw.iterative_scan`, `hnsw.ef_search`). Partial HNSW index: "
        f"`{hnsw_index}`.",
        "",
    ]
    for query in explained:
        lines += [
            f"### {query.title}: HNSW index {'used' if query.hnsw_used else 'NOT used'}",
            "",
            "```",
            *query.summary(),
            "```",
            "",
            "<details><summary>Full plan</summary>",
            "",
            "```",
            *query.plan,
            "```",
            "",
            "</details>",
            "",
        ]
    path.parent.mkdir(parents=True, exist_ok=True)
    # A hand-written analysis below this marker survives regeneration.
    analysis = ""
    if path.exists() and ANALYSIS_MARKER in path.read_text():
        analysis = path.read_text().split(ANALYSIS_MARKER, 1)[1]
    path.write_text("\n".join(lines).rstrip() + "\n\n" + ANALYSIS_MARKER + analysis.rstrip() + "\n")
