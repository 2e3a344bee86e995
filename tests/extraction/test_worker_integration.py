"""Extraction through a real `manage.py qcluster` process: the ORM broker, re-delivery, a killed worker.

The worker is a subprocess attached to the test database (EMBEDDED_PG_DATABASE), so these tests use
transactional databases: what the test writes is committed and visible to the worker, and the other way
round. tests/extraction/test_pipeline.py covers the same path in one process (EXTRACTION_RUN_INLINE).
"""

import os
from datetime import timedelta
from pathlib import Path

import psutil
import pytest
from django.db import transaction
from django.utils import timezone
from django_q.models import OrmQ, Schedule, Task
from django_q.tasks import async_task

from apps.conversations.models import Message, Session
from apps.extraction import services
from apps.extraction.extractors import get_extractor
from apps.extraction.models import ExtractionJob
from apps.memories.models import Memory, MemoryRevision
from tests.fakes.llm_server import FakeLLMServer, Reply
from tests.processes import QCluster, wait_for

RUN_TASK = "apps.extraction.tasks.run_extraction_job"
SESSION = "chat-1"
MESSAGES_URL = f"/api/v1/stores/main/sessions/{SESSION}/messages"
FLUSH_URL = f"/api/v1/stores/main/sessions/{SESSION}/flush"
SEARCH_URL = "/api/v1/stores/main/search"

INTRODUCTION = "My name is Alice and I work as a software engineer at TechCorp"
REPLY = "Nice to meet you, Alice!"
PREFERENCE = "I prefer dark mode"

# Transactional: the worker sees only committed rows, and inline jobs run on commit.
pytestmark = pytest.mark.django_db(transaction=True)


# --- The worker process -----------------------------------------------------------------------------


@pytest.fixture
def qcluster(transactional_db, settings, tmp_path):
    """A controller for a qcluster on the test database; the test starts it (and may kill or restart it)."""
    cluster = QCluster(database_name=settings.DATABASES["default"]["NAME"], log_dir=tmp_path)
    yield cluster
    # Before the database is flushed: a live worker would hold connections and could write meanwhile.
    cluster.stop()


def shared_sockets(processes: list[psutil.Process]) -> dict[str, set[int]]:
    """Sockets open in more than one of `processes` (Linux /proc), e.g. a database connection inherited by fork."""
    owners: dict[str, set[int]] = {}
    for process in processes:
        try:
            fds = list(Path(f"/proc/{process.pid}/fd").iterdir())
        except FileNotFoundError:
            continue  # exited meanwhile
        for fd in fds:
            try:
                target = os.readlink(fd)
            except OSError:
                continue  # closed meanwhile
            if target.startswith("socket:"):
                owners.setdefault(target, set()).add(process.pid)
    return {socket: pids for socket, pids in owners.items() if len(pids) > 1}


# --- Helpers ------------------------------------------------------------------------------------------


def _post_messages(client, texts_by_seq: dict[int, tuple[str, str]], run_id: str = "run-1"):
    messages = [{"role": role, "content": text, "seq": seq} for seq, (role, text) in texts_by_seq.items()]
    response = client.post(MESSAGES_URL, {"user_id": "alice", "run_id": run_id, "messages": messages}, format="json")
    assert response.status_code == 202, response.content
    return response.json()


def _conversation(client):
    return _post_messages(client, {0: ("user", INTRODUCTION), 1: ("assistant", REPLY), 2: ("user", PREFERENCE)})


def _search(client, query: str) -> list[str]:
    response = client.post(SEARCH_URL, {"query": query, "user_id": "alice"}, format="json")
    assert response.status_code == 200, response.content
    return [hit["memory"]["content"] for hit in response.json()["results"]]


def _session() -> Session:
    return Session.objects.get(external_id=SESSION)


def _all_jobs_done() -> bool:
    session = _session()
    open_jobs = ExtractionJob.objects.filter(session=session, status__in=ExtractionJob.OPEN_STATUSES)
    return session.extracted_seq == session.last_seq and not open_jobs.exists()


