"""docs/performance.md: one page, one section per benchmark script, and a hand-written analysis.

Each script owns the text between its markers, `<!-- section:NAME -->` and `<!-- /section:NAME -->`,
and `write_section` replaces only that; everything else on the page (the other sections, the analysis
after ANALYSIS_MARKER) is left byte for byte. Also here: the setup table and verdicts every section
uses, and the section of bench/search.py (setup, targets, tables and query plans).
"""

import math
import os
import platform
import re
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


def server_description(web_workers: int) -> str:
    from django.conf import settings

    pool = f"on, max {settings.DB_POOL_MAX_SIZE} per worker" if settings.DB_POOL else "off"
    return f"uvicorn, {web_workers} web worker(s), DEBUG={os.environ.get('DEBUG', 'false')}, DB pool {pool}"


def environment(*, script: str, data: str, server: str, load_at_start: tuple[float, float, float]) -> dict[str, str]:
    """The setup table: machine, load, PostgreSQL, database, data, server, client, commit and command."""
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
        "Data": data,
        "Server": server,
        "Client": "httpx, one keep-alive client per thread, on the same machine as the server",
        "Python": f"{platform.python_version()}",
        "Commit": commit,
        "Command": f"`.venv/bin/python bench/{script} " + " ".join(sys.argv[1:]) + "`",
    }


def search_environment(args, *, dimension: int, load_at_start: tuple[float, float, float]) -> dict[str, str]:
    return environment(
        script="search.py",
        data=f"{args.n:,} memories over {args.users:,} users, hash embedder, {dimension} dimensions, seed {args.seed}",
        server=server_description(args.web_workers),
        load_at_start=load_at_start,
    )


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
                verdict(clean and p50 <= TARGET_P50_MS),
            )
        )
        rows.append(
            (
                f"Per-user hybrid search p95 <= {TARGET_P95_MS:g} ms at concurrency {result.concurrency}{note}",
                f"{p95:.1f} ms",
                verdict(clean and p95 <= TARGET_P95_MS),
            )
        )
    for result in ingest_results:
        rows.append(
            (
                f"Bulk ingest >= {TARGET_INGEST_PER_SECOND:,.0f} memories/s (hash embedder) at concurrency "
                f"{result.phase.concurrency}",
                f"{result.per_second:,.0f} memories/s",
                verdict(result.phase.errors == 0 and result.per_second >= TARGET_INGEST_PER_SECOND),
            )
        )
    return rows


def verdict(met: bool) -> str:
    return "**MET**" if met else "**MISSED**"


def ms(value: float) -> str:
    return "–" if math.isnan(value) else f"{value:.1f}"


def setup_table(env: dict[str, str]) -> list[str]:
    return ["| | |", "|---|---|", *[f"| {key} | {value} |" for key, value in env.items()]]


def targets_table(verdicts: list[tuple[str, str, str]]) -> list[str]:
    return [
        "| Target | Measured | Verdict |",
        "|---|---|---|",
        *[f"| {target} | {measured} | {verdict} |" for target, measured, verdict in verdicts],
    ]


# --- The page and its sections ----------------------------------------------------------------------

# The marker predates the sections; its wording stays so that older copies of the page keep their analysis.
ANALYSIS_MARKER = "<!-- analysis: kept when bench/search.py rewrites this file -->"
PAGE_HEAD = [
    "# Performance",
    "",
    "Measured by the scripts in `bench/` (how, and what each measures: `bench/README.md`). Each script rewrites "
    "only its own section of this page, between its `<!-- section:... -->` markers; the analysis at the end is "
    "written by hand and kept.",
]
SECTION_ORDER = ("search", "extraction", "working-state")


def _markers(name: str) -> tuple[str, str]:
    return f"<!-- section:{name} -->", f"<!-- /section:{name} -->"


