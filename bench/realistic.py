"""The realistic phase of bench/search.py: LoCoMo conversations as users of a store, per embedder, over HTTP.

Each conversation of a LoCoMo file (bench/locomo.py) is one user of a store made afresh per embedder,
`bench-realistic-<embedder>` (384 dimensions): its turns ("[8 May 2023] Caroline: …") are added through
POST …/memories/bulk, a batch at a time, except the last few of each conversation, which are then added one
POST …/memories each (single adds); then the file's questions are asked, each scoped to its conversation's user,
in hybrid, vector and keyword mode at the lowest concurrency and in hybrid mode at every concurrency.
"""

import math
import random
import time
from dataclasses import dataclass, field
from functools import partial

import locomo
import report
from harness import log, phase_line
from load import Outcome, PhaseResult, run_phase, timed_post, timed_search

STORE_PREFIX = "bench-realistic"
DIMENSION = 384
EMBEDDERS = ("local", "hash")
MODES = ("hybrid", "vector", "keyword")
WARMUP_SEARCHES = 3  # on the adding client first: its web worker loads the embedding model, unmeasured
# The targets of the issue, per embedder.
TARGET_HYBRID_P50_MS = {"local": 15.0, "hash": 8.0}
TARGET_HYBRID_P95_MS = {"local": 25.0}
TARGET_SINGLE_ADD_P50_MS = {"local": 20.0}
TARGET_BULK_PER_SECOND = {"local": 200.0, "hash": 2_000.0}
TARGET_THROUGHPUT_CONCURRENCY = 4
TARGET_HYBRID_PER_SECOND = {"local": 2 * 26.0}  # twice the 26 requests/s measured before the issue


def store_name(embedder: str) -> str:
    return f"{STORE_PREFIX}-{embedder}"


@dataclass
class Plan:
    """What is added: per user, the turns added in bulk, then the turns added one at a time (interleaved by user)."""

    data: locomo.Dataset
    bulk: list[dict]
    single: list[dict]
    per_user: dict[str, int]  # memories each user holds at the end
    repeated: int  # turns left out: the same text (date and speaker included) as an earlier turn of the user

    @property
    def questions(self) -> list[locomo.Question]:
        return self.data.questions