def _llm_env(server: FakeLLMServer) -> dict[str, str]:
    return {
        "LLM_PROVIDER": "openai",
        "LLM_BASE_URL": server.openai_base_url,
        "LLM_API_KEY": "sk-test-not-a-real-key",
        "LLM_MODEL": "gpt-test-mini",
        "LLM_TIMEOUT_SECONDS": "60",  # the slow reply must still be pending when the worker is killed
        "LLM_MAX_RETRIES": "0",
    }


def _fact(content: str, memory_type: str, subject: str, seq: int) -> dict:
    return {
        "content": content,
        "memory_type": memory_type,
        "confidence": 0.9,
        "action": "add",
        "target_memory_id": None,
        "subject": subject,
        "source_seqs": [seq],
    }


EMPLOYER_FACT = _fact("Alice works as a software engineer at TechCorp", "fact", "employer", 1)
PREFERENCE_FACT = _fact("Alice prefers dark mode", "preference", "preference:dark mode", 3)


# --- Through the worker -------------------------------------------------------------------------------


@pytest.mark.slow
def test_messages_are_extracted_in_the_background_and_become_searchable(tenant_a, qcluster):
    qcluster.start()
    client = tenant_a.client("write")

    body = _conversation(client)

    # The answer comes before any extraction: the session it reports has extracted nothing yet.
    assert body["accepted"] == 3 and body["extraction_job"]
    assert body["session"]["extracted_seq"] == 0 and body["session"]["last_seq"] == 3

    def both_facts_found():
        hits = _search(client, "Alice TechCorp software engineer dark mode")
        return hits if any("TechCorp" in hit for hit in hits) and any("dark mode" in hit for hit in hits) else None

    found = wait_for(both_facts_found, timeout=30, what="the extracted facts in search", cluster=qcluster)
    assert any("software engineer" in hit for hit in found)

    job = ExtractionJob.objects.get()
    assert str(job.pk) == body["extraction_job"]
    assert (job.status, job.attempts, job.from_seq, job.to_seq, job.extractor) == ("succeeded", 1, 0, 3, "rules")
    memories = list(Memory.objects.filter(store=tenant_a.store))
    assert job.added == len(memories) >= 3 and (job.updated, job.deleted) == (0, 0)
    # The monitor records the task's result just after the job commits.
    task = wait_for(lambda: Task.objects.filter(id=job.q_task_id).first(), timeout=10, what="the task result")
    assert task.success and task.result.startswith("succeeded: +"), task.result
    session = _session()
    assert session.extracted_seq == session.last_seq == 3
    for memory in memories:
        assert (memory.source, memory.status, memory.user_id) == ("extraction", "active", "alice")
        (revision,) = memory.revisions.all()
        assert revision.action == "create" and revision.actor_type == "system"
        assert revision.context["job_id"] == str(job.pk) and revision.context["session_id"] == SESSION
        expected_seqs = [3] if "dark mode" in memory.content else [1]
        assert revision.context["message_seqs"] == expected_seqs, memory.content
        assert memory.provenance["sources"] == [
            {"session_id": SESSION, "job_id": str(job.pk), "message_seqs": expected_seqs}
        ]


