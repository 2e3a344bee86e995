"""Review console benchmark: how fast the queue and the customer page answer with 10,000 memories in the store;
writes its section of docs/performance.md.

    .venv/bin/python bench/review_pages.py [--memories 10000] [--renders 30] [--smoke]

Seeds a store of the bench database (memoryhub_bench) with --memories memories over --customers customers (1 in
100 pending review, each quoting a message of a session), starts uvicorn (--web-workers, default 2), logs a
reviewer in through the login form and times each page over HTTP, as a browser asks for it.
"""

import argparse
import re
import secrets
import subprocess
import sys
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

STORE = "bench-review"
REVIEWER = "bench-reviewer"
SMOKE = {"memories": 300, "customers": 10, "renders": 3}
TARGET_MS = 300.0
WORDS = ["tea", "coffee", "flight", "window", "seat", "allergy", "latex", "paris", "berlin", "invoice", "refund",
         "email", "phone", "dog", "cat", "bike", "train", "hotel", "vegan", "gluten"]


def options(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--web-workers", type=int, default=2, help="uvicorn worker processes (default 2)")
    parser.add_argument("--memories", type=int, default=10_000, help="memories in the store (default 10000)")
    parser.add_argument("--customers", type=int, default=200, help="customers they belong to (default 200)")
    parser.add_argument("--renders", type=int, default=30, help="requests per page (default 30)")
    return parse_args(parser, argv, smoke=SMOKE)


def seed(args):
    """(store, reviewer password): a fresh store of --memories memories and a reviewer of the bench tenant."""
    from django.contrib.auth import get_user_model
    from django.db import connection

    from apps.conversations.services import MessageInput, messages_ingest
    from apps.core.actors import Actor
    from apps.memories.models import Memory, MemoryStore
    from apps.memories.services import MemoryInput, memory_bulk_create, store_create, store_delete
    from apps.tenancy.models import Membership
    from apps.tenancy.services import membership_set

    migrate()
    # The server runs as in production (DEBUG=false), serving the collected, hashed copies of the static files.
    subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"], cwd=ROOT,
                   env=production_env(), check=True)
    tenant, _ = bench_tenant_and_key(key_name="bench-review-pages")
    old = MemoryStore.objects.filter(tenant=tenant, name=STORE).first()
    if old is not None:
        store_delete(store=old)
    store = store_create(tenant=tenant, name=STORE, embedding_provider="hash")
    messages_ingest(store=store, session_external_id="big", user_id="customer-0",
                    messages=[MessageInput(role="user", content=f"message {index}") for index in range(50)])
    items = []
    for index in range(args.memories):
        words = " ".join(WORDS[(index * k) % len(WORDS)] for k in (1, 3, 7))
        pending = index % 100 == 0
        items.append(MemoryInput(
            user_id=f"customer-{index % args.customers}", content=f"Memory {index}: likes {words}",
            status=Memory.Status.PENDING_REVIEW if pending else Memory.Status.ACTIVE,
            source=Memory.Source.EXTRACTION if pending else Memory.Source.API,
            session_id="big" if pending else "",
            provenance={"sources": [{"session_id": "big", "message_seqs": [index % 50 + 1]}]} if pending else {},
        ))
    for start in range(0, len(items), 500):
        memory_bulk_create(store=store, items=items[start:start + 500], actor=Actor.system("bench"))
    password = secrets.token_urlsafe(16)
    user, _ = get_user_model().objects.get_or_create(username=REVIEWER, defaults={"is_staff": True})
    user.is_staff = True
    user.set_password(password)
    user.save()
    membership_set(tenant=tenant, user=user, role=Membership.Role.REVIEWER)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories_memory")
    return store, password


def log_in(client: httpx.Client, password: str) -> None:
    form = client.get("/review/login/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text).group(1)
    answer = client.post("/review/login/", data={"username": REVIEWER, "password": password,
                                                 "csrfmiddlewaretoken": token},
                         headers={"Referer": f"{client.base_url}/review/login/"})
    if answer.status_code != 302:
        raise RuntimeError(f"login failed: {answer.status_code}")


def time_page(client: httpx.Client, path: str, renders: int) -> tuple[list[float], int]:
    client.get(path)  # warm-up
    times, failed = [], 0
    for _ in range(renders):
        started = time.perf_counter()
        response = client.get(path)
        elapsed = (time.perf_counter() - started) * 1000
        if response.status_code == 200:
            times.append(elapsed)
        else:
            failed += 1
    return times, failed


def main(argv=None) -> int:
    args = options(argv)
    load_at_start = harness_start("memoryhub review console benchmark")

    from load import Server

    started = time.perf_counter()
    log(f"seeding {args.memories} memories over {args.customers} customers ...")
    store, password = seed(args)
    pages = {
        "Review queue": "/review/",
        "Customer page": "/review/customers/customer-0/",
        "Customer page, search by meaning": "/review/customers/customer-0/?q=latex+allergy",
        "Session transcript": f"/review/stores/{store.pk}/sessions/big/",
        "Overview": "/review/overview/",
    }
    results = {}
    # Plain HTTP on loopback: the login's cookies cannot be marked Secure here.
    server_env = production_env(SESSION_COOKIE_SECURE="false", CSRF_COOKIE_SECURE="false")
    with Server(root=ROOT, web_workers=args.web_workers, env=server_env, log=log) as server:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            log_in(client, password)
            for name, path in pages.items():
                results[name] = time_page(client, path, args.renders)
                times, failed = results[name]
                result_line(name, failed=failed, p50=percentile(times, 50), p95=percentile(times, 95))
    env = report.environment(script="review_pages.py",
                             data=f"{args.memories:,} memories over {args.customers} customers, 1 in 100 pending",
                             server=report.server_description(args.web_workers), load_at_start=load_at_start)
    rows = [[name, len(times), failed, report.number(percentile(times, 50)), report.number(percentile(times, 95))]
            for name, (times, failed) in results.items()]
    targets = [report.target(f"{name} p95, {args.memories:,} memories", percentile(results[name][0], 95), unit="ms",
                             at_most=TARGET_MS, ok=not results[name][1])
               for name in ("Review queue", "Customer page")]
    section = report.Section(
        name="review-pages",
        title="Review console pages",
        intro=f"Written by `bench/review_pages.py` on {env['Date']}. A logged-in reviewer's GETs over HTTP "
        "(server-rendered pages, `DEBUG=false`), one at a time, after one warm-up request each.",
        setup=env,
        targets=targets,
        tables=[report.Table("Page answers", ["Page", "Requests", "Errors", "p50 ms", "p95 ms"], rows,
                             note="The number of queries per page does not grow with the store: "
                             "tests/review/test_query_counts.py and test_query_counts_at_scale.py hold it.")],
    )
    report.publish(section, args.report, log=log, started=started)
    return exit_status()


if __name__ == "__main__":
    run_main(main, on_interrupt="the server was stopped")
