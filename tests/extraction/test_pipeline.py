"""The whole path in one process: messages -> job on commit -> rules extractor -> consolidation -> search.

django-q2 runs the task synchronously here (EXTRACTION_RUN_INLINE); tests/extraction/test_worker_integration.py
drives the same path through a real qcluster process.
"""

import pytest

from apps.conversations.models import Session
from apps.extraction.extractors import get_extractor
from apps.extraction.models import ExtractionJob
from apps.extraction.services import extraction_job_run
from apps.memories.models import Memory
from tests.fakes.llm_server import FakeLLMServer, Reply

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("inline_extraction")]

MESSAGES = "/api/v1/stores/main/sessions/chat-1/messages"


def _say(client, *texts, role="user", run_id="r1", start=0):
    messages = [{"role": role, "content": text, "seq": start + i} for i, text in enumerate(texts)]
    response = client.post(MESSAGES, {"user_id": "alice", "run_id": run_id, "messages": messages}, format="json")
    assert response.status_code == 202, response.content
    return response.json()


def _active(store):
    return sorted(Memory.objects.filter(store=store, status="active").values_list("content", flat=True))


def test_messages_become_searchable_memories(tenant_a):
    client = tenant_a.client("write")
    body = _say(client, "My name is Alice and I work as a software engineer at TechCorp")
    assert body["extraction_job"]
    _say(client, "I prefer practical examples over theoretical explanations", start=1)
    facts = _active(tenant_a.store)
    assert any("TechCorp" in fact for fact in facts)
    assert any("Alice" in fact and "name" in fact for fact in facts)
    assert any("prefers practical examples" in fact for fact in facts)
    hits = client.post("/api/v1/stores/main/search", {"query": "where does Alice work", "user_id": "alice"},
                       format="json").json()["results"]
    assert any("TechCorp" in hit["memory"]["content"] for hit in hits)
    session = Session.objects.get()
    assert session.extracted_seq == session.last_seq == 2
    assert set(ExtractionJob.objects.values_list("status", flat=True)) == {"succeeded"}


def test_small_talk_extracts_nothing_and_moves_the_high_water_mark(tenant_a):
    _say(tenant_a.client("write"), "ok", "thanks!")
    assert Memory.objects.count() == 0
    session = Session.objects.get()
    assert session.extracted_seq == 2
    assert ExtractionJob.objects.get().status == "succeeded"


def test_a_moved_user_supersedes_the_old_city(tenant_a):
    client = tenant_a.client("write")
    _say(client, "I live in Paris")
    _say(client, "I moved to Berlin last month", start=1)
    memories = {m.content: m for m in Memory.objects.all()}
    paris = next(m for content, m in memories.items() if "Paris" in content)
    berlin = next(m for content, m in memories.items() if "Berlin" in content)
    assert paris.status == "superseded" and paris.superseded_by_id == berlin.pk and berlin.status == "active"


def test_retried_batches_extract_each_fact_once(tenant_a):
    client = tenant_a.client("write")
    _say(client, "My email is alice@example.com")
    _say(client, "My email is alice@example.com", "I live in Paris")  # a client retry plus one new message
    emails = Memory.objects.filter(content__icontains="alice@example.com")
    assert emails.count() == 1 and emails.get().metadata.get("pii") is True
    assert Session.objects.get().message_count == 2


def test_flush_extracts_the_tail_and_reports_changes(tenant_a, configure_store):
    configure_store(tenant_a.store, extraction_config={"every_n_turns": 5})
    client = tenant_a.client("admin")
    _say(client, "I live in Lisbon", "My favourite colour is green")
    assert Memory.objects.count() == 0  # trigger not due yet
    response = client.post("/api/v1/stores/main/sessions/chat-1/flush?wait=5")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["complete"] is True and body["session"]["extracted_seq"] == 2
    assert [job["status"] for job in body["jobs"]] == ["succeeded"]
    assert body["jobs"][0]["trigger"] == "flush" and body["jobs"][0]["added"] >= 2
    assert {change["action"] for change in body["changes"]} == {"create"}
    assert any("Lisbon" in change["content"] for change in body["changes"])
    again = client.post("/api/v1/stores/main/sessions/chat-1/flush?wait=1").json()
    # Nothing left to extract: no new job, and the report is still of what the first flush's job did.
    assert again["complete"] is True and again["jobs"] == body["jobs"] and again["changes"] == body["changes"]
    assert ExtractionJob.objects.count() == 1


