"""Extraction quality of memoryhub: what the extractor keeps from hand-written support conversations, over real HTTP.

    .venv/bin/python bench/extraction_quality.py [--part dev|held_out|all] [--domain D] [--conversation ID]
        [--extractor rules|llm|auto] [--verbose] [--json PATH] [--corpus DIR] [--smoke]

Reads the corpus in bench/data/extraction/{dev,held_out}/*.json (format: its README.md), starts uvicorn and
one django-q2 worker against its own database (memoryhub_bench) and creates the store `bench-quality` afresh
with the chosen extractor. For each conversation, a few at a time: each session's messages are posted with
the times they were sent (`created_at`), the session is flushed (extracted, waiting for the job), then the
user's memories, every status, are listed and scored: recall of the expected facts, forbidden values kept,
junk among the memories created, superseded values retired, forgotten values gone. It prints a table per
part and domain, every miss with --verbose, and writes its section of docs/performance.md. It exits 1 only
on errors (an HTTP failure, a failed job, a flush left incomplete), never on the scores.

Fast enough for a development loop: with the rules extractor the whole corpus (the run prints how many
conversations, sessions and messages it sends) takes about 20 s on the 2-CPU dev machine, a few seconds of it
starting the server and worker, most of it the conversations (4 at a time), the rest migrating and scoring.
With llm the model's latency decides (--q-workers runs more jobs at once).
"""

import argparse
import dataclasses
import json
import math
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path
from urllib.parse import urlencode

import report
from extraction_corpus import (
    PARTS,
    Conversation,
    CorpusError,
    Score,
    StoredMemory,
    Tally,
    load_corpus,
    not_yet_sendable,
    score,
    tally,
)
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
from jobs import delete_store, other_queue_readers, purge_queue, throughput_stats
from load import percentile, timed_request

KEY_NAME = "bench/extraction_quality.py"
STORE = "bench-quality"
CORPUS = ROOT / "bench" / "data" / "extraction"
AGENT_ID = "support-bot"
RUN_ID = "quality"
DIMENSION = 384
# The targets of issue 10.
TARGET_RECALL = 85.0
TARGET_JUNK = 5.0
SMOKE = dict(part="dev", limit=2, web_workers=1, concurrency=2)


