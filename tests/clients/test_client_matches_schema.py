"""The Python client sends only what the server declares: every request it can build, with every optional
argument given, is checked against the server's OpenAPI schema (paths, methods, query parameters, body
fields at every depth, the Idempotency-Key header). The server refuses anything else with a 400."""

import inspect
import re
import uuid
from datetime import UTC, datetime

import pytest
from drf_spectacular.generators import SchemaGenerator

from memoryhub_client import _api
from memoryhub_client._transport import IDEMPOTENCY_KEY_METHODS, Call

ID = uuid.UUID("00000000-0000-0000-0000-000000000001")
WHEN = datetime(2030, 1, 1, tzinfo=UTC)
MEMORY = _api.memory_item(
    user_id="alice", content="Alice likes tea", memory_type="preference", metadata={"plan": "pro"}, tags=["drinks"],
    agent_id="bot", session_id="chat-1", importance=0.5, confidence=0.9, expires_at=WHEN,
    # What `memories.add(**fields)` documents as passed through: the server's other inputs.
    status="active", source="import", provenance={"from": "crm"}, valid_from=WHEN, valid_to=WHEN,
)
STRANDS_MESSAGE = {"role": "user", "content": [{"text": "hi"}, {"toolResult": {"content": [{"text": "ok"}]}}],
                   "seq": 3, "metadata": {"turn": 1}}
TASK = {"description": "Replace the kettle", "current_step": 1, "total_steps": 3, "progress": 30,
        "status": "in_progress", "metadata": {"order": "A-1"}}

# Every request builder of the client, with every optional argument given (None would leave it out).
CALLS = {
    "key_info": _api.key_info(),
    "store_list": _api.store_list(),
    "store_get": _api.store_get("main"),
    "store_create": _api.store_create("main", {
        "description": "d", "embedding_provider": "hash", "embedding_model": "m", "embedding_dimension": 384,
        "review_policy": "auto", "search_defaults": {"mode": "hybrid"}, "max_content_length": 100,
        "extraction_config": {"enabled": True}, "working_memory_config": {"max_items": 10}}, "k"),
    "store_update": _api.store_update("main", {"description": "d", "review_policy": "review"}, "k"),
    "store_delete": _api.store_delete("main"),
    "memory_add": _api.memory_add("main", MEMORY),
    "memory_bulk_add": _api.memory_bulk_add("main", [MEMORY, MEMORY]),
    "memory_list": _api.memory_list("main", "c", 10, {
        "user_id": "alice", "agent_id": "bot", "session_id": "s", "memory_type": "fact", "status": "active",
        "tag": "t", "created_after": "2030-01-01T00:00:00Z", "created_before": "2030-01-01T00:00:00Z",
        "include_expired": True, "metadata": {"plan": "pro"}}),
    "memory_get": _api.memory_get("main", ID),
    "memory_update": _api.memory_update("main", ID, "why", {
        "content": "c", "memory_type": "fact", "metadata": {}, "tags": [], "importance": 1, "confidence": 1,
        "status": "active", "agent_id": "a", "session_id": "s", "valid_to": None, "expires_at": None}, "k"),
    "memory_delete": _api.memory_delete("main", ID, False, "why"),
    "memory_delete_hard": _api.memory_delete("main", ID, True, None),
    "memory_history": _api.memory_history("main", ID),
    "search": _api.search("main", "tea", user_id="alice", agent_id="bot", session_id="s", limit=5, mode="hybrid",
                          min_score=0.1, memory_types=["fact"], metadata={"plan": "pro"}, tags=["t"],
                          include_pending=True),
    "user_erase": _api.user_erase("main", "alice"),
    "user_export": _api.user_export("main", "alice"),
    "session_list": _api.session_list("main", "c", 10, {"user_id": "alice", "agent_id": "bot", "status": "active"}),
    "session_get": _api.session_get("main", "chat-1"),
    "session_delete": _api.session_delete("main", "chat-1"),
    "messages_add": _api.messages_add("main", "chat-1", user_id="alice", run_id="r", agent_id="bot",
                                      metadata={"channel": "web"},
                                      messages=[{"role": "user", "content": "hi", "seq": 1}, STRANDS_MESSAGE]),
    "messages_list": _api.messages_list("main", "chat-1", "c", 10),
    "session_flush": _api.session_flush("main", "chat-1", 5, 3),
    "session_events": _api.session_events("main", "chat-1", "c"),
    "job_list": _api.job_list("c", 10, {"store": "main", "session_id": "s", "status": "failed"}),
    "job_get": _api.job_get(ID),
    "job_retry": _api.job_retry(ID, "k"),
    "working_memory_list": _api.working_memory_list("main", "chat-1", "o", "c"),
    "working_memory_get": _api.working_memory_get("main", "chat-1", "order"),
    "working_memory_put": _api.working_memory_put("main", "chat-1", "order", {"id": 1}, 60, 0),
    "working_memory_delete": _api.working_memory_delete("main", "chat-1", "order"),
    "working_memory_clear": _api.working_memory_clear("main", "chat-1"),
    "task_state_get": _api.task_state_get("main", "chat-1"),
    "task_state_put": _api.task_state_put("main", "chat-1", TASK),
    "task_state_patch": _api.task_state_patch("main", "chat-1", TASK, "k"),
    "task_state_delete": _api.task_state_delete("main", "chat-1"),
    "scratchpad_list": _api.scratchpad_list("main", "chat-1", "c"),
    "scratchpad_append": _api.scratchpad_append("main", "chat-1", "note", {"step": 1}, "k"),
    "scratchpad_clear": _api.scratchpad_clear("main", "chat-1"),
    "checkpoint_create": _api.checkpoint_create("main", "chat-1", "before", 60, "k"),
    "checkpoint_list": _api.checkpoint_list("main", "chat-1", "c"),
    "checkpoint_get": _api.checkpoint_get("main", "chat-1", ID),
    "checkpoint_restore": _api.checkpoint_restore("main", "chat-1", ID, False, "k"),
    "checkpoint_delete": _api.checkpoint_delete("main", "chat-1", ID),
    "session_spawn": _api.session_spawn("main", "chat-1", user_id="alice", agent_id="bot", metadata={"a": 1},
                                        working_memory=[{"key": "k", "value": 1, "ttl_seconds": 60}],
                                        task_state=TASK, idempotency_key="k"),
    "session_spawn_dict": _api.session_spawn("main", "chat-1", user_id=None, agent_id="", metadata=None,
                                             working_memory={"k": 1}, task_state=None, idempotency_key=None),
    "session_pause": _api.session_pause("main", "chat-1", "lunch", "k"),
    "session_resume": _api.session_resume("main", "chat-1", ID, False, "k"),
    "session_terminate": _api.session_terminate("main", "chat-1", outcome="success", task="t", lessons=["l"],
                                                key_facts=["f"], clear_working_memory=True, wait=5,
                                                idempotency_key="k"),
    "context": _api.context("main", "tea", user_id="alice", session_id="chat-1", token_budget=500,
                            kinds=["facts"], format="json", shares={"facts": 1}),
    "webhook_list": _api.webhook_list("main"),
    "webhook_get": _api.webhook_get("main", ID),
    "webhook_create": _api.webhook_create("main", "https://example.com/hook", ["memory.created"], "CRM", "k"),
    "webhook_update": _api.webhook_update("main", ID, {
        "url": "https://example.com/other", "event_types": [], "description": "d", "is_active": True}, "k"),
    "webhook_delete": _api.webhook_delete("main", ID),
    "webhook_rotate_secret": _api.webhook_rotate_secret("main", ID, "k"),
    "webhook_send_test": _api.webhook_send_test("main", ID, "k"),
    "webhook_delivery_list": _api.webhook_delivery_list("main", ID, "failed", "c", 10),
    "webhook_delivery_retry": _api.webhook_delivery_retry("main", ID, ID, "k"),
}


