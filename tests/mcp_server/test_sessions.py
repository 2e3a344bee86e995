"""The session tools over real HTTP with the official MCP client: the context block, working memory,
checkpoints and restore, read back through the REST API or the database."""

import pytest

from apps.conversations.models import Checkpoint, Session, SessionEvent, WorkingMemoryItem

from .conftest import ok, refusal

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

STORE = "main"


@pytest.fixture
def call(live_mcp, tenant_a):
    """Call a tool with one of tenant acme's keys (write unless named)."""

    def _call(tool, scope="write", **arguments):
        return live_mcp.call(tenant_a.keys[scope], tool, **arguments)

    return _call


def _set(call, key, value, **arguments):
    return ok(call("set_working_memory", store=STORE, session_id="task-7", key=key, value=value, **arguments))


def test_get_context_assembles_the_users_memories_and_the_sessions_state(call):
    ok(call("add_memory", store=STORE, user_id="carol", content="Carol prefers to be contacted by email"))
    _set(call, "kettle_order", {"status": "refund requested"}, user_id="carol")

    context = ok(call("get_context", scope="read", store=STORE, query="How should we contact Carol about her kettle?",
                      user_id="carol", session_id="task-7", token_budget=500, format="markdown"))

    assert "Carol prefers to be contacted by email" in context["context"]
    assert "refund requested" in context["context"]
    assert context["format"] == "markdown" and context["tokens_estimated"] <= 500
    assert {entry["id"] for entry in context["included"]} >= {"working_memory:kettle_order"}


def test_set_working_memory_starts_the_session_then_reads_lists_and_compares_versions(call, live_mcp, tenant_a):
    missing = refusal(call("set_working_memory", store=STORE, session_id="task-7", key="plan", value=["a"]))
    assert missing == "session_not_found: Session 'task-7' not found in store 'main'."

    first = _set(call, "plan", ["search", "answer"], user_id="carol", agent_id="support-bot")
    second = _set(call, "plan", ["answer"], if_version=first["version"])
    stale = refusal(call("set_working_memory", store=STORE, session_id="task-7", key="plan", value=[],
                         if_version=first["version"]))
    _set(call, "step", 2, ttl_seconds=600)

    assert (first["created"], second["created"]) == (True, False)
    assert stale.startswith(f"version_conflict: Key 'plan' is at version {second['version']}, not {first['version']}")
    session = Session.objects.get(external_id="task-7")
    assert (session.user_id, session.agent_id) == ("carol", "support-bot")
    assert list(SessionEvent.objects.filter(session=session).values_list("event", flat=True)) == ["spawn"]

    one = ok(call("get_working_memory", scope="read", store=STORE, session_id="task-7", key="plan"))
    listed = ok(call("get_working_memory", scope="read", store=STORE, session_id="task-7", page_size=1))
    rest_of_it = ok(call("get_working_memory", scope="read", store=STORE, session_id="task-7",
                         cursor=listed["next_cursor"]))
    assert (one["key"], one["value"], one["version"]) == ("plan", ["answer"], second["version"])
    assert [item["key"] for item in listed["results"] + rest_of_it["results"]] == ["plan", "step"]
    assert rest_of_it["next_cursor"] is None and rest_of_it["results"][0]["expires_at"] is not None
    with live_mcp.rest(tenant_a.keys["read"]) as rest:
        assert rest.get(f"/stores/{STORE}/sessions/task-7/working-memory/plan").json()["value"] == ["answer"]


def test_delete_working_memory_takes_one_key_or_all_of_them(call):
    _set(call, "plan", 1, user_id="carol")
    _set(call, "step", 2)
    _set(call, "notes", 3)

    neither = refusal(call("delete_working_memory", store=STORE, session_id="task-7"))
    one = ok(call("delete_working_memory", store=STORE, session_id="task-7", key="plan"))
    again = refusal(call("delete_working_memory", store=STORE, session_id="task-7", key="plan"))
    assert neither == "validation_error: key: Send either a key or all_keys: true."
    assert one == {"deleted": True, "key": "plan"}
    assert again == "key_not_found: No working-memory key 'plan' in this session."
    assert sorted(WorkingMemoryItem.objects.values_list("key", flat=True)) == ["notes", "step"]

    assert ok(call("delete_working_memory", store=STORE, session_id="task-7", all_keys=True)) == {"deleted": 2}
    assert not WorkingMemoryItem.objects.exists()


def test_checkpoint_and_restore_bring_the_working_state_back(call, live_mcp, tenant_a):
    _set(call, "plan", "first draft", user_id="carol")
    nothing_yet = refusal(call("restore", store=STORE, session_id="task-7"))
    assert nothing_yet == "checkpoint_not_found: This session has no checkpoint to restore."

    early = ok(call("checkpoint", store=STORE, session_id="task-7", description="before the risky step"))
    _set(call, "plan", "second draft")
    late = ok(call("checkpoint", store=STORE, session_id="task-7", ttl_seconds=0))
    _set(call, "plan", "ruined")
    _set(call, "scratch", "left over")

    newest = ok(call("restore", store=STORE, session_id="task-7"))
    assert newest["data"]["checkpoint_id"] == late["id"]
    assert newest["data"]["restored"]["working_memory"] == 1
    assert dict(WorkingMemoryItem.objects.values_list("key", "value")) == {"plan": "second draft"}

    named = ok(call("restore", store=STORE, session_id="task-7", checkpoint_id=early["id"]))
    assert named["data"]["checkpoint_id"] == early["id"]
    assert dict(WorkingMemoryItem.objects.values_list("key", "value")) == {"plan": "first draft"}
    assert (early["description"], early["counts"]["working_memory"], late["expires_at"]) == (
        "before the risky step", 1, None)
    assert Checkpoint.objects.count() == 2  # a restore keeps its checkpoint
    with live_mcp.rest(tenant_a.keys["read"]) as rest:
        events = rest.get(f"/stores/{STORE}/sessions/task-7/events").json()["results"]
    assert [event["event"] for event in events] == ["spawn", "restore", "restore"]