@pytest.mark.slow
def test_flush_waits_for_the_worker_and_reports_the_changes(tenant_a, qcluster, configure_store):
    configure_store(tenant_a.store, extraction_config={"every_n_turns": 5})
    client = tenant_a.client("write")
    assert _conversation(client)["extraction_job"] is None  # two user turns of five: not due yet

    # No worker: the flush creates the job, waits, and says it is not complete.
    pending = client.post(f"{FLUSH_URL}?wait=1")
    assert pending.status_code == 200, pending.content
    assert pending.json()["complete"] is False
    [pending_job] = pending.json()["jobs"]
    assert (pending_job["status"], pending_job["trigger"]) == ("queued", "flush")

    qcluster.start()
    response = client.post(f"{FLUSH_URL}?wait=15")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["complete"] is True, qcluster.log()
    assert body["session"]["extracted_seq"] == body["session"]["last_seq"] == 3
    [job] = body["jobs"]
    assert job["id"] == pending_job["id"]  # the open job, not a second one
    assert (job["status"], job["attempts"], job["from_seq"], job["to_seq"]) == ("succeeded", 1, 0, 3)
    assert job["added"] >= 3
    assert len(body["changes"]) == job["added"]
    assert {change["action"] for change in body["changes"]} == {"create"}
    assert {change["job_id"] for change in body["changes"]} == {job["id"]}
    contents = {change["content"]: change["message_seqs"] for change in body["changes"]}
    assert any("TechCorp" in content and seqs == [1] for content, seqs in contents.items()), contents
    assert any("dark mode" in content and seqs == [3] for content, seqs in contents.items()), contents

    # Nothing is left to extract: no second job, and the answer still reports what the job did.
    again = client.post(f"{FLUSH_URL}?wait=15")
    assert again.status_code == 200
    assert again.json()["complete"] is True and again.json()["more_jobs"] is False
    assert again.json()["jobs"] == body["jobs"] and again.json()["changes"] == body["changes"]
    assert ExtractionJob.objects.count() == 1


@pytest.mark.slow
def test_a_flush_after_the_worker_finished_reports_its_jobs_supersedes_included(tenant_a, qcluster):
    qcluster.start()
    client = tenant_a.client("write")
    first = _post_messages(client, {0: ("user", "I live in Paris")})
    wait_for(_all_jobs_done, timeout=30, what="the first job", cluster=qcluster)
    moved = _post_messages(client, {1: ("user", "I moved to Berlin last month"), 2: ("assistant", REPLY)})
    assert moved["seqs"] == [2, 3]
    wait_for(_all_jobs_done, timeout=30, what="the second job", cluster=qcluster)
    paris = Memory.objects.get(content__contains="Paris")
    berlin = Memory.objects.get(content__contains="Berlin")

    # The worker did everything before the flush: the flush has nothing to run, only to report.
    whole = client.post(f"{FLUSH_URL}?wait=5")
    assert whole.status_code == 200, whole.content
    whole = whole.json()
    assert whole["complete"] is True and whole["more_jobs"] is False
    assert [job["id"] for job in whole["jobs"]] == [first["extraction_job"], moved["extraction_job"]]
    assert {job["status"] for job in whole["jobs"]} == {"succeeded"}
    assert [(change["memory_id"], change["action"]) for change in whole["changes"]] == [
        (str(paris.pk), "create"), (str(berlin.pk), "create"), (str(paris.pk), "supersede")]
    supersede = whole["changes"][-1]
    assert (supersede["status"], supersede["superseded_by"], supersede["message_seqs"]) == (
        "superseded", str(berlin.pk), [2])
    assert (supersede["job_id"], whole["jobs"][-1]["updated"]) == (moved["extraction_job"], 1)

    # since_seq: only the job that covers the second batch, and its changes.
    narrowed = client.post(f"{FLUSH_URL}?wait=5&since_seq={moved['seqs'][0] - 1}").json()
    assert [job["id"] for job in narrowed["jobs"]] == [moved["extraction_job"]]
    assert narrowed["changes"] == whole["changes"][1:]
    assert ExtractionJob.objects.count() == 2

    history = client.get(f"/api/v1/stores/main/memories/{paris.pk}/history").json()["results"]
    assert [revision["action"] for revision in history] == ["create", "supersede"]


