"""The memory tools over real HTTP with the official MCP client: each one's effect read back through the REST API
or the database, scopes, bad arguments and tenant isolation."""

import pytest

from apps.conversations.models import Session
from apps.memories.models import Memory, MemoryRevision
from apps.tenancy.services import api_key_issue
from tests.processes import wait_for

from .conftest import ok, refusal

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

STORE = "main"


@pytest.fixture
def call(live_mcp, tenant_a):
    """Call a tool with one of tenant acme's keys (write unless named)."""

    def _call(tool, scope="write", **arguments):
        return live_mcp.call(tenant_a.keys[scope], tool, **arguments)

    return _call


def _add(call, content, user_id="alice", **fields):
    return ok(call("add_memory", store=STORE, user_id=user_id, content=content, **fields))["memory"]


def test_list_stores_names_the_stores_the_key_may_use(call):
    assert ok(call("list_stores", scope="read")) == {"stores": [{"name": "main", "description": ""}],
                                                     "scopes": ["read"]}


def test_add_memory_stores_the_text_as_written_with_a_history_record(call, live_mcp, tenant_a):
    first = ok(call("add_memory", store=STORE, user_id="alice", content="Alice is allergic to peanuts",
                    memory_type="preference", tags=["health"], metadata={"source": "chat"}))
    again = ok(call("add_memory", store=STORE, user_id="alice", content="alice is allergic to PEANUTS"))

    assert first["duplicate"] is False and again["duplicate"] is True
    assert again["memory"]["id"] == first["memory"]["id"]
    with live_mcp.rest(tenant_a.keys["read"]) as rest:
        stored = rest.get(f"/stores/{STORE}/memories/{first['memory']['id']}").json()
        history = rest.get(f"/stores/{STORE}/memories/{first['memory']['id']}/history").json()["results"]
    assert (stored["content"], stored["memory_type"], stored["tags"], stored["metadata"]) == (
        "Alice is allergic to peanuts", "preference", ["health"], {"source": "chat"})
    assert [(revision["action"], revision["actor_type"]) for revision in history] == [("create", "api_key")]
    assert history[0]["actor_label"].startswith("acme-write")


def test_add_memory_with_infer_sends_the_turns_for_extraction_by_the_worker(call, live_mcp):
    accepted = ok(call("add_memory", store=STORE, user_id="alice", session_id="chat-1", infer=True, messages=[
        {"role": "user", "content": "My name is Alice and I work as a software engineer at TechCorp"},
        {"role": "assistant", "content": "Nice to meet you, Alice!"},
        {"role": "user", "content": "I prefer dark mode"},
    ]))
    assert (accepted["accepted"], accepted["seqs"], accepted["session"]["session_id"]) == (3, [1, 2, 3], "chat-1")
    assert accepted["extraction_job"]

    def extracted():
        hits = ok(call("search_memories", scope="read", store=STORE, query="dark mode", user_id="alice"))["results"]
        return [hit["memory"] for hit in hits if hit["memory"]["source"] == "extraction"]

    memories = wait_for(extracted, timeout=30, what="the extracted memories", cluster=live_mcp.worker)
    assert memories[0]["content"] == "The user prefers dark mode"
    assert Session.objects.get(external_id="chat-1").extracted_seq == 3

    # Text alone is one user message of the session.
    more = ok(call("add_memory", store=STORE, user_id="alice", session_id="chat-1", infer=True,
                   content="I live in Lisbon"))
    assert (more["accepted"], more["seqs"]) == (1, [4])


def test_search_memories_filters_by_user_and_time_and_limits(call):
    first = _add(call, "Alice drinks green tea every morning")
    _add(call, "Alice used to drink black coffee")
    _add(call, "Bob drinks green tea too", user_id="bob")

    hits = ok(call("search_memories", scope="read", store=STORE, query="green tea", user_id="alice", limit=1))
    assert hits["mode"] == "hybrid"
    assert [hit["memory"]["content"] for hit in hits["results"]] == ["Alice drinks green tea every morning"]
    later = ok(call("search_memories", scope="read", store=STORE, query="drink", user_id="alice",
                    created_after=first["created_at"]))
    assert [hit["memory"]["content"] for hit in later["results"]] == ["Alice used to drink black coffee"]


