"""The worker's task, in process: its own job, then the rules jobs queued behind it (apps.extraction.tasks).

tests/extraction/test_worker_integration.py runs the same task in a real qcluster process.
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.conversations.services.messages import MessageInput, messages_ingest
from apps.extraction.models import ExtractionJob
from apps.extraction.tasks import run_extraction_job
from apps.memories.models import Memory

pytestmark = pytest.mark.django_db(transaction=True)


def _queued_job(store, user_id: str, text: str) -> ExtractionJob:
    """A session of `user_id` whose message waits for a worker (not run inline: EXTRACTION_RUN_INLINE is off)."""
    ingest = messages_ingest(store=store, session_external_id=f"chat-{user_id}", user_id=user_id,
                             messages=[MessageInput(role="user", content=text)])
    job = ingest.extraction_job
    assert job is not None and job.status == "queued"
    return job


def _status(job: ExtractionJob) -> str:
    job.refresh_from_db()
    return job.status


def test_a_task_runs_the_rules_jobs_queued_behind_its_own_oldest_first(tenant_a):
    own = _queued_job(tenant_a.store, "alice", "I live in Lisbon.")
    older = _queued_job(tenant_a.store, "bob", "I work at Halden Bank.")
    newer = _queued_job(tenant_a.store, "carol", "My email is carol@example.com.")
    ExtractionJob.objects.filter(pk=older.pk).update(created_at=timezone.now() - timedelta(minutes=5))

    result = run_extraction_job(str(own.pk))

    assert result.endswith("then 2 queued job(s)")
    assert [_status(job) for job in (own, older, newer)] == ["succeeded"] * 3
    assert older.started_at < newer.started_at
    assert set(Memory.objects.values_list("user_id", flat=True)) == {"alice", "bob", "carol"}
    # The tasks queued for the other two arrive later and find their jobs done.
    assert run_extraction_job(str(newer.pk)) == "not claimed (done, running elsewhere, or not yet due)"


def test_jobs_not_due_and_jobs_of_the_model_wait_for_their_own_task(tenant_a):
    own = _queued_job(tenant_a.store, "alice", "I live in Lisbon.")
    retrying = _queued_job(tenant_a.store, "bob", "I work at Halden Bank.")
    ExtractionJob.objects.filter(pk=retrying.pk).update(run_after=timezone.now() + timedelta(minutes=1))
    of_the_model = _queued_job(tenant_a.store, "carol", "My email is carol@example.com.")
    ExtractionJob.objects.filter(pk=of_the_model.pk).update(extractor="llm")

    assert not run_extraction_job(str(own.pk)).endswith("queued job(s)")

    assert [_status(job) for job in (own, retrying, of_the_model)] == ["succeeded", "queued", "queued"]


def test_a_task_whose_job_is_gone_still_runs_the_jobs_waiting(tenant_a):
    done = _queued_job(tenant_a.store, "alice", "I live in Lisbon.")
    run_extraction_job(str(done.pk))
    waiting = _queued_job(tenant_a.store, "bob", "I work at Halden Bank.")

    result = run_extraction_job(str(done.pk))

    assert result == "not claimed (done, running elsewhere, or not yet due); then 1 queued job(s)"
    assert _status(waiting) == "succeeded"


def test_with_no_time_to_drain_a_task_runs_only_its_own_job(tenant_a, settings):
    settings.EXTRACTION_DRAIN_SECONDS = 0
    own = _queued_job(tenant_a.store, "alice", "I live in Lisbon.")
    other = _queued_job(tenant_a.store, "bob", "I work at Halden Bank.")

    run_extraction_job(str(own.pk))

    assert [_status(job) for job in (own, other)] == ["succeeded", "queued"]


def test_a_job_run_inline_by_a_request_runs_no_one_elses(tenant_a, settings):
    waiting = _queued_job(tenant_a.store, "bob", "I work at Halden Bank.")
    settings.EXTRACTION_RUN_INLINE = True

    ingest = messages_ingest(store=tenant_a.store, session_external_id="chat-alice", user_id="alice",
                             messages=[MessageInput(role="user", content="I live in Lisbon.")])

    assert _status(ingest.extraction_job) == "succeeded"
    assert _status(waiting) == "queued"
