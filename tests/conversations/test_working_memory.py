"""Working-memory keys: write, read, list and delete, versions and compare-and-set, and what a request may hold."""

import threading
from datetime import timedelta

import pytest
import time_machine
from django.db import connection

from apps.conversations.models import ScratchpadEntry, TaskState, WorkingMemoryItem
from tests.conversations.working_state import PAD, SESSION, T0, TASK, WM, assert_error, key_url, put_key, when


def test_put_creates_then_replaces_a_key_counting_versions(session):
    client = session.client("write")
    with time_machine.travel(T0, tick=False):
        created = put_key(client, "plan", {"steps": ["search", "book"], "budget": 1200.5})
    assert created.status_code == 201, created.content
    body = created.json()
    assert (body["key"], body["value"], body["version"]) == ("plan", {"steps": ["search", "book"], "budget": 1200.5}, 1)
    assert body["size_bytes"] == len('{"steps":["search","book"],"budget":1200.5}')
    assert body["expires_at"] is None
    assert when(body["created_at"]) == when(body["updated_at"]) == T0
    with time_machine.travel(T0 + timedelta(minutes=5), tick=False):
        replaced = put_key(client, "plan", "just book it")
    assert replaced.status_code == 200, replaced.content
    body = replaced.json()
    assert (body["value"], body["version"], body["size_bytes"]) == ("just book it", 2, 14)
    assert when(body["created_at"]) == T0 and when(body["updated_at"]) == T0 + timedelta(minutes=5)
    fetched = session.client("read").get(key_url("plan"))
    assert fetched.status_code == 200 and fetched.json() == body
    assert WorkingMemoryItem.objects.get().version == 2


@pytest.mark.parametrize("value", [None, 0, False, "", [], {}, [1, "two", {"three": [3.5]}]])
def test_any_json_value_round_trips(session, value):
    client = session.client("write")
    assert put_key(client, "new", value).json()["value"] == value
    put_key(client, "old", "before")
    assert put_key(client, "old", value).json()["value"] == value
    for key in ("new", "old"):
        assert session.client("read").get(key_url(key)).json()["value"] == value
        assert WorkingMemoryItem.objects.get(key=key).value == value


def test_a_bad_cursor_is_a_json_error(session):
    response = session.client("read").get(WM, {"cursor": "not-a-cursor"})
    error = assert_error(response, 400, "validation_error")
    assert "cursor" in error["details"] and error["message"].startswith("cursor: Invalid cursor")


@pytest.mark.parametrize("key", ["travel/flights/outbound", "café ☕", "a b?c#d%e&f=g", "日本語/キー", "x" * 256])
def test_keys_with_slashes_unicode_and_url_characters_work_through_the_url(session, key):
    client = session.client("write")
    created = put_key(client, key, "v")
    assert (created.status_code, created.json()["key"]) == (201, key)
    assert WorkingMemoryItem.objects.get().key == key
    assert client.get(key_url(key)).json()["key"] == key
    assert [item["key"] for item in client.get(WM).json()["results"]] == [key]
    assert client.delete(key_url(key)).json() == {"deleted": True, "key": key}
    assert not WorkingMemoryItem.objects.exists()


def test_unencoded_slashes_in_a_key_reach_the_same_item(session):
    client = session.client("write")
    put_key(client, "travel/flights", 1)
    assert client.get(f"{WM}/travel/flights").json()["value"] == 1


@pytest.mark.parametrize(
    "key, code",
    [("x" * 257, "invalid_key"), ("_internal", "reserved_key"), ("_", "reserved_key"), ("nul\u0000", "invalid_key")],
)
def test_bad_keys_are_400_and_store_nothing(session, key, code):
    response = put_key(session.client("write"), key, "v")
    assert_error(response, 400, code)
    assert not WorkingMemoryItem.objects.exists()


def test_a_reserved_key_is_400_even_with_if_version(session):
    response = put_key(session.client("write"), "_internal", "v", if_version=7)
    assert_error(response, 400, "reserved_key")
    assert not WorkingMemoryItem.objects.exists()


def test_if_version_is_a_compare_and_set(session):
    client = session.client("write")
    created = put_key(client, "counter", 1, if_version=0)
    assert (created.status_code, created.json()["value"], created.json()["version"]) == (201, 1, 1)
    error = assert_error(put_key(client, "counter", 99, if_version=0), 409, "version_conflict")
    assert error["details"] == {"key": "counter", "version": 1, "expected_version": 0}
    assert put_key(client, "counter", 2, if_version=1).json()["version"] == 2
    assert_error(put_key(client, "counter", 99, if_version=1), 409, "version_conflict")
    assert_error(put_key(client, "counter", 99, if_version=5), 409, "version_conflict")
    assert_error(put_key(client, "missing", 1, if_version=1), 409, "version_conflict")
    item = WorkingMemoryItem.objects.get()
    assert (item.key, item.value, item.version) == ("counter", 2, 2)