def test_get_memories_pages_newest_first_with_the_rest_api_cursor(call, live_mcp, tenant_a):
    contents = [f"Alice fact {number}" for number in range(3)]
    for content in contents:
        _add(call, content, metadata={"batch": 1})
    _add(call, "Bob fact", user_id="bob", metadata={"batch": 1})

    first = ok(call("get_memories", scope="read", store=STORE, user_id="alice", page_size=2))
    second = ok(call("get_memories", scope="read", store=STORE, user_id="alice", page_size=2,
                     cursor=first["next_cursor"]))
    assert [memory["content"] for memory in first["results"] + second["results"]] == contents[::-1]
    assert second["next_cursor"] is None
    # The cursor is the REST API's own.
    with live_mcp.rest(tenant_a.keys["read"]) as rest:
        page = rest.get(f"/stores/{STORE}/memories", params={"user_id": "alice", "page_size": 2,
                                                              "cursor": first["next_cursor"]}).json()
    assert [memory["content"] for memory in page["results"]] == ["Alice fact 0"]
    # Metadata values are matched as the REST API's metadata.<key> parameters are.
    matching = ok(call("get_memories", scope="read", store=STORE, metadata={"batch": 1}))["results"]
    assert len(matching) == 4
    assert ok(call("get_memories", scope="read", store=STORE, metadata={"batch": 2}))["results"] == []


def test_get_update_and_delete_a_memory_each_leave_a_revision(call, live_mcp, tenant_a):
    memory = _add(call, "Alice lives in Paris")

    fetched = ok(call("get_memory", scope="read", store=STORE, memory_id=memory["id"]))
    changed = ok(call("update_memory", store=STORE, memory_id=memory["id"], content="Alice lives in Lisbon",
                      reason="she moved"))
    deleted = ok(call("delete_memory", store=STORE, memory_id=memory["id"], reason="asked to"))
    restored = ok(call("update_memory", store=STORE, memory_id=memory["id"], status="active"))

    assert fetched["content"] == "Alice lives in Paris"
    assert changed["content"] == "Alice lives in Lisbon"
    assert (deleted["deleted"], deleted["memory"]["status"]) == (True, "deleted")
    assert restored["status"] == "active"
    with live_mcp.rest(tenant_a.keys["read"]) as rest:
        history = rest.get(f"/stores/{STORE}/memories/{memory['id']}/history").json()["results"]
    assert [(revision["action"], revision["reason"]) for revision in history] == [
        ("create", ""), ("update", "she moved"), ("delete", "asked to"), ("restore", "")]


def test_delete_all_memories_erases_a_user_only_when_confirmed(call, tenant_a):
    _add(call, "Alice is allergic to peanuts")
    _add(call, "Bob plays football", user_id="bob")

    unconfirmed = refusal(call("delete_all_memories", scope="admin", store=STORE, user_id="alice"))
    mistaken = refusal(call("delete_all_memories", scope="admin", store=STORE, user_id="alice", confirm="bob"))
    assert unconfirmed == "validation_error: confirm: This field is required."
    assert mistaken.startswith("validation_error: confirm: Must equal user_id")
    assert Memory.objects.filter(user_id="alice").count() == 1

    erased = ok(call("delete_all_memories", scope="admin", store=STORE, user_id="alice", confirm="alice"))
    assert (erased["user_id"], erased["memories"], erased["revisions"]) == ("alice", 1, 1)
    assert not Memory.objects.filter(user_id="alice").exists()
    assert not MemoryRevision.objects.filter(user_id="alice").exists()
    assert Memory.objects.filter(user_id="bob").count() == 1


