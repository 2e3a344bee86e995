"""Retrieval quality of memoryhub on LoCoMo, over real HTTP: does search find the turns that answer a question?

    .venv/bin/python bench/retrieval.py [--data PATH] [--embedders local,hash] [--modes hybrid,vector,keyword]
        [--limit 20] [--search-defaults JSON] [--json PATH] [--smoke]

Reads a LoCoMo file (default ../shared/data/locomo-dev.json from the repository root; format and checks:
bench/locomo.py), starts uvicorn against its own database (memoryhub_bench) and creates one store per embedder,
`bench-retrieval-<embedder>`, afresh over the API. Every turn of every conversation becomes one memory
("[8 May 2023] Caroline: …", its dia_id in metadata, the conversation's sample id as user_id), posted through
POST …/memories/bulk; then every question of categories 1-4 with evidence is asked in each mode, scoped to its
conversation's user, one request at a time, and scored: recall@k and hit@k of the evidence turns among the hits,
overall and per category. It prints a result line per phase, a table of the scores, and writes its section of
docs/performance.md. It exits 1 only on errors (a refused or failed request, an empty hybrid or vector result),
never on the scores.

A full run on the dev file (3 conversations, 1,451 turns, 383 questions; local and hash embedders, 2,298
searches) takes two to three minutes on the 2-CPU dev machine, most of it the local (MiniLM) embedder's ingest:
80 memories/s on an idle machine, a third of that on a busy one.
"""

import argparse
import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import locomo
import report
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
from load import percentile, timed_request

KEY_NAME = "bench/retrieval.py"
STORE_PREFIX = "bench-retrieval"
DATA = (ROOT.parent / "shared" / "data" / "locomo-dev.json").resolve()
DIMENSION = 384
EMBEDDERS = ("local", "hash", "openai")
MODES = ("hybrid", "vector", "keyword")
WARMUP_QUESTIONS = 3  # unmeasured searches per store and mode first: the web worker loads the embedding model
# The targets of the retrieval issue, on LoCoMo (per question, averaged).
TARGET_HYBRID_LOCAL = {10: 0.68, 5: 0.58}
TARGET_KEYWORD = {10: 0.62}
SMOKE = dict(embedders="hash", conversations=1, sessions=3, questions=12, web_workers=1, batch_size=50)


def options(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA,
                        help="a LoCoMo file (default ../shared/data/locomo-dev.json from the repository root)")
    parser.add_argument("--embedders", default="local,hash",
                        help="one store per embedder, comma-separated (default local,hash; openai needs its settings)")
    parser.add_argument("--modes", default=",".join(MODES), help="search modes, comma-separated (default all three)")
    parser.add_argument("--limit", type=int, default=20, help="results per search, 1-100 (default 20)")
    parser.add_argument("--search-defaults", type=json.loads, default=None, metavar="JSON",
                        help="a JSON object PATCHed into each store's search_defaults before searching")
    parser.add_argument("--conversations", type=int, default=0, help="only the first N conversations (0: all)")
    parser.add_argument("--sessions", type=int, default=0,
                        help="only the first N sessions of each (0: all); questions with evidence beyond are left out")
    parser.add_argument("--questions", type=int, default=0, help="only the first N questions (0: all)")
    parser.add_argument("--captions", action="store_true",
                        help="add a shared photo's caption to its turn's memory (\"[shares a photo of …]\")")
    parser.add_argument("--batch-size", type=int, default=100, help="memories per bulk request (default 100)")
    parser.add_argument("--web-workers", type=int, default=2, help="uvicorn worker processes (default 2)")
    parser.add_argument("--json", type=Path, help="write every question's evidence and retrieved dia_ids to this file")
    parser.add_argument("--keep-stores", action="store_true",
                        help="leave the stores after the run, to look at (the next run deletes them)")
    args = parse_args(parser, argv, smoke=SMOKE)
    args.embedders = _choices(parser, "--embedders", args.embedders, EMBEDDERS)
    args.modes = _choices(parser, "--modes", args.modes, MODES)
    if not 1 <= args.limit <= 100:
        parser.error("--limit must be from 1 to 100")
    if args.search_defaults is not None and not isinstance(args.search_defaults, dict):
        parser.error("--search-defaults takes a JSON object, e.g. '{\"min_score\": 0.1}'")
    if min(args.conversations, args.sessions, args.questions) < 0 or args.web_workers < 1 or \
            not 1 <= args.batch_size <= 500:
        parser.error("need --conversations, --sessions, --questions >= 0, --web-workers >= 1, --batch-size 1-500")
    return args