def plan(data: locomo.Dataset, *, single_adds: int) -> Plan:
    """Every turn once per user; the last `single_adds` (shared out over the users) held back for single adds."""
    from apps.memories.normalise import normalise_content

    kept, repeated = [], 0
    for conversation in data.conversations:
        seen, items = set(), []
        for turn in conversation.turns:
            content = turn.content()
            # A repeat is stored once (a single add of it would be a 200 duplicate, not a new memory).
            if normalise_content(content) in seen:
                repeated += 1
                continue
            seen.add(normalise_content(content))
            items.append({"user_id": conversation.sample_id, "content": content, "memory_type": "episode",
                          "metadata": {"dia_id": turn.dia_id, "session": turn.session, "speaker": turn.speaker}})
        kept.append(items)
    users = len(kept)
    held = [min(single_adds // users + (index < single_adds % users), len(items) - 1)
            for index, items in enumerate(kept)]
    bulk = [item for items, n in zip(kept, held, strict=True) for item in items[: len(items) - n]]
    tails = [items[len(items) - n:] for items, n in zip(kept, held, strict=True)]
    single = [tail[step] for step in range(max(held, default=0)) for tail in tails if step < len(tail)]
    per_user = {conversation.sample_id: len(items) for conversation, items in zip(data.conversations, kept,
                                                                                   strict=True)}
    return Plan(data=data, bulk=bulk, single=single, per_user=per_user, repeated=repeated)


@dataclass
class Run:
    """One embedder's phases."""

    embedder: str
    bulk: PhaseResult | None = None  # items: memories created
    single: PhaseResult | None = None
    searches: list[PhaseResult] = field(default_factory=list)  # name: the mode

    @property
    def bulk_per_second(self) -> float:
        return self.bulk.items / self.bulk.elapsed if self.bulk and self.bulk.elapsed > 0 else math.nan

    def search(self, mode: str, concurrency: int) -> PhaseResult | None:
        return next((r for r in self.searches if r.name == mode and r.concurrency == concurrency), None)


# --- Stores -----------------------------------------------------------------------------------------


def delete_stores(tenant) -> None:
    """The stores of an earlier run, if an interrupted one left them."""
    import seeding

    from apps.memories.models import MemoryStore

    for store in MemoryStore.objects.filter(tenant=tenant, name__startswith=f"{STORE_PREFIX}-"):
        seeding.delete_store(store)


def create_store(tenant, embedder: str):
    from apps.memories import services as memory_services

    return memory_services.store_create(tenant=tenant, name=store_name(embedder), description="bench/search.py",
                                        embedding_provider=embedder, embedding_dimension=DIMENSION,
                                        extraction_config={"enabled": False})


# --- Phases -----------------------------------------------------------------------------------------


def run(server, raw_key: str, tenant, work: Plan, args) -> tuple[list[Run], int]:
    """Every embedder's phases, each in a store of its own, deleted afterwards; and how many memories the
    database held besides (their HNSW and full-text index entries are what an add's entries join)."""
    import httpx
    import seeding

    from apps.memories.models import Memory

    headers = {"Authorization": f"Bearer {raw_key}"}
    runs = []
    delete_stores(tenant)
    others = Memory.objects.count()
    log(f"  the database holds {others:,} other memories")
    for embedder in args.realistic_embedders:
        store = create_store(tenant, embedder)
        try:
            result = Run(embedder)
            runs.append(result)
            # Adds on one keep-alive connection, so on one web worker, warmed by searches (the model loads).
            with httpx.Client(base_url=server.url, headers=headers, timeout=300) as client:
                for question in work.questions[:WARMUP_SEARCHES]:
                    timed_post(client, search_path(embedder), search_body(question, "hybrid", args.limit),
                               expect_status=200)
                result.bulk = sequential("bulk add", client, partial(bulk_add, embedder=embedder),
                                         batches(work.bulk, args.realistic_batch_size))
                phase_line(f"realistic {embedder} bulk add", result.bulk,
                           count=f"batches of {args.realistic_batch_size}",
                           details=f"{result.bulk.items:,} memories  {result.bulk_per_second:.0f} memories/s")
                if work.single:  # --realistic-single-adds 0 skips them
                    result.single = sequential("single add", client, partial(single_add, embedder=embedder),
                                               work.single)
                    phase_line(f"realistic {embedder} single add", result.single)
            concurrencies = sorted(set(args.realistic_concurrency))
            for mode, concurrency in [*((mode, concurrencies[0]) for mode in MODES),
                                      *(("hybrid", concurrency) for concurrency in concurrencies[1:])]:
                phase = search_phase(server.url, headers, embedder, mode, concurrency, work.questions, args)
                result.searches.append(phase)
                phase_line(f"realistic {embedder} {mode}", phase, details=f"empty={phase.empty}")
        finally:
            seeding.delete_store(store)
    return runs, others


def batches(items: list[dict], size: int) -> list[list[dict]]:
    return [items[offset: offset + size] for offset in range(0, len(items), size)]


def sequential(name: str, client, send, bodies: list) -> PhaseResult:
    """`send(client, body)` for each body, one after another on one client: concurrency 1, elapsed from the
    first request to the last answer."""
    started = time.perf_counter()
    outcomes = [send(client, body) for body in bodies]
    return PhaseResult(name=name, concurrency=1, elapsed=time.perf_counter() - started, outcomes=outcomes)


def bulk_add(client, batch: list[dict], *, embedder: str) -> Outcome:
    latency_ms, response, error = timed_post(client, f"/api/v1/stores/{store_name(embedder)}/memories/bulk",
                                             {"memories": batch}, expect_status=201)
    if error:
        return Outcome(latency_ms, ok=False, error=error)
    created = response.json().get("created", 0)
    if created != len(batch):
        return Outcome(latency_ms, ok=False, error=f"created {created} of {len(batch)}", items=created)
    return Outcome(latency_ms, ok=True, items=created)


def single_add(client, item: dict, *, embedder: str) -> Outcome:
    # 201: a new memory (a 200 would be a duplicate, which plan() leaves out)
    latency_ms, _, error = timed_post(client, f"/api/v1/stores/{store_name(embedder)}/memories", item,
                                      expect_status=201)
    return Outcome(latency_ms, ok=not error, error=error, items=0 if error else 1)


def search_path(embedder: str) -> str:
    return f"/api/v1/stores/{store_name(embedder)}/search"


def search_body(question: locomo.Question, mode: str, limit: int) -> dict:
    return {"query": question.question, "mode": mode, "limit": limit, "user_id": question.conversation}


def search_phase(url: str, headers: dict, embedder: str, mode: str, concurrency: int,
                 questions: list[locomo.Question], args) -> PhaseResult:
    path = search_path(embedder)

    def request(client, rng) -> Outcome:
        # A user's turns may share no word with the question: an empty keyword result is a right answer.
        return timed_search(client, path, search_body(rng.choice(questions), mode, args.limit),
                            empty_is_error=mode != "keyword")

    return run_phase(
        name=mode, url=url, headers=headers, request=request, concurrency=concurrency, warmup=args.warmup,
        duration=args.duration, max_requests=args.max_requests,
        make_rng=lambda index: random.Random(f"{args.seed}:realistic:{embedder}:{mode}:{concurrency}:{index}"),
    )


# --- Report -----------------------------------------------------------------------------------------


def describe(work: Plan) -> str:
    """"3 conversations as 3 users of 369-663 memories (mean 484), 383 questions" and the file."""
    counts = sorted(work.per_user.values())
    mean = sum(counts) / len(counts)
    return (f"`{work.data.path.name}`: {len(counts)} conversations as {len(counts)} users of {counts[0]:,}-"
            f"{counts[-1]:,} memories (mean {mean:,.0f}), {len(work.questions):,} questions")


def targets(runs: list[Run], work: Plan, args) -> list[report.Target]:
    counts = list(work.per_user.values())
    scope = f"LoCoMo users (≈{sum(counts) / len(counts):,.0f} memories each)"
    lowest = min(args.realistic_concurrency)
    rows = []
    for r in runs:
        hybrid = r.search("hybrid", 1) if lowest == 1 else None
        if hybrid is not None and r.embedder in TARGET_HYBRID_P50_MS:
            rows.append(report.target(f"{scope}: hybrid search p50, {r.embedder} embedder, concurrency 1",
                                      hybrid.percentile(50), unit="ms", at_most=TARGET_HYBRID_P50_MS[r.embedder],
                                      ok=not hybrid.errors))
        if hybrid is not None and r.embedder in TARGET_HYBRID_P95_MS:
            rows.append(report.target(f"{scope}: hybrid search p95, {r.embedder} embedder, concurrency 1",
                                      hybrid.percentile(95), unit="ms", at_most=TARGET_HYBRID_P95_MS[r.embedder],
                                      ok=not hybrid.errors))
        if r.single is not None and r.embedder in TARGET_SINGLE_ADD_P50_MS:
            rows.append(report.target(f"{scope}: single add p50, {r.embedder} embedder", r.single.percentile(50),
                                      unit="ms", at_most=TARGET_SINGLE_ADD_P50_MS[r.embedder], ok=not r.single.errors))
        if r.bulk is not None and r.embedder in TARGET_BULK_PER_SECOND:
            rows.append(report.target(f"{scope}: bulk add, {r.embedder} embedder, batches of "
                                      f"{args.realistic_batch_size}", r.bulk_per_second, unit="memories/s",
                                      at_least=TARGET_BULK_PER_SECOND[r.embedder], digits=0, ok=not r.bulk.errors))
        loaded = r.search("hybrid", TARGET_THROUGHPUT_CONCURRENCY)
        if loaded is not None and r.embedder in TARGET_HYBRID_PER_SECOND:
            rows.append(report.target(f"{scope}: hybrid search throughput, {r.embedder} embedder, concurrency "
                                      f"{TARGET_THROUGHPUT_CONCURRENCY}", loaded.per_second, unit="requests/s",
                                      at_least=TARGET_HYBRID_PER_SECOND[r.embedder], ok=not loaded.errors))
    return rows


def tables(runs: list[Run], work: Plan, args, *, others: int) -> list[report.Table]:
    adds = [[r.embedder, *report.phase_row(phase.name, phase),
             report.number(phase.items / phase.elapsed if phase.elapsed > 0 else math.nan, 0)]
            for r in runs for phase in (r.bulk, r.single) if phase is not None]
    searches = [[r.embedder, *report.phase_row(phase.name, phase), phase.empty] for r in runs for phase in r.searches]
    repeated = f"; {work.repeated} repeated turns left out" if work.repeated else ""
    return [
        report.Table("Realistic: adding LoCoMo turns", ["Embedder", *report.PHASE_COLUMNS, "Memories/s"], adds,
                     note=f"{describe(work)}{repeated}. Each turn, `[session date] speaker: text`, is one memory "
                     f"of its conversation's user, in a new store per embedder (`{STORE_PREFIX}-<embedder>`, "
                     f"{DIMENSION} dimensions), in a database holding {others:,} other memories. Bulk add: `POST …/memories/bulk`, {args.realistic_batch_size} a "
                     f"request, one request at a time; then single add: the last {len(work.single):,} turns "
                     "(shared out over the users), one `POST …/memories` each, one at a time, on the same connection "
                     f"after {WARMUP_SEARCHES} unmeasured searches."),
        report.Table("Realistic: LoCoMo questions", ["Embedder", *report.PHASE_COLUMNS, "Empty"], searches,
                     note=f"`POST …/search`, limit {args.limit}, each question (picked at random) with its "
                     f"conversation's `user_id`; {args.warmup:g} s warm-up, then {args.duration:g} s or "
                     f"{args.max_requests:,} requests per phase. Empty: 200 with no results, an error except for "
                     "keyword search."),
    ]


def first_errors(runs: list[Run]) -> str:
    return report.first_errors([(f"realistic {r.embedder} {phase.name}", phase) for r in runs
                                for phase in (r.bulk, r.single, *r.searches) if phase is not None])
