"""A store with everything an export carries, made through the API, and helpers to export, import and compare."""

import io

import pytest
from django.core.management import call_command

from apps.conversations.models import Message, Session
from apps.core.actors import Actor
from apps.memories.models import Memory, MemoryStore
from apps.memories.services import MemoryInput, memory_create, memory_supersede

ALICE_MESSAGES = [
    {"role": "user", "seq": 0, "content": "My name is Alice and I work as a nurse at City Hospital"},
    {"role": "assistant", "seq": 1, "content": "Thanks Alice, how can I help?"},
    {"role": "user", "seq": 2, "content": [{"text": "I prefer email over phone calls"}],
     "metadata": {"channel": "web"}},
]


def _ok(response, status=(200, 201, 202)):
    assert response.status_code in status, (response.status_code, response.content[:2000])
    return response.json() if response.content else None


@pytest.fixture
def rich_store(tenant_a, inline_extraction, django_capture_on_commit_callbacks):
    """tenant acme's store "main": alice's and bob's memories in every status with history (an edit, a soft delete,
    a supersede, a rejection), extracted memories with provenance, sessions with messages, working memory, a task,
    scratchpad notes, a checkpoint and a pause and resume in the event log."""
    api = tenant_a.client("admin")
    base = "/api/v1/stores/main"
    peanuts = _ok(api.post(f"{base}/memories", {
        "user_id": "alice", "content": "Alice is allergic to peanuts", "tags": ["health"],
        "metadata": {"severity": "high"}, "provenance": {"from": "crm", "record": 17}, "importance": 0.9,
    }, format="json"))["memory"]
    _ok(api.post(f"{base}/memories/bulk", {"memories": [
        {"user_id": "alice", "content": "Alice prefers dark mode", "memory_type": "preference"},
        {"user_id": "alice", "content": "Alice lives in Paris", "agent_id": "support-bot"},
        {"user_id": "alice", "content": "Alice owns a red kettle", "status": "pending_review"},
        {"user_id": "bob", "content": "Bob plays football on Sundays", "memory_type": "episode"},
    ]}, format="json"))
    _ok(api.patch(f"{base}/memories/{peanuts['id']}", {"content": "Alice is allergic to peanuts and cashews",
                                                       "reason": "she told us more"}, format="json"))
    dark = Memory.objects.get(content="Alice prefers dark mode")
    _ok(api.delete(f"{base}/memories/{dark.pk}?reason=wrong+customer"))
    kettle = Memory.objects.get(content="Alice owns a red kettle")
    _ok(api.patch(f"{base}/memories/{kettle.pk}", {"status": "rejected", "reason": "not a fact"}, format="json"))
    paris = Memory.objects.get(content="Alice lives in Paris")
    berlin = memory_create(store=tenant_a.store, item=MemoryInput(user_id="alice", content="Alice lives in Berlin"),
                           actor=Actor.system("test")).memory
    memory_supersede(old=paris, new=berlin, actor=Actor.system("test"), reason="moved")

    _ok(api.post(f"{base}/sessions/task-7/spawn", {
        "user_id": "alice", "agent_id": "support-bot", "metadata": {"ticket": 7},
        "task_state": {"description": "Replace Alice's broken kettle", "total_steps": 3},
        "working_memory": [{"key": "order", "value": {"id": "A-1009", "item": "kettle"}},
                           {"key": "otp", "value": "482913", "ttl_seconds": 3600}]}, format="json"))
    _ok(api.post(f"{base}/sessions/task-7/scratchpad", {"content": "Warranty valid until May",
                                                        "metadata": {"step": 1}}, format="json"))
    _ok(api.post(f"{base}/sessions/task-7/checkpoints", {"description": "before the refund"}, format="json"))
    _ok(api.post(f"{base}/sessions/task-7/pause", {"description": "waiting for the customer"}, format="json"))
    _ok(api.post(f"{base}/sessions/task-7/resume", {}, format="json"))
    with django_capture_on_commit_callbacks(execute=True):  # the extraction job runs on commit, inline
        _ok(api.post(f"{base}/sessions/chat-42/messages", {"user_id": "alice", "agent_id": "support-bot",
                                                           "run_id": "run-1", "messages": ALICE_MESSAGES}, format="json"))
        _ok(api.post(f"{base}/sessions/chat-42/flush", format="json"))
    _ok(api.post(f"{base}/sessions/bob-1/messages", {"user_id": "bob", "messages": [
        {"role": "user", "content": "I am Bob and I play football every Sunday"}]}, format="json"))
    assert Memory.objects.filter(store=tenant_a.store, source="extraction").exists()
    return tenant_a.store


