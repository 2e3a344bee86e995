"""Deeply nested JSON is a 400 on every endpoint, never a RecursionError and a 500."""

import pytest

from apps.conversations.models import Message
from apps.memories.models import Memory


def _nested(depth: int) -> str:
    """JSON text nested `depth` objects deep, built without recursion (the test client would recurse)."""
    return '{"a":' * depth + '"bottom"' + "}" * depth


# 150: the serializers refuse it (limit 100); 100,000: Python's JSON decoder gives up first.
@pytest.mark.parametrize("depth", [150, 100_000])
def test_deeply_nested_metadata_and_content_are_400(tenant_a, depth):
    client = tenant_a.client("write")
    memory = client.post("/api/v1/stores/main/memories",
                         f'{{"user_id": "alice", "content": "x", "metadata": {_nested(depth)}}}',
                         content_type="application/json")
    assert memory.status_code == 400, memory.content
    message = client.post("/api/v1/stores/main/sessions/s/messages",
                          f'{{"user_id": "alice", "messages": [{{"role": "user", "content": [{_nested(depth)}]}}]}}',
                          content_type="application/json")
    assert message.status_code == 400, message.content
    if depth == 150:
        assert memory.json()["error"]["message"] == "metadata: Nested more than 100 levels deep."
    else:
        assert memory.json()["error"]["code"] == message.json()["error"]["code"] == "malformed_request"
    assert not Memory.objects.exists() and not Message.objects.exists()
