"""Agent-outage benchmark: what memoryhub being down costs a Strands agent's turn; writes its section of
docs/performance.md.

    .venv/bin/python bench/agent_outage.py [--turns 20] [--smoke]

Starts the web server on the bench database (memoryhub_bench) behind a fault proxy
(`memoryhub_client.fault_proxy`), builds a Strands agent with `MemoryHubStore` as its memory and a scripted
model (no LLM: the model answers at once, so what is measured is memory's share of a turn) and runs
--turns turns per scenario. Each turn is two model calls: a `search_memory` tool call, then the answer (so
two injection searches and one tool search), then the turn's save. Scenarios: no memory at all (the
baseline); memoryhub healthy; refusing connections; answering 503; hanging (accepts, never answers) from
the start; hanging from the middle of a conversation (the breaker closed when it starts); losing every
answer. Reported per scenario: the agent's construction, and the turns' p50/p95/max and their excess over
the baseline. Target: with the server hanging, no turn costs more than 1.5 s over the baseline.
"""

import argparse
import statistics
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

STORE = "bench-agent"
SMOKE = {"turns": 3}
TARGET_EXTRA_MS = 1500.0
SCENARIOS = ("no memory", "healthy", "refused", "503 errors", "hanging", "hangs mid-run", "answers lost")


def options(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=20, help="turns per scenario (default 20)")
    return parse_args(parser, argv, smoke=SMOKE)


def prepare():
    from apps.memories.models import MemoryStore
    from apps.memories.services import store_create, store_delete

    migrate()
    tenant, raw_key = bench_tenant_and_key(key_name="bench-agent-outage")
    old = MemoryStore.objects.filter(tenant=tenant, name=STORE).first()
    if old is not None:
        store_delete(store=old)
    store_create(tenant=tenant, name=STORE, embedding_provider="hash")
    return raw_key


def seed(url: str, raw_key: str) -> None:
    """Something for the healthy agent to find: three facts about its customer."""
    facts = ("The customer prefers dark mode.", "The customer's name is Alice.", "Alice is allergic to latex.")
    response = httpx.post(f"{url}/api/v1/stores/{STORE}/memories/bulk", timeout=30,
                          headers={"Authorization": f"Bearer {raw_key}"},
                          json={"memories": [{"user_id": "alice", "content": fact} for fact in facts]})
    response.raise_for_status()


def run_scenario(name: str, proxy, raw_key: str, turns: int) -> dict:
    from strands import Agent
    from strands.memory import MemoryManager

    from memoryhub_client import resilience
    from memoryhub_client.strands import MemoryHubStore
    from memoryhub_client.testing import ScriptedModel, ToolCall

    resilience.reset(timeout=0)  # each scenario starts as a new process would
    proxy.mode = {"refused": "refuse", "503 errors": "error", "hanging": "hang", "answers lost": "drop"}.get(
        name, "forward")
    script = []
    for turn in range(turns):
        script += [ToolCall("search_memory", {"query": "display preferences"}), f"Answer {turn}."]
    model = ScriptedModel(script)
    started = time.perf_counter()
    if name == "no memory":
        agent = Agent(model=model, callback_handler=None)
    else:
        store = MemoryHubStore(store=STORE, user_id="alice", base_url=proxy.url, api_key=raw_key)
        agent = Agent(model=model, memory_manager=MemoryManager(stores=[store]), callback_handler=None)
        agent.tool_registry  # noqa: B018 - built by now
    build_ms = (time.perf_counter() - started) * 1000
    durations, failed = [], 0
    for turn in range(turns):
        if name == "hangs mid-run" and turn == turns // 2:
            proxy.mode = "hang"
        started = time.perf_counter()
        try:
            agent(f"Turn {turn}: which display mode do I like?")
        except Exception as error:  # noqa: BLE001 - counted; the scenario goes on
            failed += 1
            log(f"  {name}: turn {turn} raised {error!r}")
        durations.append((time.perf_counter() - started) * 1000)
    injected = sum(any("<memory>" in text for text in model.texts_sent(call)) for call in range(len(model.calls)))
    proxy.mode = "forward"
    return {"build_ms": build_ms, "durations": durations, "failed": failed, "injected": injected,
            "model_calls": len(model.calls)}


def section(args, env, results) -> report.Section:
    baseline = statistics.median(results["no memory"]["durations"])
    rows, targets = [], []
    for name in SCENARIOS:
        result = results[name]
        durations = result["durations"]
        worst_extra = max(durations) - baseline
        rows.append([name, report.number(result["build_ms"]), report.number(percentile(durations, 50)),
                     report.number(percentile(durations, 95)), report.number(max(durations)),
                     report.number(max(0.0, worst_extra)), f"{result['injected']}/{result['model_calls']}",
                     result["failed"]])
        if name in ("hanging", "hangs mid-run"):
            targets.append(report.target(f"Worst turn's extra cost, memoryhub {name}", worst_extra, unit="ms",
                                         at_most=TARGET_EXTRA_MS, ok=not result["failed"]))
    return report.Section(
        name="agent-outage",
        title="An agent while memoryhub is down",
        intro=f"Written by `bench/agent_outage.py` on {env['Date']}. A Strands agent with `MemoryHubStore` (default "
        f"settings: 1 s budget per memory call, circuit breaker, outbox) and a scripted model that answers at once, "
        f"so a turn's time is memory's share; {args.turns} turns per scenario, each two model calls (a "
        "`search_memory` tool call, then the answer) and a save. The server runs as in production behind a fault "
        "proxy (`memoryhub_client.fault_proxy`).",
        setup=env,
        targets=targets,
        tables=[report.Table(
            "Agent construction and turns, by scenario",
            ["Scenario", "Build ms", "Turn p50 ms", "Turn p95 ms", "Turn max ms", "Worst extra ms",
             "Model calls given memory", "Turns failed"],
            rows,
            note=f"Extra: over the median turn without memory ({report.number(baseline)} ms). A hanging server costs "
            "the agent's construction one timeout (the first check), then the breaker keeps memory calls off the "
            "agent's path and the outbox probes in the background; hanging mid-run costs the first turn after it "
            "one timeout.")],
    )


def main(argv=None) -> int:
    args = options(argv)
    load_at_start = harness_start("memoryhub agent-outage benchmark")

    from load import Server

    from memoryhub_client.fault_proxy import FaultyProxy

    started = time.perf_counter()
    raw_key = prepare()
    results = {}
    with Server(root=ROOT, web_workers=1, env=production_env(), log=log) as server, \
            FaultyProxy(server.url) as proxy:
        seed(server.url, raw_key)
        for name in SCENARIOS:
            log(f"{name}: {args.turns} turns ...")
            results[name] = run_scenario(name, proxy, raw_key, args.turns)
    baseline = statistics.median(results["no memory"]["durations"])
    for name in SCENARIOS:
        durations = results[name]["durations"]
        result_line(name, failed=results[name]["failed"], p50=percentile(durations, 50),
                    p95=percentile(durations, 95),
                    details=f"build {results[name]['build_ms']:.0f} ms, worst extra "
                            f"{max(durations) - baseline:.0f} ms")
    env = report.environment(script="agent_outage.py", data=f"{args.turns} turns per scenario",
                             server=report.server_description(1), load_at_start=load_at_start)
    report.publish(section(args, env, results), args.report, log=log, started=started)
    return exit_status()


if __name__ == "__main__":
    run_main(main, on_interrupt="the server was stopped")
