"""Every session endpoint: no key 401, missing scope 403, another tenant's session 404, the right scope works."""

import pytest
from rest_framework.test import APIClient

from apps.conversations import services
from apps.conversations.models import (
    Checkpoint,
    Message,
    ScratchpadEntry,
    Session,
    SessionEvent,
    TaskState,
    WorkingMemoryItem,
)
from apps.core.actors import Actor

SCOPES = ("read", "write", "admin")
S = "/api/v1/stores/main/sessions/s-1"


def _endpoints(checkpoint_id):
    c = f"{S}/checkpoints/{checkpoint_id}"
    hello = {"user_id": "alice", "messages": [{"role": "user", "content": "hello"}]}
    return [
        # (method, path, body, required scope, the other tenant's status: 404 for a call naming this
        # tenant's session; otherwise the call acts on the other tenant's own store, named "main" too)
        ("get", "/api/v1/stores/main/sessions", None, "read", 200),
        ("post", "/api/v1/stores/main/context", {"query": "q", "user_id": "alice", "session_id": "s-1"}, "read", 404),
        ("get", S, None, "read", 404),
        ("delete", S, None, "write", 404),
        ("get", f"{S}/messages", None, "read", 404),
        ("post", f"{S}/messages", hello, "write", 202),  # the other tenant's own session s-1 is created
        ("post", f"{S}/spawn", {"user_id": "alice"}, "write", 201),  # likewise
        ("post", f"{S}/resume", {}, "write", 404),
        ("post", f"{S}/flush", None, "write", 404),
        ("get", f"{S}/working-memory", None, "read", 404),
        ("delete", f"{S}/working-memory", None, "write", 404),
        ("get", f"{S}/working-memory/k", None, "read", 404),
        ("put", f"{S}/working-memory/k", {"value": 2}, "write", 404),
        ("delete", f"{S}/working-memory/k", None, "write", 404),
        ("get", f"{S}/task-state", None, "read", 404),
        ("put", f"{S}/task-state", {"description": "t"}, "write", 404),
        ("patch", f"{S}/task-state", {"progress": 10}, "write", 404),
        ("delete", f"{S}/task-state", None, "write", 404),
        ("get", f"{S}/scratchpad", None, "read", 404),
        ("post", f"{S}/scratchpad", {"content": "thought"}, "write", 404),
        ("delete", f"{S}/scratchpad", None, "write", 404),
        ("get", f"{S}/checkpoints", None, "read", 404),
        ("post", f"{S}/checkpoints", {}, "write", 404),
        ("get", c, None, "read", 404),
        ("post", f"{c}/restore", {}, "write", 404),
        ("delete", c, None, "write", 404),
        ("get", f"{S}/events", None, "read", 404),
        ("post", f"{S}/pause", {}, "write", 404),
        ("post", f"{S}/terminate", {"wait": 0}, "write", 404),
    ]


def _call(client, method, path, body):
    return getattr(client, method)(path, body, format="json") if body is not None else getattr(client, method)(path)


@pytest.fixture
def checkpoint_id(tenant_a, configure_store):
    configure_store(tenant_a.store, extraction_config={"enabled": False})
    client = tenant_a.client("admin")
    spawned = client.post(f"{S}/spawn", {"user_id": "alice", "working_memory": [{"key": "k", "value": 1}],
                                         "task_state": {"description": "t"}}, format="json")
    assert spawned.status_code == 201, spawned.content
    assert client.post(f"{S}/scratchpad", {"content": "first thought"}, format="json").status_code == 201
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
    method, path, body, required, other_tenant_status = _endpoints(checkpoint_id)[index]
    if path.endswith(("/spawn", "/resume")):  # both apply to a paused session
        session = Session.objects.get(store=tenant_a.store, external_id="s-1")
        services.session_pause(session=session, actor=Actor.system("test"))
    before = _session_state(tenant_a)
    assert all(before[name] for name in ("Session", "WorkingMemoryItem", "TaskState", "ScratchpadEntry", "Checkpoint"))
    anonymous = _call(APIClient(), method, path, body)
    assert anonymous.status_code == 401 and anonymous.json()["error"]["code"] == "not_authenticated"
    for scope in SCOPES[:SCOPES.index(required)]:
        response = _call(tenant_a.client(scope), method, path, body)
        assert response.status_code == 403, (scope, response.content)
        assert response.json()["error"]["code"] == "permission_denied"
    other = _call(tenant_b.client("admin"), method, path, body)
    assert other.status_code == other_tenant_status, other.content
    if other_tenant_status == 404:
        assert other.json()["error"]["code"] == "session_not_found"
        assert not Session.objects.filter(store=tenant_b.store).exists()
    else:
        # Acting on its own store, the other tenant sees nothing of this tenant's session.
        assert checkpoint_id not in other.content.decode() and "first thought" not in other.content.decode()
    assert _session_state(tenant_a) == before  # no refused call (no key, too small a scope, another tenant) wrote
    response = _call(tenant_a.client(required), method, path, body)
    assert response.status_code in (200, 201, 202), response.content
    assert "error" not in response.json()


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
