"""docs/performance.md: a summary of every target, one section per benchmark script, a hand-written analysis.

A script describes its results as a `Section` (tables, notes, query plans, setup, targets) and `publish`
puts it on a page: the text between `<!-- section:NAME -->` and `<!-- /section:NAME -->` and the summary
rows whose first cell is NAME are replaced; everything else on the page is left byte for byte.
"""

import math
import os
import platform
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ANALYSIS_MARKER = "<!-- analysis: written by hand; the bench scripts leave it as it is -->"
SUMMARY = ("<!-- summary -->", "<!-- /summary -->")
SUMMARY_HEADER = "| Benchmark | What | Target | Measured | Verdict | Date | Commit |\n|---|---|---|---:|---|---|---|"
PAGE_HEAD = f"""# Performance

Measured by the scripts in `bench/` (how, and what each measures: `bench/README.md`); each rewrites its own
rows of this summary and its own section below. The analysis at the end is written by hand.

{SUMMARY[0]}
{SUMMARY_HEADER}
{SUMMARY[1]}
"""
PHASE_COLUMNS = ["Phase", "Concurrency", "Requests", "Errors", "p50 ms", "p95 ms", "p99 ms", "Per second"]


@dataclass
class Target:
    what: str
    target: str  # "≤ 25 ms"; "" when there is none yet
    measured: str
    met: bool | None  # None: no target, the row only reports

    @property
    def verdict(self) -> str:
        return "–" if self.met is None else ("**MET**" if self.met else "**MISSED**")


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list]
    note: str = ""  # a paragraph between the title and the table


@dataclass
class Section:
    name: str  # of the markers and the summary rows
    title: str
    intro: str
    setup: dict[str, str]  # environment()
    targets: list[Target] = field(default_factory=list)  # shown in the summary
    tables: list[Table] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # paragraphs after the tables; empty ones are left out
    plans: list[tuple[str, list[str]]] = field(default_factory=list)  # (title, EXPLAIN lines), collapsed


def target(what: str, value: float, *, unit: str, at_most=None, at_least=None, digits=1, ok=True) -> Target:
    """A measured value against a bound, if any; `ok` False (errors in the phase) is a miss whatever the value."""
    measured = f"{number(value, digits)} {unit}"
    if at_most is not None:
        return Target(what, f"≤ {at_most:,g} {unit}", measured, ok and value <= at_most)
    if at_least is not None:
        return Target(what, f"≥ {at_least:,g} {unit}", measured, ok and value >= at_least)
    return Target(what, "", measured, None)


def number(value, digits: int = 1) -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:,.{digits}f}"


def phase_row(label: str, phase) -> list:
    """The PHASE_COLUMNS of a load.PhaseResult."""
    latencies = [phase.percentile(p) for p in (50, 95, 99)]
    return [label, phase.concurrency, phase.requests, phase.errors, *latencies, phase.per_second]


def first_errors(labelled_phases) -> str:
    failing = [f"{label} c={phase.concurrency}: `{phase.first_error[:300]}`" for label, phase in labelled_phases
               if phase.errors]
    return "First error per failing phase: " + "; ".join(failing) + "." if failing else ""


# --- Markdown ---------------------------------------------------------------------------------------

_NUMERIC = re.compile(r"^(\*\*)?[–\d]")
_VECTOR = re.compile(r"'\[(?:[-+.\deE]+,){15,}[-+.\deE]+\]'")


def _cell(value) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return f"{value:,}" if isinstance(value, int) else number(value)


def markdown_table(columns: list[str], rows: list[list]) -> list[str]:
    """Columns whose every cell reads as a number are right-aligned."""
    cells = [[_cell(value) for value in row] for row in rows]
    rules = ["---:" if cells and all(_NUMERIC.match(row[i]) for row in cells) else "---" for i in range(len(columns))]
    lines = [f"| {' | '.join(line)} |" for line in (columns, *cells)]
    return [lines[0], f"|{'|'.join(rules)}|", *lines[1:]]


def elide_vectors(line: str) -> str:
    """A vector literal (the query embedding in a plan) as '[…384 floats…]'."""
    return _VECTOR.sub(lambda match: f"'[…{match.group().count(',') + 1} floats…]'", line)


def render(section: Section) -> str:
    lines = [f"## {section.title}", "", section.intro, ""]
    for table in section.tables:
        lines += [f"### {table.title}", "", *([table.note, ""] if table.note else [])]
        lines += [*markdown_table(table.columns, table.rows), ""]
    lines += [note + "\n" for note in section.notes if note]
    for title, plan in section.plans:
        body = "\n".join(map(elide_vectors, plan))
        lines += [f"<details><summary>Query plan: {title}</summary>", "", "```", body, "```", "", "</details>", ""]
    lines += ["### Setup", "", *markdown_table(["", ""], list(map(list, section.setup.items())))]
    return "\n".join(lines)


def _replace(text: str, begin: str, end: str, body: str) -> str:
    """`body` between the markers, which are added before the analysis (or at the end) if missing."""
    block = f"{begin}\n{body}\n{end}"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        return head + block + rest.split(end, 1)[1]
    head, marker, tail = text.partition(ANALYSIS_MARKER)
    return head.rstrip("\n") + "\n\n" + block + "\n\n" + marker + tail