def _choices(parser, name: str, text: str, known: tuple[str, ...]) -> list[str]:
    values = list(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    unknown = [value for value in values if value not in known]
    if not values or unknown:
        parser.error(f"{name} takes some of {','.join(known)}, comma-separated")
    return values


def scope(args, data: locomo.Dataset) -> str:
    """The data and anything that changes the measure, for the summary rows: "(locomo-dev.json, 383 questions)"."""
    narrowed = [f"--{name} {getattr(args, name)}" for name in ("conversations", "sessions", "questions")
                if getattr(args, name)]
    narrowed += ["--captions"] * args.captions
    if args.search_defaults:
        narrowed.append(f"search_defaults {json.dumps(args.search_defaults, sort_keys=True)}")
    return f" ({args.data.name}, {len(data.questions)} questions{', ' if narrowed else ''}{', '.join(narrowed)})"


# --- Driving the API --------------------------------------------------------------------------------


def store_name(embedder: str) -> str:
    return f"{STORE_PREFIX}-{embedder}"


def _refusal(response) -> str:
    try:
        error = response.json()["error"]
        return f"HTTP {response.status_code} {error['code']}: {error['message']}"
    except (ValueError, KeyError, TypeError):
        return f"HTTP {response.status_code} {response.text[:500]}"


def delete_stores(client, embedders: list[str], *, what: str) -> str | None:
    """Delete the embedders' stores that exist (listed first: a 404 would be logged as a problem); the refusal, or
    None. `what`, for the log: "of an earlier run", "of this run"."""
    response = client.get("/api/v1/stores")
    if response.status_code != 200:
        return f"listing the stores: {_refusal(response)}"
    existing = {store["name"] for store in response.json()["results"]}
    for name in (store_name(embedder) for embedder in embedders):
        if name in existing:
            response = client.delete(f"/api/v1/stores/{name}")
            if response.status_code != 200:
                return f"deleting {name!r}: {_refusal(response)}"
            log(f"  deleted the store {name!r} {what} ({response.json()['memories']} memories)")
    return None


def create_store(client, embedder: str, search_defaults: dict | None) -> str | None:
    """Create the embedder's store over the API and PATCH its search defaults; the refusal's text, or None."""
    body = {"name": store_name(embedder), "description": KEY_NAME, "embedding_provider": embedder,
            "embedding_dimension": DIMENSION, "extraction_config": {"enabled": False}}
    response = client.post("/api/v1/stores", json=body)
    if response.status_code != 201:
        return f"creating {store_name(embedder)!r}: {_refusal(response)}"
    if search_defaults is not None:
        response = client.patch(f"/api/v1/stores/{store_name(embedder)}", json={"search_defaults": search_defaults})
        if response.status_code != 200:
            return f"search_defaults {json.dumps(search_defaults)}: {_refusal(response)}"
        log(f"  {store_name(embedder)}: search_defaults {json.dumps(response.json().get('search_defaults'))}")
    return None


@dataclass
class Ingest:
    embedder: str
    batch_ms: list[float] = field(default_factory=list)
    memories: int = 0  # created or found as duplicates
    duplicates: int = 0
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)
    dia_ids: dict[str, tuple[str, ...]] = field(default_factory=dict)  # memory id: the turns it holds

    @property
    def per_second(self) -> float:
        return self.memories / self.seconds if self.seconds else math.nan