def options(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="corpus directory, with dev/ and held_out/")
    parser.add_argument("--part", choices=(*PARTS, "all"), default="all", help="part of the corpus (default all)")
    parser.add_argument("--domain", action="append", default=[], help="only this domain (repeatable)")
    parser.add_argument("--conversation", action="append", default=[], help="only this conversation id (repeatable)")
    parser.add_argument("--limit", type=int, default=0, help="only the first N conversations selected (0: all)")
    parser.add_argument("--extractor", choices=("rules", "llm", "auto"), default="rules",
                        help="the store's extractor (default rules); llm needs the server's LLM_* settings")
    parser.add_argument("--embedder", choices=("hash", "local"), default="hash",
                        help="the store's embedder (default hash; local is MiniLM, the server's default)")
    parser.add_argument("--concurrency", type=int, default=4, help="conversations run at a time (default 4)")
    parser.add_argument("--web-workers", type=int, default=2, help="uvicorn worker processes (default 2)")
    parser.add_argument("--q-workers", type=int, default=1,
                        help="django-q2 worker processes of the one qcluster (default 1; more for llm)")
    parser.add_argument("--flush-timeout", type=float, default=120.0,
                        help="longest wait for one session's extraction, seconds (default 120)")
    parser.add_argument("--verbose", "-v", action="store_true", help="print every miss of every conversation")
    parser.add_argument("--json", type=Path, help="write every conversation's result (and memories) to this file")
    parser.add_argument("--keep-store", action="store_true",
                        help="leave the store and its memories after the run, to look at (the next run deletes it)")
    args = parse_args(parser, argv, smoke=SMOKE)
    for name in ("concurrency", "web_workers", "q_workers"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.limit < 0 or args.flush_timeout <= 0:
        parser.error("need --limit >= 0 and --flush-timeout > 0")
    return args


def select(args) -> tuple[list[Conversation], list[Conversation]]:
    """(the conversations the options ask for, those set aside as sent in the future); a bad corpus file or an
    unknown name ends the run with a message."""
    parts = PARTS if args.part == "all" else (args.part,)
    try:
        conversations = load_corpus(args.corpus, parts=parts)
    except CorpusError as error:
        raise SystemExit(f"bad corpus file: {error}") from None
    if not conversations:
        raise SystemExit(f"no conversations in {args.corpus}/{{{','.join(parts)}}}/*.json")
    for name, wanted, known in (("domain", args.domain, {c.domain for c in conversations}),
                                ("conversation", args.conversation, {c.id for c in conversations})):
        unknown = sorted(set(wanted) - known)
        if unknown:
            raise SystemExit(f"no {name} {', '.join(unknown)} in the selected part(s); known: {', '.join(sorted(known))}")
    if args.domain:
        conversations = [c for c in conversations if c.domain in args.domain]
    if args.conversation:
        conversations = [c for c in conversations if c.id in args.conversation]
    # The server refuses a message time ahead of its clock; the rest of the corpus still gets scored.
    too_new = not_yet_sendable(conversations)
    conversations = [c for c in conversations if c not in too_new]
    if not conversations:
        raise SystemExit("no conversation is of the domain(s) and id(s) asked for")
    return (conversations[: args.limit] if args.limit else conversations), too_new


def scope(args, conversations: list[Conversation]) -> str:
    """The extractor and how the selection differs from the whole corpus, for the summary rows."""
    narrowed = [f"--part {args.part}" if args.part != "all" else "", *(f"--domain {d}" for d in args.domain),
                *(f"--conversation {c}" for c in args.conversation), f"--limit {args.limit}" if args.limit else ""]
    narrowed = [item for item in narrowed if item]
    selection = f", {len(conversations)} conversations: {' '.join(narrowed)}" if narrowed else ""
    return f" ({args.extractor} extractor{selection})"


# --- Driving the API --------------------------------------------------------------------------------


def session_path(conversation: Conversation, number: int, action: str) -> str:
    return f"/api/v1/stores/{STORE}/sessions/{conversation.id}-s{number}/{action}"


@dataclass
class ConversationRun:
    """One conversation's requests: their latencies, what failed, and the user's memories at the end."""

    conversation: Conversation
    post_ms: list[float] = field(default_factory=list)
    flush_ms: list[float] = field(default_factory=list)
    list_ms: list[float] = field(default_factory=list)
    failures: dict[str, list[str]] = field(default_factory=lambda: {"post": [], "flush": [], "list": []})
    memories: list[StoredMemory] | None = None  # None: the run stopped at a failure, nothing to score

    @property
    def error(self) -> str:
        return "; ".join(f"{phase}: {text}" for phase, texts in self.failures.items() for text in texts)


def post_session(client, run: ConversationRun, number: int, messages, batch_limit: int) -> bool:
    """Post one session's messages with the times they were sent, in as few requests as the server takes."""
    path = session_path(run.conversation, number, "messages")
    for offset in range(0, len(messages), batch_limit):
        body = {
            "user_id": run.conversation.user,
            "agent_id": AGENT_ID,
            "run_id": RUN_ID,
            "messages": [
                {"role": message.role, "content": message.text, "seq": offset + index,
                 "created_at": message.at.astimezone(UTC).isoformat().replace("+00:00", "Z")}
                for index, message in enumerate(messages[offset: offset + batch_limit])
            ],
        }
        latency, _, error = timed_request(client, "POST", path, body, expect_status=202)
        run.post_ms.append(latency)
        if error:
            run.failures["post"].append(f"session {number}: {error}")
            return False
    return True


def flush_session(client, run: ConversationRun, number: int, timeout: float) -> bool:
    """Flush until every message is extracted: a flush waits at most 60 s, an llm job may take longer."""
    started = time.perf_counter()
    while True:
        wait = max(1, min(60, int(timeout - (time.perf_counter() - started))))
        path = session_path(run.conversation, number, "flush") + f"?wait={wait}"
        _, response, error = timed_request(client, "POST", path, expect_status=200)
        if error:
            run.failures["flush"].append(f"session {number}: {error}")
            return False
        body = response.json()
        failed = [job for job in body["jobs"] if job["status"] == "failed"]
        if failed:
            run.failures["flush"].append(f"session {number}: job {failed[0]['id']} failed: {failed[0]['error'][:300]}")
            return False
        if body["complete"]:
            run.flush_ms.append((time.perf_counter() - started) * 1000)
            return True
        if time.perf_counter() - started >= timeout:
            run.failures["flush"].append(f"session {number}: not extracted after {timeout:g} s")
            return False


def list_memories(client, run: ConversationRun) -> bool:
    """Every memory of the user (the list leaves deleted ones out unless asked, so two listings), with the earlier
    contents of those edited since they were made."""
    memories = []
    for status in (None, "deleted"):
        query = {"user_id": run.conversation.user, "include_expired": "true", "page_size": 500}
        if status:
            query["status"] = status
        url = f"/api/v1/stores/{STORE}/memories?{urlencode(query)}"
        while url:
            latency, response, error = timed_request(client, "GET", url, expect_status=200)
            run.list_ms.append(latency)
            if error:
                run.failures["list"].append(error)
                return False
            page = response.json()
            memories += [StoredMemory.from_api(body) for body in page["results"]]
            url = page["next"]
    for index, memory in enumerate(memories):
        if memory.edited:  # what an edit cut out of it ("forget the gate code" out of a delivery note)
            latency, response, error = timed_request(
                client, "GET", f"/api/v1/stores/{STORE}/memories/{memory.id}/history", expect_status=200)
            run.list_ms.append(latency)
            if error:
                run.failures["list"].append(error)
                return False
            memories[index] = dataclasses.replace(memory, earlier=tuple(
                revision["before"]["content"] for revision in response.json()["results"]
                if revision["action"] == "update" and "content" in (revision["before"] or {})))
    run.memories = memories
    return True


def run_conversation(client, conversation: Conversation, args, batch_limit: int) -> ConversationRun:
    run = ConversationRun(conversation)
    for number, messages in conversation.sessions():
        # Sessions in order, each extracted before the next is posted: a later one may replace what it said.
        if not post_session(client, run, number, messages, batch_limit):
            return run
        if not flush_session(client, run, number, args.flush_timeout):
            return run
    list_memories(client, run)
    return run


def run_all(server_url: str, headers: dict, conversations: list[Conversation], args) -> list[ConversationRun]:
    import httpx
    from django.conf import settings

    batch_limit = settings.MEMORYHUB_MAX_MESSAGES_PER_BATCH  # the server runs with the same settings
    local, clients = threading.local(), []
    lock = threading.Lock()
    done = [0]

    def one(conversation: Conversation) -> ConversationRun:
        if not hasattr(local, "client"):  # one keep-alive client per thread
            local.client = httpx.Client(base_url=server_url, headers=headers, timeout=90)
            clients.append(local.client)
        run = run_conversation(local.client, conversation, args, batch_limit)
        with lock:
            done[0] += 1
            if done[0] % 20 == 0:
                log(f"    {done[0]}/{len(conversations)} conversations")
        return run

    try:
        with ThreadPoolExecutor(max_workers=args.concurrency) as pool:
            return list(pool.map(one, conversations))
    finally:
        for client in clients:
            client.close()


def create_store(server_url: str, headers: dict, args) -> str | None:
    """Create the run's store over the API (which checks the extractor); the refusal's text, or None."""
    import httpx

    body = {
        "name": STORE,
        "description": "bench/extraction_quality.py",
        "embedding_provider": args.embedder,
        "embedding_dimension": DIMENSION,
        # Only flush extracts: each session is read whole by one job, as its messages are posted at once.
        "extraction_config": {"enabled": True, "extractor": args.extractor, "every_n_turns": 1000,
                              "idle_seconds": 0},
    }
    response = httpx.post(f"{server_url}/api/v1/stores", json=body, headers=headers, timeout=60)
    if response.status_code == 201:
        return None
    try:
        error = response.json()["error"]
        detail = f"{error['code']}: {error['message']}"
    except (ValueError, KeyError, TypeError):
        detail = response.text[:500]
    return f"HTTP {response.status_code} {detail}"


# --- Output -----------------------------------------------------------------------------------------


def rate(ratio: float, part: int, whole: int) -> str:
    """A Tally rate and the counts it is of, "85.0% (17/20)"; "– (0)" when there was nothing to count."""
    return "– (0)" if math.isnan(ratio) else f"{100 * ratio:.1f}% ({part}/{whole})"


def tally_rows(scores: list[Score]) -> list[tuple[str, str, Tally]]:
    """(part, domain, tally): each domain, each part's total, and the total of everything."""
    rows = []
    parts = [part for part in PARTS if any(s.conversation.part == part for s in scores)]
    for part in parts:
        in_part = [s for s in scores if s.conversation.part == part]
        domains = sorted({s.conversation.domain for s in in_part})
        rows += [(part, domain, tally(s for s in in_part if s.conversation.domain == domain)) for domain in domains]
        rows.append((part, "all", tally(in_part)))
    if len(parts) > 1:
        rows.append(("all", "all", tally(scores)))
    return rows


COLUMNS = ["Part", "Domain", "Conversations", "Recall", "Forbidden hits", "Junk", "Supersede correct",
           "Good facts retired", "Forgets honoured"]


def table_cells(part: str, domain: str, t: Tally) -> list:
    return [part, domain, t.conversations, rate(t.recall, t.expect_found, t.expect), t.forbidden_hits,
            rate(t.junk_share, t.junk, t.created), rate(t.supersede_correctness, t.superseded_ok, t.superseded),
            t.wrongly_superseded, rate(t.forgets_honoured, t.forgotten_ok, t.forgotten)]


def print_table(rows) -> None:
    cells = [["part", "domain", "conv", "recall", "forbid", "junk", "supersede", "retired", "forgets"]]
    cells += [[str(value) for value in table_cells(*row)] for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(cells[0]))]
    for line in cells:
        log("  " + "  ".join(value.ljust(width) for value, width in zip(line, widths, strict=True)).rstrip())


