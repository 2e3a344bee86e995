"""Deeply nested JSON is a 400 on every endpoint, never a RecursionError and a 500."""

import pytest

from apps.conversations.models import Message
from apps.memories.models import Memory


def _nested(depth: int):
    value = "bottom"
    for _ in range(depth):
        value = {"a": value}
    return value


@pytest.mark.parametrize("depth", [150, 950])
def test_deep_metadata_and_content_are_400(tenant_a, depth):
    client = tenant_a.client("write")
    memory = client.post("/api/v1/stores/main/memories",
                         {"user_id": "alice", "content": "x", "metadata": _nested(depth)}, format="json")
    assert memory.status_code == 400, memory.content
    # Up to what the JSON decoder handles, the serializer names the limit; beyond, the parser refuses.
    assert memory.json()["error"]["message"] in (
        "metadata: Nested more than 100 levels deep.", "JSON parse error - the document is nested too deeply.")
    message = client.post("/api/v1/stores/main/sessions/s/messages",
                          {"user_id": "alice", "messages": [{"role": "user", "content": [_nested(depth)]}]},
                          format="json")
    assert message.status_code == 400, message.content
    assert not Memory.objects.exists() and not Message.objects.exists()


def test_a_body_too_deep_for_the_json_decoder_is_400(tenant_a):
    body = '{"user_id": "alice", "content": "x", "metadata": ' + "[" * 100_000 + "]" * 100_000 + "}"
    response = tenant_a.client("write").post("/api/v1/stores/main/memories", body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "malformed_request"
