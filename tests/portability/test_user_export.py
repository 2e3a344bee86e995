"""GET /api/v1/stores/{store}/user-export/{user_id}: everything a store holds about one user, as one JSON document."""

import json

import pytest

from apps.memories.models import Memory, Webhook, WebhookDelivery
from apps.memories.services import store_create
from apps.portability import serializers

pytestmark = pytest.mark.django_db

URL = "/api/v1/stores/main/user-export/alice"


def test_the_document_holds_everything_about_the_user_and_nothing_else(rich_store, tenant_a):
    webhook = Webhook.objects.create(store=rich_store, url="https://crm.example.com/hook", secret="whsec_x")
    WebhookDelivery.objects.create(webhook=webhook, event_id="evt-1", event_type="memory.created", user_id="alice",
                                   payload={"data": {"memory": {"content": "Alice lives in Berlin"}}})
    WebhookDelivery.objects.create(webhook=webhook, event_id="evt-2", event_type="memory.created", user_id="bob",
                                   payload={"data": {"memory": {"content": "Bob plays football on Sundays"}}})

    response = tenant_a.client("admin").get(URL)

    assert response.status_code == 200, response.content[:1000]
    assert response["Content-Type"] == "application/json"
    document = json.loads(response.content)
    assert (document["format"], document["version"], document["store"], document["user_id"]) == (
        "memoryhub-user-export", 1, "main", "alice")
    memories = {memory["content"]: memory for memory in document["memories"]}
    assert set(memories) == set(Memory.objects.filter(store=rich_store, user_id="alice").values_list(
        "content", flat=True))
    assert {memory["status"] for memory in memories.values()} == {
        "active", "deleted", "rejected", "superseded"}  # every status, the deleted ones too
    assert [revision["reason"] for revision in memories["Alice prefers dark mode"]["revisions"]] == [
        "", "wrong customer"]
    assert memories["Alice is allergic to peanuts and cashews"]["provenance"] == {"from": "crm", "record": 17}
    extracted = [memory for memory in memories.values() if memory["source"] == "extraction"]
    assert extracted and all(memory["provenance"] for memory in extracted)
    assert all("embedding" not in memory for memory in memories.values())
    sessions = {session["session_id"]: session for session in document["sessions"]}
    assert set(sessions) == {"task-7", "chat-42"}
    assert [message["text"] for message in sessions["chat-42"]["messages"]] == [
        "My name is Alice and I work as a nurse at City Hospital", "Thanks Alice, how can I help?",
        "I prefer email over phone calls"]
    assert sessions["task-7"]["task_state"]["description"] == "Replace Alice's broken kettle"
    assert {item["key"] for item in sessions["task-7"]["working_memory"]} == {"order", "otp"}
    assert [job["session_id"] for job in document["extraction_jobs"]] == ["chat-42"]
    assert [(delivery["url"], delivery["event_id"]) for delivery in document["webhook_deliveries"]] == [
        ("https://crm.example.com/hook", "evt-1")]
    assert document["counts"] == {"memories": len(memories), "sessions": 2, "messages": 3, "extraction_jobs": 1,
                                  "webhook_deliveries": 1}
    assert "bob" not in json.dumps(document).lower()


def _declared(serializer) -> set[str]:
    return set(serializer.fields)


