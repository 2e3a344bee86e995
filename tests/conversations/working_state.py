"""URLs and helpers shared by the working-state tests (working memory, task state, scratchpad)."""

from datetime import UTC, datetime
from urllib.parse import quote

SESSION = "/api/v1/stores/main/sessions/s-1"
WM = f"{SESSION}/working-memory"
TASK = f"{SESSION}/task-state"
PAD = f"{SESSION}/scratchpad"
T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def key_url(key):
    return f"{WM}/{quote(key, safe='')}"


def put_key(client, key, value, **extra):
    return client.put(key_url(key), {"value": value, **extra}, format="json")


def when(text):
    return datetime.fromisoformat(text)


def assert_error(response, status, code):
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body["error"]) == {"code", "message", "details"}
    assert body["error"]["code"] == code, body
    return body["error"]