@pytest.mark.parametrize("wait", ["-1", "61", "nan", "soon"])
def test_flush_rejects_bad_wait(tenant_a, wait):
    _say(tenant_a.client("write"), "hello")
    response = tenant_a.client("write").post(f"/api/v1/stores/main/sessions/chat-1/flush?wait={wait}")
    assert response.status_code == 400 and "wait" in response.json()["error"]["details"]


def test_review_policy_keeps_extracted_memories_out_of_search(tenant_a, configure_store):
    configure_store(tenant_a.store, review_policy="review")
    client = tenant_a.client("admin")
    _say(client, "I live in Madrid")
    memory = Memory.objects.get()
    assert memory.status == "pending_review" and memory.source == "extraction"
    hits = client.post("/api/v1/stores/main/search", {"query": "Madrid"}, format="json").json()["results"]
    assert hits == []


def test_job_endpoints(tenant_a, tenant_b):
    _say(tenant_a.client("write"), "I live in Oslo")
    job = ExtractionJob.objects.get()
    reader = tenant_a.client("read")
    listed = reader.get("/api/v1/jobs?status=succeeded").json()["results"]
    assert [item["id"] for item in listed] == [str(job.pk)]
    detail = reader.get(f"/api/v1/jobs/{job.pk}").json()
    assert detail["session_id"] == "chat-1" and detail["status"] == "succeeded" and detail["added"] == 1
    assert tenant_b.client("read").get(f"/api/v1/jobs/{job.pk}").status_code == 404
    conflict = tenant_a.client("write").post(f"/api/v1/jobs/{job.pk}/retry")
    assert conflict.status_code == 409 and conflict.json()["error"]["code"] == "job_not_failed"


def test_store_extraction_config_is_validated(tenant_a, settings):
    settings.LLM_API_KEY = "sk-configured"
    client = tenant_a.client("admin")
    for bad in ({"extractor": "magic"}, {"every_n_turns": 0}, {"idle_seconds": -5}, {"enabled": "yes"}, {"bogus": 1},
                ["extractor"]):
        response = client.patch("/api/v1/stores/main", {"extraction_config": bad}, format="json")
        assert response.status_code == 400, (bad, response.content)
        assert "extraction_config" in response.json()["error"]["message"], response.content
    ok = client.patch("/api/v1/stores/main", {"extraction_config": {"extractor": "llm", "idle_seconds": 60}},
                      format="json")
    assert ok.status_code == 200
    assert ok.json()["extraction_config"] == {"extractor": "llm", "idle_seconds": 60}  # only the overrides
    assert ok.json()["extraction_settings"] == {
        "enabled": True, "extractor": "llm", "every_n_turns": 1, "idle_seconds": 60, "on_session_end": True,
        "fallback_to_rules": False,
    }
    reset = client.patch("/api/v1/stores/main", {"extraction_config": {"extractor": None}}, format="json").json()
    assert reset["extraction_config"] == {"idle_seconds": 60} and reset["extraction_settings"]["extractor"] == "auto"


def test_sweep_extracts_idle_sessions_and_leaves_fresh_queued_jobs_alone(tenant_a, settings, configure_store):
    from datetime import timedelta

    from django.utils import timezone

    from apps.extraction.services import extraction_sweep

    configure_store(tenant_a.store, extraction_config={"every_n_turns": 10, "idle_seconds": 60})
    client = tenant_a.client("admin")
    _say(client, "I live in Rome")
    assert Memory.objects.count() == 0
    assert extraction_sweep()["idle_sessions"] == 0  # not quiet long enough yet
    Session.objects.update(last_activity_at=timezone.now() - timedelta(seconds=61))
    assert extraction_sweep()["idle_sessions"] == 1
    job = ExtractionJob.objects.get()
    assert job.trigger == "idle" and job.status == "succeeded"
    assert any("Rome" in content for content in _active(tenant_a.store))

    # A queued job enqueued moments ago is waiting in the broker's queue: no duplicate task for it.
    ExtractionJob.objects.filter(pk=job.pk).update(status="queued", updated_at=timezone.now())
    assert extraction_sweep()["requeued"] == 0
    # One quiet for longer than the broker's re-delivery time has lost its task.
    ExtractionJob.objects.filter(pk=job.pk).update(
        updated_at=timezone.now() - timedelta(seconds=settings.Q_CLUSTER["retry"] + 61)
    )
    assert extraction_sweep()["requeued"] == 1
    # A running job whose lease expired belonged to a dead worker and is revived.
    ExtractionJob.objects.filter(pk=job.pk).update(status="running", lease_expires_at=timezone.now() - timedelta(seconds=1))
    assert extraction_sweep()["revived"] == 1


