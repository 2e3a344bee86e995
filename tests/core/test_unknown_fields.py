"""A field or query parameter the server does not know is a 400 naming it, never silently ignored.

A search with "userid" (a typo) used to answer with every user's memories.
"""

import json
import re
import uuid

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from apps.conversations.models import Message, Session, WorkingMemoryItem
from apps.memories.models import Memory
from apps.tenancy.api_base import ApiView

BASE = "/api/v1/stores/main"
SESSION = f"{BASE}/sessions/chat-1"


def _assert_names(response, name: str, *, hint: str | None = None):
    assert response.status_code == 400, (response.status_code, response.content)
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert name in error["message"] and name in json.dumps(error["details"]), error
    if hint:
        assert hint in error["message"], error
    return error


def test_a_misspelt_search_filter_is_refused_not_ignored(tenant_a, add_memory):
    add_memory(tenant_a.store, "Alice likes tea", user_id="alice")
    add_memory(tenant_a.store, "Bob likes tea", user_id="bob")

    response = tenant_a.client("read").post(f"{BASE}/search", {"query": "tea", "userid": "alice"}, format="json")

    _assert_names(response, "userid", hint="user_id")


def test_a_misspelt_list_filter_is_refused_not_ignored(tenant_a, add_memory):
    add_memory(tenant_a.store, "Bob likes tea", user_id="bob")

    response = tenant_a.client("read").get(f"{BASE}/memories", {"userid": "alice"})

    error = _assert_names(response, "userid", hint="user_id")
    assert "Bob" not in json.dumps(error)


def test_declared_query_parameters_are_still_accepted(tenant_a, add_memory):
    add_memory(tenant_a.store, "Alice is on the pro plan", user_id="alice", metadata={"plan": "pro"})
    client = tenant_a.client("read")

    page = client.get(f"{BASE}/memories", {"user_id": "alice", "metadata.plan": "pro", "page_size": 1})
    assert page.status_code == 200, page.content
    assert [memory["content"] for memory in page.json()["results"]] == ["Alice is on the pro plan"]
    assert client.get(f"{BASE}/memories", {"metadata.plan": "basic"}).json()["results"] == []
    assert client.get("/api/v1/jobs", {"store": "main", "cursor": ""}).status_code == 200


def test_unknown_fields_of_each_memory_in_a_bulk_add_are_refused(tenant_a):
    body = {"memories": [{"user_id": "alice", "content": "Alice likes tea"},
                         {"user_id": "bob", "content": "Bob likes coffee", "tgas": ["drinks"]}]}

    response = tenant_a.client("write").post(f"{BASE}/memories/bulk", body, format="json")

    error = _assert_names(response, "tgas", hint="tags")
    assert error["details"]["memories"][1] == {"tgas": [error["details"]["memories"][1]["tgas"][0]]}
    assert "memories" in error["message"] and "[1]" in error["message"]
    assert Memory.objects.count() == 0


def test_unknown_fields_of_each_message_in_a_batch_are_refused(tenant_a):
    body = {"user_id": "alice", "messages": [{"role": "user", "contnet": "I like tea"}]}

    response = tenant_a.client("write").post(f"{SESSION}/messages", body, format="json")

    _assert_names(response, "contnet", hint="content")
    assert not Session.objects.exists() and not Message.objects.exists()


@pytest.mark.parametrize("body, name", [
    ({"user_id": "alice", "working_memory": [{"key": "k", "value": 1, "ttl": 5}]}, "ttl"),
    ({"user_id": "alice", "task_state": {"description": "x", "step": 2}}, "step"),
])
def test_unknown_fields_nested_in_a_spawn_are_refused(tenant_a, body, name):
    response = tenant_a.client("write").post(f"{SESSION}/spawn", body, format="json")

    _assert_names(response, name)
    assert not Session.objects.exists() and not WorkingMemoryItem.objects.exists()


def test_a_misspelt_query_parameter_of_a_write_changes_nothing(tenant_a, add_memory):
    memory = add_memory(tenant_a.store, "Alice likes tea")

    response = tenant_a.client("admin").delete(f"{BASE}/memories/{memory.pk}?hrad=true")

    _assert_names(response, "hrad", hint="hard")
    memory.refresh_from_db()
    assert memory.status == Memory.Status.ACTIVE


def test_a_body_sent_to_an_operation_without_one_is_refused(tenant_a, add_memory):
    memory = add_memory(tenant_a.store, "Alice likes tea")

    response = tenant_a.client("write").delete(f"{BASE}/memories/{memory.pk}", {"reason": "outdated"},
                                               format="json")

    _assert_names(response, "reason")
    memory.refresh_from_db()
    assert memory.status == Memory.Status.ACTIVE


def test_operations_without_a_body_accept_none_or_an_empty_object(tenant_a, add_memory):
    memory = add_memory(tenant_a.store, "Alice likes tea")
    client = tenant_a.client("write")

    assert client.get(f"{BASE}/memories/{memory.pk}", content_type="application/json").status_code == 200
    assert client.delete(f"{BASE}/memories/{memory.pk}", {}, format="json").status_code == 200


# --- Every route ------------------------------------------------------------------------------------

# Documentation pages and the JSON 404 of unknown paths: no API operation, nothing read from a request.
NOT_OPERATIONS = {"schema", "docs", "redoc", "api-not-found"}
PATH_VALUES = {
    "store_name": "main",
    "session_id": "chat-1",
    "memory_id": str(uuid.uuid4()),
    "checkpoint_id": str(uuid.uuid4()),
    "job_id": str(uuid.uuid4()),
    "webhook_id": str(uuid.uuid4()),
    "delivery_id": str(uuid.uuid4()),
    "user_id": "alice",
    "key": "order",
}


def _api_routes():
    """(path, view class, name) of every route under /api/v1/, from Django's URL resolver."""
    routes = []

    def walk(patterns, prefix):
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, route)
            elif isinstance(pattern, URLPattern) and route.startswith("api/v1/"):
                view = getattr(pattern.callback, "view_class", None) or getattr(pattern.callback, "cls", None)
                routes.append((route, view, pattern.name))

    walk(get_resolver().url_patterns, "")
    return routes


def _api_operations():
    operations = []
    for route, view, name in _api_routes():
        if name in NOT_OPERATIONS:
            continue
        assert view is not None and issubclass(view, ApiView), f"{route} is not served by an ApiView"
        path = "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda match: PATH_VALUES[match.group(1)], route)
        for method in view.http_method_names:
            if method not in ("head", "options") and hasattr(view, method):
                operations.append(pytest.param(method.upper(), path, id=f"{method.upper()} {route}"))
    return operations


OPERATIONS = _api_operations()


def test_every_api_route_is_walked():
    assert len(OPERATIONS) == 57


@pytest.mark.parametrize("method, path", OPERATIONS)
def test_every_operation_refuses_an_unknown_body_field(tenant_a, method, path):
    response = tenant_a.client("admin").generic(method, path, json.dumps({"unknown_field_zz": 1}),
                                                content_type="application/json")

    _assert_names(response, "unknown_field_zz")


@pytest.mark.parametrize("method, path", OPERATIONS)
def test_every_operation_refuses_an_unknown_query_parameter(tenant_a, method, path):
    response = tenant_a.client("admin").generic(method, f"{path}?unknown_param_zz=1")

    _assert_names(response, "unknown_param_zz")
