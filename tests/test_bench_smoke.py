"""Every benchmark script runs end to end at its `--smoke` size, so none can rot.

Times are not checked (a benchmark never fails on them). Checked: the script exits 0, which it does only
if no phase had an error, a timeout, a failed job or a non-2xx answer (bench/harness.py `exit_status`);
it prints one result line per phase, each with no failure and a measured p50/p95; and it writes its section
and summary rows to the page it was given, leaving docs/performance.md alone.

The scripts drop and rebuild indexes, VACUUM and delete stores, so each runs in a database of its own on
the test server (`<test database>_bench`, created empty, migrated by the script, dropped afterwards), never
in the test database the other tests use. salience_cost.py runs in-process with no database and writes no
report: it is checked for its result lines and its exit status only.
"""

import importlib.util
import math
import os
import re
import signal
import subprocess
import sys

import psutil
import psycopg
import pytest
from django.conf import settings
from psycopg import sql

from tests.processes import ROOT, database_env, still_running

pytestmark = pytest.mark.slow

_spec = importlib.util.spec_from_file_location("bench_harness", ROOT / "bench" / "harness.py")
harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(harness)

SMOKE_SECONDS = 120  # a run takes 5-15 s; a broken extractor fails in well under a minute (short lag timeout)
STOP_SECONDS = 30


@pytest.fixture
def bench_database():
    """An empty database on the test server, named after the test database, for one benchmark run; dropped after.

    Through a connection of its own to the server's `postgres` database (as Django creates test databases):
    CREATE and DROP DATABASE cannot run in a transaction, and this test needs no test database.
    """
    database = settings.DATABASES["default"]
    name = f"{database['TEST']['NAME']}_bench"
    assert name != harness.BENCH_DATABASE, name  # dropped afterwards: never the benchmarks' own database
    options = {key: value for key, value in database["OPTIONS"].items() if key not in ("pool", "options")}
    params = dict(host=database["HOST"], port=database["PORT"], user=database["USER"], password=database["PASSWORD"],
                  dbname="postgres", autocommit=True, **options)
    drop = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))  # and its sessions
    with psycopg.connect(**params) as server:
        server.execute(drop)  # left by an interrupted run
        server.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    yield name
    with psycopg.connect(**params) as server:
        server.execute(drop)


