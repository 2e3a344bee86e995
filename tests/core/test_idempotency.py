"""Writes sent with an Idempotency-Key: a retry gets the first response and writes nothing again."""

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone
from rest_framework.test import APIClient

from apps.conversations.models import ScratchpadEntry
from apps.memories.models import Memory
from apps.tenancy import services as tenancy_services
from apps.tenancy.models import IdempotencyRecord

SESSION = "/api/v1/stores/main/sessions/s-1"
NOTES = f"{SESSION}/scratchpad"


@pytest.fixture
def writer(tenant_a):
    client = tenant_a.client("write")
    client.post(f"{SESSION}/spawn", {"user_id": "alice"}, format="json")
    return client


def _append(client, content, key="key-1"):
    return client.post(NOTES, {"content": content}, format="json", HTTP_IDEMPOTENCY_KEY=key)


def test_a_retry_gets_the_first_response_and_writes_once(writer):
    first = _append(writer, "think")
    again = _append(writer, "think")
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert again.headers["Idempotent-Replayed"] == "true" and "Idempotent-Replayed" not in first.headers
    assert ScratchpadEntry.objects.count() == 1
    assert _append(writer, "think", key="key-2").status_code == 201  # a new key is a new request
    assert ScratchpadEntry.objects.count() == 2


def test_the_same_key_for_another_request_is_409(writer):
    _append(writer, "think")
    response = _append(writer, "something else")
    assert response.status_code == 409 and response.json()["error"]["code"] == "idempotency_key_reused"
    assert ScratchpadEntry.objects.count() == 1


def test_keys_belong_to_one_api_key(tenant_a, writer):
    _append(writer, "think")
    other = tenant_a.client("admin")
    assert _append(other, "think").status_code == 201
    assert ScratchpadEntry.objects.count() == 2


def test_client_errors_are_replayed_and_server_errors_are_not_kept(writer, monkeypatch):
    bad = writer.post(NOTES, {"content": ""}, format="json", HTTP_IDEMPOTENCY_KEY="k-bad")
    again = writer.post(NOTES, {"content": ""}, format="json", HTTP_IDEMPOTENCY_KEY="k-bad")
    assert bad.status_code == again.status_code == 400 and again.json() == bad.json()

    from apps.conversations import services

    def crash(**kwargs):
        raise RuntimeError("database on fire")

    monkeypatch.setattr(services, "scratchpad_append", crash)
    writer.raise_request_exception = False
    assert _append(writer, "think", key="k-crash").status_code == 500
    monkeypatch.undo()
    assert _append(writer, "think", key="k-crash").status_code == 201  # the retry ran the request
    assert ScratchpadEntry.objects.count() == 1


def test_a_request_still_in_progress_is_409_until_its_lease_runs_out(writer, settings):
    assert _append(writer, "think", key="k-done").status_code == 201
    done = IdempotencyRecord.objects.get(key="k-done")
    assert done.lease_expires_at is None  # answered: nothing left to lease
    # A request that claimed a key for the same body and died before answering, its lease renewed 10 s ago.
    IdempotencyRecord.objects.create(api_key=done.api_key, key="k-dead", request_hash=done.request_hash,
                                     lease_expires_at=timezone.now() + timedelta(seconds=5))
    response = _append(writer, "think", key="k-dead")
    assert response.status_code == 409 and response.json()["error"]["code"] == "idempotency_in_progress"
    assert 1 <= int(response.headers["Retry-After"]) <= 5  # when the lease runs out
    with time_machine.travel(timezone.now() + timedelta(seconds=6)):
        assert _append(writer, "think", key="k-dead").status_code == 201
    assert ScratchpadEntry.objects.count() == 2


def test_a_claim_made_before_leases_existed_is_taken_over(writer):
    assert _append(writer, "think", key="k-done").status_code == 201
    done = IdempotencyRecord.objects.get(key="k-done")
    IdempotencyRecord.objects.create(api_key=done.api_key, key="k-old", request_hash=done.request_hash)
    assert _append(writer, "think", key="k-old").status_code == 201


def test_memory_create_replays_the_created_response(tenant_a):
    client = tenant_a.client("write")
    body = {"user_id": "alice", "content": "Alice likes tea"}
    first = client.post("/api/v1/stores/main/memories", body, format="json", HTTP_IDEMPOTENCY_KEY="m-1")
    again = client.post("/api/v1/stores/main/memories", body, format="json", HTTP_IDEMPOTENCY_KEY="m-1")
    assert first.status_code == again.status_code == 201 and again.json() == first.json()
    assert Memory.objects.count() == 1


@pytest.mark.parametrize("key", ["", "x" * 256, "tab\tkey"])
def test_bad_keys_are_400(writer, key):
    response = _append(writer, "think", key=key)
    assert response.status_code == 400 and "Idempotency-Key" in response.json()["error"]["details"]
    assert ScratchpadEntry.objects.count() == 0


def test_reads_and_anonymous_requests_ignore_the_header(writer):
    assert writer.get(NOTES, HTTP_IDEMPOTENCY_KEY="r-1").status_code == 200
    assert APIClient().post(NOTES, {"content": "x"}, format="json", HTTP_IDEMPOTENCY_KEY="r-1").status_code == 401
    assert not IdempotencyRecord.objects.exists()


