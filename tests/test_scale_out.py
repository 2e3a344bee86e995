"""Scale-out on one PostgreSQL and one Redis: two web processes and two django-q2 clusters, as on two machines.

Redis carries the django-q2 broker, the channel layer and the API's rate counters (REDIS_URL); the database is
the test database.
"""

import json
import time
from dataclasses import dataclass

import httpx
import pytest
from django.conf import settings
from redis import Redis
from websockets.sync.client import connect

from apps.conversations.models import Session
from apps.extraction.models import ExtractionJob
from apps.memories.models import Memory
from apps.tenancy.services import tenant_limits_set
from apps.tenancy.throttling import WINDOW_SECONDS
from tests.fakes.llm_server import FakeLLMServer, Reply
from tests.processes import LiveServer, QCluster, redis_server, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SESSIONS = 40


FACT = {"content": "Dana is allergic to latex", "memory_type": "fact", "confidence": 0.9, "action": "add",
        "target_memory_id": None, "subject": "allergy", "source_seqs": [1]}


@dataclass
class Machines:
    redis_url: str
    webs: list[LiveServer]
    workers: list[QCluster]
    llm: FakeLLMServer

    @property
    def env(self) -> dict[str, str]:
        """Both kinds of process: the web process schedules a job only for an extractor that can run."""
        return {
            "REDIS_URL": self.redis_url,
            "LLM_PROVIDER": "openai",
            "LLM_BASE_URL": self.llm.openai_base_url,
            "LLM_API_KEY": "sk-test-not-a-real-key",
            "LLM_MODEL": "gpt-test-mini",
            "LLM_TIMEOUT_SECONDS": "90",  # the slow answer must still be pending when its worker is killed
            "LLM_MAX_RETRIES": "0",
        }

    def log(self) -> str:
        return "\n".join(process.log() for process in [*self.webs, *self.workers])


@pytest.fixture
def machines(tmp_path, tenant_a, configure_store):
    # The rules extract the many small conversations; a store of its own waits on a (fake) model.
    configure_store(tenant_a.store, extraction_config={"extractor": "rules"})
    database = settings.DATABASES["default"]["NAME"]
    with redis_server(tmp_path) as redis_url, FakeLLMServer(default=Reply.memories(FACT)) as llm:
        webs, workers = [], []
        machines = Machines(redis_url, webs, workers, llm)
        try:
            for name in ("a", "b"):
                log_dir = tmp_path / name
                log_dir.mkdir()
                webs.append(LiveServer(database_name=database, log_dir=log_dir).start(**machines.env))
                workers.append(QCluster(database_name=database, log_dir=log_dir).start(workers=2, **machines.env))
            yield machines
        finally:
            for process in [*workers, *webs]:
                process.stop()


def _post_fact(web: LiveServer, api_key: str, index: int) -> None:
    response = httpx.post(
        f"{web.base_url}/api/v1/stores/main/sessions/scale-{index}/messages",
        headers={"Authorization": f"Bearer {api_key}"},
        json={"user_id": f"user-{index}",
              "messages": [{"role": "user", "content": f"My email is user{index}@example.com."}]},
        timeout=30,
    )
    assert response.status_code == 202, response.text


def _all_extracted() -> bool:
    jobs = ExtractionJob.objects.all()
    return jobs.count() == SESSIONS and not jobs.exclude(status=ExtractionJob.Status.SUCCEEDED).exists()


