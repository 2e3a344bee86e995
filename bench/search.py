"""Search and bulk-ingest benchmark of memoryhub over real HTTP; writes its section of docs/performance.md.

    .venv/bin/python bench/search.py [--n 100000] [--users 1000] [--duration 15] [--web-workers 2]
        [--phases search,ingest,realistic] [--realistic-embedders local,hash] [--smoke]

Seeds a hash-embedded store in its own database (memoryhub_bench), starts uvicorn on a free port,
drives POST .../search and POST .../memories/bulk with httpx, EXPLAINs the search SQL, then runs the
realistic phase (LoCoMo conversations as users, per embedder: bench/realistic.py) and writes its
section of the report (bench/report.py). See bench/README.md.
"""

import argparse
import json
import math
import random
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import locomo
import realistic
import report
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
    run_main,
)
from harness import start as harness_start

KEY_NAME = "bench/search.py"
SEARCH_STORE = "bench-search"
INGEST_STORE = "bench-ingest"
DIMENSION = 384
CORPUS_VERSION = 1  # bump when corpus.py changes, so an old seeded store is not reused
SEARCH_PATH = f"/api/v1/stores/{SEARCH_STORE}/search"
INGEST_PATH = f"/api/v1/stores/{INGEST_STORE}/memories/bulk"
# The service's targets; per-user search latency is specified at 100k memories.
TARGET_N = 100_000
TARGET_P50_MS = 10.0
TARGET_P95_MS = 25.0
TARGET_INGEST_PER_SECOND = 2_000.0
PHASES = ("search", "ingest", "realistic")
LOCOMO_DATA = (ROOT.parent / "shared" / "data" / "locomo-dev.json").resolve()
SMOKE = dict(n=200, users=10, duration=0.3, warmup=0.1, concurrency="1", web_workers=1, ingest_batches=2,
             batch_size=20, ingest_concurrency="1", realistic_embedders="hash", realistic_single_adds=6,
             realistic_batch_size=20, realistic_concurrency="1,2")


def options(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="memories in the search store (default 100000)")
    parser.add_argument("--users", type=int, default=1_000, help="users they belong to (default 1000)")
    parser.add_argument("--duration", type=float, default=15.0, help="measured seconds per search phase")
    parser.add_argument("--warmup", type=float, default=2.0, help="unmeasured seconds before each search phase")
    parser.add_argument("--max-requests", type=int, default=50_000, help="request cap per search phase")
    parser.add_argument("--concurrency", default="1,8", help="search concurrencies (default 1,8)")
    parser.add_argument("--limit", type=int, default=10, help="results per search (default 10)")
    parser.add_argument("--web-workers", type=int, default=2, help="uvicorn worker processes (default 2)")
    parser.add_argument("--ingest-batches", type=int, default=20, help="bulk requests per ingest phase")
    parser.add_argument("--batch-size", type=int, default=500, help="memories per bulk request (default 500)")
    parser.add_argument("--ingest-concurrency", default="1,2", help="ingest concurrencies (default 1,2)")
    parser.add_argument("--seed", type=int, default=1234, help="random seed of the corpus and of the question order")
    parser.add_argument("--reseed", action="store_true", help="reseed even if the store already holds N memories")
    parser.add_argument(
        "--seed-only", action="store_true", help="seed (or check) the store and print query plans; no load test"
    )
    parser.add_argument("--phases", default=",".join(PHASES),
                        help="which to run, comma-separated: search (the seeded store: query plans and searches), "
                        "ingest (bulk ingest, synthetic), realistic (LoCoMo users); default all. A run of some "
                        "writes no report unless --report is given")
    parser.add_argument("--realistic-data", type=Path, default=LOCOMO_DATA,
                        help="the LoCoMo file of the realistic phase (default ../shared/data/locomo-dev.json)")
    parser.add_argument("--realistic-embedders", default=",".join(realistic.EMBEDDERS),
                        help="a store per embedder in the realistic phase (default local,hash)")
    parser.add_argument("--realistic-single-adds", type=int, default=300,
                        help="turns added one POST each, the last of each conversation (default 300)")
    parser.add_argument("--realistic-batch-size", type=int, default=100,
                        help="memories per bulk request in the realistic phase (default 100)")
    parser.add_argument("--realistic-concurrency", default="1,4",
                        help="hybrid search at each; vector and keyword at the lowest (default 1,4)")
    args = parse_args(parser, argv, smoke=SMOKE)
    args.concurrency = int_list(parser, "--concurrency", args.concurrency)
    args.ingest_concurrency = int_list(parser, "--ingest-concurrency", args.ingest_concurrency)
    args.realistic_concurrency = int_list(parser, "--realistic-concurrency", args.realistic_concurrency)
    args.phases = _choices(parser, "--phases", args.phases, PHASES)
    args.realistic_embedders = _choices(parser, "--realistic-embedders", args.realistic_embedders,
                                        realistic.EMBEDDERS)
    if args.n < 1 or args.users < 1 or args.users > args.n:
        parser.error("need 1 <= --users <= --n")
    if args.realistic_single_adds < 0 or not 1 <= args.realistic_batch_size <= 500:
        parser.error("need --realistic-single-adds >= 0 and --realistic-batch-size 1-500")
    if args.seed_only and "search" not in args.phases:
        parser.error("--seed-only seeds the store of the search phase: keep search in --phases")
    given = sys.argv[1:] if argv is None else argv
    if len(args.phases) < len(PHASES) and not any(arg.split("=")[0] == "--report" for arg in given):
        args.report = None  # a page with only some of the section's tables would lose the others
    return args


