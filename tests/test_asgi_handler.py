"""memoryhub.asgi_handler: each HTTP request runs in one trip to a worker thread, concurrent requests in
parallel, and each thread's database connection goes back when its request ends."""

import asyncio
import time

import httpx
import pytest

from memoryhub.asgi import application
from tests import asgi_urls
from tests.conftest import build_tenant_world


def _client(**headers):
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=application), base_url="http://localhost",
                             headers=headers)


@pytest.fixture
def test_urls(settings):
    settings.ROOT_URLCONF = "tests.asgi_urls"
    settings.ALLOWED_HOSTS = ["localhost"]
    asgi_urls.served.clear()
    return asgi_urls.served


@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_run_in_parallel_threads_and_give_their_connections_back(test_urls):
    async def four_at_once():
        async with _client() as client:
            started = time.monotonic()
            answers = await asyncio.gather(*(client.get("/slow?seconds=0.5") for _ in range(4)))
            return answers, time.monotonic() - started

    answers, elapsed = asyncio.run(four_at_once())
    assert [answer.status_code for answer in answers] == [200] * 4
    assert elapsed < 1.5  # one after another: 2 s
    assert len({request["thread"] for request in test_urls}) >= 2
    # Each request's connection was given back (to the pool) by the thread that used it.
    assert all(request["connection"].connection is None for request in test_urls)


@pytest.mark.django_db(transaction=True)
def test_errors_bodies_and_streams_pass_through(test_urls):
    async def requests():
        async with _client() as client:
            return (await client.get("/failing"), await client.get("/nowhere"), await client.get("/streamed"),
                    await client.post("/echo", content=b"x" * 100_000))

    failing, missing, streamed, echoed = asyncio.run(requests())
    assert failing.status_code == 500 and missing.status_code == 404
    assert streamed.status_code == 200 and streamed.text == "part 0\npart 1\npart 2\n"
    assert echoed.content == b"x" * 100_000


@pytest.mark.django_db(transaction=True)
def test_the_api_answers_through_it_as_through_wsgi(settings):
    settings.ALLOWED_HOSTS = ["localhost", "testserver"]
    world = build_tenant_world("acme")
    key = world.keys["read"]

    async def asgi_requests():
        async with _client(Authorization=f"Bearer {key}") as client:
            return await client.get("/api/v1/key"), await client.post("/api/v1/stores/main/search", json={})

    found, refused = asyncio.run(asgi_requests())
    assert found.status_code == 200 and found.json() == world.client("read").get("/api/v1/key").json()
    assert refused.status_code == 400 and "query" in refused.json()["error"]["message"]