def test_old_records_are_purged(writer):
    _append(writer, "think")
    with time_machine.travel(timezone.now() + timedelta(hours=25)):
        assert tenancy_services.idempotency_purge_expired() == 1
    assert not IdempotencyRecord.objects.exists()


def test_a_compare_and_set_put_retried_after_a_lost_answer_gets_its_answer(writer):
    url = f"{SESSION}/working-memory/lock"
    first = writer.put(url, {"value": "me", "if_version": 0}, format="json", HTTP_IDEMPOTENCY_KEY="put-1")
    again = writer.put(url, {"value": "me", "if_version": 0}, format="json", HTTP_IDEMPOTENCY_KEY="put-1")
    assert first.status_code == again.status_code == 201 and again.json() == first.json()
    deleted = writer.delete(url, HTTP_IDEMPOTENCY_KEY="del-1")
    assert writer.delete(url, HTTP_IDEMPOTENCY_KEY="del-1").json() == deleted.json() == {"deleted": True, "key": "lock"}


def test_reads_sent_as_post_store_nothing(writer):
    response = writer.post("/api/v1/stores/main/search", {"query": "tea"}, format="json", HTTP_IDEMPOTENCY_KEY="s-1")
    assert response.status_code == 200 and "Idempotent-Replayed" not in response.headers
    assert not IdempotencyRecord.objects.exists()


# --- Erasing a user forgets the kept responses that concern them -------------------------------------


def _erase(tenant, user_id, **headers):
    return tenant.client("admin").delete(f"/api/v1/stores/main/users/{user_id}", **headers)


def test_kept_responses_record_the_users_and_sessions_they_concern(writer):
    _append(writer, "think", key="pad")
    writer.post("/api/v1/stores/main/memories", {"user_id": "alice", "content": "Alice likes tea", "session_id": "s-9",
                                                 "metadata": {"user_id": "crm-77"}},  # the client's, not an id here
                format="json", HTTP_IDEMPOTENCY_KEY="mem")
    records = {record.key: record for record in IdempotencyRecord.objects.all()}
    assert (records["pad"].user_ids, records["pad"].session_ids) == ([], ["s-1"])  # from the URL
    assert (records["mem"].user_ids, records["mem"].session_ids) == (["alice"], ["s-9"])


def test_erasing_a_user_forgets_responses_about_them_and_their_sessions_only(tenant_a, tenant_b, writer):
    _append(writer, "alice's secret", key="alice-pad")
    memory = {"user_id": "alice", "content": "Alice likes tea"}
    writer.post("/api/v1/stores/main/memories", memory, format="json", HTTP_IDEMPOTENCY_KEY="alice-memory")
    # Bob writing to Alice's session is refused with a message that names her.
    refused = writer.post(f"{SESSION}/messages", {"user_id": "bob", "messages": [{"role": "user", "content": "hi"}]},
                          format="json", HTTP_IDEMPOTENCY_KEY="bob-refused")
    assert refused.status_code == 409 and "alice" in refused.content.decode()
    writer.post("/api/v1/stores/main/memories", {"user_id": "bob", "content": "Bob likes tea"}, format="json",
                HTTP_IDEMPOTENCY_KEY="bob-memory")
    tenant_b.client("write").post("/api/v1/stores/main/memories", memory, format="json",
                                  HTTP_IDEMPOTENCY_KEY="alice-at-globex")

    assert _erase(tenant_a, "alice").status_code == 200

    assert set(IdempotencyRecord.objects.values_list("key", flat=True)) == {"bob-memory", "alice-at-globex"}


def test_erasing_forgets_responses_kept_before_subjects_were_recorded_but_not_requests_in_progress(tenant_a, writer):
    _append(writer, "think", key="old")
    _append(writer, "think", key="running")
    IdempotencyRecord.objects.filter(key="old").update(user_ids=None, session_ids=None)
    IdempotencyRecord.objects.filter(key="running").update(user_ids=None, session_ids=None, status_code=None)

    assert _erase(tenant_a, "nobody").status_code == 200

    assert list(IdempotencyRecord.objects.values_list("key", flat=True)) == ["running"]


def test_an_erase_keeps_no_response_that_would_name_the_user(tenant_a, writer):
    first = _erase(tenant_a, "alice", HTTP_IDEMPOTENCY_KEY="erase-1")
    again = _erase(tenant_a, "alice", HTTP_IDEMPOTENCY_KEY="erase-1")
    assert first.json()["sessions"] == 1 and again.json()["sessions"] == 0
    assert "Idempotent-Replayed" not in again.headers
    assert not IdempotencyRecord.objects.filter(key="erase-1").exists()


def test_an_answer_echoing_text_postgresql_cannot_store_is_not_kept_and_not_a_500(tenant_a, add_memory):
    # Found by schema fuzzing: a 400 quoting a NUL from the request could not be stored for replay.
    memory = add_memory(tenant_a.store, "Alice likes tea")
    client = tenant_a.client("write")
    url = f"/api/v1/stores/main/memories/{memory.pk}"

    for _ in range(2):
        response = client.patch(url, {"memory_type": "fact\u0000"}, format="json", HTTP_IDEMPOTENCY_KEY="nul-1")
        assert response.status_code == 400, response.content
        assert "Idempotent-Replayed" not in response.headers
    assert not IdempotencyRecord.objects.filter(key="nul-1").exists()
