"""The /mcp endpoint as MCP clients meet it: both protocol eras, the tool list, authentication, and the HTTP
methods and origins it refuses."""

import asyncio

import httpx
import httpx2
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from apps.memories.models import Memory

from .conftest import ok

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

TOOLS = {
    "list_stores", "add_memory", "search_memories", "get_memories", "get_memory", "update_memory", "delete_memory",
    "delete_all_memories", "get_context", "get_working_memory", "set_working_memory", "delete_working_memory",
    "checkpoint", "restore",
}
READ_ONLY = {"list_stores", "search_memories", "get_memories", "get_memory", "get_context", "get_working_memory"}
DESTRUCTIVE = {"delete_memory", "delete_all_memories", "delete_working_memory", "restore"}


def _errors(group: BaseException) -> list[BaseException]:
    """The exceptions inside anyio's (nested) exception groups."""
    if isinstance(group, BaseExceptionGroup):
        return [inner for exc in group.exceptions for inner in _errors(exc)]
    return [group]


def test_the_initialize_handshake_lists_every_tool_with_its_annotations(live_mcp, tenant_a):
    async def main():
        async with live_mcp.session(tenant_a.keys["read"]) as session:
            return session.initialize_result, await session.list_tools()

    initialized, listed = asyncio.run(main())

    assert initialized.protocol_version == "2025-11-25"  # the newest handshake-era revision
    assert initialized.server_info.name == "memoryhub"
    assert "list_stores" in initialized.instructions
    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) == TOOLS
    assert {name for name, tool in tools.items() if tool.annotations.read_only_hint} == READ_ONLY
    assert {name for name, tool in tools.items() if tool.annotations.destructive_hint} == DESTRUCTIVE
    erase = tools["delete_all_memories"]
    assert erase.input_schema["required"] == ["store", "user_id", "confirm"]
    assert "confirm" in erase.description and "cannot be undone" in erase.description
    # The bounds come from the REST API's serializer, and a misspelt argument is declared refused.
    search = tools["search_memories"].input_schema
    assert (search["properties"]["limit"]["minimum"], search["properties"]["limit"]["maximum"]) == (1, 100)
    assert search["additionalProperties"] is False and "explain" not in search["properties"]


def test_a_2026_client_negotiates_the_stateless_revision_by_discovery(live_mcp, tenant_a):
    async def main():
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {tenant_a.keys['write']}"}) as http,
            Client(streamable_http_client(live_mcp.url, http_client=http), mode="auto") as client,
        ):
            listed = await client.list_tools()
            added = await client.call_tool("add_memory", {"store": "main", "user_id": "alice",
                                                          "content": "Alice is allergic to peanuts"})
            return client.protocol_version, listed, added

    version, listed, added = asyncio.run(main())

    assert version == "2026-07-28"
    assert {tool.name for tool in listed.tools} == TOOLS
    memory = Memory.objects.get(pk=ok(added)["memory"]["id"])
    assert (memory.user_id, memory.content) == ("alice", "Alice is allergic to peanuts")


def test_a_wrong_key_fails_the_connection_with_401_naming_the_problem(live_mcp, tenant_a):
    responses = []

    async def main():
        async with live_mcp.session("mh_wrong_key", responses=responses):
            pass

    with pytest.raises(BaseException) as raised:
        asyncio.run(main())

    [error] = [exc for exc in _errors(raised.value) if isinstance(exc, MCPError)]
    assert error.error.message == "Invalid or revoked API key."
    assert [response.status_code for response in responses] == [401]
    assert responses[0].headers["WWW-Authenticate"] == 'Bearer realm="memoryhub", error="invalid_token"'


def test_the_401_answers_in_json_rpc_with_the_rest_api_error_inside(live_mcp):
    request = {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}
    missing = httpx.post(live_mcp.url, json=request)
    wrong_scheme = httpx.post(live_mcp.url, json=request, headers={"Authorization": "Basic dXNlcjpwdw=="})

    assert missing.status_code == wrong_scheme.status_code == 401
    assert missing.headers["WWW-Authenticate"] == 'Bearer realm="memoryhub"'
    assert missing.json() == {
        "jsonrpc": "2.0", "id": 7,
        "error": {"code": -32001, "message": "Authentication required: send 'Authorization: Bearer <api key>'.",
                  "data": {"error": {"code": "not_authenticated",
                                     "message": "Authentication required: send 'Authorization: Bearer <api key>'.",
                                     "details": {}}}},
    }
    assert wrong_scheme.json()["error"]["data"]["error"]["code"] == "authentication_failed"


def test_get_and_delete_are_405_for_a_stateless_server(live_mcp, tenant_a):
    headers = {"Authorization": f"Bearer {tenant_a.keys['read']}", "Accept": "text/event-stream"}
    stream = httpx.get(live_mcp.url, headers=headers)
    terminate = httpx.delete(live_mcp.url, headers=headers)

    # No session to stream to or terminate: the transport's answer for a server that offers neither.
    assert (stream.status_code, terminate.status_code) == (405, 405)
    assert stream.headers["Allow"] == terminate.headers["Allow"] == "POST"


def test_a_post_from_another_site_is_refused(live_mcp, tenant_a):
    """A web page the user visits must not drive a local memoryhub through the user's browser (DNS rebinding)."""
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                          "clientInfo": {"name": "page", "version": "0"}}}
    headers = {"Authorization": f"Bearer {tenant_a.keys['read']}"}
    foreign = httpx.post(live_mcp.url, json=request, headers={**headers, "Origin": "https://evil.example"})
    local = httpx.post(f"{live_mcp.url}/", json=request, headers={**headers, "Origin": "http://localhost:6274"})

    assert foreign.status_code == 403
    assert local.status_code == 200 and local.json()["result"]["serverInfo"]["name"] == "memoryhub"