@pytest.mark.slow
def test_a_job_of_a_killed_worker_is_taken_over_after_its_lease_expires(tenant_a, qcluster, settings, configure_store):
    # Without the scheduled sweep: the restarted worker's lease sweep (every WORKER_HEARTBEAT_SECONDS) must recover
    # the job once the dead run's lease has run out, long before q2 would deliver the task again.
    Schedule.objects.filter(name="extraction-sweep").delete()
    client = tenant_a.client("write")
    with FakeLLMServer(default=Reply.memories()) as server:
        settings.LLM_BASE_URL = server.openai_base_url  # the store may choose llm only once a model is set
        configure_store(tenant_a.store, extraction_config={"extractor": "llm"})
        # The first call hangs past the kill; the re-run gets the facts; later jobs find nothing new.
        server.script(Reply.slow(30), Reply.memories(EMPLOYER_FACT, PREFERENCE_FACT))
        qcluster.start(**_llm_env(server))

        first = _conversation(client)
        job = ExtractionJob.objects.get(pk=first["extraction_job"])
        wait_for(
            lambda: server.requests and ExtractionJob.objects.get(pk=job.pk).status == "running",
            timeout=20, what="the worker to be inside the model call", cluster=qcluster,
        )
        # A client retry overlapping what was sent, plus one new message, while the job runs.
        retried = _post_messages(
            client, {1: ("assistant", REPLY), 2: ("user", PREFERENCE), 3: ("user", "Thanks, that's all for now")}
        )
        assert (retried["accepted"], retried["duplicates"], retried["extraction_job"]) == (1, 2, None)

        qcluster.kill()
        job.refresh_from_db()
        assert (job.status, job.attempts) == ("running", 1)  # nobody finished or released it
        assert job.lease_expires_at is not None

        qcluster.start(**_llm_env(server))
        wait_for(lambda: ExtractionJob.objects.get(pk=job.pk).status == "succeeded",
                 timeout=30, what="the lease sweep to queue the job again", cluster=qcluster)
        wait_for(_all_jobs_done, timeout=20, what="the follow-up job for the new message", cluster=qcluster)
        requests = server.requests

    job.refresh_from_db()
    assert (job.status, job.attempts, job.from_seq, job.to_seq, job.added) == ("succeeded", 2, 0, 3, 2)
    # The task the lease sweep enqueued (job.q_task_id names the latest) ran it to success.
    rerun = wait_for(lambda: Task.objects.filter(id=job.q_task_id).first(), timeout=10, what="the task result")
    assert rerun.success and rerun.result.startswith("succeeded"), rerun.result
    # The re-run extracted the job's own range again, not the message that arrived meanwhile.
    assert PREFERENCE in requests[1].prompt_text and "Thanks, that's all" not in requests[1].prompt_text
    assert "Thanks, that's all" in requests[2].prompt_text and len(requests) == 3

    for content in (EMPLOYER_FACT["content"], PREFERENCE_FACT["content"]):
        assert Memory.objects.filter(store=tenant_a.store, content=content).count() == 1, content
        memory = Memory.objects.get(store=tenant_a.store, content=content)
        assert memory.source == "extraction"
        assert list(memory.revisions.values_list("action", flat=True)) == ["create"]
    assert Memory.objects.count() == 2
    session = _session()
    assert session.extracted_seq == session.last_seq == 4
    texts = list(Message.objects.filter(session=session).order_by("seq").values_list("seq", "text"))
    assert texts == [(1, INTRODUCTION), (2, REPLY), (3, PREFERENCE), (4, "Thanks, that's all for now")]
    follow_up = ExtractionJob.objects.exclude(pk=job.pk).get()
    assert (follow_up.status, follow_up.from_seq, follow_up.to_seq, follow_up.added) == ("succeeded", 3, 4, 0)