def ingest(client, embedder: str, data: locomo.Dataset, args) -> Ingest:
    """Every turn as one memory, `--batch-size` a request, one request at a time."""
    items = [
        {"user_id": conversation.sample_id, "content": turn.content(captions=args.captions), "memory_type": "episode",
         "metadata": {"dia_id": turn.dia_id, "session": turn.session, "speaker": turn.speaker}}
        for conversation in data.conversations for turn in conversation.turns
    ]
    result = Ingest(embedder)
    path = f"/api/v1/stores/{store_name(embedder)}/memories/bulk"
    started = time.perf_counter()
    for offset in range(0, len(items), args.batch_size):
        batch = items[offset: offset + args.batch_size]
        latency, response, error = timed_request(client, "POST", path, {"memories": batch}, expect_status=201)
        if error:
            result.errors.append(error)
            continue
        result.batch_ms.append(latency)
        results = response.json()["results"]
        for item, written in zip(batch, results, strict=True):
            # A turn said twice word for word (same date, same speaker) is one memory: it stands for both.
            memory_id = written["memory"]["id"]
            result.dia_ids[memory_id] = (*result.dia_ids.get(memory_id, ()), item["metadata"]["dia_id"])
        result.memories += len(results)
        result.duplicates += sum(1 for written in results if written["duplicate"])
    result.seconds = time.perf_counter() - started
    return result


@dataclass
class Searches:
    """One store and mode: every question's hits (each hit's dia_ids, best first) and the requests' latencies."""

    embedder: str
    mode: str
    latency_ms: list[float] = field(default_factory=list)
    retrieved: dict[tuple, list[tuple[str, ...]]] = field(default_factory=dict)  # question_key: its hits
    scores: dict[tuple, locomo.Score] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    empty: int = 0

    def mean(self, measure: str, k: int, category: int | None = None) -> float:
        return locomo.mean(getattr(score, measure)[k] for _, score in self._scored(category))

    def count(self, category: int | None = None) -> int:
        return len(self._scored(category))

    def _scored(self, category):
        return [(key, score) for key, score in self.scores.items() if category is None or key[2] == category]


def question_key(question: locomo.Question) -> tuple[str, int, int]:
    return (question.conversation, question.number, question.category)


def search_all(client, ingested: Ingest, mode: str, data: locomo.Dataset, args) -> Searches:
    path = f"/api/v1/stores/{store_name(ingested.embedder)}/search"
    result = Searches(ingested.embedder, mode)
    # With min_score set, no hit above it is a right answer; otherwise hybrid and vector always find something.
    empty_is_error = mode != "keyword" and not (args.search_defaults or {}).get("min_score")
    ks = ks_for(args)
    questions = data.questions
    for question in questions[:WARMUP_QUESTIONS]:
        timed_request(client, "POST", path, _search_body(question, mode, args), expect_status=200)
    for question in questions:
        latency, response, error = timed_request(client, "POST", path, _search_body(question, mode, args),
                                                 expect_status=200)
        hits = []
        if not error:
            result.latency_ms.append(latency)
            hits = [ingested.dia_ids.get(hit["memory"]["id"]) or (str(hit["memory"]["metadata"].get("dia_id")),)
                    for hit in response.json()["results"]]
            if not hits:
                result.empty += 1
                if empty_is_error:
                    error = f"no results for {question.conversation} {question.question!r}"
        if error:
            result.errors.append(error)
        key = question_key(question)
        result.retrieved[key] = hits
        result.scores[key] = locomo.score(question.evidence, hits, ks)
    return result


def _search_body(question: locomo.Question, mode: str, args) -> dict:
    return {"query": question.question, "mode": mode, "limit": args.limit, "user_id": question.conversation}


# --- Output -----------------------------------------------------------------------------------------


def ks_for(args) -> list[int]:
    return [k for k in locomo.KS if k <= args.limit]


def score_cell(searches: Searches, measure: str, k: int, args, category: int | None = None):
    return searches.mean(measure, k, category) if k <= args.limit else math.nan


def print_scores(runs: list[Searches], data: locomo.Dataset, args) -> None:
    ks = ks_for(args)
    head = ["embedder", "mode", *(f"R@{k}" for k in ks), *(f"hit@{k}" for k in ks),
            *(f"R@10 {name}" for name in locomo.CATEGORIES.values())]
    cells = [head]
    for run in runs:
        cells.append([run.embedder, run.mode, *(f"{run.mean('recall', k):.3f}" for k in ks),
                      *(f"{run.mean('hit', k):.3f}" for k in ks),
                      *(report.number(score_cell(run, "recall", 10, args, category), 3)
                        for category in locomo.CATEGORIES)])
    widths = [max(len(line[i]) for line in cells) for i in range(len(head))]
    for line in cells:
        log("  " + "  ".join(value.rjust(width) if i > 1 else value.ljust(width)
                             for i, (value, width) in enumerate(zip(line, widths, strict=True))).rstrip())


