"""memoryhub.asgi: at the server's lifespan startup a web process starts loading the local models its stores use."""

import asyncio
import threading
import time

import pytest

from apps.core.embeddings import base as embeddings
from apps.memories.services import store_create
from memoryhub.asgi import application
from tests.conftest import build_tenant_world


def _start_up_and_shut_down() -> list[str]:
    """Run the lifespan protocol as uvicorn does; returns what the application answered."""

    async def lifespan():
        inbox: asyncio.Queue = asyncio.Queue()
        answers: list[str] = []

        async def send(message):
            answers.append(message["type"])

        for message in ("lifespan.startup", "lifespan.shutdown"):
            inbox.put_nowait({"type": message})
        await application({"type": "lifespan", "asgi": {"version": "3.0"}}, inbox.get, send)
        return answers

    return asyncio.run(lifespan())


@pytest.fixture
def fresh_embedders(monkeypatch):
    """An empty process-wide embedder cache: no model loaded yet, as in a new web process."""
    monkeypatch.setattr(embeddings, "_cache", {})
    return embeddings._cache


def _load_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == "embedder load"]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_web_process_loads_its_stores_local_model_as_it_starts(fresh_embedders):
    world = build_tenant_world("acme")
    store_create(tenant=world.tenant, name="local-store", embedding_provider="local")

    assert _start_up_and_shut_down() == ["lifespan.startup.complete", "lifespan.shutdown.complete"]

    deadline = time.monotonic() + 120
    while _load_threads() and time.monotonic() < deadline:
        time.sleep(0.05)
    [embedder] = [embedder for (provider, *_), embedder in fresh_embedders.items() if provider == "local"]
    assert embedder._model is not None


@pytest.mark.django_db(transaction=True)
def test_stores_of_other_embedders_load_nothing_and_the_load_can_be_turned_off(fresh_embedders, settings):
    build_tenant_world("acme")  # its store embeds with the hash embedder

    assert _start_up_and_shut_down() == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    deadline = time.monotonic() + 30
    while _load_threads() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert fresh_embedders == {}

    settings.EMBEDDING_LOAD_AT_START = False
    store_create(tenant=build_tenant_world("globex").tenant, name="local-store", embedding_provider="local")
    _start_up_and_shut_down()
    assert not _load_threads() and fresh_embedders == {}
