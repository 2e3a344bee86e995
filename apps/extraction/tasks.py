"""django-q2 entry points: thin wrappers that take ids and call services."""

from django.conf import settings

from apps.core.background import start_periodic_in_cluster_worker
from apps.extraction import services
from apps.extraction.metrics import extraction_job_run_observe
from memoryhub.logging import log_context


def run_extraction_job(job_id: str) -> str:
    with log_context(job_id=job_id):  # every log line of the run names its job
        outcome = services.extraction_job_run(job_id=job_id)
    if not outcome.claimed:
        return "not claimed (done, running elsewhere, or not yet due)"
    extraction_job_run_observe(outcome.job)
    return f"{outcome.job.status}: +{outcome.job.added} ~{outcome.job.updated} -{outcome.job.deleted}"


def sweep() -> dict:
    return services.extraction_sweep()


def start_lease_sweep(**signal_kwargs) -> None:
    """django-q2's post_spawn, in each worker process: queue again the jobs of dead workers every
    WORKER_HEARTBEAT_SECONDS, from a thread (q2's scheduler ticks every 30 s, too rarely for this)."""
    start_periodic_in_cluster_worker("extraction lease sweep", settings.WORKER_HEARTBEAT_SECONDS, services.extraction_jobs_revive)