@pytest.mark.slow
def test_a_task_delivered_twice_runs_the_job_once(tenant_a, qcluster):
    qcluster.start(workers=2)  # two workers, so the copies can run at the same time
    client = tenant_a.client("write")
    with transaction.atomic():  # the job's own task and two copies reach the broker together
        job_id = _conversation(client)["extraction_job"]
        async_task(RUN_TASK, job_id, group="extraction")
        async_task(RUN_TASK, job_id, group="extraction")

    wait_for(lambda: Task.objects.filter(func=RUN_TASK).count() == 3 and not OrmQ.objects.exists(),
             timeout=30, what="all three deliveries to finish", cluster=qcluster)
    tasks = list(Task.objects.filter(func=RUN_TASK))
    results = [task.result for task in tasks]
    assert all(task.success for task in tasks), results
    ran = [result for result in results if result.startswith("succeeded: ")]
    skipped = [result for result in results if result.startswith("not claimed")]
    assert (len(ran), len(skipped)) == (1, 2), results

    job = ExtractionJob.objects.get(pk=job_id)
    assert (job.status, job.attempts) == ("succeeded", 1), job.error
    memories = Memory.objects.filter(store=tenant_a.store)
    assert memories.count() == job.added >= 3
    assert len(set(memories.values_list("content", flat=True))) == memories.count()
    creates = MemoryRevision.objects.filter(memory__in=memories, action="create")
    assert sorted(creates.values_list("memory_id", flat=True)) == sorted(memories.values_list("pk", flat=True))
    assert MemoryRevision.objects.filter(memory__in=memories).count() == memories.count()


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads open sockets from Linux /proc")
def test_cluster_processes_do_not_share_database_connections(tenant_a, qcluster):
    # q2 forks its pusher, monitor and workers after the sentinel has used the database: a connection
    # pool inherited by fork would put them all on the same PostgreSQL socket.
    qcluster.start(workers=2)
    job_id = _conversation(tenant_a.client("write"))["extraction_job"]
    wait_for(lambda: ExtractionJob.objects.get(pk=job_id).status == "succeeded",
             timeout=30, what="the job", cluster=qcluster)
    processes = qcluster.processes()
    assert len(processes) >= 5  # main process, sentinel, pusher, monitor, workers
    assert shared_sockets(processes) == {}


# --- Failure and retry, in process ------------------------------------------------------------------


@pytest.fixture
def inline_llm_extraction(tenant_a, settings, configure_store):
    """The store extracts with the LLM extractor, pointed at a fake server; jobs run in this process."""
    with FakeLLMServer(default=Reply.server_error()) as server:
        settings.EXTRACTION_RUN_INLINE = True
        settings.EXTRACTION_MAX_ATTEMPTS = 3
        settings.EXTRACTION_RETRY_BACKOFF_SECONDS = 30
        settings.LLM_PROVIDER = "openai"
        settings.LLM_BASE_URL = server.openai_base_url
        settings.LLM_API_KEY = "sk-test-not-a-real-key"
        settings.LLM_MODEL = "gpt-test-mini"
        settings.LLM_MAX_RETRIES = 0
        settings.LLM_TIMEOUT_SECONDS = 5.0
        get_extractor.cache_clear()  # extractors are built once per process, from the settings
        configure_store(tenant_a.store, extraction_config={"extractor": "llm"})
        yield server
    get_extractor.cache_clear()


def test_a_failing_model_exhausts_the_attempts_and_a_retry_succeeds(tenant_a, tenant_b, inline_llm_extraction):
    server = inline_llm_extraction
    writer = tenant_a.client("write")
    body = _post_messages(writer, {0: ("user", INTRODUCTION), 1: ("user", PREFERENCE)})
    job = ExtractionJob.objects.get(pk=body["extraction_job"])
    assert (job.status, job.attempts) == ("queued", 1)  # ran on commit, failed, waits to retry
    assert "HTTP 500" in job.error and job.run_after > timezone.now()
    assert services.extraction_job_run(job_id=job.pk).claimed is False  # not due yet

    for attempt in (2, 3):
        ExtractionJob.objects.filter(pk=job.pk).update(run_after=timezone.now() - timedelta(seconds=1))
        outcome = services.extraction_job_run(job_id=job.pk)
        assert outcome.claimed and outcome.job.attempts == attempt
    job.refresh_from_db()
    assert (job.status, job.attempts) == ("failed", 3) and job.finished_at is not None
    assert "HTTP 500" in job.error
    assert len(server.requests) == 3
    assert services.extraction_job_run(job_id=job.pk).claimed is False  # failed jobs stay failed
    assert _session().extracted_seq == 0 and not Memory.objects.exists()

    failed = tenant_a.client("read").get("/api/v1/jobs?status=failed").json()["results"]
    assert [(item["id"], item["attempts"]) for item in failed] == [(str(job.pk), 3)]
    assert tenant_b.client("read").get("/api/v1/jobs?status=failed").json()["results"] == []

    server.script(Reply.memories(_fact(EMPLOYER_FACT["content"], "fact", "employer", 1),
                                 _fact(PREFERENCE_FACT["content"], "preference", "preference:dark mode", 2)))
    retried = writer.post(f"/api/v1/jobs/{job.pk}/retry")
    assert retried.status_code == 200, retried.content
    # Inline, the retried job has already run when the answer is rendered.
    assert (retried.json()["status"], retried.json()["attempts"], retried.json()["trigger"]) == ("succeeded", 1, "retry")
    assert retried.json()["added"] == 2 and retried.json()["error"] == ""
    assert sorted(Memory.objects.values_list("content", flat=True)) == sorted(
        [EMPLOYER_FACT["content"], PREFERENCE_FACT["content"]]
    )
    session = _session()
    assert session.extracted_seq == session.last_seq == 2

    conflict = writer.post(f"/api/v1/jobs/{job.pk}/retry")
    assert conflict.status_code == 409 and conflict.json()["error"]["code"] == "job_not_failed"
    assert tenant_b.client("write").post(f"/api/v1/jobs/{job.pk}/retry").status_code == 404



