"""Export and import at scale: `manage.py export_store` and `import_store` on a store of --n memories, as subprocesses
whose memory is sampled while they run. Constant memory means the resident set a quarter of the way through is
the resident set at the end, whatever --n.

The store is seeded with binary COPY (bench/seeding.py: hash embeddings, no revisions); the export carries the
vectors (--with-embeddings), the import writes them into a new store of the same embedder (so it computes none)
with a revision per memory. `.venv/bin/python bench/portability.py --n 200000`.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness
import psutil
from harness import log

SECTION = "portability"
SOURCE_STORE = "bench-portability"
COPY_STORE = "bench-portability-copy"


def run_sampled(command: list[str], env: dict[str, str]) -> dict:
    """Run `command`, sampling its resident set every 0.1 s: elapsed seconds, peak RSS and RSS along the way."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=harness.ROOT, env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    watched = psutil.Process(process.pid)
    samples: list[tuple[float, int]] = []
    while process.poll() is None:
        try:
            samples.append((time.perf_counter() - started, watched.memory_info().rss))
        except psutil.NoSuchProcess:
            break
        time.sleep(0.1)
    output = process.stdout.read()
    elapsed = time.perf_counter() - started
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command[1:3])} failed:\n{output[-3000:]}")

    def rss_at(fraction: float) -> float:
        due = [rss for at, rss in samples if at >= fraction * elapsed]
        return (due[0] if due else samples[-1][1]) / 2**20

    return {"seconds": elapsed, "peak_mb": max(rss for _, rss in samples) / 2**20,
            "rss_mb": [rss_at(fraction) for fraction in (0.25, 0.5, 0.75)], "output": output.strip()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=200_000, help="memories in the exported store")
    parser.add_argument("--users", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=7)
    args = harness.parse_args(parser, argv, smoke={"n": 2_000, "users": 50})
    load_at_start = harness.start("bench/portability.py")
    started = time.perf_counter()
    harness.migrate()

    import report
    import seeding
    from corpus import Corpus

    from apps.memories.models import Memory, MemoryStore
    from apps.memories.services import store_create

    tenant, _ = harness.bench_tenant_and_key(key_name="portability")
    store = MemoryStore.objects.filter(tenant=tenant, name=SOURCE_STORE).first()
    if store is not None and Memory.objects.filter(store=store).count() != args.n:
        seeding.delete_store(store)
        store = None
    if store is None:
        store = store_create(tenant=tenant, name=SOURCE_STORE, embedding_provider="hash")
        log(f"seeding {args.n:,} memories over {args.users:,} users ...")
        seeding.seed_store(store, corpus=Corpus(args.seed), n=args.n, users=args.users, log=log)
    stale = MemoryStore.objects.filter(tenant=tenant, name=COPY_STORE).first()
    if stale is not None:
        seeding.delete_store(stale)

    env = {**os.environ, "LOG_LEVEL": "WARNING"}
    manage = [sys.executable, "manage.py"]
    rows, targets = [], []
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "store.jsonl"
        log(f"export_store of {args.n:,} memories with their vectors ...")
        export = run_sampled([*manage, "export_store", tenant.slug, SOURCE_STORE, "--with-embeddings",
                              "--out", str(path)], env)
        size_mb = path.stat().st_size / 2**20
        log(f"import_store into {COPY_STORE} ...")
        imported = run_sampled([*manage, "import_store", tenant.slug, COPY_STORE, "--in", str(path)], env)
        log(f"  {imported['output'].splitlines()[-1]}")
    copy = MemoryStore.objects.get(tenant=tenant, name=COPY_STORE)
    copied = Memory.objects.filter(store=copy).count()
    seeding.delete_store(copy)

    for label, run in (("export_store --with-embeddings", export), ("import_store (vectors carried)", imported)):
        rate = args.n / run["seconds"]
        quarter, half, three_quarters = run["rss_mb"]
        log(f"  {label:<34} {run['seconds']:7.1f} s  {rate:9,.0f} memories/s  RSS at 25/50/75% "
            f"{quarter:.0f}/{half:.0f}/{three_quarters:.0f} MB  peak {run['peak_mb']:.0f} MB")
        rows.append([label, f"{args.n:,}", f"{run['seconds']:.1f}", f"{rate:,.0f}", f"{quarter:.0f}", f"{half:.0f}",
                     f"{three_quarters:.0f}", f"{run['peak_mb']:.0f}"])
        targets.append(report.target(f"{label}: peak resident memory at {args.n:,} memories", run["peak_mb"],
                                     unit="MB", digits=0))
    failed = copied != args.n
    log(f"  copy holds {copied:,} of {args.n:,} memories" + ("  FAILED" if failed else ""))

    section = report.Section(
        name=SECTION,
        title="Export and import (`bench/portability.py`)",
        intro=f"`manage.py export_store --with-embeddings` of a store of {args.n:,} memories ({args.users:,} users, "
              f"hash embeddings, 384 dimensions; a {size_mb:,.0f} MB file), then `manage.py import_store` of that file "
              "into a new store of the same embedder (vectors carried, one revision written per memory, HNSW and "
              "full-text indexes maintained as rows arrive). Each runs as its own process; its resident set is sampled "
              "every 0.1 s. Constant memory: the resident set a quarter of the way through is the one at the end.",
        setup=report.environment(script="portability.py", data=f"{args.n:,} memories", server="none (commands)",
                                 load_at_start=load_at_start),
        targets=targets,
        tables=[report.Table(title="Runs", columns=["Command", "Memories", "Seconds", "Memories/s", "RSS 25% MB",
                                                    "RSS 50% MB", "RSS 75% MB", "Peak RSS MB"], rows=rows)],
    )
    report.publish(section, args.report, log=log, started=started)
    return 1 if failed else 0


if __name__ == "__main__":
    harness.run_main(main, on_interrupt="the subprocess was stopped with this script")
