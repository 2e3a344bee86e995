import re

import pytest

from apps.conversations.services import MessageInput, messages_ingest
from apps.extraction.models import ExtractionJob


@pytest.fixture
def failed_job(tenant_a, configure_store, django_capture_on_commit_callbacks):
    configure_store(tenant_a.store, extraction_config={"enabled": True})
    with django_capture_on_commit_callbacks(execute=False):
        result = messages_ingest(
            store=tenant_a.store, session_external_id="s-1", user_id="alice",
            messages=[MessageInput(role="user", content="I live in Paris")],
        )
    job = result.extraction_job
    ExtractionJob.objects.filter(pk=job.pk).update(status="failed", attempts=3, error="RuntimeError: boom")
    return job


def _login(client, user):
    client.force_login(user)
    return client


def test_staff_see_jobs_and_sessions_and_retry_failed_jobs(client, tenant_a, failed_job, django_capture_on_commit_callbacks):
    _login(client, tenant_a.admin)
    listing = client.get("/admin/extraction/extractionjob/?status__exact=failed")
    assert listing.status_code == 200 and str(failed_job.session.external_id) in listing.content.decode()
    session_page = client.get(f"/admin/conversations/session/{failed_job.session_id}/change/")
    assert session_page.status_code == 200 and "I live in Paris" in session_page.content.decode()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(
            "/admin/extraction/extractionjob/",
            {"action": "retry_failed", "_selected_action": [str(failed_job.pk)]},
            follow=True,
        )
    assert response.status_code == 200 and "Retried 1 job(s)." in response.content.decode()
    failed_job.refresh_from_db()
    assert (failed_job.status, failed_job.attempts, failed_job.trigger) == ("queued", 0, "retry")
    assert len(callbacks) == 1  # enqueued on commit


def test_reviewers_cannot_retry_and_outsiders_see_nothing(client, tenant_a, tenant_b, failed_job):
    _login(client, tenant_a.reviewer)
    client.post("/admin/extraction/extractionjob/", {"action": "retry_failed", "_selected_action": [str(failed_job.pk)]})
    failed_job.refresh_from_db()
    assert failed_job.status == "failed"
    _login(client, tenant_b.admin)
    listing = client.get("/admin/extraction/extractionjob/")
    assert listing.status_code == 200 and str(failed_job.pk) not in listing.content.decode()
    assert client.get(f"/admin/conversations/session/{failed_job.session_id}/change/").status_code == 302


def test_a_jobs_page_names_the_job(client, tenant_a, failed_job):
    _login(client, tenant_a.reviewer)

    page = client.get(f"/admin/extraction/extractionjob/{failed_job.pk}/change/").content.decode()

    title = re.search(r"<title>(.*?)</title>", page, re.S).group(1)
    assert title.startswith(f"Extraction job {str(failed_job.pk)[:8]} of session s-1 (failed) |")
    assert str(failed_job.session_id) not in title


def test_retrying_reports_each_refused_job_by_name(client, tenant_a, failed_job):
    ExtractionJob.objects.filter(pk=failed_job.pk).update(status="succeeded")
    _login(client, tenant_a.admin)

    response = client.post(
        "/admin/extraction/extractionjob/",
        {"action": "retry_failed", "_selected_action": [str(failed_job.pk)]},
        follow=True,
    )

    assert f"Extraction job {str(failed_job.pk)[:8]} of session s-1 (succeeded): Only failed jobs" in (
        response.content.decode()
    )


def test_a_job_that_fell_back_to_rules_says_so(client, tenant_a, failed_job):
    reason = "ExtractionError: LLM (openai, gpt-test-mini) answered HTTP 500; gave up after 3 attempt(s)"
    ExtractionJob.objects.filter(pk=failed_job.pk).update(status="succeeded", extractor="rules",
                                                          fallback_reason=reason)
    _login(client, tenant_a.reviewer)

    listing = client.get("/admin/extraction/extractionjob/").content.decode()
    page = client.get(f"/admin/extraction/extractionjob/{failed_job.pk}/change/").content.decode()

    assert "Fell back to rules" in listing and 'alt="True"' in listing
    assert "gave up after 3 attempt(s)" in page
