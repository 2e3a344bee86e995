"""What every benchmark script needs: Django in the benchmark database (or, for an in-process script, Django
without one), the bench tenant and a fresh API key, the production environment for the server and worker
subprocesses, log lines, and one result line per phase, whose failures decide the exit status."""

import argparse
import math
import os
import re
import secrets
import signal
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
BENCH_DATABASE = "memoryhub_bench"
# What an in-process script's settings read instead of a database: parsed, never connected to, so the embedded
# PostgreSQL is not started and a query by mistake fails instead of reaching a real database.
NO_DATABASE_URL = "postgres://no-database.invalid/none"
TENANT_SLUG = "bench"
# The bench tenant's limits: rates no benchmark reaches, so requests are still counted (the throttle's cost is
# measured) but never refused; no quotas.
BENCH_TENANT_LIMITS = {
    "reads_per_minute": 1_000_000, "writes_per_minute": 1_000_000, "searches_per_minute": 1_000_000,
    "flushes_per_minute": 1_000_000, "max_memories": 0, "max_stores": 0,
}
# One per run: the server signs the django-q2 tasks it enqueues and the worker checks them with this key.
_SECRET_KEY = secrets.token_urlsafe(50)


def log(message: str = "") -> None:
    print(message, flush=True)


# --- Results ----------------------------------------------------------------------------------------

# Every phase of every script prints one line in this format, `  <label>  failed=N  p50=…  p95=… <unit>  …`;
# tests/test_bench_smoke.py reads the lines back with RESULT_LINE.
RESULT_LINE = re.compile(
    r"^  (?P<label>\S.*?)\s+failed=(?P<failed>\d+)\s+p50=\s*(?P<p50>\S+)\s+p95=\s*(?P<p95>\S+) (?P<unit>\S+)",
    re.MULTILINE,
)
# (label, what went wrong: "" or its errors, timeouts, failed jobs, non-2xx answers, nothing measured)
_phases: list[tuple[str, str]] = []


def result_line(
    label: str, *, failed: int, p50: float, p95: float, unit: str = "ms", digits: int = 1, details: str = "",
    first_error: str = "",
) -> None:
    """Print one phase's result and count it: `failed` (its errors, timeouts, failed jobs, non-2xx answers)
    or no measured value at all (p50 nan) makes the script exit 1 (exit_status)."""
    log(
        f"  {label:<44}  failed={failed:<3} p50={p50:8.{digits}f}  p95={p95:8.{digits}f} {unit}"
        + (f"  {details}" if details else "")
    )
    if failed and first_error:
        log(f"    first error: {first_error[:300]}")
    _phases.append((label, f"{failed} failed" if failed else "nothing measured" if math.isnan(p50) else ""))


def phase_line(label: str, phase, *, count: str = "requests", rate: str = "req/s", details: str = "") -> None:
    """The result_line of a load.PhaseResult: its errors are its failures; p99, requests and rate follow."""
    result_line(
        f"{label} c={phase.concurrency}",
        failed=phase.errors,
        p50=phase.percentile(50),
        p95=phase.percentile(95),
        details=f"p99={phase.percentile(99):.1f} ms  {phase.requests} {count}  {phase.per_second:.1f} {rate}"
        + (f"  {details}" if details else ""),
        first_error=phase.first_error,
    )


def exit_status() -> int:
    """The one decision of a script's exit status: 1 if any phase printed with result_line failed, else 0.
    Times never count (a benchmark reports them); errors, timeouts, failed jobs and non-2xx answers do."""
    failing = [f"{label}: {problem}" for label, problem in _phases if problem]
    if failing:
        log(f"FAILED: {len(failing)} of {len(_phases)} phases: " + "; ".join(failing))
        return 1
    log(f"{len(_phases)} phases, none failed")
    return 0


def int_list(parser: argparse.ArgumentParser, name: str, text: str) -> list[int]:
    """A comma-separated list of positive integers from the command line, e.g. "1,8"."""
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        values = []
    if not values or min(values) < 1:
        parser.error(f"{name} takes positive integers separated by commas, e.g. 1,8")
    return values


def parse_args(parser: argparse.ArgumentParser, argv, *, smoke: dict, report: bool = True) -> argparse.Namespace:
    """The script's options plus the common ones: --smoke, which sets `smoke` as the defaults (options given
    explicitly still win), and for a script that writes a report (`report`) --report and --no-report; --smoke
    writes no report unless --report is given."""
    if report:
        parser.add_argument("--report", default=str(ROOT / "docs" / "performance.md"), help="page to write to")
        parser.add_argument("--no-report", dest="report", action="store_const", const=None, help="write no report")
        smoke = {**smoke, "report": None}
    parser.add_argument("--smoke", action="store_true", help="tiny sizes that run in seconds (a test, not a measure)")
    args = parser.parse_args(argv)
    if args.smoke:
        parser.set_defaults(**smoke)
        args = parser.parse_args(argv)
    return args


