"""Fixtures of the client's unit tests: a scripted server and clients whose retry waits are recorded, not slept."""

import socket

import pytest
from scripted_http import API_KEY, ScriptedServer

from memoryhub_client import AsyncMemoryHub, MemoryHub


@pytest.fixture
def server():
    with ScriptedServer() as scripted:
        yield scripted


class Recorder:
    """Stands in for time.sleep / asyncio.sleep: keeps the delays, returns at once."""

    def __init__(self):
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)

    async def asleep(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
def sleeps() -> Recorder:
    return Recorder()


def pin(client, sleeps: Recorder, *, jitter: float = 1.0, asynchronous: bool = False):
    """No real waiting, and a fixed jitter factor so the delays are known."""
    client._transport._sleep = sleeps.asleep if asynchronous else sleeps
    client._transport._random = lambda: jitter
    return client


@pytest.fixture
def make_hub(server, sleeps):
    clients = []

    def make(**options) -> MemoryHub:
        jitter = options.pop("jitter", 1.0)
        client = pin(MemoryHub(options.pop("base_url", server.url), API_KEY, **options), sleeps, jitter=jitter)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def hub(make_hub) -> MemoryHub:
    return make_hub()


@pytest.fixture
def make_async_hub(server, sleeps):
    def make(**options) -> AsyncMemoryHub:
        jitter = options.pop("jitter", 1.0)
        client = AsyncMemoryHub(options.pop("base_url", server.url), API_KEY, **options)
        return pin(client, sleeps, jitter=jitter, asynchronous=True)

    return make


@pytest.fixture
def closed_port_url() -> str:
    """A URL where nothing listens: connecting is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"