def test_a_version_is_never_reused_after_a_delete_or_a_restore(session):
    """Compare-and-set with a stale version must fail even if the key was deleted and written again."""
    client = session.client("write")
    held = put_key(client, "lock", "X").json()["version"]
    assert client.delete(key_url("lock")).json() == {"deleted": True, "key": "lock"}
    put_key(client, "lock", "Y")
    assert_error(put_key(client, "lock", "mine", if_version=held), 409, "version_conflict")
    assert client.get(key_url("lock")).json()["value"] == "Y"

    checkpoint = client.post(f"{SESSION}/checkpoints", {}, format="json").json()["id"]
    current = put_key(client, "lock", "Z").json()["version"]
    restored = client.post(f"{SESSION}/checkpoints/{checkpoint}/restore", {}, format="json")
    assert restored.status_code == 200, restored.content
    assert (restored.json()["event"], restored.json()["data"]["restored"]["working_memory"]) == ("restore", 1)
    after_restore = client.get(key_url("lock")).json()
    assert after_restore["value"] == "Y" and after_restore["version"] > current
    assert_error(put_key(client, "lock", "mine", if_version=current), 409, "version_conflict")


def test_list_is_paginated_by_key_and_filtered_by_prefix(session):
    client = session.client("write")
    for key in ("user/name", "user/city", "trip/from", "trip/to", "trip/date", "notes"):
        put_key(client, key, key.upper())
    reader = session.client("read")
    page = reader.get(WM + "?page_size=2").json()
    assert [item["key"] for item in page["results"]] == ["notes", "trip/date"]
    second = reader.get(page["next"]).json()
    assert [item["key"] for item in second["results"]] == ["trip/from", "trip/to"]
    third = reader.get(second["next"]).json()
    assert [item["key"] for item in third["results"]] == ["user/city", "user/name"] and third["next"] is None
    prefixed = reader.get(WM, {"prefix": "trip/"}).json()["results"]
    assert [(item["key"], item["value"]) for item in prefixed] == [
        ("trip/date", "TRIP/DATE"), ("trip/from", "TRIP/FROM"), ("trip/to", "TRIP/TO")
    ]
    assert reader.get(WM, {"prefix": "zzz"}).json()["results"] == []


def test_prefix_is_literal_not_a_pattern(session):
    client = session.client("write")
    for key in ("a%b", "axb", "a_b"):
        put_key(client, key, 1)
    assert [item["key"] for item in client.get(WM, {"prefix": "a%"}).json()["results"]] == ["a%b"]


def test_clear_deletes_every_key_of_this_session_only(session):
    client = session.client("write")
    client.post("/api/v1/stores/main/sessions/s-2/spawn", {"user_id": "bob"}, format="json")
    for key in ("a", "b", "c"):
        put_key(client, key, 1)
    client.put("/api/v1/stores/main/sessions/s-2/working-memory/a", {"value": 2}, format="json")
    assert client.delete(WM).json() == {"deleted": 3}
    assert client.get(WM).json()["results"] == []
    assert list(WorkingMemoryItem.objects.values_list("session__external_id", "key")) == [("s-2", "a")]
    assert client.delete(WM).json() == {"deleted": 0}


def test_deleting_a_key(session):
    client = session.client("write")
    put_key(client, "a", 1)
    put_key(client, "b", 2)
    assert client.delete(key_url("a")).json() == {"deleted": True, "key": "a"}
    assert_error(client.delete(key_url("a")), 404, "key_not_found")
    assert_error(client.get(key_url("a")), 404, "key_not_found")
    assert list(WorkingMemoryItem.objects.values_list("key", flat=True)) == ["b"]


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"ttl_seconds": 5},
        {"value": 1, "ttl_seconds": -1},
        {"value": 1, "ttl_seconds": 365 * 24 * 3600 + 1},
        {"value": 1, "ttl_seconds": "ten"},
        {"value": 1, "ttl_seconds": 1.5},
        {"value": 1, "ttl_seconds": True},
        {"value": 1, "if_version": -1},
        {"value": 1, "if_version": "one"},
        {"value": 1, "if_version": 2.5},
        {"value": 1, "if_version": None},
        {"value": "nul \u0000"},
        {"value": {"nested": ["ok", "nul \u0000"]}},
        {"value": {"key\u0000": 1}},
        [1, 2],
        "just a string",
    ],
)
def test_bad_put_bodies_are_400_and_store_nothing(session, body):
    response = session.client("write").put(key_url("k"), body, format="json")
    assert_error(response, 400, "validation_error")
    assert not WorkingMemoryItem.objects.exists()