def export_text(store: MemoryStore, *options: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    call_command("export_store", store.tenant.slug, store.name, *options, stdout=out, stderr=err)
    return out.getvalue()


def import_text(tenant_slug: str, store_name: str, text: str, *options: str) -> str:
    out = io.StringIO()
    call_command("import_store", tenant_slug, store_name, *options, stdin=io.StringIO(text), stdout=out,
                 stderr=io.StringIO())
    return out.getvalue()


def _revision_view(revision, names: dict) -> dict:
    def snapshot(value):
        if isinstance(value, dict) and value.get("superseded_by_id"):
            return {**value, "superseded_by_id": names[value["superseded_by_id"]]}
        return value

    return {"action": revision.action, "changed_fields": revision.changed_fields, "before": snapshot(revision.before),
            "after": snapshot(revision.after), "actor": (revision.actor_type, revision.actor_id, revision.actor_label),
            "reason": revision.reason, "context": revision.context, "created_at": revision.created_at}


def store_view(store: MemoryStore, *, imported: bool = False) -> dict:
    """Everything an export carries, without ids (which an import into another store changes): memories keyed by
    (user, content), links by the successor's content. `imported`: drop each memory's last revision, the import's."""
    memories = list(Memory.objects.filter(store=store).prefetch_related("revisions"))
    names = {str(memory.pk): (memory.user_id, memory.content) for memory in memories}
    view = {"memories": {}, "sessions": {}}
    for memory in memories:
        revisions = sorted(memory.revisions.all(), key=lambda revision: revision.pk)
        if imported:
            assert revisions[-1].context["import"]["source_memory_id"], revisions[-1].context
            revisions = revisions[:-1]
        view["memories"][(memory.user_id, memory.content)] = {
            **{name: getattr(memory, name) for name in (
                "agent_id", "session_id", "memory_type", "metadata", "tags", "importance", "confidence", "status",
                "source", "provenance", "valid_from", "valid_to", "expires_at", "created_at", "updated_at",
                "content_hash")},
            "superseded_by": names.get(str(memory.superseded_by_id)),
            "revisions": [_revision_view(revision, names) for revision in revisions],
        }
    for session in Session.objects.filter(store=store).select_related("task_state", "episode_memory"):
        task = getattr(session, "task_state", None)
        view["sessions"][session.external_id] = {
            **{name: getattr(session, name) for name in (
                "user_id", "agent_id", "status", "metadata", "message_count", "last_seq", "extracted_seq",
                "scratchpad_seq", "working_memory_version", "last_activity_at", "ended_at", "created_at")},
            "episode": session.episode_memory.content if session.episode_memory else None,
            "working_memory": list(session.working_memory_items.values_list("key", "value", "version", "expires_at")),
            "task_state": task and (task.description, task.current_step, task.total_steps, task.progress, task.status),
            "scratchpad": list(session.scratchpad_entries.values_list("seq", "content", "metadata", "created_at")),
            "checkpoints": list(session.checkpoints.order_by("created_at").values_list(
                "description", "kind", "snapshot", "message_seq", "expires_at", "created_at")),
            "events": list(session.events.order_by("id").values_list("event", "from_status", "to_status", "data",
                                                                       "created_at")),
            "messages": list(Message.objects.filter(session=session).order_by("seq").values_list(
                "seq", "role", "content", "text", "client_run_id", "client_seq", "metadata", "created_at")),
        }
    return view
