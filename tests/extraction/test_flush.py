"""What a flush reports: every job that covers the messages asked about (`since_seq`), whenever it ran, with
the changes it made, a supersede called a supersede, and a bounded answer.

Jobs run in this process when their transaction commits (EXTRACTION_RUN_INLINE), so by the time a flush
is sent the background extraction has already finished: the case a flush used to answer with nothing.
tests/extraction/test_worker_integration.py checks the same through a real qcluster.
"""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.conversations.models import Session
from apps.extraction.models import ExtractionJob
from apps.extraction.selectors import FLUSH_JOB_LIMIT
from apps.memories.models import Memory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("inline_extraction")]

MESSAGES = "/api/v1/stores/main/sessions/chat-1/messages"
FLUSH = "/api/v1/stores/main/sessions/chat-1/flush"


def _say(client, *texts, run_id="r1", start=0):
    messages = [{"role": "user", "content": text, "seq": start + i} for i, text in enumerate(texts)]
    response = client.post(MESSAGES, {"user_id": "alice", "run_id": run_id, "messages": messages}, format="json")
    assert response.status_code == 202, response.content
    return response.json()


def _flush(client, query: str = ""):
    response = client.post(f"{FLUSH}?wait=5{query}")
    assert response.status_code == 200, response.content
    return response.json()


def test_a_flush_after_the_extraction_ran_reports_its_jobs_and_changes(tenant_a):
    client = tenant_a.client("write")
    first = _say(client, "My name is Alice and I work as a software engineer at TechCorp")
    second = _say(client, "I prefer dark mode", start=1)
    session = Session.objects.get()
    assert session.extracted_seq == session.last_seq == 2  # both jobs ran before any flush

    body = _flush(client)

    assert body["complete"] is True and body["more_jobs"] is False
    assert [job["id"] for job in body["jobs"]] == [first["extraction_job"], second["extraction_job"]]
    assert [(job["status"], job["from_seq"], job["to_seq"]) for job in body["jobs"]] == [
        ("succeeded", 0, 1), ("succeeded", 1, 2)]
    memories = Memory.objects.filter(store=tenant_a.store)
    assert len(body["changes"]) == memories.count() == sum(job["added"] for job in body["jobs"]) >= 3
    assert {change["memory_id"] for change in body["changes"]} == {str(memory.pk) for memory in memories}
    assert {(change["action"], change["status"], change["superseded_by"]) for change in body["changes"]} == {
        ("create", "active", None)}
    dark_mode = next(change for change in body["changes"] if "dark mode" in change["content"])
    assert (dark_mode["job_id"], dark_mode["message_seqs"]) == (second["extraction_job"], [2])

    # Asking again reports the same: the report is of the messages, not of this call's work.
    assert _flush(client) == body
    assert ExtractionJob.objects.count() == 2


def test_since_seq_narrows_the_report_to_the_jobs_covering_later_messages(tenant_a):
    client = tenant_a.client("write")
    _say(client, "My name is Alice and I work as a software engineer at TechCorp")
    second = _say(client, "I prefer dark mode", "I live in Lisbon", start=1)
    assert second["seqs"] == [2, 3]

    body = _flush(client, f"&since_seq={second['seqs'][0] - 1}")

    assert [job["id"] for job in body["jobs"]] == [second["extraction_job"]]
    assert {change["job_id"] for change in body["changes"]} == {second["extraction_job"]}
    assert sorted(seq for change in body["changes"] for seq in change["message_seqs"]) == [2, 3]
    # A job reaching past since_seq is reported whole, with every change it made.
    assert [job["id"] for job in _flush(client, "&since_seq=2")["jobs"]] == [second["extraction_job"]]
    nothing_after = _flush(client, "&since_seq=3")
    assert (nothing_after["complete"], nothing_after["jobs"], nothing_after["changes"]) == (True, [], [])


def test_a_supersede_is_called_a_supersede_in_the_flush_and_in_history(tenant_a):
    client = tenant_a.client("write")
    _say(client, "I live in Paris")
    moved = _say(client, "I moved to Berlin last month", start=1)
    paris = Memory.objects.get(content__contains="Paris")
    berlin = Memory.objects.get(content__contains="Berlin")

    body = _flush(client, f"&since_seq={moved['seqs'][0] - 1}")

    [job] = body["jobs"]
    assert (job["id"], job["added"], job["updated"]) == (moved["extraction_job"], 0, 1)
    by_memory = {change["memory_id"]: change for change in body["changes"]}
    assert set(by_memory) == {str(paris.pk), str(berlin.pk)}
    assert {name: by_memory[str(berlin.pk)][name] for name in ("action", "status", "superseded_by")} == {
        "action": "create", "status": "active", "superseded_by": None}
    superseded = by_memory[str(paris.pk)]
    assert (superseded["action"], superseded["status"], superseded["superseded_by"]) == (
        "supersede", "superseded", str(berlin.pk))
    assert superseded["message_seqs"] == [2] and superseded["content"] == paris.content

    history = client.get(f"/api/v1/stores/main/memories/{paris.pk}/history").json()["results"]
    assert [revision["action"] for revision in history] == ["create", "supersede"]
    assert history[-1]["after"]["superseded_by_id"] == str(berlin.pk)


