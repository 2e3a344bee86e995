"""A failed extraction job, seen and retried through the Python client, against a live memoryhub whose worker
asks a fake LLM (no network): the first call fails, the retried job gets the facts."""

import pytest

from memoryhub_client import Conflict
from tests.fakes.llm_server import FakeLLMServer, Reply
from tests.processes import wait_for

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

STORE = "main"
FACT = {
    "content": "Alice works as a software engineer at TechCorp",
    "memory_type": "fact",
    "confidence": 0.9,
    "action": "add",
    "target_memory_id": None,
    "subject": "employer",
    "source_seqs": [1],
}


@pytest.fixture(scope="module")
def fake_llm():
    with FakeLLMServer(default=Reply.memories()) as server:
        yield server


@pytest.fixture(scope="module")
def live_server_env(fake_llm) -> dict[str, str]:
    return {
        "EXTRACTION_MAX_ATTEMPTS": "1",  # the first failure fails the job (no 30 s scheduler tick to wait for)
        "LLM_PROVIDER": "openai",
        "LLM_BASE_URL": fake_llm.openai_base_url,
        "LLM_API_KEY": "sk-test-not-a-real-key",
        "LLM_MODEL": "gpt-test-mini",
        "LLM_MAX_RETRIES": "0",
        "LLM_TIMEOUT_SECONDS": "10",
    }


def test_a_failed_job_is_listed_and_a_retry_extracts(hub, live_server, fake_llm):
    assert hub.stores.update(STORE, extraction_config={"extractor": "llm"}).extraction_settings["extractor"] == "llm"
    fake_llm.script(Reply.server_error(), Reply.memories(FACT))

    ingest = hub.sessions.add_messages(STORE, "chat-1", user_id="alice", run_id="run-1", messages=[
        {"role": "user", "content": "My name is Alice and I work as a software engineer at TechCorp"},
    ])
    failed = wait_for(lambda: (job := hub.jobs.get(ingest.extraction_job)).status == "failed" and job,
                      timeout=30, what="the job to fail", cluster=live_server.worker)

    assert (failed.attempts, failed.max_attempts, failed.extractor) == (1, 1, "llm")
    assert "500" in failed.error
    assert [job.id for job in hub.jobs.list(status="failed").items] == [failed.id]
    assert hub.sessions.get(STORE, "chat-1").extracted_seq == 0

    retried = hub.jobs.retry(failed.id)

    assert retried.id == failed.id and retried.trigger == "retry"
    done = wait_for(lambda: (job := hub.jobs.get(failed.id)).status == "succeeded" and job,
                    timeout=30, what="the retried job", cluster=live_server.worker)
    assert (done.added, done.error) == (1, "")
    assert [memory.content for memory in hub.memories.iter(STORE, user_id="alice")] == [FACT["content"]]
    assert hub.sessions.get(STORE, "chat-1").extracted_seq == 1
    assert len(fake_llm.requests) == 2
    with pytest.raises(Conflict):
        hub.jobs.retry(failed.id)