def _stop(process: subprocess.Popen) -> str:
    """End a script that overran and everything it started; return its output."""
    try:
        parent = psutil.Process(process.pid)
        members = [parent, *parent.children(recursive=True)]  # before any exits: orphans are ended too
    except psutil.NoSuchProcess:
        members = []
    # SIGTERM to the script first: it stops its server and worker subprocesses on the way out.
    process.send_signal(signal.SIGTERM)
    try:
        output, _ = process.communicate(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:
        output = ""
    for signum in (signal.SIGTERM, signal.SIGKILL):
        alive = [member for member in members if still_running(member)]
        for member in alive:
            try:
                member.send_signal(signum)
            except psutil.NoSuchProcess:
                pass
        psutil.wait_procs(alive, timeout=10)
    if not output:
        output, _ = process.communicate()
    assert not [member for member in members if still_running(member)], members
    return output


# A corpus of its own for extraction_quality.py (two conversations of a dev part), so the smoke neither waits
# for nor depends on what bench/data/extraction holds; what the extractor makes of it is not checked.
QUALITY_CORPUS = "tests/fixtures/extraction_quality"
# And a LoCoMo-format file of its own for retrieval.py (and search.py's realistic phase): two short conversations, with the malformed evidence ids the
# original has (split, normalised, one naming no turn), a question without evidence and an adversarial one.
RETRIEVAL_DATA = "tests/fixtures/retrieval/locomo-mini.json"


@pytest.mark.parametrize(
    ("script", "section", "phases", "options", "printed"),
    [
        # 4 search modes at concurrency 1, then bulk ingest; the realistic phase (hash embedder): bulk and single
        # adds, hybrid, vector and keyword search at concurrency 1 and hybrid at 2
        ("search.py", "search", 11, ["--realistic-data", RETRIEVAL_DATA],
         [r"^realistic phase: `locomo-mini.json`: 2 conversations as 2 users of \d+-\d+ memories",
          *(rf"^  realistic hash {phase} c={c} +failed=0 " for phase, c in (
              ("bulk add", 1), ("single add", 1), ("hybrid", 1), ("vector", 1), ("keyword", 1), ("hybrid", 2)))]),
        # ingest with extraction off, on with the worker stopped, on with it running; lag idle and loaded;
        # throughput; throughput on the Redis broker with one worker
        ("extraction.py", "extraction", 7, ["--workers", "1"], [r"^  redis, 1 worker\(s\), job duration +failed=0 "]),
        # at concurrency 2: 3 working-memory PUTs and a GET, scratchpad, 3 checkpoint steps, pause, resume and
        # the cycle, context, terminate; the probe before and during terminate
        ("working_state.py", "working-state", 15, [], []),
        # post messages, flush, list memories, job durations; then the scores of the part's one domain and total
        ("extraction_quality.py", "extraction-quality", 4, ["--corpus", QUALITY_CORPUS],
         [r"^  dev +retail +2 +[\d.]+% \(\d+/\d+\)", r"^  dev +all +2 +[\d.]+% \(\d+/\d+\)"]),
        # memories added through the API, then messages extracted by the worker: each heard on a websocket
        ("live_events.py", "live-events", 2, [],
         [r"^  API add +failed=0 ", r"^  worker extraction +failed=0 "]),
        # a Strands agent's turns with no memory, then with memoryhub healthy, refused, erroring, hanging, hanging
        # from mid-run and losing answers
        ("agent_outage.py", "agent-outage", 7, [],
         [r"^  hanging +failed=0 ", r"^  MET +Worst turn's extra cost, memoryhub hanging"]),
        # a reviewer's GETs of the queue, the customer page with and without a search, a transcript, the overview
        ("review_pages.py", "review-pages", 5, [], []),
        # searches with metrics and JSON logs off, then on (checked to have counted and logged them); the
        # instrumentation alone, in-process
        ("observability.py", "observability", 3, [],
         [r"^  search, observability on c=1 +failed=0 ", r"^  instrumentation alone, per request +failed=0 .* µs"]),
        # ingest into the hash store, then hybrid, vector and keyword search; the scores of each mode
        ("retrieval.py", "retrieval", 4, ["--data", RETRIEVAL_DATA, "--conversations", "0"],
         [r"^`tests/fixtures/retrieval/locomo-mini.json`: 2 conversations, 4 sessions, 18 turns \(memories\); 8 questions",
          r"^Evidence: 3 malformed id strings split or normalised .*; 1 id naming no turn of its conversation dropped",
          *(rf"^  hash +{mode} +(0|1)\.\d{{3}} " for mode in ("hybrid", "vector", "keyword"))]),
    ],
)
def test_benchmark_runs_at_smoke_size_and_writes_its_section(script, section, phases, options, printed,
                                                             bench_database, tmp_path):
    page = tmp_path / "performance.md"
    docs_page = (ROOT / "docs" / "performance.md").read_bytes()
    env = {**os.environ, **database_env(bench_database)}
    returncode, output = _run_smoke(script, ["--report", str(page), *options], env)

    assert f": database {bench_database}, " in output, output[:1000]  # the script's header line
    assert returncode == 0, output[-4000:]
    _assert_phases_passed(output, phases)
    for line in printed:
        assert re.search(line, output, re.MULTILINE), (line, output[-4000:])
    text = page.read_text()
    assert f"<!-- section:{section} -->" in text and f"<!-- /section:{section} -->" in text
    assert text.index("<!-- /summary -->") < text.index(f"<!-- section:{section} -->")
    assert re.search(rf"^\| {section} \| .+ \| .+ (ms|%)", text, re.MULTILINE), text[:3000]
    assert (ROOT / "docs" / "performance.md").read_bytes() == docs_page


def test_portability_benchmark_exports_and_imports_a_store_at_smoke_size(bench_database, tmp_path):
    # export_store and import_store as subprocesses, their resident set sampled; the copy counted.
    page = tmp_path / "performance.md"
    env = {**os.environ, **database_env(bench_database)}
    returncode, output = _run_smoke("portability.py", ["--report", str(page)], env)

    assert f": database {bench_database}, " in output, output[:1000]
    assert returncode == 0, output[-4000:]
    for command in (r"export_store --with-embeddings", r"import_store \(vectors carried\)"):
        assert re.search(rf"^  {command} +[\d.]+ s +[\d,]+ memories/s  RSS at 25/50/75% \d+/\d+/\d+ MB", output,
                         re.MULTILINE), (command, output[-4000:])
    assert "copy holds 2,000 of 2,000 memories" in output
    text = page.read_text()
    assert "<!-- section:portability -->" in text and re.search(r"^\| portability \| .+ \| \d+ MB", text, re.MULTILINE)


def test_in_process_benchmark_runs_at_smoke_size_without_a_database(tmp_path):
    # salience_cost.py: synthetic batches and the corpus's dev sessions, each with salience off, with the model and
    # with the lexical fallback. Were the settings to start the embedded PostgreSQL, it would make this directory.
    pgdata = tmp_path / "pgdata"
    env = {**os.environ, "EMBEDDED_PG_DIR": str(pgdata)}
    returncode, output = _run_smoke("salience_cost.py", ["--corpus", QUALITY_CORPUS], env)

    assert ": no database, " in output, output[:1000]
    assert returncode == 0, output[-4000:]
    _assert_phases_passed(output, 6)
    # one job per session: the fixture's two conversations have two sessions each
    assert re.search(r"^dev corpus: 4 jobs, \d+ user turns", output, re.MULTILINE), output[-4000:]
    assert not pgdata.exists()


def _run_smoke(script: str, options: list[str], env: dict[str, str]) -> tuple[int, str]:
    """(exit status, output) of `bench/<script> --smoke <options>`; a run over SMOKE_SECONDS fails the test."""
    process = subprocess.Popen(
        [sys.executable, f"bench/{script}", "--smoke", *options], cwd=ROOT, env={**env, "PYTHONUNBUFFERED": "1"},
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        output, _ = process.communicate(timeout=SMOKE_SECONDS)
    except subprocess.TimeoutExpired:
        output = None
    if output is None:
        pytest.fail(f"bench/{script} --smoke took over {SMOKE_SECONDS} s:\n{_stop(process)[-4000:]}")
    return process.returncode, output


def _assert_phases_passed(output: str, phases: int) -> None:
    results = [match.groupdict() for match in harness.RESULT_LINE.finditer(output)]
    assert len(results) == phases, output[-4000:]
    for result in results:
        assert result["failed"] == "0", result
        assert all(math.isfinite(float(result[p])) for p in ("p50", "p95")), result
    assert f"{phases} phases, none failed" in output