def write(path: Path, section: Section) -> None:
    """Replace `section`'s text and its summary rows on the page at `path` (created if missing)."""
    text = path.read_text() if path.exists() else PAGE_HEAD
    text = _replace(text, f"<!-- section:{section.name} -->", f"<!-- /section:{section.name} -->", render(section))
    owned = f"| {section.name} |"
    summary = text.split(SUMMARY[0], 1)[1].split(SUMMARY[1], 1)[0] if SUMMARY[0] in text else ""
    rows = summary.strip("\n").split("\n")[2:]
    at = next((index for index, row in enumerate(rows) if row.startswith(owned)), len(rows))
    date, commit = section.setup["Date"], section.setup["Commit"]
    mine = [f"{owned} {t.what} | {t.target or 'none yet'} | {t.measured} | {t.verdict} | {date} | {commit} |"
            for t in section.targets]
    rows = rows[:at] + mine + [row for row in rows[at:] if not row.startswith(owned)]
    body = "\n".join([SUMMARY_HEADER, *rows])
    text = _replace(text, *SUMMARY, body) if SUMMARY[0] in text and SUMMARY[1] in text else _add_summary(text, body)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _add_summary(text: str, body: str) -> str:
    """The summary of a page that has none goes first: right under the page's `# ` title (else at the top)."""
    block = f"{SUMMARY[0]}\n{body}\n{SUMMARY[1]}\n\n"
    title = re.search(r"^# .*\n", text, re.MULTILINE)
    if title is None:
        return block + text.lstrip("\n")
    return text[: title.end()] + "\n" + block + text[title.end() :].lstrip("\n")


def publish(section: Section, path: str | None, *, log, started: float) -> None:
    """Print the section's targets and write it to the page at `path` (None: nowhere)."""
    log("targets:" if section.targets else "no targets")
    for t in section.targets:
        log(f"  {t.verdict.strip('*'):<7} {t.what}: {t.measured}" + (f" (target {t.target})" if t.target else ""))
    if path:
        write(Path(path), section)
    where = f"section {section.name!r} written to {path}" if path else "no report written"
    log(f"{where} ({time.perf_counter() - started:.0f} s in all)")


# --- The setup table --------------------------------------------------------------------------------


def cpu_count() -> int:
    from apps.core.cores import usable_cores

    return usable_cores()


def server_description(web_workers: int, env: dict[str, str] | None = None) -> str:
    """The server as run: its processes and settings, from `env` (the environment it was started with) when given."""
    from django.conf import settings

    env = env or os.environ
    pool = f"on, max {settings.DB_POOL_MAX_SIZE} per worker" if settings.DB_POOL else "off"
    described = f"uvicorn, {web_workers} web worker(s), DEBUG={env.get('DEBUG', 'false')}, DB pool {pool}"
    if env.get("EMBEDDING_QUERY_CACHE_SIZE") == "0":
        described += ", query vectors not cached (EMBEDDING_QUERY_CACHE_SIZE=0: every search embeds its question)"
    return described


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


def _output(*command: str) -> str:
    try:
        return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def environment(*, script: str, data: str, server: str, load_at_start, worker: str = "") -> dict[str, str]:
    """The setup table: date, machine, load, PostgreSQL, database, data, processes, commit and command."""
    from django.conf import settings
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_setting('server_version'), (SELECT extversion FROM pg_extension WHERE extname = 'vector'),"
            " (SELECT string_agg(name || '=' || current_setting(name), ', ' ORDER BY name) FROM pg_settings"
            " WHERE name IN ('shared_buffers', 'work_mem', 'effective_cache_size', 'max_connections', 'jit'))"
        )
        postgresql = "{}, pgvector {}; {}".format(*cursor.fetchone())
    cpuinfo = Path("/proc/cpuinfo").read_text().splitlines() if Path("/proc/cpuinfo").exists() else []
    cpu = next((line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name")), "?")
    # The pages the benchmarks write are not the code they measure: a run after another is still "clean".
    dirty = " (uncommitted changes)" if _output("git", "status", "--porcelain", "--", ".", ":!docs/*.md") else ""
    env = {
        "Date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "Machine": f"{cpu_count()} CPUs (nproc), {cpu}, {platform.system()} {platform.release()}",
        "Load average (1, 5, 15 min)": "{:.2f} {:.2f} {:.2f} at start, {:.2f} {:.2f} {:.2f} at end".format(
            *load_at_start, *os.getloadavg()
        ),
        "PostgreSQL": postgresql,
        "Database": settings.DATABASES["default"]["NAME"] + (" (DATABASE_URL)" if settings.DATABASE_URL else ""),
        "Data": data,
        "Server": server,
        "Worker": worker,
        "Client": "httpx, one keep-alive client per thread, on the same machine as the server",
        "Python": platform.python_version(),
        "Commit": (_output("git", "rev-parse", "--short", "HEAD") or "?") + dirty,
        "Command": f"`.venv/bin/python bench/{script} {' '.join(sys.argv[1:])}`",
    }
    return {key: value for key, value in env.items() if value}
