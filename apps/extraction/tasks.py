"""django-q2 entry points: thin wrappers that take ids and call services."""

from apps.extraction import services


def run_extraction_job(job_id: str) -> str:
    outcome = services.extraction_job_run(job_id=job_id)
    if not outcome.claimed:
        return "not claimed (done, running elsewhere, or not yet due)"
    return f"{outcome.job.status}: +{outcome.job.added} ~{outcome.job.updated} -{outcome.job.deleted}"


def sweep() -> dict:
    return services.extraction_sweep()