def test_a_run_that_outlived_its_lease_cannot_undo_the_run_that_took_over(tenant_a, settings):
    from apps.extraction.services import _record_failure

    settings.EXTRACTION_RUN_INLINE = False
    _say(tenant_a.client("write"), "I live in Oslo")
    job = ExtractionJob.objects.get()
    ExtractionJob.objects.filter(pk=job.pk).update(status="running", attempts=1)
    stale = ExtractionJob.objects.get(pk=job.pk)  # the first run's view of its job
    # Its lease ran out; another run claimed the job (attempt 2) and finished it.
    ExtractionJob.objects.filter(pk=job.pk).update(status="succeeded", attempts=2, added=1)
    outcome = _record_failure(job=stale, error=RuntimeError("late failure"), started=0.0)
    job.refresh_from_db()
    assert (job.status, job.attempts, job.added, job.error) == ("succeeded", 2, 1, "")
    assert outcome is None  # the other run's outcome is not this run's to report


def test_a_job_embeds_each_new_fact_once(tenant_a, monkeypatch):
    from apps.core.embeddings.hashing import HashEmbedder

    embedded: list[str] = []
    original = HashEmbedder.embed

    def counting(self, texts):
        embedded.extend(texts)
        return original(self, texts)

    monkeypatch.setattr(HashEmbedder, "embed", counting)
    _say(tenant_a.client("write"), "My name is Alice and I work as a software engineer at TechCorp")
    contents = list(Memory.objects.values_list("content", flat=True))
    assert len(contents) >= 2
    assert sorted(embedded) == sorted(contents)  # the near-duplicate check's vectors are the ones stored


# --- An extractor the server cannot run -----------------------------------------------------------------


def _store(client):
    return client.get("/api/v1/stores/main").json()


def test_choosing_llm_without_a_configured_model_is_refused_with_what_to_set(tenant_a, settings):
    settings.LLM_API_KEY = settings.LLM_BASE_URL = ""
    client = tenant_a.client("admin")
    refused = client.patch("/api/v1/stores/main", {"extraction_config": {"extractor": "llm"}}, format="json")
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert error["code"] == "validation_error" and "LLM_API_KEY" in error["message"]
    assert "LLM_API_KEY" in error["details"]["extraction_config"]["extractor"][0]
    assert _store(client)["extraction_settings"]["extractor"] == "auto"
    assert _store(client)["extractor_status"] == {"ready": True, "problem": None, "extractor": "rules"}

    created = client.post("/api/v1/stores", {"name": "llm-store", "embedding_provider": "hash",
                                              "extraction_config": {"extractor": "llm"}}, format="json")
    assert created.status_code == 400 and "LLM_API_KEY" in created.json()["error"]["message"]
    assert client.get("/api/v1/stores/llm-store").status_code == 404


@pytest.mark.parametrize("configured", [{"LLM_API_KEY": "sk-live"}, {"LLM_BASE_URL": "http://127.0.0.1:9/v1"}])
def test_llm_is_accepted_once_a_model_is_configured(tenant_a, settings, configured):
    settings.LLM_API_KEY = settings.LLM_BASE_URL = ""
    for name, value in configured.items():
        setattr(settings, name, value)
    client = tenant_a.client("admin")
    ok = client.patch("/api/v1/stores/main", {"extraction_config": {"extractor": "llm"}}, format="json")
    assert ok.status_code == 200, ok.content
    assert ok.json()["extractor_status"] == {"ready": True, "problem": None, "extractor": "llm"}


LISBON = {"content": "Alice lives in Lisbon", "memory_type": "fact", "confidence": 0.9, "action": "add",
          "target_memory_id": None, "subject": "location", "source_seqs": [2]}