# Text that is not JSON is refused by the parser; JSON that Python reads but that is no valid JSON
# value (an infinite number, an unpaired surrogate) or lacks the value is refused by validation.
MALFORMED = {
    '{"value": NaN}': "malformed_request",
    '{"value": Infinity}': "malformed_request",
    '{"value": 1e999}': "validation_error",
    '{"value": "\\ud800"}': "validation_error",
    '{"value": {"\\udc00": 1}}': "validation_error",
    '{"value": 1': "malformed_request",
    "": "validation_error",
    "value=1": "malformed_request",
}


@pytest.mark.parametrize("raw", list(MALFORMED))
def test_malformed_json_is_400_and_stores_nothing(session, raw):
    response = session.client("write").put(key_url("k"), raw, content_type="application/json")
    assert_error(response, 400, MALFORMED[raw])
    assert not WorkingMemoryItem.objects.exists()


def _nested(depth):
    return "[" * depth + "]" * depth


def test_values_may_nest_100_levels_deep(session):
    client = session.client("write")
    ok = client.put(key_url("k"), '{"value": ' + _nested(100) + "}", content_type="application/json")
    assert ok.status_code == 201, ok.content
    assert ok.json()["size_bytes"] == 200 and ok.json()["version"] == 1
    too_deep = client.put(key_url("k"), '{"value": ' + _nested(101) + "}", content_type="application/json")
    error = assert_error(too_deep, 400, "validation_error")
    assert "100 levels" in error["message"]
    assert WorkingMemoryItem.objects.get().version == 1


@pytest.mark.parametrize("depth, code", [(500, "validation_error"), (100_000, "malformed_request")])
def test_absurdly_nested_json_is_400_not_a_crash(session, depth, code):
    client = session.client("write")
    client.put(TASK, {"description": "t"}, format="json")
    deep = _nested(depth)
    requests = [
        ("put", key_url("k"), '{"value": ' + deep + "}"),
        ("post", PAD, '{"content": "x", "metadata": {"a": ' + deep + "}}"),
        ("put", TASK, '{"metadata": {"a": ' + deep + "}}"),
        ("patch", TASK, '{"metadata": {"a": ' + deep + "}}"),
    ]
    for method, url, raw in requests:
        response = getattr(client, method)(url, raw, content_type="application/json")
        assert_error(response, 400, code)
    assert not WorkingMemoryItem.objects.exists() and not ScratchpadEntry.objects.exists()
    assert TaskState.objects.get().metadata == {}


def test_a_bad_prefix_is_400(session):
    assert_error(session.client("read").get(WM, {"prefix": "nul\u0000"}), 400, "validation_error")


def test_a_huge_request_body_is_413(session, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    response = put_key(session.client("write"), "k", "x" * 5000)
    assert_error(response, 413, "payload_too_large")
    assert not WorkingMemoryItem.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_concurrent_puts_to_one_key_end_in_one_consistent_value(tenant_a, configure_store):
    configure_store(tenant_a.store, extraction_config={"enabled": False})
    spawned = tenant_a.client("admin").post(f"{SESSION}/spawn", {"user_id": "alice"}, format="json")
    assert spawned.status_code == 201, spawned.content
    writers = 8
    barrier = threading.Barrier(writers)
    responses = []
    lock = threading.Lock()

    def writer(index):
        try:
            client = tenant_a.client("write")
            barrier.wait()
            response = put_key(client, "shared", {"writer": index})
            with lock:
                responses.append((response.status_code, response.json()))
        finally:
            connection.close()

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    statuses = sorted(status for status, _ in responses)
    assert statuses == [200] * (writers - 1) + [201], responses
    assert sorted(body["version"] for _, body in responses) == list(range(1, writers + 1))
    item = WorkingMemoryItem.objects.get()
    last = max((body for _, body in responses), key=lambda body: body["version"])
    assert item.version == writers and item.value == last["value"]
    assert tenant_a.client("read").get(key_url("shared")).json()["value"] == last["value"]