def test_a_read_key_reads_but_every_write_is_refused_naming_the_scope(call):
    memory = _add(call, "Alice is allergic to peanuts")
    writes = {
        "add_memory": {"user_id": "alice", "content": "Alice likes jazz"},
        "update_memory": {"memory_id": memory["id"], "content": "Alice likes jazz"},
        "delete_memory": {"memory_id": memory["id"]},
        "set_working_memory": {"session_id": "s1", "key": "plan", "value": 1, "user_id": "alice"},
        "delete_working_memory": {"session_id": "s1", "all_keys": True},
        "checkpoint": {"session_id": "s1"},
        "restore": {"session_id": "s1"},
    }
    refused = {tool: refusal(call(tool, scope="read", store=STORE, **arguments)) for tool, arguments in writes.items()}

    assert set(refused.values()) == {"permission_denied: This API key lacks the 'write' scope."}
    assert ok(call("get_memory", scope="read", store=STORE, memory_id=memory["id"]))["content"] == memory["content"]
    assert list(Memory.objects.values_list("content", "status")) == [("Alice is allergic to peanuts", "active")]
    assert not Session.objects.exists()
    # Erasing a user takes what the REST API's erase takes: the admin scope.
    assert refusal(call("delete_all_memories", store=STORE, user_id="alice", confirm="alice")) == (
        "permission_denied: This API key lacks the 'admin' scope.")


@pytest.mark.parametrize(("tool", "arguments", "problem"), [
    ("add_memory", {"content": "Alice likes jazz"}, "validation_error: user_id: This field is required."),
    ("add_memory", {"user_id": "alice", "content": "x", "infer": True},
     "validation_error: session_id: Required with infer=true."),
    ("add_memory", {"user_id": "alice", "userid": "bob", "content": "x"},
     "validation_error: userid: Unknown field; did you mean 'user_id'?"),
    ("search_memories", {"query": "tea", "limit": -1},
     "validation_error: limit: Ensure this value is greater than or equal to 1."),
    ("get_memory", {"memory_id": "not-a-uuid"}, "validation_error: memory_id: Must be a valid UUID."),
    ("get_memories", {"cursor": "bm90IGEgY3Vyc29y"},
     "validation_error: cursor: Invalid cursor: pass the cursor of a `next` or `previous` link back unchanged."),
])
def test_bad_arguments_are_a_tool_error_naming_the_field(call, tool, arguments, problem):
    assert refusal(call(tool, store=STORE, **arguments)) == problem
    assert not Memory.objects.exists()


def test_a_store_the_key_cannot_use_is_refused_as_the_rest_api_refuses_it(live_mcp, tenant_a):
    limited = api_key_issue(tenant=tenant_a.tenant, name="limited", scopes=["read"], store_names=["other"]).raw_key

    unknown = refusal(live_mcp.call(tenant_a.keys["read"], "search_memories", store="nope", query="tea"))
    forbidden = refusal(live_mcp.call(limited, "search_memories", store=STORE, query="tea"))

    assert unknown == "store_not_found: Store 'nope' not found."
    assert forbidden == "permission_denied: This API key is not allowed to use store 'main'."
    with live_mcp.rest(limited) as rest:
        assert rest.post(f"/stores/{STORE}/search", json={"query": "tea"}).json()["error"]["message"] == (
            "This API key is not allowed to use store 'main'.")


def test_another_tenant_cannot_reach_a_memory_by_its_id(call, live_mcp, tenant_a, tenant_b):
    memory = _add(call, "Alice is allergic to peanuts")
    before = list(Memory.objects.values_list("id", "content", "status", "updated_at"))

    outsider = tenant_b.keys["admin"]
    read = refusal(live_mcp.call(outsider, "get_memory", store=STORE, memory_id=memory["id"]))
    changed = refusal(live_mcp.call(outsider, "update_memory", store=STORE, memory_id=memory["id"], content="x"))
    deleted = refusal(live_mcp.call(outsider, "delete_memory", store=STORE, memory_id=memory["id"]))

    # Tenant globex has a store named "main" too: the memory is simply not in it.
    assert read == changed == deleted == f"memory_not_found: Memory {memory['id']} not found in store 'main'."
    assert list(Memory.objects.values_list("id", "content", "status", "updated_at")) == before
    assert MemoryRevision.objects.count() == 1