def write_section(path: Path, name: str, lines: list[str]) -> None:
    """Put `lines` between the markers of section `name` in the page at `path`, changing nothing else."""
    begin, end = _markers(name)
    body = begin + "\n" + "\n".join(lines).strip("\n") + "\n" + end
    text = path.read_text() if path.exists() else ""
    text = _with_legacy_search_section(text)
    if begin in text and end in text.split(begin, 1)[1]:
        before, rest = text.split(begin, 1)
        after = rest.split(end, 1)[1]
        text = before + body + after
    elif not text.strip():
        text = "\n".join(PAGE_HEAD) + "\n\n" + body + "\n\n" + ANALYSIS_MARKER + "\n"
    else:
        text = _insert_section(text, name, body)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _insert_section(text: str, name: str, body: str) -> str:
    """A new section goes before the first section that SECTION_ORDER puts after it, else before the analysis."""
    rank = SECTION_ORDER.index(name) if name in SECTION_ORDER else len(SECTION_ORDER)
    for later in SECTION_ORDER[rank + 1 :]:
        begin, _ = _markers(later)
        if begin in text:
            before, after = text.split(begin, 1)
            return before + body + "\n\n" + begin + after
    if ANALYSIS_MARKER in text:
        before, after = text.split(ANALYSIS_MARKER, 1)
        return before.rstrip("\n") + "\n\n" + body + "\n\n" + ANALYSIS_MARKER + after
    return text.rstrip("\n") + "\n\n" + body + "\n"


_HEADING = re.compile(r"^(#{2,5}) ")


def _with_legacy_search_section(text: str) -> str:
    """A page from before the sections (all of it by bench/search.py), with that report as the search section.

    Its headings move one level down under a "Search and bulk ingest" heading, as search.py now writes them.
    """
    if "<!-- section:" in text or not text.startswith("# Performance\n") or "bench/search.py" not in text:
        return text
    report, marker, analysis = text.partition(ANALYSIS_MARKER)
    lines = report.rstrip("\n").split("\n")[1:]  # without "# Performance"
    in_code = False
    demoted = []
    for line in lines:
        if line.startswith("```"):
            in_code = not in_code
        demoted.append(_HEADING.sub(r"#\1 ", line) if not in_code else line)
    begin, end = _markers("search")
    section = [begin, SEARCH_HEADING, *demoted, end]
    return "\n".join(PAGE_HEAD) + "\n\n" + "\n".join(section) + "\n\n" + marker + analysis


# --- The section of bench/search.py -----------------------------------------------------------------

SEARCH_HEADING = "## Search and bulk ingest"


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
    """Write bench/search.py's section of the page at `path`."""
    verdicts = targets(search_results, ingest_results, args)
    lines = [
        SEARCH_HEADING,
        "",
        f"Written by `bench/search.py` on {env['Date']}; run it again to refresh this section. "
        "Latencies are client-side, over HTTP on loopback, "
        "and include authentication, the store lookup, embedding the query and serialising the results.",
        "",
        "### Targets",
        "",
        *targets_table(verdicts),
        "",
        f"The targets: per-user hybrid search p50 <= {TARGET_P50_MS:g} ms and p95 <= {TARGET_P95_MS:g} ms over HTTP "
        f"with {TARGET_N:,} memories in the store; bulk ingest >= {TARGET_INGEST_PER_SECOND:,.0f} memories/s with "
        "the hash embedder. Each is checked at every concurrency measured; errors in a phase count as a miss.",
        "",
        "### Setup",
        "",
        *setup_table(env),
        "",
        "### Seeding",
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
        "### Search over HTTP",
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
            f"{ms(result.percentile(50))} | {ms(result.percentile(95))} | {ms(result.percentile(99))} | "
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
        "### Bulk ingest over HTTP",
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
            f"{ms(phase.percentile(50))} | {ms(phase.percentile(95))} | {result.per_second:,.0f} |"
        )
    widened = [query.title for query in explained if query.ef_search_raised]
    lines += [
        "",
        "### Query plans",
        "",
        "`EXPLAIN (ANALYZE, BUFFERS OFF)` of the SQL `apps.memories.selectors.memory_search` sends, captured with "
        "a Django execute wrapper and run on the same connection just before it, so with the same settings: "
        "`hnsw.iterative_scan` is set on every connection (`DATABASES` `OPTIONS`), and `memory_search` raises "
        "`hnsw.ef_search` (with `set_config`, in a transaction) only for a search that asks for more candidates "
        "than pgvector's default `ef_search`: "
        + (f"below, {'; '.join(widened)} (EXPLAINed inside that transaction)" if widened else "none below does")
        + f". Partial HNSW index: `{hnsw_index}`.",
        "",
    ]
    for query in explained:
        lines += [
            f"#### {query.title}: HNSW index {'used' if query.hnsw_used else 'NOT used'}",
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
    write_section(path, "search", lines)