def setup_django() -> None:
    """Django's settings and apps, quiet; the database is whatever the environment names."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def setup_django_without_database() -> None:
    """Django for an in-process script: settings and apps, no database (NO_DATABASE_URL)."""
    os.environ["DATABASE_URL"] = NO_DATABASE_URL
    setup_django()


def bootstrap_django() -> None:
    os.environ.setdefault("EMBEDDED_PG_DATABASE", BENCH_DATABASE)
    setup_django()
    from django.conf import settings

    name = settings.DATABASES["default"]["NAME"]
    # The benchmarks drop and rebuild indexes and delete stores: never in someone's working database, nor in
    # the test database (tests/test_bench_smoke.py gives them a database of their own, <test database>_bench).
    if "bench" not in name:
        raise SystemExit(
            f"refusing to run against database {name!r}: its name must contain 'bench' "
            f"(unset DATABASE_URL, or point EMBEDDED_PG_DATABASE / DATABASE_URL at a benchmark database)"
        )


def migrate() -> None:
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)


def bench_tenant_and_key(*, key_name: str):
    """(the bench tenant, a new raw admin API key named `key_name`); earlier keys of that name are revoked."""
    from apps.tenancy import services as tenancy_services
    from apps.tenancy.models import ApiKey, Tenant

    tenant = Tenant.objects.filter(slug=TENANT_SLUG).first() or tenancy_services.tenant_create(
        name="Benchmark", slug=TENANT_SLUG
    )
    tenancy_services.tenant_limits_set(tenant=tenant, limits=BENCH_TENANT_LIMITS)
    # A raw key is shown only once, so each run issues a new one and retires the previous ones.
    for old_key in ApiKey.objects.for_tenant(tenant).active().filter(name=key_name):
        tenancy_services.api_key_revoke(api_key=old_key)
    raw_key = tenancy_services.api_key_issue(tenant=tenant, name=key_name, scopes=["admin"]).raw_key
    return tenant, raw_key


def production_env(**overrides: str) -> dict[str, str]:
    """The environment of the server and worker subprocesses: this database, DEBUG=false, plain HTTP on loopback."""
    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE=os.environ["DJANGO_SETTINGS_MODULE"],
        EMBEDDED_PG_DATABASE=os.environ["EMBEDDED_PG_DATABASE"],
        LOG_LEVEL="WARNING",
    )
    # Measure the production configuration: DEBUG=false (no query logging), plain HTTP on loopback.
    env.setdefault("DEBUG", "false")
    env.setdefault("SECRET_KEY", _SECRET_KEY)
    env.setdefault("SECURE_SSL_REDIRECT", "false")
    env.setdefault("ALLOWED_HOSTS", "127.0.0.1,localhost")
    hosts = [host for host in env.get("ALLOWED_HOSTS", "").split(",") if host.strip()]
    if hosts and "127.0.0.1" not in hosts and "*" not in hosts:
        env["ALLOWED_HOSTS"] = ",".join([*hosts, "127.0.0.1"])
    env.update(overrides)
    return env


def _exit_on_sigterm(signum, frame):
    raise SystemExit(128 + signum)  # so `finally` blocks stop the server and worker subprocesses


def start(title: str, *, database: bool = True) -> tuple[float, float, float]:
    """Common start of a benchmark: clean exit on SIGTERM, Django on the bench database (or on none, for an
    in-process script), a header line.

    Returns the load average at the start, for the report.
    """
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    if database:
        bootstrap_django()
        from django.db import connection

        where = f"database {connection.settings_dict['NAME']}"
    else:
        setup_django_without_database()
        where = "no database"
    import report

    load_at_start = os.getloadavg()
    log(f"{title}: {where}, {report.cpu_count()} CPUs, " + "load average {:.2f} {:.2f} {:.2f}".format(*load_at_start))
    return load_at_start


def run_main(main, *, on_interrupt: str) -> None:
    """The `if __name__ == "__main__":` of a benchmark script: exit with main()'s status; on Ctrl-C print
    `on_interrupt` (what was cleaned up, e.g. "the server was stopped") and exit 130."""
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print(f"\ninterrupted; {on_interrupt}", file=sys.stderr)
        sys.exit(130)