def test_the_document_has_exactly_the_fields_the_schema_declares(rich_store, tenant_a):
    """The view writes the document itself; this holds it to the serializers that document it in OpenAPI."""
    Webhook.objects.create(store=rich_store, url="https://crm.example.com/hook", secret="whsec_x")
    WebhookDelivery.objects.create(webhook=Webhook.objects.get(store=rich_store), event_id="e", event_type="ping",
                                   user_id="alice", payload={})
    document = json.loads(tenant_a.client("admin").get(URL).content)
    session = next(session for session in document["sessions"] if session["session_id"] == "task-7")
    chat = next(session for session in document["sessions"] if session["session_id"] == "chat-42")

    checks = [
        (document, serializers.UserExportOutput()),
        (document["counts"], serializers.UserExportCountsOutput()),
        (document["extraction_jobs"][0], serializers.ExtractionJobRecordOutput()),
        (document["webhook_deliveries"][0], serializers.WebhookDeliveryRecordOutput()),
        (session, serializers.SessionRecordOutput()),
        (session["task_state"], serializers.TaskStateOutput()),
        (session["working_memory"][0], serializers.WorkingMemoryRecordOutput()),
        (session["scratchpad"][0], serializers.ScratchpadRecordOutput()),
        (session["checkpoints"][0], serializers.CheckpointRecordOutput()),
        (session["events"][0], serializers.SessionEventRecordOutput()),
        (chat["messages"][0], serializers.MessageRecordOutput()),
    ]
    for memory in document["memories"]:
        checks.append((memory, serializers.MemoryRecordOutput()))
        checks.extend((revision, serializers.RevisionOutput()) for revision in memory["revisions"])
    for value, serializer in checks:
        assert set(value) == _declared(serializer), type(serializer).__name__
        for name, field in serializer.fields.items():
            if value[name] is None:
                assert field.allow_null, (type(serializer).__name__, name)


def test_a_user_with_nothing_stored_gets_empty_lists(tenant_a):
    response = tenant_a.client("admin").get("/api/v1/stores/main/user-export/nobody")

    assert response.status_code == 200
    document = response.json()
    assert (document["memories"], document["sessions"], document["extraction_jobs"]) == ([], [], [])


@pytest.mark.parametrize("scope", ["read", "write"])
def test_the_export_needs_the_admin_scope(tenant_a, add_memory, scope):
    add_memory(tenant_a.store, "Alice likes green tea")

    response = tenant_a.client(scope).get(URL)

    assert response.status_code == 403
    assert response.json()["error"]["message"] == "This API key lacks the 'admin' scope."


def test_another_tenants_store_is_not_found(tenant_a, tenant_b, add_memory):
    private = store_create(tenant=tenant_a.tenant, name="private", embedding_provider="hash")
    add_memory(private, "Alice's card ends in 4242")
    add_memory(tenant_a.store, "Alice likes green tea")

    missing = tenant_b.client("admin").get("/api/v1/stores/private/user-export/alice")
    own = tenant_b.client("admin").get(URL)  # globex's own store "main": none of acme's alice

    assert missing.status_code == 404 and missing.json()["error"]["code"] == "store_not_found"
    assert own.status_code == 200 and own.json()["memories"] == []


def test_a_key_limited_to_other_stores_is_refused(tenant_a, add_memory):
    from apps.tenancy.services import api_key_issue

    key = api_key_issue(tenant=tenant_a.tenant, name="other", scopes=["admin"], store_names=["other"]).raw_key
    client = tenant_a.client()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")

    assert client.get(URL).status_code == 403


def test_a_document_over_the_limit_is_a_413_naming_the_command(tenant_a, add_memory, settings):
    settings.MEMORYHUB_USER_EXPORT_MAX_BYTES = 2000
    for index in range(10):
        add_memory(tenant_a.store, f"Alice fact number {index}: " + "x" * 200)

    response = tenant_a.client("admin").get(URL)

    assert response.status_code == 413
    error = response.json()["error"]
    assert error["code"] == "export_too_large" and error["details"] == {"max_bytes": 2000}
    assert "manage.py export_store acme main --user <user id>" in error["message"]


def test_user_ids_with_slashes_and_accents_are_found(tenant_a, add_memory):
    add_memory(tenant_a.store, "A customer of the Lyon shop", user_id="shop/lyon/José")

    response = tenant_a.client("admin").get("/api/v1/stores/main/user-export/shop/lyon/Jose\u0301")

    assert response.status_code == 200
    assert [memory["content"] for memory in response.json()["memories"]] == ["A customer of the Lyon shop"]


def test_an_erased_user_exports_nothing(rich_store, tenant_a):
    from apps.conversations.services import user_erase

    user_erase(store=rich_store, user_id="alice")

    document = tenant_a.client("admin").get(URL).json()
    assert document["counts"] == {"memories": 0, "sessions": 0, "messages": 0, "extraction_jobs": 0,
                                  "webhook_deliveries": 0}