def test_messages_posted_to_two_web_processes_are_extracted_once_though_a_worker_is_killed(machines, tenant_a):
    api_key = tenant_a.keys["write"]
    for index in range(SESSIONS // 2):
        _post_fact(machines.webs[index % 2], api_key, index)
    # Killed with work in hand (tasks it took from Redis, a job under its lease), like a lost machine.
    machines.workers[0].kill()
    for index in range(SESSIONS // 2, SESSIONS):
        _post_fact(machines.webs[index % 2], api_key, index)
    machines.workers[0].start(workers=2, **machines.env)  # its machine comes back

    wait_for(_all_extracted, timeout=150, what="every session's job to succeed", interval=0.5)

    for index in range(SESSIONS):
        memories = Memory.objects.filter(store=tenant_a.store, user_id=f"user-{index}")
        assert [memory.content for memory in memories if f"user{index}@example.com" in memory.content], index
        assert memories.count() == 1, list(memories.values_list("content", flat=True))
        assert list(memories.get().revisions.values_list("action", flat=True)) == ["create"]
    assert ExtractionJob.objects.values("session").distinct().count() == SESSIONS
    for session in Session.objects.filter(store=tenant_a.store):
        assert session.extracted_seq == session.last_seq == 1, session.external_id
    # Both web processes took messages, and both clusters ran jobs.
    ran_on = set(ExtractionJob.objects.values_list("q_task_id", flat=True))
    assert len(ran_on) == SESSIONS
    for worker in machines.workers:
        worker.assert_running()


def test_an_event_of_one_web_process_reaches_a_websocket_on_the_other(machines, tenant_a):
    writer, listener = machines.webs
    ws_url = listener.base_url.replace("http://", "ws://") + "/ws/stores/main/events/"
    with connect(ws_url, additional_headers={"Authorization": f"Bearer {tenant_a.keys['read']}"},
                 open_timeout=10) as websocket:
        assert json.loads(websocket.recv(timeout=10))["type"] == "subscribed"
        response = httpx.post(f"{writer.base_url}/api/v1/stores/main/memories",
                              headers={"Authorization": f"Bearer {tenant_a.keys['write']}"},
                              json={"user_id": "dana", "content": "Dana prefers email"}, timeout=10)
        assert response.status_code == 201, response.text
        created = response.json()["memory"]["id"]
        deadline = time.monotonic() + 20
        heard = []
        while time.monotonic() < deadline:
            frame = json.loads(websocket.recv(timeout=max(0.1, deadline - time.monotonic())))
            heard.append(frame["type"])
            if frame["type"] == "memory.created" and frame["data"]["memory"]["id"] == created:
                break
        else:
            pytest.fail(f"memory.created never reached the other web process: {heard}")


def test_a_job_whose_worker_is_killed_in_the_middle_is_finished_once_by_the_other_machine(
        machines, tenant_a, settings, configure_store):
    settings.LLM_BASE_URL = machines.llm.openai_base_url  # a store may choose llm only once a model is set
    store = configure_store(tenant_a.store, extraction_config={"extractor": "llm"})
    machines.llm.script(Reply.slow(90))  # the first model call hangs; the second gets the fact
    machines.workers[1].stop()  # so that worker 0 takes the job
    response = httpx.post(
        f"{machines.webs[1].base_url}/api/v1/stores/{store.name}/sessions/killed/messages",
        headers={"Authorization": f"Bearer {tenant_a.keys['write']}"},
        json={"user_id": "dana", "messages": [{"role": "user", "content": "I'm allergic to latex."}]}, timeout=30,
    )
    assert response.status_code == 202, response.text
    job = ExtractionJob.objects.get(pk=response.json()["extraction_job"])
    wait_for(lambda: machines.llm.requests and ExtractionJob.objects.get(pk=job.pk).status == "running",
             timeout=30, what="worker 0 to be inside the model call", cluster=machines.workers[0])

    machines.workers[0].kill()
    machines.workers[1].start(workers=2, **machines.env)
    wait_for(lambda: ExtractionJob.objects.get(pk=job.pk).status == "succeeded", timeout=150,
             what="the other machine to finish the job", cluster=machines.workers[1], interval=0.5)

    job.refresh_from_db()
    assert job.attempts == 2 and job.added == 1
    memory = Memory.objects.get(store=tenant_a.store, user_id="dana")
    assert memory.content == FACT["content"]
    assert list(memory.revisions.values_list("action", flat=True)) == ["create"]
    assert len(machines.llm.requests) == 2


def test_one_key_s_rate_is_counted_across_web_processes_in_redis(machines, tenant_a):
    tenant_limits_set(tenant=tenant_a.tenant, limits={"reads_per_minute": 4})
    left = WINDOW_SECONDS - time.time() % WINDOW_SECONDS
    if left < 10:
        time.sleep(left + 0.5)  # the counter is per minute of the clock: all requests in one minute
    statuses = []
    for index in range(6):
        web = machines.webs[index % 2]
        response = httpx.get(f"{web.base_url}/api/v1/stores/main/memories",
                             headers={"Authorization": f"Bearer {tenant_a.keys['read']}"}, timeout=10)
        statuses.append(response.status_code)
    assert statuses == [200, 200, 200, 200, 429, 429], statuses  # two processes, one count
    assert response.json()["error"]["details"]["scope"] == "reads" and int(response.headers["Retry-After"]) >= 1
    counters = Redis.from_url(machines.redis_url).keys("memoryhub:*throttle:reads:*")
    assert len(counters) == 1, counters  # the counter lives in Redis, not in either process
