"""Observability overhead benchmark: what Prometheus metrics and JSON logs cost a search; writes its section of
docs/performance.md.

    .venv/bin/python bench/observability.py [--n 20000] [--users 200] [--rounds 3] [--duration 10] [--smoke]

Seeds a hash-embedded store in the bench database (memoryhub_bench), then measures per-user hybrid searches over
HTTP at concurrency 1 on the same server (uvicorn, --web-workers, production settings) in two configurations,
started alternately --rounds times each so that a drift of the machine's load falls on both:
- off: METRICS_ENABLED=false, ACCESS_LOG=false, text logs at WARNING (what remains is the request id);
- on: metrics in prometheus_client's multiprocess mode (a PROMETHEUS_MULTIPROC_DIR, as `manage.py serve` runs
  it), and a JSON access-log line per request at INFO, written to the server's log file.
The difference of their p50 and p95 is the overhead (target: at most 0.5 ms at p50). A search of the "on" server
is checked to have been counted by /metrics and logged with its request id (otherwise the phase fails).

A third phase times the instrumentation alone, in this process: the middleware around a view that does nothing,
a search's and an embedding's observations and the access line formatted as JSON, with everything on versus off;
this is the overhead without the noise of HTTP and PostgreSQL.
"""

import argparse
import json
import os
import random
import shutil
import tempfile
import time

import httpx
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
from load import percentile

KEY_NAME = "bench/observability.py"
STORE = "bench-observability"
CORPUS_VERSION = 1
DIMENSION = 384
SMOKE = {"n": 400, "users": 20, "rounds": 1, "duration": 1.0, "warmup": 0.3, "iterations": 2000}
TARGET_OVERHEAD_MS = 0.5
CONFIGURATIONS = {
    "off": {"METRICS_ENABLED": "false", "ACCESS_LOG": "false", "LOG_FORMAT": "text", "LOG_LEVEL": "WARNING"},
    "on": {"METRICS_ENABLED": "true", "ACCESS_LOG": "true", "LOG_FORMAT": "json", "LOG_LEVEL": "INFO"},
}


def options(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20_000, help="memories in the store (default 20,000)")
    parser.add_argument("--users", type=int, default=200, help="users they belong to (default 200)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--web-workers", type=int, default=1, help="uvicorn worker processes (default 1)")
    parser.add_argument("--rounds", type=int, default=3, help="starts of each configuration (default 3)")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds of searches per start (default 10)")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds of searches before measuring (default 2)")
    parser.add_argument("--max-requests", type=int, default=100_000)
    parser.add_argument("--iterations", type=int, default=50_000,
                        help="requests through the instrumentation in the in-process phase (default 50,000)")
    return parse_args(parser, argv, smoke=SMOKE)


def prepare(args):
    import seeding
    from corpus import Corpus

    from apps.memories import services as memory_services
    from apps.memories.models import Memory, MemoryStore

    log("migrating ...")
    migrate()
    tenant, raw_key = bench_tenant_and_key(key_name=KEY_NAME)
    signature = json.dumps({"bench": "observability", "n": args.n, "users": args.users, "seed": args.seed,
                            "corpus": CORPUS_VERSION}, sort_keys=True)
    store = MemoryStore.objects.filter(tenant=tenant, name=STORE).first()
    if store is not None and store.description == signature and Memory.objects.filter(store=store).count() == args.n:
        log(f"reusing store {STORE!r}: {args.n:,} memories over {args.users:,} users")
        return raw_key
    if store is not None:
        seeding.delete_store(store)
    store = memory_services.store_create(tenant=tenant, name=STORE, description=signature,
                                         embedding_provider="hash", embedding_dimension=DIMENSION)
    log(f"seeding {args.n:,} memories over {args.users:,} users ...")
    seeding.seed_store(store, corpus=Corpus(args.seed), n=args.n, users=args.users, log=log)
    return raw_key


def search_request(users: int):
    from corpus import QUERIES
    from load import timed_search

    path = f"/api/v1/stores/{STORE}/search"

    def request(client, rng):
        body = {"query": rng.choice(QUERIES), "mode": "hybrid", "limit": 10,
                "user_id": f"user-{rng.randrange(users):06d}"}
        return timed_search(client, path, body, empty_is_error=False)

    return request


