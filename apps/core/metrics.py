"""Prometheus metrics: every memoryhub_* series, how they are recorded, and the text /metrics serves.

Web workers and q2 workers are separate processes. When PROMETHEUS_MULTIPROC_DIR names a directory (`manage.py
serve` sets one under DATA_DIR and empties it at start), each process writes its counters and histograms to
files there and /metrics, on any web process, adds up every process of the machine, the worker's job durations
included. Without it (a single process, the tests), the values are this process's own.

What is a state rather than an event (jobs waiting, the queue) is read from the database when /metrics is
scraped, by the collectors apps register with register_scrape_collector(): correct however many processes
there are, and costing nothing between scrapes.
"""

import logging
import os
import time
from contextlib import contextmanager

from django.conf import settings

# getattr: the embedders (which record here) also run under bare settings.configure(), as a library.
if getattr(settings, "PROMETHEUS_MULTIPROC_DIR", ""):
    # prometheus_client opens its files there when the first metric below is made.
    os.makedirs(settings.PROMETHEUS_MULTIPROC_DIR, exist_ok=True)

from prometheus_client import (  # noqa: E402 - after the directory exists
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    values,
)
from prometheus_client.core import GaugeMetricFamily  # noqa: E402
from prometheus_client.multiprocess import MultiProcessCollector  # noqa: E402

logger = logging.getLogger(__name__)

# Seconds, from a cached lookup to a slow extraction; Prometheus's defaults start at 5 ms, above most searches.
_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
_JOB_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)

# --- HTTP (apps/core/middleware.py) -----------------------------------------------------------------
# `route` is the URL pattern that matched ("/api/v1/stores/<identifier:store_name>/search"), never the path:
# one series per endpoint, whatever the ids in the URL. `status` is the class: 2xx, 3xx, 4xx, 5xx.
HTTP_REQUESTS = Counter(
    "memoryhub_http_requests", "HTTP requests answered, by route, method and status class.",
    ["route", "method", "status"],
)
HTTP_REQUEST_DURATION = Histogram(
    "memoryhub_http_request_duration_seconds", "Time to answer an HTTP request (until its body is ready).",
    ["route", "method"], buckets=_LATENCY_BUCKETS,
)
HTTP_EXCEPTIONS = Counter(
    "memoryhub_http_exceptions", "Requests that raised an unhandled exception (answered 500), by exception class.",
    ["route", "exception"],
)

# --- Search (apps/memories/search.py) and embeddings (apps/core/embeddings) -----------------------------
SEARCH_DURATION = Histogram(
    "memoryhub_search_duration_seconds", "Time of one memory search, the query's embedding included, by mode.",
    ["mode"], buckets=_LATENCY_BUCKETS,
)
EMBEDDING_DURATION = Histogram(
    "memoryhub_embedding_duration_seconds", "Time of one call to an embedder (one or more texts), by provider.",
    ["provider"], buckets=_LATENCY_BUCKETS,
)
EMBEDDING_TEXTS = Counter("memoryhub_embedding_texts", "Texts embedded, by provider.", ["provider"])
EMBEDDING_ERRORS = Counter("memoryhub_embedding_errors", "Embedder calls that failed, by provider.", ["provider"])

# --- Extraction jobs (apps/extraction/metrics.py; observed where the job runs, in the q2 worker) ---------------
# outcome: succeeded; retry (the attempt failed and the job is queued again); failed (for good).
EXTRACTION_JOB_RUNS = Counter(
    "memoryhub_extraction_job_runs", "Extraction job runs (attempts), by outcome and extractor.",
    ["outcome", "extractor"],
)
EXTRACTION_JOB_DURATION = Histogram(
    "memoryhub_extraction_job_duration_seconds", "Time of one extraction job run, by outcome and extractor.",
    ["outcome", "extractor"], buckets=_JOB_BUCKETS,
)


def enabled() -> bool:
    return getattr(settings, "METRICS_ENABLED", True)


_recording_failed = False


def recording_failed(exc: Exception) -> None:
    """A metric could not be recorded (in multiprocess mode, its directory went away or is not writable): the
    request or job goes on, and the log says so once per process."""
    global _recording_failed
    if not _recording_failed:
        logger.warning("Metrics cannot be recorded (said once per process; PROMETHEUS_MULTIPROC_DIR=%r): %s: %s",
                       os.environ.get("PROMETHEUS_MULTIPROC_DIR", ""), exc.__class__.__name__, exc)
    _recording_failed = True


@contextmanager
def recording():
    """Around the recording of metrics after the work is done: a failure is logged (once), never raised."""
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - never fail the work for its metric
        recording_failed(exc)


@contextmanager
def timed(histogram: Histogram, **labels):
    """Observe the time the block took (whether or not it raised) on `histogram` with `labels`."""
    if not enabled():
        yield
        return
    started = time.perf_counter()
    try:
        yield
    finally:
        try:
            histogram.labels(**labels).observe(time.perf_counter() - started)
        except Exception as exc:  # noqa: BLE001 - never fail the work for its metric
            recording_failed(exc)


# --- Scrape-time collectors -----------------------------------------------------------------------------

_scrape_collectors: list = []


def register_scrape_collector(collector) -> None:
    """Add a collector whose collect() reads current state (from the database) at each scrape. Its failure
    drops its series from that scrape, and memoryhub_scrape_collector_up says which one failed."""
    _scrape_collectors.append(collector)


class QueueCollector:
    """memoryhub_queue_depth: tasks waiting in django-q2's queue (the ORM broker's table, or the Redis list
    when REDIS_URL is set), extraction jobs, webhook deliveries and schedules alike."""

    name = "queue"

    def __init__(self):
        self._broker = None

    def collect(self):
        from django_q.brokers import get_broker

        if self._broker is None:
            self._broker = get_broker()
        depth = GaugeMetricFamily("memoryhub_queue_depth", "Tasks waiting in the background-job queue.")
        depth.add_metric([], self._broker.queue_size())
        yield depth


register_scrape_collector(QueueCollector())


def _multiprocess() -> bool:
    """Whether prometheus_client runs in multiprocess mode (decided once, from the environment, at import)."""
    return getattr(values.ValueClass, "_multiprocess", False)


def exposition() -> bytes:
    """The Prometheus text format of every series: this machine's processes, then the scrape-time state."""
    if _multiprocess():
        registry = CollectorRegistry()
        MultiProcessCollector(registry)
        text = generate_latest(registry)
    else:
        text = generate_latest(REGISTRY)
    up = GaugeMetricFamily(
        "memoryhub_scrape_collector_up", "1 if the collector's state could be read at this scrape, else 0.",
        labels=["collector"],
    )
    families = []
    for collector in _scrape_collectors:
        try:
            families.extend(collector.collect())
        except Exception as exc:  # noqa: BLE001 - a database or Redis that is down: the other series still count
            logger.warning("The %s metrics could not be read: %s", collector.name, exc)
            up.add_metric([collector.name], 0)
        else:
            up.add_metric([collector.name], 1)
    return text + generate_latest(_Families([*families, up]))


class _Families:
    """A fixed list of metric families as a registry generate_latest() can read."""

    def __init__(self, families):
        self._families = families

    def collect(self):
        return iter(self._families)