def category_counts(data: locomo.Dataset) -> dict[int, int]:
    return {category: sum(1 for q in data.questions if q.category == category) for category in locomo.CATEGORIES}


def data_description(args, data: locomo.Dataset) -> str:
    counts = ", ".join(f"{n} {name}" for category, name in locomo.CATEGORIES.items()
                       if (n := category_counts(data)[category]))
    return (f"`{display_path(args.data)}`: {plural(len(data.conversations), 'conversation')}, "
            f"{plural(sum(c.sessions for c in data.conversations), 'session')}, {data.turns:,} turns (memories); "
            f"{len(data.questions)} questions ({counts})")


def plural(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def evidence_note(data: locomo.Dataset) -> str:
    left_out = ", ".join(f"{n} {why}" for why, n in sorted(data.left_out.items()))
    note = (f"Evidence: {plural(len(data.rewritten), 'malformed id string')} split or normalised"
            + (f" ({', '.join(repr(text) for text in data.rewritten[:5])}{', …' if len(data.rewritten) > 5 else ''})"
               if data.rewritten else "")
            + f"; {plural(len(data.unknown), 'id')} naming no turn of its conversation dropped"
            + (f" ({', '.join(data.unknown[:5])}{', …' if len(data.unknown) > 5 else ''})" if data.unknown else ""))
    return note + (f". Questions not asked: {left_out}." if left_out else ".")


def section(args, *, env, data, ingests: list[Ingest], runs: list[Searches], narrowed: str) -> report.Section:
    ks = ks_for(args)
    by = {(run.embedder, run.mode): run for run in runs}
    targets = []
    for k, bound in TARGET_HYBRID_LOCAL.items():
        if ("local", "hybrid") in by:
            run = by["local", "hybrid"]
            targets.append(fraction_target(f"Recall@{k}, hybrid, local embedder{narrowed}",
                                           score_cell(run, "recall", k, args), at_least=bound, ok=not run.errors))
    keyword = by.get(("local", "keyword")) or next((run for run in runs if run.mode == "keyword"), None)
    for k, bound in TARGET_KEYWORD.items():
        if keyword is not None:
            targets.append(fraction_target(f"Recall@{k}, keyword alone{narrowed}",
                                           score_cell(keyword, "recall", k, args), at_least=bound,
                                           ok=not keyword.errors))
    targets += [
        report.target(f"Search p95, {run.mode}, {run.embedder} embedder, concurrency 1{narrowed}",
                      percentile(run.latency_ms, 95), unit="ms")
        for run in runs if run.mode == (args.modes[0] if "hybrid" not in args.modes else "hybrid")
    ]
    counts = category_counts(data)
    defaults = (f" The stores' `search_defaults` were set to `{json.dumps(args.search_defaults, sort_keys=True)}`."
                if args.search_defaults is not None else "")
    return report.Section(
        name="retrieval",
        title="Retrieval quality (LoCoMo)",
        intro=f"Written by `bench/retrieval.py` on {env['Date']} from {data_description(args, data)}. "
        "Each turn is one memory, `[session date] speaker: text`"
        + (" with a shared photo's caption" if args.captions else "")
        + ", with its `dia_id` in metadata, added over `POST …/memories/bulk` to a store per embedder; each "
        f"question of categories 1-4 with evidence is asked over `POST …/search` with its conversation's `user_id`, "
        f"limit {args.limit}, one request at a time. recall@k = |evidence ∩ dia_ids of the top k| / |evidence|, "
        f"hit@k = any evidence in the top k, averaged over the questions.{defaults}",
        setup=env,
        targets=targets,
        tables=[
            report.Table("Recall@k", ["Embedder", "Mode", "Questions", *(f"recall@{k}" for k in ks)],
                         [[r.embedder, r.mode, r.count(), *(report.number(r.mean("recall", k), 3) for k in ks)]
                          for r in runs]),
            report.Table("Hit@k", ["Embedder", "Mode", "Questions", *(f"hit@{k}" for k in ks)],
                         [[r.embedder, r.mode, r.count(), *(report.number(r.mean("hit", k), 3) for k in ks)]
                          for r in runs]),
            report.Table("Recall@10 per category",
                         ["Embedder", "Mode", *(f"{name} ({counts[c]})" for c, name in locomo.CATEGORIES.items())],
                         [[r.embedder, r.mode, *(report.number(score_cell(r, "recall", 10, args, c), 3)
                                                 for c in locomo.CATEGORIES)] for r in runs],
                         note="Categories as LoCoMo numbers them: 1 multi-hop, 2 temporal, 3 open-domain, 4 "
                         "single-hop; the number of questions of each in brackets."),
            report.Table("Search latency", ["Embedder", "Mode", "Requests", "Errors", "Empty", "p50 ms", "p95 ms",
                                            "p99 ms"],
                         [[r.embedder, r.mode, len(r.latency_ms) + len(r.errors), len(r.errors), r.empty,
                           *(percentile(r.latency_ms, p) for p in (50, 95, 99))] for r in runs],
                         note=f"Client-side, over HTTP on loopback, concurrency 1, after {WARMUP_QUESTIONS} unmeasured "
                         "searches per store and mode. Empty: 200 with no results (an error except in keyword mode)."),
            report.Table("Ingest", ["Embedder", "Memories", "Duplicates", "Requests", "Errors", "Batch p50 ms",
                                    "Batch p95 ms", "Memories/s"],
                         [[i.embedder, i.memories, i.duplicates, len(i.batch_ms) + len(i.errors), len(i.errors),
                           percentile(i.batch_ms, 50), percentile(i.batch_ms, 95), report.number(i.per_second, 0)]
                          for i in ingests],
                         note=f"`POST …/memories/bulk`, {args.batch_size} memories a request, one request at a time. "
                         "Duplicates: turns whose text (date and speaker included) the conversation already had."),
        ],
        notes=[
            evidence_note(data),
            _first_errors(ingests, runs),
            "Every question with its evidence and the dia_ids each mode retrieved: "
            "`bench/retrieval.py --json PATH`.",
        ],
    )


def fraction_target(what: str, value: float, *, at_least: float, ok: bool) -> report.Target:
    """A score against its bound, to 3 decimals, or 4 where 3 would round a miss up to the bound (0.6798)."""
    digits = 4 if value < at_least <= round(value, 3) else 3
    return report.Target(what, f"≥ {at_least:.2f}", report.number(value, digits), ok and value >= at_least)


def _first_errors(ingests: list[Ingest], runs: list[Searches]) -> str:
    failing = [f"ingest {i.embedder}: `{i.errors[0][:300]}`" for i in ingests if i.errors]
    failing += [f"search {r.embedder} {r.mode}: `{r.errors[0][:300]}`" for r in runs if r.errors]
    return "First error per failing phase: " + "; ".join(failing) + "." if failing else ""


def display_path(path: Path) -> str:
    """Relative to the repository (the dev file: ../shared/data/locomo-dev.json) unless further away."""
    relative = os.path.relpath(path.resolve(), ROOT)
    return str(path.resolve()) if relative.startswith(os.path.join(os.pardir, os.pardir)) else relative


def write_json(path: Path, args, data: locomo.Dataset, runs: list[Searches]) -> None:
    ks = ks_for(args)
    body = {
        "data": str(args.data.resolve()),
        "limit": args.limit,
        "search_defaults": args.search_defaults,
        "captions": args.captions,
        "totals": [{"embedder": r.embedder, "mode": r.mode, "questions": r.count(),
                    **{f"recall@{k}": r.mean("recall", k) for k in ks}, **{f"hit@{k}": r.mean("hit", k) for k in ks},
                    "recall@10 per category": {name: score_cell(r, "recall", 10, args, c)
                                               for c, name in locomo.CATEGORIES.items()}}
                   for r in runs],
        "questions": [
            {"conversation": q.conversation, "qa": q.number, "question": q.question, "answer": q.answer,
             "category": q.category, "evidence": list(q.evidence),
             "retrieved": {r.embedder: {} for r in runs}}
            for q in data.questions
        ],
    }
    for entry, question in zip(body["questions"], data.questions, strict=True):
        key = question_key(question)
        for r in runs:
            score = r.scores[key]
            entry["retrieved"][r.embedder][r.mode] = {
                "dia_ids": ["+".join(ids) for ids in r.retrieved[key]],
                **{f"recall@{k}": score.recall[k] for k in ks},
            }
    path.write_text(json.dumps(body, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    log(f"per-question results written to {path}")


# --- Main -------------------------------------------------------------------------------------------


def main(argv=None) -> int:
    args = options(argv)
    try:  # a bad file stops the run before anything starts
        data = locomo.load(args.data, conversations=args.conversations, sessions=args.sessions,
                           questions=args.questions)
    except locomo.DataError as error:
        raise SystemExit(f"bad LoCoMo file: {error}") from None
    if not data.questions:
        raise SystemExit(f"no question of categories 1-4 with evidence to ask in {args.data}")
    load_at_start = harness_start("memoryhub retrieval quality")

    import httpx
    from load import Server

    started = time.perf_counter()
    log(data_description(args, data))
    log(evidence_note(data))
    log("migrating ...")
    migrate()
    _, raw_key = bench_tenant_and_key(key_name=KEY_NAME)
    headers = {"Authorization": f"Bearer {raw_key}"}
    ingests, runs = [], []
    log(f"starting uvicorn with {args.web_workers} web worker(s) ...")
    # Uncached query vectors, as in bench/search.py: the latencies are those of a first search.
    server_env = production_env(EMBEDDING_QUERY_CACHE_SIZE="0")
    with (Server(root=ROOT, web_workers=args.web_workers, env=server_env, log=log) as server,
          httpx.Client(base_url=server.url, headers=headers, timeout=300) as client):
        refused = delete_stores(client, args.embedders, what="of an earlier run")
        if refused:
            log(f"the server refused: {refused}")
            return 1
        try:
            for embedder in args.embedders:
                refused = create_store(client, embedder, args.search_defaults)
                if refused:
                    log(f"the server refused the {embedder} store: {refused}")
                    return 1
                ingested = ingest(client, embedder, data, args)
                ingests.append(ingested)
                result_line(f"ingest {embedder}", failed=len(ingested.errors), p50=percentile(ingested.batch_ms, 50),
                            p95=percentile(ingested.batch_ms, 95), first_error=next(iter(ingested.errors), ""),
                            details=f"{ingested.memories:,} memories in {ingested.seconds:.1f} s: "
                            f"{ingested.per_second:.0f} memories/s, batches of {args.batch_size}")
                for mode in args.modes:
                    searches = search_all(client, ingested, mode, data, args)
                    runs.append(searches)
                    result_line(f"search {embedder} {mode}", failed=len(searches.errors),
                                p50=percentile(searches.latency_ms, 50), p95=percentile(searches.latency_ms, 95),
                                first_error=next(iter(searches.errors), ""),
                                details=f"recall@10={report.number(score_cell(searches, 'recall', 10, args), 3)}  "
                                f"recall@5={report.number(score_cell(searches, 'recall', 5, args), 3)}  "
                                f"{searches.count()} questions  empty={searches.empty}")
        finally:
            if not args.keep_stores:
                delete_stores(client, args.embedders, what="of this run")
    env = report.environment(
        script="retrieval.py",
        data=f"{data_description(args, data)}; embedders {', '.join(args.embedders)} ({DIMENSION} dimensions)",
        server=report.server_description(args.web_workers, server_env),
        load_at_start=load_at_start,
    )
    log(f"scores ({len(data.questions)} questions, limit {args.limit}; R@10 per category):")
    print_scores(runs, data, args)
    if args.json:
        write_json(args.json, args, data, runs)
    results = section(args, env=env, data=data, ingests=ingests, runs=runs, narrowed=scope(args, data))
    report.publish(results, args.report, log=log, started=started)
    return exit_status()


if __name__ == "__main__":
    run_main(main, on_interrupt="the server was stopped")