def print_misses(scores: list[Score], runs: list[ConversationRun]) -> None:
    for run in runs:
        if run.memories is None:
            log(f"  {run.conversation.id}: not scored: {run.error}")
    for s in scores:
        if not s.misses:
            continue
        c = s.conversation
        log(f"  {c.id} ({c.part}/{c.domain}, user {c.user}): recall {s.expect_found}/{len(c.expect)}, "
            f"{s.created} memories created")
        lines = [f"missed: {item}" for item in s.missed]
        lines += [f"forbidden: {item} in {memory}" for item, memory in s.forbidden_hits]
        lines += [f"junk: {memory}" for memory in s.junk]
        lines += [f"not superseded: {item}: {why}" for item, why in s.supersede_failures]
        lines += [f"good fact retired: {item} only in {memory}" for item, memory in s.wrongly_superseded]
        lines += [f"not forgotten: {item}: {why}" for item, why in s.forget_failures]
        for line in lines:
            log(f"      {line}")


def section(args, *, env, conversations, skipped, scores, rows, runs, jobs, narrowed) -> report.Section:
    total = tally(scores)
    targets = []
    for part, domain, t in rows:
        if domain == "all" and part != "all":
            targets.append(percent_target(f"Recall of expected facts, {part}{narrowed}", t.recall, t.expect_found,
                                          t.expect, at_least=TARGET_RECALL))
    targets += [
        report.target(f"Forbidden values in active memories{narrowed}", total.forbidden_hits, unit="hits",
                      at_most=0, digits=0),
        percent_target(f"Junk among the memories created{narrowed}", total.junk_share, total.junk, total.created,
                       at_most=TARGET_JUNK),
        percent_target(f"Superseded values retired{narrowed}", total.supersede_correctness, total.superseded_ok,
                       total.superseded, at_least=100),
        report.target(f"Expected facts retired (superseded or deleted){narrowed}", total.wrongly_superseded,
                      unit="facts", at_most=0, digits=0),
        percent_target(f"Forgotten values gone{narrowed}", total.forgets_honoured, total.forgotten_ok,
                       total.forgotten, at_least=100),
    ]
    files = sorted({str(c.path.relative_to(args.corpus)) for c in conversations})
    timing_rows = [
        ["Messages posted (requests)", *latency_cells(runs, "post_ms")],
        ["Flush until extracted (per session)", *latency_cells(runs, "flush_ms")],
        ["List memories (requests)", *latency_cells(runs, "list_ms")],
        ["Extraction job `duration_ms`", len(jobs["job_ms"]), percentile(jobs["job_ms"], 50),
         percentile(jobs["job_ms"], 95)],
    ]
    return report.Section(
        name="extraction-quality",
        title="Extraction quality",
        intro=f"Written by `bench/extraction_quality.py` on {env['Date']}: the **{args.extractor}** extractor on "
        f"{len(scores)} hand-written conversations of `{display_path(args.corpus)}` ({', '.join(files)}), posted "
        "over HTTP with their times, flushed, and the user's memories (every status) scored. Matching compares "
        "letters and digits only, in the content or the date a memory resolved.",
        setup=env,
        targets=targets,
        tables=[
            report.Table("Scores", COLUMNS, [table_cells(*row) for row in rows],
                         note="Recall: expected items in an active memory. Forbidden hits: active memories holding a "
                         "forbidden value. Junk: memories created by extraction that no expected, allowed, "
                         "superseded or forgotten item explains. An item explains one memory, the one it fills most "
                         "among those a rarer item does not explain, so the user's name, held by every memory about "
                         "them, hides no mangled one (by the looser rule, any item held explains: "
                         f"{rate(total.junk_share_by_any_match, total.junk_by_any_match, total.created)}). Supersede correct: replaced values in a "
                         "superseded memory "
                         "and in no active one. Good facts retired: expected items found only in superseded or "
                         "deleted memories. Forgets honoured: values the user asked to delete "
                         "in a deleted or superseded memory and in no active one, or in no memory at all when said only in the "
                         "last session (stated and asked away in one batch); a value said earlier and never stored is "
                         "not."),
            report.Table("Timing", ["Step", "Count", "p50 ms", "p95 ms"], timing_rows,
                         note=f"{args.concurrency} conversations at a time. Extraction throughput: "
                         f"{jobs['user_turns']} user turns in {jobs['succeeded']} jobs taking "
                         f"{sum(jobs['job_ms']) / 1000:.1f} s in all: "
                         f"**{turns_per_job_second(jobs):.0f} user turns per second of job time**."),
        ],
        notes=[
            f"Not run: {', '.join(f'`{c.id}`' for c in skipped)}, with messages sent after the run (the server "
            "refuses a time more than 5 minutes ahead of its clock)." if skipped else "",
            "Every miss of every conversation: `bench/extraction_quality.py --verbose` (or `--json PATH`).",
        ],
    )


