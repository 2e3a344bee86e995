"""A live memoryhub for the client tests: a uvicorn process and a qcluster worker on the test database.

Tests that use `live_server` must be `@pytest.mark.django_db(transaction=True)`: the server and the worker
are other processes and see only committed rows. Create tenants and keys with the usual fixtures
(`tenant_a.keys["admin"]` is a raw key of tenant acme, whose store is "main").
"""

from collections.abc import Callable, Iterator

import pytest

from apps.extraction.models import ExtractionJob
from memoryhub_client import AsyncMemoryHub, MemoryHub, resilience
from tests.processes import LiveProcesses, server_and_worker, wait_for


class LiveMemoryhub(LiveProcesses):
    """The running server and worker, and clients for them."""

    def client(self, api_key: str, **options) -> MemoryHub:
        return MemoryHub(self.base_url, api_key, **options)

    def async_client(self, api_key: str, **options) -> AsyncMemoryHub:
        return AsyncMemoryHub(self.base_url, api_key, **options)


@pytest.fixture(scope="module")
def live_server_env() -> dict[str, str]:
    """Extra environment of the server and the worker; a test module overrides this to configure them."""
    return {}


@pytest.fixture(scope="module")
def live_server(django_db_setup, tmp_path_factory, live_server_env) -> Iterator[LiveMemoryhub]:
    with server_and_worker(tmp_path_factory.mktemp("memoryhub"), workers=2, **live_server_env) as processes:
        yield LiveMemoryhub(*processes)


@pytest.fixture(autouse=True)
def _live_server_helper(request):
    """Replaces pytest-django's helper of the same name, which serves its own (threaded) live_server.

    Ours is another process, so a test that uses it needs committed data: transactional_db.
    """
    if "live_server" not in request.fixturenames:
        yield
        return
    request.getfixturevalue("transactional_db")
    yield
    # Before the database is emptied for the next test: a job the worker is still running holds row
    # locks that would deadlock the TRUNCATE.
    wait_for(lambda: not ExtractionJob.objects.filter(status__in=ExtractionJob.OPEN_STATUSES).exists(),
             timeout=60, what="the worker to finish its extraction jobs")


@pytest.fixture(autouse=True)
def _fresh_resilience(monkeypatch):
    """Every test starts as a new process would: no open circuit breaker, no outbox holding writes of an
    earlier test. Breakers reopen after 0.2 s instead of 5 s, so an outage test recovers quickly."""
    monkeypatch.setattr(resilience, "FIRST_COOLDOWN_SECONDS", 0.2)
    monkeypatch.setattr(resilience, "MAX_COOLDOWN_SECONDS", 1.0)
    resilience.reset(timeout=0)
    yield
    resilience.reset(timeout=5)


@pytest.fixture
def hub_for(live_server) -> Iterator[Callable[..., MemoryHub]]:
    """Make a sync client for a raw API key; closed after the test."""
    clients: list[MemoryHub] = []

    def make(api_key: str, **options) -> MemoryHub:
        client = live_server.client(api_key, **options)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def hub(hub_for, tenant_a) -> MemoryHub:
    """A client with tenant acme's admin key."""
    return hub_for(tenant_a.keys["admin"])