@pytest.fixture(scope="module")
def schema():
    return SchemaGenerator().get_schema(request=None, public=True)


def _resolve(schema, node):
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
    return node


def _undeclared(schema, node, value, where):
    """The fields of `value` that the schema `node` does not declare, at every depth."""
    node = _resolve(schema, node)
    for part in node.get("allOf", []):
        yield from _undeclared(schema, part, value, where)
    if isinstance(value, dict) and "properties" in node:
        for name, inner in value.items():
            if name in node["properties"]:
                yield from _undeclared(schema, node["properties"][name], inner, f"{where}.{name}")
            elif node.get("additionalProperties") is False:
                yield f"{where}.{name}"
    elif isinstance(value, list) and "items" in node:
        for index, item in enumerate(value):
            yield from _undeclared(schema, node["items"], item, f"{where}[{index}]")


def _operation(schema, call: Call):
    """The schema's operation for a call: the most literal path template that matches, with its method."""
    candidates = []
    for template, item in schema["paths"].items():
        pattern = re.sub(r"\{\w+\}", "[^/]+", re.escape(template).replace(r"\{", "{").replace(r"\}", "}"))
        if re.fullmatch(pattern, f"/api/v1/{call.path}") and call.method.lower() in item:
            candidates.append((template.count("{"), template, item[call.method.lower()]))
    assert candidates, f"no operation for {call.method} {call.path}"
    return min(candidates, key=lambda candidate: candidate[0])[1:]


def test_every_request_builder_of_the_client_is_checked():
    builders = {name for name, function in inspect.getmembers(_api, inspect.isfunction)
                if str(inspect.signature(function).return_annotation).startswith("Call[")}
    assert builders <= {name.removesuffix("_hard").removesuffix("_dict") for name in CALLS}


def test_the_client_covers_every_operation(schema):
    covered = {(_operation(schema, call)[0], call.method.lower()) for call in CALLS.values()}
    declared = {(path, method) for path, item in schema["paths"].items() for method in item
                if method in ("get", "post", "put", "patch", "delete")}
    assert declared - covered == set()


@pytest.mark.parametrize("name", sorted(CALLS))
def test_the_client_sends_only_declared_fields(schema, name):
    call = CALLS[name]
    path, operation = _operation(schema, call)
    declared = {(parameter["in"], parameter["name"]) for parameter in operation.get("parameters", [])}
    query = {name for location, name in declared if location == "query"}
    for parameter in call.params or {}:
        family = parameter.split(".", 1)[0] + ".<key>" if "." in parameter else None
        assert parameter in query or family in query, f"{call.method} {path}: query parameter {parameter}"
    if call.idempotency_key or (call.retry is not True and call.method in IDEMPOTENCY_KEY_METHODS):
        assert ("header", "Idempotency-Key") in declared, f"{call.method} {path} sends an Idempotency-Key"
    if call.body is not None:
        assert "requestBody" in operation, f"{call.method} {path} takes no body"
        body_schema = operation["requestBody"]["content"]["application/json"]["schema"]
        assert list(_undeclared(schema, body_schema, call.body, "body")) == [], f"{call.method} {path}"