@pytest.mark.parametrize("since_seq", ["-1", "1.5", "two", "true", str(2**31)])
def test_flush_rejects_a_bad_since_seq_naming_it(tenant_a, since_seq):
    _say(tenant_a.client("write"), "hello")
    response = tenant_a.client("write").post(f"{FLUSH}?since_seq={since_seq}")
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "validation_error" and "since_seq" in error["details"], error


def _session_with_jobs(tenant_a, configure_store, count: int) -> Session:
    """A session of `count` messages, each extracted by a job of its own (as every_n_turns=1 makes them)."""
    configure_store(tenant_a.store, extraction_config={"enabled": False})
    _say(tenant_a.client("write"), *(f"message {seq}" for seq in range(1, count + 1)))
    session = Session.objects.get()
    ExtractionJob.objects.bulk_create([
        ExtractionJob(store=tenant_a.store, session=session, from_seq=seq - 1, to_seq=seq, status="succeeded",
                      trigger="turns", extractor="rules")
        for seq in range(1, count + 1)
    ])
    Session.objects.filter(pk=session.pk).update(extracted_seq=count)
    return session


def test_the_report_holds_the_newest_jobs_and_says_when_older_ones_were_left_out(tenant_a, configure_store):
    _session_with_jobs(tenant_a, configure_store, FLUSH_JOB_LIMIT + 10)
    client = tenant_a.client("write")

    body = _flush(client)

    assert body["complete"] is True and body["more_jobs"] is True
    assert [job["to_seq"] for job in body["jobs"]] == list(range(11, FLUSH_JOB_LIMIT + 11))
    narrowed = _flush(client, f"&since_seq={FLUSH_JOB_LIMIT}")
    assert narrowed["more_jobs"] is False
    assert [job["to_seq"] for job in narrowed["jobs"]] == list(range(FLUSH_JOB_LIMIT + 1, FLUSH_JOB_LIMIT + 11))


def test_a_job_that_found_its_messages_extracted_already_is_not_reported(tenant_a, configure_store):
    session = _session_with_jobs(tenant_a, configure_store, 2)
    empty = ExtractionJob.objects.create(store=tenant_a.store, session=session, from_seq=2, to_seq=2,
                                         status="succeeded", trigger="flush", extractor="rules")
    reported = [job["id"] for job in _flush(tenant_a.client("write"))["jobs"]]
    assert len(reported) == 2 and str(empty.pk) not in reported


def test_the_report_costs_the_same_queries_for_two_jobs_or_fifty(tenant_a, configure_store):
    _session_with_jobs(tenant_a, configure_store, FLUSH_JOB_LIMIT)
    client = tenant_a.client("write")

    def queries(query: str) -> tuple[int, int]:
        with CaptureQueriesContext(connection) as captured:
            jobs = len(_flush(client, query)["jobs"])
        return jobs, len(captured)

    few_jobs, few_queries = queries(f"&since_seq={FLUSH_JOB_LIMIT - 2}")
    all_jobs, all_queries = queries("")
    assert (few_jobs, all_jobs) == (2, FLUSH_JOB_LIMIT)
    assert all_queries == few_queries


def test_the_report_reads_the_jobs_without_joining_the_session_and_store_it_has(tenant_a, configure_store):
    _session_with_jobs(tenant_a, configure_store, 3)
    client = tenant_a.client("write")

    with CaptureQueriesContext(connection) as captured:
        body = _flush(client)

    assert len(body["jobs"]) == 3 and {(job["store"], job["session_id"]) for job in body["jobs"]} == {
        ("main", "chat-1")}
    job_reads = [query["sql"] for query in captured if query["sql"].startswith('SELECT "extraction_extractionjob"')]
    assert job_reads and not [sql for sql in job_reads if "JOIN" in sql]
    assert sum('FROM "memories_memorystore"' in query["sql"] for query in captured) == 1  # the route's lookup
