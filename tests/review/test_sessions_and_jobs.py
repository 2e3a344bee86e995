"""Transcripts with the memories each message produced; extraction jobs, their retry; the overview."""

from datetime import timedelta

from django.utils import timezone

from apps.conversations.services import MessageInput, messages_ingest
from apps.extraction.models import ExtractionJob
from apps.memories.models import MemoryStore
from apps.review.selectors.jobs import plain_error
from tests.review.conftest import pending, snapshot

JSON = {"HTTP_ACCEPT": "application/json"}


def test_the_transcript_shows_each_messages_memories_and_links_back(review_world, browsers):
    url = f"/review/stores/{review_world.store.pk}/sessions/s-1/"
    response = browsers.reviewer.get(url)
    rows = response.context["rows"]
    assert [row["message"].seq for row in rows] == [1, 2, 3]
    assert [m.content for m in rows[0]["memories"]] == ["Lives in Paris"] and rows[1]["memories"] == []
    body = response.content.decode()
    assert 'id="m-1"' in body
    assert f"/review/customers/alice/?memory={review_world.pending.pk}#memory-{review_world.pending.pk}" in body


def test_a_link_to_a_message_lands_on_the_page_that_holds_it(tenant_a, quiet_stores, browsers):
    for batch in range(3):
        messages_ingest(store=tenant_a.store, session_external_id="long", user_id="alice",
                        messages=[MessageInput(role="user", content=f"message {batch * 100 + i + 1}") for i in range(100)])
    memory = pending(tenant_a.store, "Said something on page three",
                     session=type("S", (), {"external_id": "long"})(), seqs=[250])
    url = f"/review/stores/{tenant_a.store.pk}/sessions/long/"
    response = browsers.reviewer.get(url + "?at=250")
    assert response.context["page"].number == 3
    assert [row["message"].seq for row in response.context["rows"]][0] == 201
    row = next(row for row in response.context["rows"] if row["message"].seq == 250)
    assert [m.pk for m in row["memories"]] == [memory.pk]
    assert browsers.reviewer.get(url).context["page"].number == 1


def test_an_unknown_session_is_not_found(review_world, browsers):
    assert browsers.reviewer.get(f"/review/stores/{review_world.store.pk}/sessions/nope/").status_code == 404


def test_jobs_show_status_counts_and_the_error_in_plain_words(review_world, browsers):
    response = browsers.reviewer.get("/review/jobs/?status=failed")
    body = response.content.decode()
    assert [row["job"].pk for row in response.context["rows"]] == [review_world.job.pk]
    assert "The job failed unexpectedly" in body and "the rules extractor crashed" in body
    assert 'data-testid="retry-not-allowed"' in body  # a reviewer does not retry (as in the admin)
    assert 'data-testid="retry"' in browsers.admin.get("/review/jobs/").content.decode()


def test_plain_words_for_known_errors():
    assert plain_error("ExtractorNotReady: The llm extractor cannot run: no model.").headline == (
        "The store's extractor is not configured on this server")
    assert plain_error("httpx.ReadTimeout: timed out").headline == "A service did not answer in time"
    assert plain_error("") is None


def test_an_admin_retries_a_failed_job(review_world, browsers, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        response = browsers.admin.post(f"/review/jobs/{review_world.job.pk}/retry/", **JSON)
    assert response.status_code == 200 and response.json()["job"]["status"] == "queued"
    again = browsers.admin.post(f"/review/jobs/{review_world.job.pk}/retry/", **JSON)
    assert again.status_code == 409 and again.json()["error"]["code"] == "job_not_failed"


def test_a_retry_that_would_fail_again_is_refused_with_the_reason(review_world, browsers):
    # Set while the server had a model; it has restarted without one (the service refuses to set it now).
    MemoryStore.objects.filter(pk=review_world.store.pk).update(extraction_config={"enabled": True, "extractor": "llm"})
    ExtractionJob.objects.filter(pk=review_world.job.pk).update(
        extractor="llm", error="ExtractorNotReady: The llm extractor cannot run: no model is configured.")
    page = browsers.admin.get("/review/jobs/").content.decode()
    assert 'data-testid="retry-refused"' in page and "LLM_API_KEY" in page
    before = snapshot(review_world.store)
    response = browsers.admin.post(f"/review/jobs/{review_world.job.pk}/retry/", follow=True)
    assert "Retrying would fail again: the llm extractor cannot run" in response.content.decode()
    assert snapshot(review_world.store) == before


def test_the_overview_counts_memories_failures_and_lag(review_world, browsers):
    now = timezone.now()
    session = review_world.session
    for minutes in (1, 2, 10):
        job = ExtractionJob.objects.create(store=review_world.store, session=session, from_seq=0, to_seq=1,
                                           trigger="turns", extractor="rules", status="succeeded")
        ExtractionJob.objects.filter(pk=job.pk).update(created_at=now - timedelta(minutes=minutes + 1),
                                                       finished_at=now - timedelta(minutes=1))
    ExtractionJob.objects.filter(pk=review_world.job.pk).update(finished_at=now)
    response = browsers.reviewer.get("/review/overview/")
    stats = response.context["job_stats"]
    assert (stats.finished, stats.failed) == (4, 1)
    assert stats.lag_p50 is not None and stats.lag_p95 >= stats.lag_p50
    counts = response.context["store_counts"][0]
    assert counts.by_status == {"pending_review": 1, "active": 1, "deleted": 1} and counts.total == 3
    assert response.context["pending_count"] == 1
    assert [row["job"].pk for row in response.context["failures"]] == [review_world.job.pk]
