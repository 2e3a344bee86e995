"""The tool declarations, in process: schemas a client can use, and a failure that is no caller's fault."""

import json

import pytest
from jsonschema import Draft202012Validator

from apps.mcp_server.server import server
from apps.mcp_server.tools import memories
from apps.mcp_server.tools.base import TOOLS


def _call(client, api_key, tool, arguments):
    """One tools/call as a 2025-revision client sends it (no protocol headers): the stateless path."""
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    response = client.post("/mcp", json.dumps(message), content_type="application/json",
                           headers={"Authorization": f"Bearer {api_key}"})
    assert response.status_code == 200
    return response.json()["result"]


@pytest.mark.parametrize("tool", TOOLS, ids=lambda tool: tool.name)
def test_every_tool_declares_a_valid_schema_that_refuses_unknown_arguments(tool):
    definition = server._tools[tool.name].definition
    schema = definition["inputSchema"]

    Draft202012Validator.check_schema(schema)
    assert schema["additionalProperties"] is False
    assert set(schema.get("required", [])) <= set(schema["properties"])
    assert all(prop.get("description") for name, prop in schema["properties"].items()
               if name in ("store", "user_id", "session_id", "query", "key")), schema
    assert len(definition["description"]) > 80  # written for a model to read: when to use it, what comes back


@pytest.mark.django_db
def test_an_unexpected_failure_is_a_tool_error_without_the_details(client, tenant_a, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("connection string with a password")

    monkeypatch.setattr(memories.selectors, "store_list", broken)

    result = _call(client, tenant_a.keys["read"], "list_stores", {})

    assert result["isError"] is True
    assert result["content"] == [{"type": "text", "text": "Tool 'list_stores' failed unexpectedly."}]


@pytest.mark.django_db
def test_a_value_postgresql_cannot_store_is_refused_like_the_rest_api_refuses_it(client, tenant_a):
    result = _call(client, tenant_a.keys["write"], "add_memory",
                   {"store": "main", "user_id": "alice", "content": "nul \u0000 byte"})

    assert result["isError"] is True
    assert result["content"][0]["text"] == "validation_error: content: Text must not contain NUL (\\u0000) characters."