def _run_due(job: ExtractionJob) -> services.JobOutcome:
    """Run a job waiting for its retry now, as the scheduler would once its run_after passed."""
    ExtractionJob.objects.filter(pk=job.pk).update(run_after=timezone.now() - timedelta(seconds=1))
    return services.extraction_job_run(job_id=job.pk)


@pytest.mark.parametrize(
    ("failure", "recorded"),
    [(Reply.server_error(), "HTTP 500"), (Reply.text_only("I'd rather not say."), "content that is not JSON")],
    ids=["unreachable", "malformed"],
)
def test_a_store_with_fallback_runs_the_rules_on_the_last_attempt(tenant_a, configure_store, inline_llm_extraction,
                                                                   failure, recorded):
    server = inline_llm_extraction
    server.default = failure
    configure_store(tenant_a.store, extraction_config={"extractor": "llm", "fallback_to_rules": True})
    body = _post_messages(tenant_a.client("write"), {0: ("user", INTRODUCTION), 1: ("user", PREFERENCE)})
    job = ExtractionJob.objects.get(pk=body["extraction_job"])
    assert (job.status, job.attempts, job.extractor) == ("queued", 1, "llm")  # earlier attempts retry as before

    assert _run_due(job).job.status == "queued"
    outcome = _run_due(job)

    job.refresh_from_db()
    assert (job.status, job.attempts, job.extractor, job.error) == ("succeeded", 3, "rules", "")
    assert "LLM (openai, gpt-test-mini)" in job.fallback_reason and recorded in job.fallback_reason
    assert outcome.job.fallback_reason == job.fallback_reason
    contents = list(Memory.objects.values_list("content", flat=True))
    assert any("TechCorp" in content for content in contents) and any("dark mode" in content for content in contents)
    assert set(MemoryRevision.objects.values_list("context__extractor", flat=True)) == {"rules"}
    assert _session().extracted_seq == 2
    shown = tenant_a.client("read").get(f"/api/v1/jobs/{job.pk}").json()
    assert (shown["extractor"], shown["fallback_reason"]) == ("rules", job.fallback_reason)


def test_the_flush_answer_shows_a_fallback(tenant_a, configure_store, inline_llm_extraction, settings):
    settings.EXTRACTION_MAX_ATTEMPTS = 1  # the first attempt is the last
    configure_store(tenant_a.store, extraction_config={"extractor": "llm", "fallback_to_rules": True,
                                                       "every_n_turns": 10})
    _post_messages(tenant_a.client("write"), {0: ("user", INTRODUCTION)})

    flushed = tenant_a.client("write").post(f"{FLUSH_URL}?wait=5").json()

    (job,) = flushed["jobs"]
    assert (flushed["complete"], job["status"], job["extractor"]) == (True, "succeeded", "rules")
    assert "HTTP 500" in job["fallback_reason"]
    assert any("TechCorp" in change["content"] for change in flushed["changes"])


