"""A message's `created_at`: when it was said (sent by the client, or its arrival), not when it was stored."""

from datetime import UTC, datetime, timedelta

from django.utils import timezone

from apps.conversations.models import Message, Session
from apps.conversations.services import messages
from apps.extraction import services as extraction_services
from apps.extraction.models import ExtractionJob

URL = "/api/v1/stores/main/sessions/s-1/messages"


def _post(client, messages, user_id="alice"):
    return client.post(URL, {"user_id": user_id, "messages": messages}, format="json")


def test_a_given_time_is_stored_in_utc_and_listed_back(quiet_store):
    client = quiet_store.client("write")
    response = _post(client, [
        {"role": "user", "content": "with an offset", "created_at": "2025-03-03T09:00:00+02:00"},
        {"role": "assistant", "content": "no offset: UTC", "created_at": "2025-03-03T07:01:00"},
    ])
    assert response.status_code == 202, response.content
    stored = list(Message.objects.order_by("seq").values_list("created_at", flat=True))
    assert stored == [datetime(2025, 3, 3, 7, 0, tzinfo=UTC), datetime(2025, 3, 3, 7, 1, tzinfo=UTC)]
    listed = client.get(URL).json()["results"]
    assert [message["created_at"] for message in listed] == ["2025-03-03T07:00:00Z", "2025-03-03T07:01:00Z"]


def test_a_message_without_a_time_is_stamped_when_it_arrives(quiet_store):
    before = timezone.now()
    response = _post(quiet_store.client("write"), [
        {"role": "user", "content": "no time"},
        {"role": "user", "content": "explicit null", "created_at": None},
    ])
    assert response.status_code == 202, response.content
    for created_at in Message.objects.values_list("created_at", flat=True):
        assert before <= created_at <= timezone.now()


def test_a_time_more_than_five_minutes_ahead_is_a_400_naming_the_message(quiet_store):
    client = quiet_store.client("write")
    ahead = (timezone.now() + timedelta(minutes=6)).isoformat()
    response = _post(client, [{"role": "user", "content": "fine"}, {"role": "user", "content": "x", "created_at": ahead}])
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert "messages[1].created_at" in error["message"] and "messages[1].created_at" in error["details"]
    assert not Session.objects.exists() and not Message.objects.exists()
    # A client clock a little ahead of the server's is not a mistake.
    slightly_ahead = (timezone.now() + timedelta(minutes=2)).isoformat()
    assert _post(client, [{"role": "user", "content": "x", "created_at": slightly_ahead}]).status_code == 202


def test_the_allowed_clock_skew_is_named_as_configured(quiet_store, monkeypatch):
    monkeypatch.setattr(messages, "MESSAGE_TIME_SKEW", timedelta(minutes=2))
    ahead = (timezone.now() + timedelta(minutes=3)).isoformat()
    response = _post(quiet_store.client("write"), [{"role": "user", "content": "x", "created_at": ahead}])
    assert response.status_code == 400, response.content
    assert "is more than 2 minutes in the future" in response.json()["error"]["message"]


def test_a_time_that_is_not_a_date_is_a_400(quiet_store):
    response = _post(quiet_store.client("write"), [{"role": "user", "content": "x", "created_at": "next Friday"}])
    assert response.status_code == 400, response.content
    assert "created_at" in str(response.json()["error"])
    assert not Message.objects.exists()


def test_times_going_backwards_in_a_batch_are_kept_in_seq_order(quiet_store):
    response = _post(quiet_store.client("write"), [
        {"role": "user", "content": "second said", "created_at": "2025-03-03T10:00:00Z"},
        {"role": "user", "content": "first said", "created_at": "2025-03-03T09:00:00Z"},
    ])
    assert response.status_code == 202, response.content
    assert list(Message.objects.order_by("seq").values_list("text", "created_at__hour")) == [
        ("second said", 10), ("first said", 9)
    ]


def test_an_imported_old_conversation_is_not_an_idle_session(tenant_a, configure_store):
    # Only the idle trigger could schedule this session's extraction.
    configure_store(tenant_a.store, extraction_config={"every_n_turns": 1000, "idle_seconds": 300})
    before = timezone.now()
    response = _post(tenant_a.client("write"), [
        {"role": "user", "content": "I live in York", "created_at": "2024-01-01T09:00:00Z"},
    ])
    assert response.status_code == 202, response.content
    session = Session.objects.get()
    assert session.last_activity_at >= before
    assert extraction_services.extraction_sweep()["idle_sessions"] == 0
    assert not ExtractionJob.objects.exists()


def test_the_extractor_sees_the_time_the_message_was_sent(tenant_a, monkeypatch, django_capture_on_commit_callbacks):
    seen = []

    class RecordingExtractor:
        name = "rules"

        def extract(self, *, messages, existing, user_name=None):
            seen.extend(messages)
            return []

    monkeypatch.setattr(extraction_services, "get_extractor", lambda name: RecordingExtractor())
    with django_capture_on_commit_callbacks(execute=False):  # the job is run here, not by a worker
        response = _post(tenant_a.client("write"), [
            {"role": "user", "content": "I'm flying to Tokyo next Friday", "created_at": "2025-03-03T09:00:00Z"},
            {"role": "assistant", "content": "Have a good flight"},
        ])
    assert response.status_code == 202, response.content
    outcome = extraction_services.extraction_job_run(job_id=response.json()["extraction_job"])
    assert outcome.job.status == "succeeded"
    arrival = Message.objects.get(seq=2).created_at
    assert [(message.text, message.created_at) for message in seen] == [
        ("I'm flying to Tokyo next Friday", datetime(2025, 3, 3, 9, 0, tzinfo=UTC)),
        ("Have a good flight", arrival),
    ]