def percent_target(what: str, ratio: float, part: int, whole: int, *, at_least=None, at_most=None) -> report.Target:
    """A Tally rate against its target, in percent, with the counts it is of."""
    if math.isnan(ratio):
        bound = f"≥ {at_least:g} %" if at_least is not None else f"≤ {at_most:g} %"
        return report.Target(what, bound, "– (no items)", None)
    target = report.target(what, 100 * ratio, unit="%", at_least=at_least, at_most=at_most, digits=1)
    target.measured += f" ({part}/{whole})"
    return target


def latency_cells(runs: list[ConversationRun], name: str) -> list:
    values = [value for run in runs for value in getattr(run, name)]
    return [len(values), percentile(values, 50), percentile(values, 95)]


def turns_per_job_second(jobs: dict) -> float:
    seconds = sum(jobs["job_ms"]) / 1000
    return jobs["user_turns"] / seconds if seconds else float("nan")


def display_path(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def write_json(path: Path, args, scores: list[Score], runs: list[ConversationRun], rows) -> None:
    body = {
        "extractor": args.extractor,
        "corpus": str(args.corpus),
        "totals": [{"part": part, "domain": domain, **vars(t)} for part, domain, t in rows],
        "conversations": [s.as_json() for s in scores],
        "not_scored": [{"id": run.conversation.id, "error": run.error} for run in runs if run.memories is None],
    }
    path.write_text(json.dumps(body, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    log(f"per-conversation results written to {path}")


# --- Main -------------------------------------------------------------------------------------------


def main(argv=None) -> int:
    args = options(argv)
    conversations, skipped = select(args)  # a bad corpus file stops the run before anything starts
    load_at_start = harness_start("memoryhub extraction quality")

    from load import QCluster, Server

    from apps.memories.models import MemoryStore

    started = time.perf_counter()
    for conversation in skipped:
        last = max(message.at for message in conversation.messages)
        log(f"  skipped: conversation {conversation.id!r} ({display_path(conversation.path)}) has a message sent at "
            f"{last.isoformat()}, in the future: the server refuses times more than 5 minutes ahead")
    sessions = sum(len(c.sessions()) for c in conversations)
    log(f"{len(conversations)} conversations, {sessions} sessions, "
        f"{sum(len(c.messages) for c in conversations)} messages from {display_path(args.corpus)}")
    log("migrating ...")
    migrate()
    tenant, raw_key = bench_tenant_and_key(key_name=KEY_NAME)
    headers = {"Authorization": f"Bearer {raw_key}"}
    readers = other_queue_readers()
    if readers:
        log(f"  warning: {readers} other session(s) poll the django-q2 queue of this database: is a worker running?")
    purge_queue()
    old = MemoryStore.objects.filter(tenant=tenant, name=STORE).first()
    if old is not None:
        log(f"  deleting the store {STORE!r} of an earlier run ...")
        delete_store(old)
    store = None
    try:
        log(f"starting uvicorn with {args.web_workers} web worker(s) and a worker (Q_WORKERS={args.q_workers}) ...")
        with (Server(root=ROOT, web_workers=args.web_workers, env=production_env(), log=log) as server,
              QCluster(root=ROOT, env=production_env(Q_WORKERS=str(args.q_workers)), log=log)):
            refused = create_store(server.url, headers, args)
            if refused:
                log(f"the server refused the store with extractor {args.extractor!r}: {refused}")
                return 1
            store = MemoryStore.objects.get(tenant=tenant, name=STORE)
            log(f"ready in {time.perf_counter() - started:.1f} s; {args.concurrency} conversations at a time ...")
            ran_at = time.perf_counter()
            runs = run_all(server.url, headers, conversations, args)
            log(f"  {len(runs)} conversations in {time.perf_counter() - ran_at:.1f} s")
        jobs = throughput_stats(store)
        env = report.environment(
            script="extraction_quality.py",
            data=f"{len(conversations)} conversations ({sessions} sessions) of `{display_path(args.corpus)}`; "
            f"{args.extractor} extractor, {args.embedder} embedder ({DIMENSION} dimensions)",
            server=report.server_description(args.web_workers),
            worker=report.worker_description().replace("Q_WORKERS=1", f"Q_WORKERS={args.q_workers}"),
            load_at_start=load_at_start,
        )
    finally:
        purge_queue()
        if store is not None and not args.keep_store:
            delete_store(store)

    scores = [score(run.conversation, run.memories) for run in runs if run.memories is not None]
    rows = tally_rows(scores)
    failed = {phase: sum(len(run.failures[phase]) for run in runs) for phase in ("post", "flush", "list")}
    first = {phase: next((text for run in runs for text in run.failures[phase]), "") for phase in failed}
    for phase, label, name in (("post", "post messages", "post_ms"), ("flush", "flush until extracted", "flush_ms"),
                               ("list", "list memories", "list_ms")):
        count, p50, p95 = latency_cells(runs, name)
        result_line(label, failed=failed[phase], p50=p50, p95=p95, details=f"{count} done", first_error=first[phase])
    result_line("extraction job duration", failed=jobs["failed"], p50=percentile(jobs["job_ms"], 50),
                p95=percentile(jobs["job_ms"], 95), digits=0,
                details=f"{jobs['user_turns']} user turns in {jobs['succeeded']} jobs: "
                f"{turns_per_job_second(jobs):.0f} user turns per second of job time")
    log(f"scores of the {args.extractor} extractor ({len(scores)} of {len(runs)} conversations scored):")
    print_table(rows)
    if args.verbose:
        log("misses:")
        print_misses(scores, runs)
    elif any(s.misses for s in scores) or len(scores) < len(runs):
        log("  (--verbose lists every miss)")
    if args.json:
        write_json(args.json, args, scores, runs, rows)
    narrowed = scope(args, conversations)
    results = section(args, env=env, conversations=conversations, skipped=skipped, scores=scores, rows=rows,
                      runs=runs, jobs=jobs, narrowed=narrowed)
    report.publish(results, args.report, log=log, started=started)
    return exit_status()


if __name__ == "__main__":
    run_main(main, on_interrupt="the server and worker were stopped")
