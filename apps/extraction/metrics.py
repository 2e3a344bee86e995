"""Extraction's Prometheus series (named in apps/core/metrics.py): each run's outcome and duration, observed by
the process that ran it (the q2 worker), and the jobs waiting, read from the database at each scrape."""

from django.db.models import Count, Q
from prometheus_client.core import GaugeMetricFamily

from apps.core import metrics
from apps.extraction.models import ExtractionJob
from apps.extraction.selectors import extraction_queue_lag_seconds

# After a run, the job's status says how the run ended: queued again means the attempt failed and will be retried.
_RUN_OUTCOMES = {
    ExtractionJob.Status.SUCCEEDED: "succeeded",
    ExtractionJob.Status.QUEUED: "retry",
    ExtractionJob.Status.FAILED: "failed",
}
# Jobs in these states are few (finished ones are not counted: memoryhub_extraction_job_runs_total counts them),
# so the scrape reads them through the (status, lease_expires_at) index, however many jobs ever ran.
_COUNTED_STATES = (ExtractionJob.Status.QUEUED, ExtractionJob.Status.RUNNING, ExtractionJob.Status.FAILED)


def extraction_job_run_observe(job: ExtractionJob) -> None:
    """Count the run that just ended and observe its duration."""
    outcome = _RUN_OUTCOMES.get(job.status)
    if outcome is None or job.duration_ms is None or not metrics.enabled():
        return
    with metrics.recording():
        metrics.EXTRACTION_JOB_RUNS.labels(outcome=outcome, extractor=job.extractor).inc()
        metrics.EXTRACTION_JOB_DURATION.labels(outcome=outcome, extractor=job.extractor).observe(
            job.duration_ms / 1000)


class ExtractionJobsCollector:
    """memoryhub_extraction_jobs{state} (queued, running, failed for good) and memoryhub_extraction_lag_seconds:
    how long the oldest job that is due (not waiting for a retry's backoff) has waited; 0 with none waiting.
    Two indexed queries."""

    name = "extraction_jobs"

    def collect(self):
        counts = ExtractionJob.objects.filter(status__in=_COUNTED_STATES).aggregate(
            **{state: Count("pk", filter=Q(status=state)) for state in _COUNTED_STATES}
        )
        jobs = GaugeMetricFamily("memoryhub_extraction_jobs", "Extraction jobs by state (finished ones: see "
                                 "memoryhub_extraction_job_runs_total).", labels=["state"])
        for state in _COUNTED_STATES:
            jobs.add_metric([state], counts[state])
        yield jobs
        lag = GaugeMetricFamily("memoryhub_extraction_lag_seconds",
                                "Age of the oldest extraction job due to run and not yet taken by a worker.")
        lag.add_metric([], extraction_queue_lag_seconds())  # what /readyz compares with its limit
        yield lag
