"""Every session endpoint: no key 401, missing scope 403, another tenant's session 404, the right scope works."""

import pytest
from rest_framework.test import APIClient

from apps.conversations.models import (
    Checkpoint,
    Message,
    ScratchpadEntry,
    Session,
    SessionEvent,
    TaskState,
    WorkingMemoryItem,
)

SCOPES = ("read", "write", "admin")
S = "/api/v1/stores/main/sessions/s-1"


def _endpoints(checkpoint_id):
    c = f"{S}/checkpoints/{checkpoint_id}"
    return [
        # (method, path, body, required scope)
        ("get", f"{S}/working-memory", None, "read"),
        ("delete", f"{S}/working-memory", None, "write"),
        ("get", f"{S}/working-memory/k", None, "read"),
        ("put", f"{S}/working-memory/k", {"value": 2}, "write"),
        ("delete", f"{S}/working-memory/k", None, "write"),
        ("get", f"{S}/task-state", None, "read"),
        ("put", f"{S}/task-state", {"description": "t"}, "write"),
        ("patch", f"{S}/task-state", {"progress": 10}, "write"),
        ("delete", f"{S}/task-state", None, "write"),
        ("get", f"{S}/scratchpad", None, "read"),
        ("post", f"{S}/scratchpad", {"content": "thought"}, "write"),
        ("delete", f"{S}/scratchpad", None, "write"),
        ("get", f"{S}/checkpoints", None, "read"),
        ("post", f"{S}/checkpoints", {}, "write"),
        ("get", c, None, "read"),
        ("post", f"{c}/restore", {}, "write"),
        ("delete", c, None, "write"),
        ("get", f"{S}/events", None, "read"),
        ("post", f"{S}/pause", {}, "write"),
        ("post", f"{S}/terminate", {"wait": 0}, "write"),
    ]


def _call(client, method, path, body):
    return getattr(client, method)(path, body, format="json") if body is not None else getattr(client, method)(path)


@pytest.fixture
def checkpoint_id(tenant_a, configure_store):
    configure_store(tenant_a.store, extraction_config={"enabled": False})
    client = tenant_a.client("admin")
    client.post(f"{S}/spawn", {"user_id": "alice", "working_memory": [{"key": "k", "value": 1}],
                               "task_state": {"description": "t"}}, format="json")
    client.post(f"{S}/scratchpad", {"content": "first thought"}, format="json")
    return client.post(f"{S}/checkpoints", {}, format="json").json()["id"]


def _session_state(world):
    """Every row of `world`'s sessions that another tenant's refused call must leave as it was."""
    state = {
        model.__name__: list(model.objects.filter(session__store=world.store).order_by("pk").values())
        for model in (WorkingMemoryItem, TaskState, ScratchpadEntry, Checkpoint, SessionEvent, Message)
    }
    state["Session"] = list(Session.objects.filter(store=world.store).order_by("pk").values())
    return state


@pytest.mark.parametrize("index", range(len(_endpoints("ID"))),
                         ids=[f"{method.upper()} {path}" for method, path, *_ in _endpoints("ID")])
def test_session_endpoint_access(index, tenant_a, tenant_b, checkpoint_id):
    method, path, body, required = _endpoints(checkpoint_id)[index]
    assert _call(APIClient(), method, path, body).status_code == 401
    for scope in SCOPES[:SCOPES.index(required)]:
        response = _call(tenant_a.client(scope), method, path, body)
        assert response.status_code == 403, (scope, response.content)
    before = _session_state(tenant_a)
    assert all(before[name] for name in ("Session", "WorkingMemoryItem", "TaskState", "ScratchpadEntry", "Checkpoint"))
    other = _call(tenant_b.client("admin"), method, path, body)
    assert other.status_code == 404 and other.json()["error"]["code"] == "session_not_found"
    assert _session_state(tenant_a) == before
    assert not Session.objects.filter(store=tenant_b.store).exists()
    response = _call(tenant_a.client(required), method, path, body)
    assert response.status_code in (200, 201), response.content


def test_spawn_and_context_access(tenant_a, tenant_b):
    spawn = f"{S}/spawn"
    assert APIClient().post(spawn, {"user_id": "alice"}, format="json").status_code == 401
    assert tenant_a.client("read").post(spawn, {"user_id": "alice"}, format="json").status_code == 403
    assert tenant_a.client("write").post(spawn, {"user_id": "alice"}, format="json").status_code == 201
    # The other tenant's spawn of the same id makes its own session, never touching this one.
    assert tenant_b.client("write").post(spawn, {"user_id": "zed"}, format="json").status_code == 201
    context = "/api/v1/stores/main/context"
    body = {"query": "q", "user_id": "alice", "session_id": "s-1"}
    assert APIClient().post(context, body, format="json").status_code == 401
    assert tenant_a.client("read").post(context, body, format="json").status_code == 200
    assert tenant_b.client("read").post(context, body, format="json").status_code == 409  # zed's session there


def test_only_the_declared_methods_of_a_route_exist(tenant_a, checkpoint_id):
    restore = f"{S}/checkpoints/{checkpoint_id}/restore"
    for scope in SCOPES:
        assert tenant_a.client(scope).delete(restore).status_code == 405
        assert tenant_a.client(scope).get(restore).status_code == 405
    assert Checkpoint.objects.filter(pk=checkpoint_id).exists()
