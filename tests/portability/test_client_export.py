"""hub.users.export over real HTTP: a uvicorn server on the test database, the sync and the async client."""

import asyncio

import pytest
from django.conf import settings

from memoryhub_client import AsyncMemoryHub, MemoryHub
from memoryhub_client.errors import PayloadTooLarge, PermissionDenied
from tests.processes import LiveServer

pytestmark = pytest.mark.django_db(transaction=True)  # the server is another process: it sees committed rows


@pytest.fixture(scope="module")
def server(django_db_setup, tmp_path_factory):
    live = LiveServer(database_name=settings.DATABASES["default"]["NAME"], log_dir=tmp_path_factory.mktemp("server"))
    try:
        yield live.start(MEMORYHUB_USER_EXPORT_MAX_BYTES="20000")
    finally:
        live.stop()


def test_the_client_exports_a_user_and_then_finds_them_erased(server, tenant_a, add_memory):
    add_memory(tenant_a.store, "Alice is allergic to peanuts", provenance={"from": "crm"})
    with MemoryHub(server.base_url, tenant_a.keys["admin"]) as hub:
        hub.sessions.add_messages("main", "chat-1", user_id="alice", run_id="r1",
                                  messages=[{"role": "user", "content": "I prefer email"}])

        document = hub.users.export("main", "alice")

        assert [memory["content"] for memory in document["memories"]] == ["Alice is allergic to peanuts"]
        assert document["memories"][0]["revisions"][0]["action"] == "create"
        assert [message["text"] for message in document["sessions"][0]["messages"]] == ["I prefer email"]
        hub.users.erase("main", "alice")
        assert hub.users.export("main", "alice")["counts"]["memories"] == 0


def test_the_async_client_exports_and_errors_map_to_their_classes(server, tenant_a, add_memory):
    add_memory(tenant_a.store, "Bob plays football on Sundays", user_id="bob")
    for index in range(100):
        add_memory(tenant_a.store, f"Carol fact {index}: " + "x" * 300, user_id="carol")

    async def run():
        async with AsyncMemoryHub(server.base_url, tenant_a.keys["admin"]) as hub:
            document = await hub.users.export("main", "bob")
            with pytest.raises(PayloadTooLarge, match="export_store acme main --user"):
                await hub.users.export("main", "carol")
        async with AsyncMemoryHub(server.base_url, tenant_a.keys["read"]) as reader:
            with pytest.raises(PermissionDenied):
                await reader.users.export("main", "bob")
        return document

    document = asyncio.run(run())
    assert [memory["content"] for memory in document["memories"]] == ["Bob plays football on Sundays"]
