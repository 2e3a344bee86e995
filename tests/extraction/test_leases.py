"""The lease sweep and the claim, in process: what happens to a running job whose worker died (its lease ran out)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.conversations.models import Session
from apps.extraction.models import ExtractionJob
from apps.extraction.selectors import extraction_queue_lag_seconds
from apps.extraction.services import extraction_job_run, extraction_jobs_revive

pytestmark = pytest.mark.django_db


def _orphaned_job(tenant_a, *, attempts: int, created_ago: timedelta = timedelta(minutes=10)) -> ExtractionJob:
    """A job left running by a worker that died: its lease ran out a few seconds ago."""
    session = Session.objects.create(store=tenant_a.store, external_id="s-1", user_id="alice")
    job = ExtractionJob.objects.create(store=tenant_a.store, session=session, from_seq=0, to_seq=1, trigger="turns",
                                       extractor="rules", status="running", attempts=attempts,
                                       lease_expires_at=timezone.now() - timedelta(seconds=3))
    ExtractionJob.objects.filter(pk=job.pk).update(created_at=timezone.now() - created_ago)
    return job


def test_a_job_queued_again_by_the_sweep_waits_from_then_on_not_since_it_was_created(tenant_a):
    job = _orphaned_job(tenant_a, attempts=1)

    assert extraction_jobs_revive() == {"revived": 1, "failed": 0}

    job.refresh_from_db()
    assert (job.status, job.lease_expires_at) == ("queued", None)
    assert extraction_queue_lag_seconds() < 5  # not 600: /readyz raises no false alarm for an old job


def test_a_job_whose_workers_died_on_every_attempt_fails(tenant_a):
    job = _orphaned_job(tenant_a, attempts=3)

    assert extraction_jobs_revive() == {"revived": 0, "failed": 1}

    job.refresh_from_db()
    assert job.status == "failed" and job.finished_at is not None
    assert "stopped without finishing it, 3 times" in job.error


def test_a_claim_takes_over_an_orphaned_job_only_while_it_has_attempts_left(tenant_a):
    last = _orphaned_job(tenant_a, attempts=3)

    outcome = extraction_job_run(job_id=last.pk)

    assert outcome.claimed is False
    last.refresh_from_db()
    assert (last.status, last.attempts) == ("running", 3)  # the sweep's to fail
    ExtractionJob.objects.filter(pk=last.pk).update(attempts=1)
    assert extraction_job_run(job_id=last.pk).claimed is True
    last.refresh_from_db()
    assert last.attempts == 2
