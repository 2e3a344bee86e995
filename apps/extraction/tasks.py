"""django-q2 entry points: thin wrappers that take ids and call services."""

import time

from django.conf import settings

from apps.core.background import start_periodic_in_cluster_worker
from apps.extraction import services
from apps.extraction.metrics import extraction_job_run_observe


def run_extraction_job(job_id: str) -> str:
    started = time.monotonic()
    outcome = services.extraction_job_run(job_id=job_id)
    if outcome.claimed:
        extraction_job_run_observe(outcome.job)
        result = f"{outcome.job.status}: +{outcome.job.added} ~{outcome.job.updated} -{outcome.job.deleted}"
    else:
        result = "not claimed (done, running elsewhere, or not yet due)"
    if settings.EXTRACTION_RUN_INLINE:  # a web request running its own job inline runs no one else's
        return result
    # The rules jobs queued behind this one: their own tasks, delivered later, find them done. Not the model's: its
    # jobs are slow and run side by side on the cluster's workers.
    drained = services.extraction_jobs_run_queued(extractor="rules", until=started + settings.EXTRACTION_DRAIN_SECONDS)
    for each in drained:
        if each.claimed:
            extraction_job_run_observe(each.job)
    return f"{result}; then {len(drained)} queued job(s)" if drained else result


def sweep() -> dict:
    return services.extraction_sweep()


def start_lease_sweep(**signal_kwargs) -> None:
    """django-q2's post_spawn, in each worker process: queue again the jobs of dead workers every
    WORKER_HEARTBEAT_SECONDS, from a thread (q2's scheduler ticks every 30 s, too rarely for this)."""
    start_periodic_in_cluster_worker("extraction lease sweep", settings.WORKER_HEARTBEAT_SECONDS, services.extraction_jobs_revive)