def test_a_fallback_that_then_fails_says_what_ran_and_a_retry_asks_the_model_again(
    tenant_a, configure_store, inline_llm_extraction, settings, monkeypatch
):
    settings.EXTRACTION_MAX_ATTEMPTS = 1  # the first attempt is the last
    configure_store(tenant_a.store, extraction_config={"extractor": "llm", "fallback_to_rules": True})

    def broken(**kwargs):
        raise RuntimeError("consolidation broke")

    monkeypatch.setattr(services, "consolidate", broken)
    body = _post_messages(tenant_a.client("write"), {0: ("user", INTRODUCTION)})

    job = ExtractionJob.objects.get(pk=body["extraction_job"])
    assert (job.status, job.extractor) == ("failed", "rules")  # what ran, not what was scheduled
    assert "HTTP 500" in job.fallback_reason and "consolidation broke" in job.error

    monkeypatch.undo()
    inline_llm_extraction.default = Reply.memories(EMPLOYER_FACT)
    assert tenant_a.client("write").post(f"/api/v1/jobs/{job.pk}/retry").status_code == 200
    job.refresh_from_db()
    assert (job.status, job.extractor, job.fallback_reason) == ("succeeded", "llm", "")
    assert list(Memory.objects.values_list("content", flat=True)) == [EMPLOYER_FACT["content"]]


def test_without_fallback_a_malformed_model_fails_the_job(tenant_a, inline_llm_extraction, settings):
    settings.EXTRACTION_MAX_ATTEMPTS = 1
    inline_llm_extraction.default = Reply.text_only("I'd rather not say.")

    body = _post_messages(tenant_a.client("write"), {0: ("user", INTRODUCTION)})

    job = ExtractionJob.objects.get(pk=body["extraction_job"])
    assert (job.status, job.extractor, job.fallback_reason) == ("failed", "llm", "")
    assert "content that is not JSON" in job.error and not Memory.objects.exists()
    assert len(inline_llm_extraction.requests) == 2  # asked once more, saying what was wrong


def test_auto_extracts_with_the_model_when_one_is_configured(tenant_a, configure_store, inline_llm_extraction):
    configure_store(tenant_a.store, extraction_config={"extractor": None})  # back to the default
    inline_llm_extraction.default = Reply.memories(EMPLOYER_FACT)
    store = tenant_a.client("read").get("/api/v1/stores/main").json()
    assert (store["extraction_settings"]["extractor"], store["extractor_status"]["extractor"]) == ("auto", "llm")

    body = _post_messages(tenant_a.client("write"), {1: ("user", INTRODUCTION)})

    job = ExtractionJob.objects.get(pk=body["extraction_job"])
    assert (job.status, job.extractor) == ("succeeded", "llm")
    assert list(Memory.objects.values_list("content", flat=True)) == [EMPLOYER_FACT["content"]]
    assert len(inline_llm_extraction.requests) == 1


@pytest.mark.usefixtures("inline_extraction")
def test_auto_is_rules_without_a_model(tenant_a):
    body = _post_messages(tenant_a.client("write"), {0: ("user", INTRODUCTION)})

    job = ExtractionJob.objects.get(pk=body["extraction_job"])
    assert (job.status, job.extractor) == ("succeeded", "rules")
    assert any("TechCorp" in content for content in Memory.objects.values_list("content", flat=True))


def test_an_auto_job_whose_model_went_away_runs_the_rules(tenant_a, configure_store, inline_llm_extraction, settings):
    configure_store(tenant_a.store, extraction_config={"extractor": None})
    settings.EXTRACTION_RUN_INLINE = False  # queued for a worker that runs it after a restart
    body = _post_messages(tenant_a.client("write"), {0: ("user", INTRODUCTION)})
    assert ExtractionJob.objects.get(pk=body["extraction_job"]).extractor == "llm"
    settings.EXTRACTION_RUN_INLINE = True
    settings.LLM_API_KEY = settings.LLM_BASE_URL = ""

    outcome = services.extraction_job_run(job_id=body["extraction_job"])

    assert (outcome.job.status, outcome.job.extractor, outcome.job.fallback_reason) == ("succeeded", "rules", "")
    assert ExtractionJob.objects.get(pk=body["extraction_job"]).extractor == "rules"
    assert inline_llm_extraction.requests == []