def test_a_store_whose_model_went_away_shows_it_and_waits_for_one(tenant_a, settings):
    settings.LLM_API_KEY = "sk-live"
    client = tenant_a.client("admin")
    assert client.patch("/api/v1/stores/main", {"extraction_config": {"extractor": "llm"}},
                        format="json").status_code == 200
    settings.EXTRACTION_RUN_INLINE = False  # queued for a worker that runs it later
    queued_before = _say(tenant_a.client("write"), "My name is Alice")["extraction_job"]
    settings.EXTRACTION_RUN_INLINE = True
    settings.LLM_API_KEY = ""  # the server restarted without it

    status = _store(client)["extractor_status"]
    assert status["ready"] is False and "LLM_API_KEY" in status["problem"]
    # Other settings of the store can still change; the extractor it chose is kept.
    kept = client.patch("/api/v1/stores/main", {"extraction_config": {"every_n_turns": 2}}, format="json")
    assert kept.status_code == 200 and kept.json()["extraction_settings"]["extractor"] == "llm"

    # A job queued while the model was there fails at once, saying why: retries cannot help.
    extraction_job_run(job_id=queued_before)
    job = ExtractionJob.objects.get(pk=queued_before)
    assert (job.status, job.attempts, job.run_after) == ("failed", 1, None)
    assert "LLM_API_KEY" in job.error
    # New messages wait instead of queueing jobs that could only fail; a flush says what is missing.
    assert _say(tenant_a.client("write"), "I live in Lisbon", "I like tea", start=1)["extraction_job"] is None
    flush = tenant_a.client("write").post("/api/v1/stores/main/sessions/chat-1/flush?wait=1")
    assert flush.status_code == 409 and flush.json()["error"]["code"] == "extractor_not_ready"
    assert "LLM_API_KEY" in flush.json()["error"]["message"]
    assert ExtractionJob.objects.count() == 1 and not Memory.objects.exists()

    # Configured again (a model on a fake server), the waiting messages are extracted by it; the store kept llm.
    with FakeLLMServer(default=Reply.memories(LISBON)) as server:
        settings.LLM_PROVIDER, settings.LLM_MODEL, settings.LLM_MAX_RETRIES = "openai", "gpt-test-mini", 0
        settings.LLM_BASE_URL, settings.LLM_API_KEY = server.openai_base_url, "sk-live"
        get_extractor.cache_clear()  # extractors are built once per process, from the settings
        try:
            assert _store(client)["extractor_status"] == {"ready": True, "problem": None, "extractor": "llm"}
            done = tenant_a.client("write").post("/api/v1/stores/main/sessions/chat-1/flush?wait=10").json()
        finally:
            get_extractor.cache_clear()
    assert done["complete"] is True and [job["extractor"] for job in done["jobs"]] == ["llm", "llm"]
    assert _active(tenant_a.store) == [LISBON["content"]]
    (request,) = server.requests
    assert all(text in str(request.body["messages"]) for text in ("My name is Alice", "Lisbon", "I like tea"))


def test_the_sweep_leaves_idle_sessions_of_a_store_whose_extractor_cannot_run_alone(tenant_a, settings,
                                                                                     configure_store):
    from datetime import timedelta

    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from apps.extraction.services import extraction_sweep

    settings.LLM_API_KEY = "sk-live"
    configure_store(tenant_a.store, extraction_config={"extractor": "llm", "idle_seconds": 60})
    settings.LLM_API_KEY = ""  # the server restarted without it
    assert _say(tenant_a.client("write"), "I live in Rome")["extraction_job"] is None
    Session.objects.update(last_activity_at=timezone.now() - timedelta(seconds=61))

    with CaptureQueriesContext(connection) as queries:
        assert extraction_sweep()["idle_sessions"] == 0

    assert not [query["sql"] for query in queries if "FOR UPDATE" in query["sql"]]  # no session locked for nothing
    assert Session.objects.get().scheduled_seq == 0 and not ExtractionJob.objects.exists()


def test_terminate_ends_a_session_whose_extractor_cannot_run(tenant_a, settings, configure_store):
    settings.LLM_API_KEY = "sk-live"
    configure_store(tenant_a.store, extraction_config={"extractor": "llm", "every_n_turns": 5})
    settings.LLM_API_KEY = ""
    _say(tenant_a.client("write"), "My name is Alice")
    ended = tenant_a.client("write").post("/api/v1/stores/main/sessions/chat-1/terminate", {}, format="json")
    assert ended.status_code == 200, ended.content
    assert ended.json()["data"]["extraction"]["complete"] is False
    assert Session.objects.get(external_id="chat-1").status == "terminated"