def run_configuration(name: str, round_index: int, raw_key: str, args):
    """One start of the server in configuration `name`: (its search phase, problems with the instrumentation)."""
    from load import Server, run_phase

    env = production_env(**CONFIGURATIONS[name])
    metrics_dir = None
    if name == "on":
        metrics_dir = tempfile.mkdtemp(prefix="memoryhub-bench-metrics-")
        env["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir
    else:
        env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    headers = {"Authorization": f"Bearer {raw_key}"}
    problems = []
    try:
        with Server(root=ROOT, web_workers=args.web_workers, env=env, log=log) as server:
            result = run_phase(
                name=f"search, observability {name}", url=server.url, headers=headers,
                request=search_request(args.users), concurrency=1, warmup=args.warmup, duration=args.duration,
                max_requests=args.max_requests,
                make_rng=lambda index: random.Random(f"{args.seed}:{round_index}:{index}"),
            )
            if name == "on":
                problems = check_instrumentation(server, headers, result)
    finally:
        if metrics_dir:
            shutil.rmtree(metrics_dir, ignore_errors=True)
    return result, problems


def check_instrumentation(server, headers: dict, result) -> list[str]:
    """That the measured searches were counted and logged: an overhead of instrumentation that did nothing would
    prove nothing."""
    from prometheus_client.parser import text_string_to_metric_families

    probe = httpx.post(f"{server.url}/api/v1/stores/{STORE}/search", json={"query": "dog", "user_id": "user-000001"},
                       headers={**headers, "X-Request-ID": "bench-probe"}, timeout=30)
    text = httpx.get(f"{server.url}/metrics", headers=headers, timeout=30).text
    counted = sum(sample.value for family in text_string_to_metric_families(text) for sample in family.samples
                  if sample.name == "memoryhub_search_duration_seconds_count" and sample.labels == {"mode": "hybrid"})
    problems = []
    if probe.status_code != 200 or counted < result.requests + 1:
        problems.append(f"/metrics counted {counted:.0f} hybrid searches of the {result.requests + 1} sent")
    logged = [json.loads(line) for line in open(server.log_file.name, encoding="utf-8") if line.startswith("{")]
    access = [line for line in logged if line.get("logger") == "memoryhub.access" and "/search" in line["path"]]
    if len(access) < result.requests + 1 or not any(line.get("request_id") == "bench-probe" for line in access):
        problems.append(f"{len(access)} access-log lines for the {result.requests + 1} searches sent")
    return problems


def in_process_cost(iterations: int) -> dict[str, list[float]]:
    """µs per request of the instrumentation alone, per batch of 1,000: everything on, then everything off."""
    import logging

    from django.conf import settings
    from django.http import HttpResponse
    from django.test import RequestFactory
    from django.urls import resolve

    from apps.core import metrics
    from apps.core.middleware import RequestObservabilityMiddleware
    from memoryhub.logging import ContextFilter, JsonFormatter, unbind_request

    def view(request):
        with metrics.timed(metrics.SEARCH_DURATION, mode="hybrid"):
            pass
        if settings.METRICS_ENABLED:  # as Embedder.embed observes a query's embedding
            metrics.EMBEDDING_DURATION.labels(provider="hash").observe(0.0001)
            metrics.EMBEDDING_TEXTS.labels(provider="hash").inc(1)
        return HttpResponse(b"{}", content_type="application/json")

    middleware = RequestObservabilityMiddleware(view)
    request = RequestFactory().post(f"/api/v1/stores/{STORE}/search", data=b"{}", content_type="application/json")
    request.resolver_match = resolve(request.path)  # as URL resolution, inside the chain, leaves it
    access = logging.getLogger("memoryhub.access")
    sink = open(os.devnull, "w")  # noqa: SIM115 - closed below
    handler = logging.StreamHandler(sink)
    handler.addFilter(ContextFilter())
    handler.setFormatter(JsonFormatter())
    saved = (access.level, access.propagate, settings.METRICS_ENABLED)
    costs = {}
    try:
        access.addHandler(handler)
        access.propagate = False
        for name, enabled in (("on", True), ("off", False), ("on", True), ("off", False)):
            settings.METRICS_ENABLED = enabled
            access.setLevel(logging.INFO if enabled else logging.WARNING)
            batches = costs.setdefault(name, [])
            for _ in range(max(1, iterations // 2000)):
                started = time.perf_counter()
                for _ in range(1000):
                    middleware(request)
                    unbind_request()
                batches.append((time.perf_counter() - started) * 1000)  # ms per 1,000 = µs per request
    finally:
        access.removeHandler(handler)
        access.setLevel(saved[0])
        access.propagate = saved[1]
        settings.METRICS_ENABLED = saved[2]
        sink.close()
    return costs


def section(args, env, searches, problems, costs) -> report.Section:
    p50 = {name: percentile(latencies, 50) for name, latencies in searches.items()}
    p95 = {name: percentile(latencies, 95) for name, latencies in searches.items()}
    cost_on, cost_off = percentile(costs["on"], 50), percentile(costs["off"], 50)
    ok = not problems and all(searches.values())
    rows = [[f"observability {name}", len(searches[name]), report.number(p50[name], 2), report.number(p95[name], 2),
             report.number(percentile(searches[name], 99), 2)] for name in ("off", "on")]
    rows.append(["difference (on − off)", "", report.number(p50["on"] - p50["off"], 2),
                 report.number(p95["on"] - p95["off"], 2), ""])
    return report.Section(
        name="observability",
        title="Observability overhead",
        intro=f"Written by `bench/observability.py` on {env['Date']}. Per-user hybrid searches over HTTP at "
        f"concurrency 1, {args.rounds} start(s) of the server per configuration, alternating, "
        f"{args.duration:g} s each: with Prometheus metrics (multiprocess mode) and a JSON access-log line per "
        "request (on), and without (off).",
        setup=env,
        targets=[
            report.target("Metrics + JSON logs, added search p50", p50["on"] - p50["off"], unit="ms",
                          at_most=TARGET_OVERHEAD_MS, digits=2, ok=ok),
            report.target("Instrumentation alone, per request (in-process)", (cost_on - cost_off) / 1000,
                          unit="ms", digits=3),
        ],
        tables=[
            report.Table("Search latency, off and on", ["Configuration", "Searches", "p50 ms", "p95 ms", "p99 ms"],
                         rows, note="Off: METRICS_ENABLED=false, ACCESS_LOG=false, text logs at WARNING. On: "
                         "metrics written to a PROMETHEUS_MULTIPROC_DIR as `serve` runs them, JSON logs at INFO "
                         "with one access line per request, to the server's log file."),
            report.Table("The instrumentation alone, in-process", ["Configuration", "µs per request (p50 of batches)",
                                                                   "p95"],
                         [["on", report.number(cost_on, 1), report.number(percentile(costs["on"], 95), 1)],
                          ["off", report.number(cost_off, 1), report.number(percentile(costs["off"], 95), 1)]],
                         note="The middleware around a view that does nothing but a search's and an embedding's "
                         "observations, batches of 1,000 requests; off still gives each request its id."),
        ],
        notes=[("Instrumentation problems: " + "; ".join(problems)) if problems else ""],
    )


def main(argv=None) -> int:
    args = options(argv)
    # The in-process phase measures the metrics as the servers record them: in multiprocess mode, which
    # prometheus_client chooses from the environment when it is first imported (by Django's setup, next).
    in_process_dir = tempfile.mkdtemp(prefix="memoryhub-bench-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = in_process_dir
    try:
        load_at_start = harness_start("memoryhub observability benchmark")
        started = time.perf_counter()
        raw_key = prepare(args)
        searches: dict[str, list[float]] = {"off": [], "on": []}
        failures = {"off": 0, "on": 0}
        first_errors = {"off": "", "on": ""}
        problems: list[str] = []
        for round_index in range(args.rounds):
            order = ("off", "on") if round_index % 2 == 0 else ("on", "off")
            for name in order:
                log(f"round {round_index + 1}/{args.rounds}: observability {name} ...")
                result, found = run_configuration(name, round_index, raw_key, args)
                searches[name].extend(outcome.latency_ms for outcome in result.outcomes if outcome.ok)
                failures[name] += result.errors + len(found)
                first_errors[name] = first_errors[name] or result.first_error or "; ".join(found)
                problems.extend(found)
        for name in ("off", "on"):
            result_line(f"search, observability {name} c=1", failed=failures[name],
                        p50=percentile(searches[name], 50), p95=percentile(searches[name], 95), digits=2,
                        details=f"{len(searches[name])} searches", first_error=first_errors[name])
        log(f"in-process: {args.iterations:,} requests through the instrumentation, on and off ...")
        costs = in_process_cost(args.iterations)
        on, off = percentile(costs["on"], 50), percentile(costs["off"], 50)
        result_line("instrumentation alone, per request", failed=0, p50=on - off,
                    p95=percentile(costs["on"], 95) - percentile(costs["off"], 95), unit="µs", digits=1,
                    details=f"on {on:.1f} µs, off {off:.1f} µs")
        log(f"search p50 on − off: {percentile(searches['on'], 50) - percentile(searches['off'], 50):+.2f} ms, "
            f"p95: {percentile(searches['on'], 95) - percentile(searches['off'], 95):+.2f} ms")
        env = report.environment(
            script="observability.py",
            data=f"{args.n:,} memories over {args.users:,} users, hash embedder, {DIMENSION} dimensions, seed "
            f"{args.seed}",
            server=report.server_description(args.web_workers), load_at_start=load_at_start,
        )
        report.publish(section(args, env, searches, problems, costs), args.report, log=log, started=started)
        return exit_status()
    finally:
        shutil.rmtree(in_process_dir, ignore_errors=True)


if __name__ == "__main__":
    run_main(main, on_interrupt="the server was stopped")
