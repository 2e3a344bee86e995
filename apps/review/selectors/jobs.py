"""Extraction jobs and the overview's numbers, for the stores the reviewer may see."""

import re
from dataclasses import dataclass
from datetime import timedelta

from django.db import connection
from django.db.models import Count, QuerySet
from django.http import Http404
from django.utils import timezone

from apps.extraction.models import ExtractionJob
from apps.memories.models import Memory
from apps.review.access import ConsoleAccess

JOBS_PER_PAGE = 50
OVERVIEW_WINDOW = timedelta(hours=24)
RECENT_FAILURES_SHOWN = 10


def job_list(access: ConsoleAccess, *, status: str | None = None, store_id=None) -> QuerySet[ExtractionJob]:
    jobs = ExtractionJob.objects.filter(store_id__in=access.store_ids).select_related("session")
    if store_id is not None:
        jobs = jobs.filter(store_id=access.store(store_id).pk)
    if status:
        jobs = jobs.filter(status=status)
    return jobs.order_by("-created_at", "-id")


def job_for(access: ConsoleAccess, job_id) -> ExtractionJob:
    job = job_list(access).filter(pk=job_id).first() if access.stores else None
    if job is None:
        raise Http404("No such job.")
    job.store = access.store(job.store_id)
    return job


# What a job's error means, in a reviewer's words (a headline); the message itself follows as the detail.
_PLAIN_ERRORS = [
    (r"ExtractorNotReady", "The store's extractor is not configured on this server"),
    (r"RequestRefused", "The language model's server refused the request"),
    (r"MalformedAnswer", "The language model did not answer in the required form"),
    (r"TruncatedAnswer", "The language model's answer was cut short"),
    (r"PromptTooLong", "The conversation was too long for the language model"),
    (r"EmbeddingError|UpstreamError", "The embedding service failed"),
    (r"\w*Timeout\w*|ConnectError|ReadError", "A service did not answer in time"),
    (r"ConflictError", "Another run changed the session at the same time"),
    (r"OperationalError|InterfaceError", "The database was unavailable"),
    (r"ExtractionError", "The extractor failed"),
]


@dataclass(frozen=True)
class PlainError:
    headline: str
    detail: str


def plain_error(error: str) -> PlainError | None:
    """A job's recorded error ("ClassName: message") as a headline in plain words and the message."""
    if not error or not error.strip():
        return None
    first_line = error.strip().splitlines()[0]
    kind, _, message = first_line.partition(": ")
    if not message or not re.fullmatch(r"[A-Za-z_][\w.]*", kind):
        return PlainError(headline="The job failed", detail=first_line)
    for pattern, headline in _PLAIN_ERRORS:
        if re.fullmatch(pattern, kind.rsplit(".", 1)[-1]):
            return PlainError(headline=headline, detail=message)
    return PlainError(headline="The job failed unexpectedly", detail=message)


@dataclass(frozen=True)
class StoreCounts:
    store: object
    by_status: dict
    total: int


@dataclass(frozen=True)
class JobStats:
    finished: int
    failed: int
    open: int
    lag_p50: float | None  # seconds from a job's creation to its end
    lag_p95: float | None
    oldest_open_seconds: float | None


def memory_counts_by_store(access: ConsoleAccess) -> list[StoreCounts]:
    if not access.stores:
        return []
    rows = (
        Memory.objects.filter(store_id__in=access.store_ids).values_list("store_id", "status")
        .annotate(n=Count("id")).order_by()
    )
    per_store: dict = {store.pk: {} for store in access.stores}
    for store_id, status, n in rows:
        per_store[store_id][status] = n
    return [StoreCounts(store=store, by_status=per_store[store.pk], total=sum(per_store[store.pk].values()))
            for store in access.stores]


_JOB_STATS_SQL = """
SELECT
    count(*) FILTER (WHERE finished_at >= %(since)s),
    count(*) FILTER (WHERE status = 'failed' AND finished_at >= %(since)s),
    count(*) FILTER (WHERE status IN ('queued', 'running')),
    percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - created_at))
        FILTER (WHERE finished_at >= %(since)s),
    percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - created_at))
        FILTER (WHERE finished_at >= %(since)s),
    extract(epoch FROM %(now)s - min(created_at) FILTER (WHERE status IN ('queued', 'running')))
FROM extraction_extractionjob
WHERE store_id = ANY(%(stores)s) AND (finished_at >= %(since)s OR status IN ('queued', 'running'))
"""


def job_stats(access: ConsoleAccess) -> JobStats:
    """Extraction in the last 24 h: jobs finished and failed, lag (creation to end) p50/p95, and the backlog."""
    if not access.stores:
        return JobStats(0, 0, 0, None, None, None)
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(_JOB_STATS_SQL, {"since": now - OVERVIEW_WINDOW, "now": now, "stores": access.store_ids})
        finished, failed, open_jobs, p50, p95, oldest = cursor.fetchone()
    as_float = lambda value: None if value is None else float(value)  # noqa: E731
    return JobStats(finished, failed, open_jobs, as_float(p50), as_float(p95), as_float(oldest))


def recent_failures(access: ConsoleAccess) -> list[ExtractionJob]:
    if not access.stores:
        return []
    jobs = job_list(access, status=ExtractionJob.Status.FAILED).filter(
        finished_at__gte=timezone.now() - OVERVIEW_WINDOW)[:RECENT_FAILURES_SHOWN]
    return access.attach_stores(jobs)