def _choices(parser, name: str, text: str, known: tuple[str, ...]) -> list[str]:
    values = list(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    if not values or any(value not in known for value in values):
        parser.error(f"{name} takes some of {','.join(known)}, comma-separated")
    return [value for value in known if value in values]  # in the order they run


# --- Setup ------------------------------------------------------------------------------------------


def prepare(args) -> tuple:
    import seeding
    from corpus import Corpus

    from apps.memories import services as memory_services
    from apps.memories.models import Memory, MemoryStore

    log("migrating ...")
    migrate()
    tenant, raw_key = bench_tenant_and_key(key_name=KEY_NAME)

    corpus = Corpus(args.seed)
    if "search" not in args.phases:
        return tenant, raw_key, corpus, None, None
    signature = json.dumps(
        {"bench": "search", "n": args.n, "users": args.users, "seed": args.seed, "corpus": CORPUS_VERSION},
        sort_keys=True,
    )
    store = MemoryStore.objects.filter(tenant=tenant, name=SEARCH_STORE).first()
    reuse = (
        store is not None
        and not args.reseed
        and store.description == signature
        and Memory.objects.filter(store=store).count() == args.n
    )
    seed_result = None
    if reuse:
        log(f"reusing store {SEARCH_STORE!r}: it already holds {args.n:,} memories over {args.users:,} users")
        heavy = [seeding.hnsw_index_name(DIMENSION), seeding.FULL_TEXT_INDEX]
        seeding.ensure_indexes(heavy, expected_rows=Memory.objects.count(), log=log)
    else:
        if store is not None:
            log(f"deleting the previous {SEARCH_STORE!r} store ...")
            seeding.delete_store(store)
        store = memory_services.store_create(
            tenant=tenant,
            name=SEARCH_STORE,
            description=signature,
            embedding_provider="hash",
            embedding_dimension=DIMENSION,
        )
        log(f"seeding {args.n:,} memories over {args.users:,} users ...")
        seed_result = seeding.seed_store(store, corpus=corpus, n=args.n, users=args.users, log=log)
        log(
            f"seeded in {seed_result.total_seconds:.1f} s: load {seed_result.load_seconds:.1f} s "
            f"({seed_result.rows / seed_result.load_seconds:,.0f} memories/s), index build "
            f"{seed_result.index_seconds:.1f} s, VACUUM ANALYZE {seed_result.analyze_seconds:.1f} s"
        )
    return tenant, raw_key, corpus, store, seed_result


def fresh_ingest_store(tenant):
    import seeding

    from apps.memories import services as memory_services
    from apps.memories.models import MemoryStore

    stale = MemoryStore.objects.filter(tenant=tenant, name=INGEST_STORE).first()
    if stale is not None:  # left over by an interrupted run
        seeding.delete_store(stale)
    return memory_services.store_create(
        tenant=tenant, name=INGEST_STORE, embedding_provider="hash", embedding_dimension=DIMENSION
    )


# --- Query plans ------------------------------------------------------------------------------------


@dataclass
class ExplainedQuery:
    title: str
    plan: list[str]
    hnsw_used: bool
    ef_search_raised: bool = False  # memory_search widened hnsw.ef_search (set_config) for this search

    @property
    def vector_path(self) -> str:
        """How the nearest neighbours were found: memory_search ranks a small user or session scope exactly."""
        if self.hnsw_used:
            return "nearest neighbours through the HNSW index"
        if any("CTE vector_scope" in line for line in self.plan):
            return "nearest neighbours exact (every memory in scope compared)"
        return "HNSW index NOT used"

    def summary(self) -> list[str]:
        """The scans (which index, how many rows, how long) under the CTE or main query they serve."""
        # PostgreSQL prints the CTEs right under the top node, then the top node's own children.
        lines = []
        cte_indent = None
        main_query_labelled = False
        for line in self.plan:
            indent = len(line) - len(line.lstrip())
            text = _COST.sub("", line.strip().removeprefix("->").strip())
            if _CTE.match(text):
                cte_indent = indent
                lines.append(text)
                continue
            if cte_indent is not None and indent <= cte_indent:
                cte_indent = None  # back in the main query
            if text.startswith(("Planning Time", "Execution Time", "JIT:")):
                lines.append(text)
            elif _SCAN.search(text):
                if cte_indent is None and not main_query_labelled and lines:
                    lines.append("main query")
                    main_query_labelled = True
                lines.append("  " + text)
        return lines


_COST = re.compile(r"\s*\(cost=[^)]*\)")
_SCAN = re.compile(r"\bScan\b")
_CTE = re.compile(r"^CTE \w+$")


def explain_searches(store, corpus, args) -> list[ExplainedQuery]:
    """EXPLAIN ANALYZE the exact SQL memory_search runs, on its connection just before it (so with the
    connection's settings, and inside memory_search's transaction when it widens hnsw.ef_search)."""
    import seeding
    from corpus import QUERIES
    from django.db import connection

    from apps.memories.search import SearchQuery, memory_search

    counts = corpus.user_counts(args.n, args.users)
    median_user = sorted(range(args.users), key=lambda index: counts[index])[args.users // 2]
    user_id = f"user-{median_user:06d}"
    hnsw = seeding.hnsw_index_name(DIMENSION)
    cases = [
        ("Store-wide vector search", SearchQuery(query=QUERIES[0], mode="vector", limit=args.limit)),
        ("Store-wide hybrid search", SearchQuery(query=QUERIES[1], mode="hybrid", limit=args.limit)),
        (
            f"Per-user vector search ({user_id}, {counts[median_user]} memories)",
            SearchQuery(query=QUERIES[1], mode="vector", limit=args.limit, user_id=user_id),
        ),
        (
            f"Per-user hybrid search ({user_id}, {counts[median_user]} memories)",
            SearchQuery(query=QUERIES[1], mode="hybrid", limit=args.limit, user_id=user_id),
        ),
    ]
    explained = []
    for title, search in cases:
        plans: list[list[str]] = []
        settings_sql: list[str] = []

        def explain_search_sql(execute, sql, params, many, context, plans=plans, settings_sql=settings_sql):
            if "hnsw.ef_search" in sql:
                settings_sql.append(sql)
            if "vector_hits AS MATERIALIZED" in sql or "keyword_hits AS MATERIALIZED" in sql:
                # The raw psycopg cursor: same transaction and settings, and no recursion into this hook.
                with context["connection"].connection.cursor() as cursor:
                    cursor.execute("EXPLAIN (ANALYZE, BUFFERS OFF) " + sql, params)
                    plans.append([row[0] for row in cursor.fetchall()])
            return execute(sql, params, many, context)

        for _ in range(3):  # warm the caches the way a serving process would be
            memory_search(store=store, search=search)
        with connection.execute_wrapper(explain_search_sql):
            memory_search(store=store, search=search)
        plan = plans[-1] if plans else ["(the search SQL was not captured)"]
        explained.append(
            ExplainedQuery(
                title=title,
                plan=plan,
                hnsw_used=any(hnsw in line and "never executed" not in line for line in plan),
                ef_search_raised=bool(settings_sql),
            )
        )
    return explained


# --- HTTP phases ------------------------------------------------------------------------------------


def search_request(path: str, *, mode: str, per_user: bool, users: int, limit: int, empty_is_error: bool):
    from corpus import QUERIES
    from load import Outcome, timed_search

    def request(client, rng) -> Outcome:
        body = {"query": rng.choice(QUERIES), "mode": mode, "limit": limit}
        if per_user:
            body["user_id"] = f"user-{rng.randrange(users):06d}"
        return timed_search(client, path, body, empty_is_error=empty_is_error)

    return request


SEARCH_PHASES = (
    # name, mode, per user, empty result counts as an error
    ("per-user hybrid", "hybrid", True, True),
    ("store-wide hybrid", "hybrid", False, True),
    ("per-user vector", "vector", True, True),
    # A user's memories may share no word with the query: an empty keyword result is a right answer.
    ("per-user keyword", "keyword", True, False),
)


def run_search_phases(server, raw_key: str, args) -> list:
    from load import run_phase

    headers = {"Authorization": f"Bearer {raw_key}"}
    path = SEARCH_PATH
    results = []
    for name, mode, per_user, empty_is_error in SEARCH_PHASES:
        request = search_request(
            path, mode=mode, per_user=per_user, users=args.users, limit=args.limit, empty_is_error=empty_is_error
        )
        for concurrency in args.concurrency:
            result = run_phase(
                name=name,
                url=server.url,
                headers=headers,
                request=request,
                concurrency=concurrency,
                warmup=args.warmup,
                duration=args.duration,
                max_requests=args.max_requests,
                make_rng=lambda index, name=name, concurrency=concurrency: random.Random(
                    f"{args.seed}:{name}:{concurrency}:{index}"
                ),
            )
            results.append(result)
            phase_line(result.name, result, details=f"empty={result.empty}")
    return results


def ingest_batches(corpus, *, prefix: str, batches: int, batch_size: int) -> list[dict]:
    per_user = 25
    bodies = []
    next_user = 0
    for _ in range(batches):
        items = []
        while len(items) < batch_size:
            take = min(per_user, batch_size - len(items))
            items.extend(draft.bulk_item() for draft in corpus.memories_for_user(next_user, take, prefix=prefix))
            next_user += 1
        bodies.append({"memories": items})
    return bodies


@dataclass
class IngestResult:
    phase: object  # load.PhaseResult
    memories: int

    @property
    def per_second(self) -> float:
        return self.memories / self.phase.elapsed if self.phase.elapsed > 0 else math.nan


def run_ingest_phases(server, raw_key: str, corpus, args) -> list[IngestResult]:
    import itertools

    import httpx
    from load import Outcome, run_phase, timed_post

    headers = {"Authorization": f"Bearer {raw_key}"}
    path = INGEST_PATH
    with httpx.Client(base_url=server.url, headers=headers, timeout=120) as client:
        for body in ingest_batches(corpus, prefix="warmup", batches=1, batch_size=args.batch_size):
            _, _, error = timed_post(client, path, body, expect_status=201)
            if error:
                raise RuntimeError(f"bulk ingest warm-up failed: {error}")

    results = []
    for concurrency in args.ingest_concurrency:
        bodies = ingest_batches(
            corpus, prefix=f"ingest{concurrency}", batches=args.ingest_batches, batch_size=args.batch_size
        )
        turn = itertools.count()

        def request(client, rng, bodies=bodies, turn=turn) -> Outcome:
            body = bodies[next(turn)]
            latency_ms, response, error = timed_post(client, path, body, expect_status=201)
            if error:
                return Outcome(latency_ms, ok=False, error=error)
            created = response.json().get("created", 0)
            if created != len(body["memories"]):
                error = f"created {created} of {len(body['memories'])}"
                return Outcome(latency_ms, ok=False, error=error, items=created)
            return Outcome(latency_ms, ok=True, items=created)

        phase = run_phase(
            name="bulk ingest",
            url=server.url,
            headers=headers,
            request=request,
            concurrency=concurrency,
            warmup=0.0,
            duration=3600.0,
            max_requests=len(bodies),
            timeout=120.0,
            make_rng=lambda index: None,
        )
        result = IngestResult(phase=phase, memories=phase.items)
        results.append(result)
        phase_line("bulk ingest", phase, count=f"batches of {args.batch_size}",
                   details=f"{result.per_second:.0f} memories/s")
    return results


# --- Report ---------------------------------------------------------------------------------------


def section(args, *, env, seed_result, explained, search_results, ingest_results, realistic_runs, work,
            others) -> report.Section:
    at = "" if args.n == TARGET_N else f" (at {args.n:,} memories; the target is for {TARGET_N:,})"
    targets = [
        report.target(f"Per-user hybrid search p{p}, concurrency {r.concurrency}{at}", r.percentile(p), unit="ms",
                      at_most=limit, ok=not r.errors)
        for r in search_results if r.name == "per-user hybrid"
        for p, limit in ((50, TARGET_P50_MS), (95, TARGET_P95_MS))
    ]
    targets += [
        report.target(f"Bulk ingest, hash embedder, concurrency {r.phase.concurrency}", r.per_second,
                      unit="memories/s", at_least=TARGET_INGEST_PER_SECOND, digits=0, ok=not r.phase.errors)
        for r in ingest_results
    ]
    tables, notes = [], []
    if "search" in args.phases:
        seeding = "Seeding: the store of an earlier run with the same N, users and seed was reused."
        if seed_result is not None:
            seeding = (f"Seeding: {seed_result.total_seconds:.1f} s, of which generate + embed + COPY "
                       f"{seed_result.load_seconds:.1f} s, index builds {seed_result.index_seconds:.1f} s, "
                       f"VACUUM (ANALYZE) {seed_result.analyze_seconds:.1f} s.")
        search_note = (f"`POST {SEARCH_PATH}`, limit {args.limit}; {args.warmup:g} s warm-up, then {args.duration:g} s "
                       f"or {args.max_requests:,} requests per phase. Empty: 200 with no results, an error except for "
                       "keyword search.")
        tables.append(report.Table("Search over HTTP", [*report.PHASE_COLUMNS, "Empty"],
                                   [[*report.phase_row(r.name, r), r.empty] for r in search_results],
                                   note=search_note))
        notes.append(seeding)
    if "ingest" in args.phases:
        tables.append(report.Table(
            "Bulk ingest over HTTP", [*report.PHASE_COLUMNS, "Memories created", "Memories/s"],
            [[*report.phase_row("bulk ingest", r.phase), r.memories, report.number(r.per_second, 0)]
             for r in ingest_results],
            note=f"`POST {INGEST_PATH}`, {args.batch_size} new memories a request, into a scratch store."))
    if "realistic" in args.phases:
        targets += realistic.targets(realistic_runs, work, args)
        tables += realistic.tables(realistic_runs, work, args, others=others)
    notes.append(report.first_errors([(result.name, result) for result in search_results]))
    if "realistic" in args.phases:
        notes.append(realistic.first_errors(realistic_runs))
    if explained:
        widened = ", ".join(query.title for query in explained if query.ef_search_raised) or "none"
        notes.append("`EXPLAIN (ANALYZE, BUFFERS OFF)` of the SQL `memory_search` sends, on its connection just before "
                     f"it (so with its settings); searches that raised `hnsw.ef_search`: {widened}.")
    only = "" if len(args.phases) == len(PHASES) else f" Only these phases ran: {', '.join(args.phases)}."
    return report.Section(
        name="search",
        title="Search and bulk ingest",
        intro=f"Written by `bench/search.py` on {env['Date']}. Latencies are client-side, over HTTP on loopback, and "
        f"include authentication, the store lookup, embedding the query and serialising the results.{only}",
        setup=env,
        targets=targets,
        tables=tables,
        notes=notes,
        plans=[(f"{q.title}: {q.vector_path}", q.plan) for q in explained],
    )


# --- Main -------------------------------------------------------------------------------------------


def main(argv=None) -> int:
    args = options(argv)
    data = None
    if "realistic" in args.phases:
        try:  # a bad file stops the run before anything starts
            data = locomo.load(args.realistic_data)
        except locomo.DataError as error:
            raise SystemExit(f"bad LoCoMo file: {error}") from None
    load_at_start = harness_start("memoryhub benchmark")

    import seeding
    from load import Server

    started = time.perf_counter()
    tenant, raw_key, corpus, store, seed_result = prepare(args)
    explained = []
    if "search" in args.phases:
        log("query plans:")
        explained = explain_searches(store, corpus, args)
        for query in explained:
            log(f"  {query.title}: {query.vector_path}")
            for line in query.summary():
                log(f"    {line}")
    if args.seed_only:
        log(f"--seed-only: no load test and no report ({time.perf_counter() - started:.0f} s in all)")
        return 0
    work = None
    if data is not None:
        work = realistic.plan(data, single_adds=args.realistic_single_adds)
        log(f"realistic phase: {realistic.describe(work)}; {len(work.bulk):,} turns added in bulk, "
            f"{len(work.single):,} one at a time")

    # The phases ask the same questions many times: with the query-vector cache, most searches would skip the
    # embedding, and the latencies would be the cache's.
    server_env = production_env(EMBEDDING_QUERY_CACHE_SIZE="0")
    search_results, ingest_results, realistic_runs, others = [], [], [], 0
    log(f"starting uvicorn with {args.web_workers} web worker(s) ...")
    with Server(root=ROOT, web_workers=args.web_workers, env=server_env, log=log) as server:
        if "search" in args.phases:
            log(f"server on {server.url}; search phases:")
            search_results = run_search_phases(server, raw_key, args)
        if "ingest" in args.phases:
            log("bulk ingest:")
            ingest_store = fresh_ingest_store(tenant)
            try:
                ingest_results = run_ingest_phases(server, raw_key, corpus, args)
            finally:
                seeding.delete_store(ingest_store)
        if work is not None:
            log(f"realistic phase ({', '.join(args.realistic_embedders)} embedder):")
            realistic_runs, others = realistic.run(server, raw_key, tenant, work, args)
    log("server stopped")

    described = []
    if {"search", "ingest"} & set(args.phases):
        described.append(f"{args.n:,} memories over {args.users:,} users, hash embedder, {DIMENSION} dimensions, "
                         f"seed {args.seed}")
    if work is not None:
        described.append(f"realistic: {realistic.describe(work)}, embedders {', '.join(args.realistic_embedders)}")
    env = report.environment(
        script="search.py",
        data="; ".join(described),
        server=report.server_description(args.web_workers, server_env),
        load_at_start=load_at_start,
    )
    results = section(
        args,
        env=env,
        seed_result=seed_result,
        explained=explained,
        search_results=search_results,
        ingest_results=ingest_results,
        realistic_runs=realistic_runs,
        work=work,
        others=others,
    )
    report.publish(results, args.report, log=log, started=started)
    return exit_status()


if __name__ == "__main__":
    run_main(main, on_interrupt="the server was stopped")
