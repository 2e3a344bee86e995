import threading
from datetime import UTC, datetime, timedelta
from urllib.parse import quote

import pytest
import time_machine
from django.db import connection
from rest_framework.test import APIClient

from apps.conversations import services, tasks
from apps.conversations.models import ScratchpadEntry, Session, TaskState, WorkingMemoryItem

SESSION = "/api/v1/stores/main/sessions/s-1"
WM = f"{SESSION}/working-memory"
TASK = f"{SESSION}/task-state"
PAD = f"{SESSION}/scratchpad"
T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def _key_url(key):
    return f"{WM}/{quote(key, safe='')}"


def _put(client, key, value, **extra):
    return client.put(_key_url(key), {"value": value, **extra}, format="json")


def _when(text):
    return datetime.fromisoformat(text)


def _configure(world, **config):
    response = world.client("admin").patch("/api/v1/stores/main", {"working_memory_config": config}, format="json")
    assert response.status_code == 200, response.content


def _assert_error(response, status, code):
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body["error"]) == {"code", "message", "details"}
    assert body["error"]["code"] == code, body
    return body["error"]


@pytest.fixture
def session(tenant_a):
    """tenant_a with an active session s-1 of alice; extraction is off so terminate does not wait for it."""
    admin = tenant_a.client("admin")
    admin.patch("/api/v1/stores/main", {"extraction_config": {"enabled": False}}, format="json")
    response = admin.post(f"{SESSION}/spawn", {"user_id": "alice"}, format="json")
    assert response.status_code == 201, response.content
    return tenant_a


# --- Working memory ---------------------------------------------------------------------------------


def test_put_creates_then_replaces_a_key_counting_versions(session):
    client = session.client("write")
    with time_machine.travel(T0, tick=False):
        created = _put(client, "plan", {"steps": ["search", "book"], "budget": 1200.5})
    assert created.status_code == 201, created.content
    body = created.json()
    assert (body["key"], body["value"], body["version"]) == ("plan", {"steps": ["search", "book"], "budget": 1200.5}, 1)
    assert body["size_bytes"] == len('{"steps":["search","book"],"budget":1200.5}')
    assert body["expires_at"] is None
    assert _when(body["created_at"]) == _when(body["updated_at"]) == T0
    with time_machine.travel(T0 + timedelta(minutes=5), tick=False):
        replaced = _put(client, "plan", "just book it")
    assert replaced.status_code == 200, replaced.content
    body = replaced.json()
    assert (body["value"], body["version"], body["size_bytes"]) == ("just book it", 2, 14)
    assert _when(body["created_at"]) == T0 and _when(body["updated_at"]) == T0 + timedelta(minutes=5)
    fetched = session.client("read").get(_key_url("plan"))
    assert fetched.status_code == 200 and fetched.json() == body
    assert WorkingMemoryItem.objects.get().version == 2


@pytest.mark.parametrize("value", [None, 0, False, "", [], {}, [1, "two", {"three": [3.5]}]])
def test_any_json_value_round_trips(session, value):
    client = session.client("write")
    assert _put(client, "new", value).json()["value"] == value
    _put(client, "old", "before")
    assert _put(client, "old", value).json()["value"] == value
    for key in ("new", "old"):
        assert session.client("read").get(_key_url(key)).json()["value"] == value
        assert WorkingMemoryItem.objects.get(key=key).value == value


def test_a_bad_cursor_is_a_json_error(session):
    response = session.client("read").get(WM, {"cursor": "not-a-cursor"})
    assert 400 <= response.status_code < 500
    assert set(response.json()["error"]) == {"code", "message", "details"}


@pytest.mark.parametrize("key", ["travel/flights/outbound", "café ☕", "a b?c#d%e&f=g", "日本語/キー", "x" * 256])
def test_keys_with_slashes_unicode_and_url_characters_work_through_the_url(session, key):
    client = session.client("write")
    assert _put(client, key, "v").status_code == 201
    assert client.get(_key_url(key)).json()["key"] == key
    assert [item["key"] for item in client.get(WM).json()["results"]] == [key]
    assert client.delete(_key_url(key)).json() == {"deleted": True, "key": key}
    assert not WorkingMemoryItem.objects.exists()


def test_unencoded_slashes_in_a_key_reach_the_same_item(session):
    client = session.client("write")
    _put(client, "travel/flights", 1)
    assert client.get(f"{WM}/travel/flights").json()["value"] == 1


@pytest.mark.parametrize(
    "key, code",
    [("x" * 257, "invalid_key"), ("_internal", "reserved_key"), ("_", "reserved_key"), ("nul\u0000", "invalid_key")],
)
def test_bad_keys_are_400_and_store_nothing(session, key, code):
    response = _put(session.client("write"), key, "v")
    _assert_error(response, 400, code)
    assert not WorkingMemoryItem.objects.exists()


def test_a_reserved_key_is_400_even_with_if_version(session):
    response = _put(session.client("write"), "_internal", "v", if_version=7)
    _assert_error(response, 400, "reserved_key")


def test_value_size_limit_is_413_at_one_byte_over(session):
    client = session.client("write")
    # A string's compact JSON is its characters plus two quotes; the default limit is 64 KiB.
    assert _put(client, "big", "x" * (64 * 1024 - 2)).status_code == 201
    response = _put(client, "big", "y" * (64 * 1024 - 1))
    error = _assert_error(response, 413, "value_too_large")
    assert error["details"] == {"key": "big", "size_bytes": 64 * 1024 + 1, "limit_bytes": 64 * 1024}
    item = WorkingMemoryItem.objects.get()
    assert (item.version, item.value[:1]) == (1, "x")


def test_value_size_counts_utf8_bytes_against_the_store_limit(session):
    _configure(session, max_value_bytes=20)
    client = session.client("write")
    assert _put(client, "k", "é" * 9).json()["size_bytes"] == 20
    error = _assert_error(_put(client, "other", "é" * 10), 413, "value_too_large")
    assert (error["details"]["size_bytes"], error["details"]["limit_bytes"]) == (22, 20)
    assert list(WorkingMemoryItem.objects.values_list("key", flat=True)) == ["k"]


def test_an_expired_key_is_invisible_at_once_and_purged_later(session):
    client = session.client("write")
    with time_machine.travel(T0, tick=False) as traveller:
        created = _put(client, "otp", "123456", ttl_seconds=60)
        _put(client, "keep", "forever")
        assert _when(created.json()["expires_at"]) == T0 + timedelta(seconds=60)
        traveller.move_to(T0 + timedelta(seconds=59))
        assert client.get(_key_url("otp")).status_code == 200
        traveller.move_to(T0 + timedelta(seconds=60))
        _assert_error(client.get(_key_url("otp")), 404, "key_not_found")
        assert [item["key"] for item in client.get(WM).json()["results"]] == ["keep"]
        _assert_error(client.delete(_key_url("otp")), 404, "key_not_found")
        assert client.delete(WM).json() == {"deleted": 1}


def test_purge_deletes_only_expired_items(session):
    client = session.client("write")
    with time_machine.travel(T0, tick=False) as traveller:
        _put(client, "short", 1, ttl_seconds=10)
        _put(client, "long", 2, ttl_seconds=1000)
        _put(client, "forever", 3, ttl_seconds=0)
        traveller.move_to(T0 + timedelta(seconds=10))
        assert WorkingMemoryItem.objects.count() == 3  # still stored, only hidden
        assert services.working_memory_purge_expired() == 1
        assert sorted(WorkingMemoryItem.objects.values_list("key", flat=True)) == ["forever", "long"]
        assert services.working_memory_purge_expired() == 0


def test_purge_task_reports_what_it_deleted(session):
    client = session.client("write")
    with time_machine.travel(T0, tick=False) as traveller:
        _put(client, "a", 1, ttl_seconds=5)
        _put(client, "b", 2, ttl_seconds=5)
        traveller.move_to(T0 + timedelta(hours=1))
        report = tasks.purge_expired()
    assert report["working_memory_items"] == 2
    assert not WorkingMemoryItem.objects.exists()


def test_purge_works_in_batches(session):
    client = session.client("write")
    with time_machine.travel(T0, tick=False):
        for index in range(5):
            _put(client, f"k{index}", index, ttl_seconds=1)
    assert services.working_memory_purge_expired(now=T0 + timedelta(seconds=1), batch_size=2) == 5
    assert not WorkingMemoryItem.objects.exists()


def test_store_default_ttl_applies_when_no_ttl_is_given(session):
    _configure(session, default_ttl_seconds=30)
    client = session.client("write")
    with time_machine.travel(T0, tick=False):
        defaulted = _put(client, "a", 1).json()
        explicit_null = _put(client, "b", 1, ttl_seconds=None).json()
        own = _put(client, "c", 1, ttl_seconds=5).json()
        never = _put(client, "d", 1, ttl_seconds=0).json()
    assert _when(defaulted["expires_at"]) == _when(explicit_null["expires_at"]) == T0 + timedelta(seconds=30)
    assert _when(own["expires_at"]) == T0 + timedelta(seconds=5)
    assert never["expires_at"] is None


def test_a_rewrite_sets_a_new_expiry(session):
    client = session.client("write")
    with time_machine.travel(T0, tick=False) as traveller:
        _put(client, "k", 1, ttl_seconds=10)
        traveller.move_to(T0 + timedelta(seconds=8))
        assert _put(client, "k", 2, ttl_seconds=10).json()["version"] == 2
        traveller.move_to(T0 + timedelta(seconds=15))
        assert client.get(_key_url("k")).json()["value"] == 2
        assert _put(client, "k", 3, ttl_seconds=0).json()["expires_at"] is None
        traveller.move_to(T0 + timedelta(days=400))
        assert client.get(_key_url("k")).json()["value"] == 3


def test_writing_over_an_expired_key_starts_it_again(session):
    client = session.client("write")
    with time_machine.travel(T0, tick=False) as traveller:
        for value in ("a", "b"):
            _put(client, "k", value, ttl_seconds=10)
        traveller.move_to(T0 + timedelta(seconds=20))
        response = _put(client, "k", "fresh")
    assert response.status_code == 201
    body = response.json()
    # A new item, but not version 1 again: versions are the session's write stamps and never repeat.
    assert (body["value"], body["version"], body["expires_at"]) == ("fresh", 3, None)
    assert _when(body["created_at"]) == T0 + timedelta(seconds=20)
    assert WorkingMemoryItem.objects.count() == 1


def test_item_limit_is_409_and_writes_nothing(session):
    _configure(session, max_items=3)
    client = session.client("write")
    for key in ("a", "b", "c"):
        assert _put(client, key, key).status_code == 201
    error = _assert_error(_put(client, "d", "d"), 409, "working_memory_full")
    assert error["details"] == {"items": 3, "adding": 1, "limit": 3}
    assert sorted(WorkingMemoryItem.objects.values_list("key", flat=True)) == ["a", "b", "c"]
    # Overwriting an existing key at the limit still works.
    overwrite = _put(client, "b", "B")
    assert (overwrite.status_code, overwrite.json()["version"]) == (200, 4)  # the session's 4th write
    # Deleting a key frees its slot.
    client.delete(_key_url("a"))
    assert _put(client, "d", "d").status_code == 201


def test_an_expired_key_frees_its_slot(session):
    _configure(session, max_items=2)
    client = session.client("write")
    with time_machine.travel(T0, tick=False) as traveller:
        _put(client, "temp", 1, ttl_seconds=60)
        _put(client, "kept", 2)
        _assert_error(_put(client, "new", 3), 409, "working_memory_full")
        traveller.move_to(T0 + timedelta(seconds=60))
        assert _put(client, "new", 3).status_code == 201
        # The expired key is a new key again: it needs a slot, and there is none.
        _assert_error(_put(client, "temp", 4), 409, "working_memory_full")
        assert client.get(_key_url("temp")).status_code == 404
    assert sorted(WorkingMemoryItem.objects.live(T0 + timedelta(seconds=60)).values_list("key", flat=True)) == [
        "kept", "new"
    ]


def test_if_version_is_a_compare_and_set(session):
    client = session.client("write")
    assert _put(client, "counter", 1, if_version=0).status_code == 201
    error = _assert_error(_put(client, "counter", 99, if_version=0), 409, "version_conflict")
    assert error["details"] == {"key": "counter", "version": 1, "expected_version": 0}
    assert _put(client, "counter", 2, if_version=1).json()["version"] == 2
    _assert_error(_put(client, "counter", 99, if_version=1), 409, "version_conflict")
    _assert_error(_put(client, "counter", 99, if_version=5), 409, "version_conflict")
    _assert_error(_put(client, "missing", 1, if_version=1), 409, "version_conflict")
    item = WorkingMemoryItem.objects.get()
    assert (item.key, item.value, item.version) == ("counter", 2, 2)


def test_if_version_zero_matches_an_expired_key(session):
    client = session.client("write")
    with time_machine.travel(T0, tick=False) as traveller:
        _put(client, "lock", "holder-1", ttl_seconds=30)
        _assert_error(_put(client, "lock", "holder-2", if_version=0), 409, "version_conflict")
        traveller.move_to(T0 + timedelta(seconds=31))
        taken = _put(client, "lock", "holder-2", if_version=0)
    assert (taken.status_code, taken.json()["value"], taken.json()["version"]) == (201, "holder-2", 2)


def test_a_version_is_never_reused_after_a_delete_or_a_restore(session):
    """Compare-and-set with a stale version must fail even if the key was deleted and written again."""
    client = session.client("write")
    held = _put(client, "lock", "X").json()["version"]
    client.delete(_key_url("lock"))
    _put(client, "lock", "Y")
    _assert_error(_put(client, "lock", "mine", if_version=held), 409, "version_conflict")
    assert client.get(_key_url("lock")).json()["value"] == "Y"

    checkpoint = client.post(f"{SESSION}/checkpoints", {}, format="json").json()["id"]
    current = _put(client, "lock", "Z").json()["version"]
    restored = client.post(f"{SESSION}/checkpoints/{checkpoint}/restore", {}, format="json")
    assert restored.status_code == 200
    after_restore = client.get(_key_url("lock")).json()
    assert after_restore["value"] == "Y" and after_restore["version"] > current
    _assert_error(_put(client, "lock", "mine", if_version=current), 409, "version_conflict")


def test_list_is_paginated_by_key_and_filtered_by_prefix(session):
    client = session.client("write")
    for key in ("user/name", "user/city", "trip/from", "trip/to", "trip/date", "notes"):
        _put(client, key, key.upper())
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
        _put(client, key, 1)
    assert [item["key"] for item in client.get(WM, {"prefix": "a%"}).json()["results"]] == ["a%b"]


def test_clear_deletes_every_key_of_this_session_only(session):
    client = session.client("write")
    client.post("/api/v1/stores/main/sessions/s-2/spawn", {"user_id": "bob"}, format="json")
    for key in ("a", "b", "c"):
        _put(client, key, 1)
    client.put("/api/v1/stores/main/sessions/s-2/working-memory/a", {"value": 2}, format="json")
    assert client.delete(WM).json() == {"deleted": 3}
    assert client.get(WM).json()["results"] == []
    assert list(WorkingMemoryItem.objects.values_list("session__external_id", "key")) == [("s-2", "a")]
    assert client.delete(WM).json() == {"deleted": 0}


def test_deleting_a_key(session):
    client = session.client("write")
    _put(client, "a", 1)
    _put(client, "b", 2)
    assert client.delete(_key_url("a")).json() == {"deleted": True, "key": "a"}
    _assert_error(client.delete(_key_url("a")), 404, "key_not_found")
    _assert_error(client.get(_key_url("a")), 404, "key_not_found")
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
    response = session.client("write").put(_key_url("k"), body, format="json")
    _assert_error(response, 400, "validation_error")
    assert not WorkingMemoryItem.objects.exists()


@pytest.mark.parametrize(
    "raw",
    [
        '{"value": NaN}',
        '{"value": Infinity}',
        '{"value": 1e999}',
        '{"value": "\\ud800"}',
        '{"value": {"\\udc00": 1}}',
        '{"value": 1',
        "",
        "value=1",
    ],
)
def test_malformed_json_is_400_and_stores_nothing(session, raw):
    response = session.client("write").put(_key_url("k"), raw, content_type="application/json")
    assert response.status_code == 400, response.content
    assert set(response.json()["error"]) == {"code", "message", "details"}
    assert not WorkingMemoryItem.objects.exists()


def _nested(depth):
    return "[" * depth + "]" * depth


def test_values_may_nest_100_levels_deep(session):
    client = session.client("write")
    ok = client.put(_key_url("k"), '{"value": ' + _nested(100) + "}", content_type="application/json")
    assert ok.status_code == 201, ok.content
    too_deep = client.put(_key_url("k"), '{"value": ' + _nested(101) + "}", content_type="application/json")
    error = _assert_error(too_deep, 400, "validation_error")
    assert "100 levels" in error["message"]
    assert WorkingMemoryItem.objects.get().version == 1


@pytest.mark.parametrize("depth, code", [(900, "validation_error"), (100_000, "malformed_request")])
def test_absurdly_nested_json_is_400_not_a_crash(session, depth, code):
    client = session.client("write")
    client.put(TASK, {"description": "t"}, format="json")
    deep = _nested(depth)
    requests = [
        ("put", _key_url("k"), '{"value": ' + deep + "}"),
        ("post", PAD, '{"content": "x", "metadata": {"a": ' + deep + "}}"),
        ("put", TASK, '{"metadata": {"a": ' + deep + "}}"),
        ("patch", TASK, '{"metadata": {"a": ' + deep + "}}"),
    ]
    for method, url, raw in requests:
        response = getattr(client, method)(url, raw, content_type="application/json")
        _assert_error(response, 400, code)
    assert not WorkingMemoryItem.objects.exists() and not ScratchpadEntry.objects.exists()
    assert TaskState.objects.get().metadata == {}


def test_a_bad_prefix_is_400(session):
    _assert_error(session.client("read").get(WM, {"prefix": "nul\u0000"}), 400, "validation_error")


def test_a_huge_request_body_is_413(session, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    response = _put(session.client("write"), "k", "x" * 5000)
    assert response.status_code == 413, response.content
    assert set(response.json()["error"]) == {"code", "message", "details"}
    assert not WorkingMemoryItem.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_concurrent_puts_to_one_key_end_in_one_consistent_value(tenant_a):
    admin = tenant_a.client("admin")
    admin.patch("/api/v1/stores/main", {"extraction_config": {"enabled": False}}, format="json")
    assert admin.post(f"{SESSION}/spawn", {"user_id": "alice"}, format="json").status_code == 201
    writers = 8
    barrier = threading.Barrier(writers)
    responses = []
    lock = threading.Lock()

    def writer(index):
        try:
            client = tenant_a.client("write")
            barrier.wait()
            response = _put(client, "shared", {"writer": index})
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
    assert tenant_a.client("read").get(_key_url("shared")).json()["value"] == last["value"]


# --- Task state -------------------------------------------------------------------------------------


def test_put_sets_the_task_state_with_progress_from_steps(session):
    with time_machine.travel(T0, tick=False):
        response = session.client("write").put(
            TASK,
            {"description": "Book a trip to Rome", "current_step": 1, "total_steps": 4, "metadata": {"ticket": 7}},
            format="json",
        )
    assert response.status_code == 200, response.content
    body = response.json()
    assert {key: body[key] for key in ("description", "current_step", "total_steps", "progress", "status")} == {
        "description": "Book a trip to Rome", "current_step": 1, "total_steps": 4, "progress": 25.0,
        "status": "in_progress",
    }
    assert body["metadata"] == {"ticket": 7}
    assert _when(body["started_at"]) == _when(body["updated_at"]) == T0 and body["finished_at"] is None
    assert session.client("read").get(TASK).json() == body
    assert TaskState.objects.get().progress == 25.0


@pytest.mark.parametrize("given, stored", [(150, 100.0), (-5, 0.0), (42.5, 42.5), (0, 0.0), (100, 100.0), (1e300, 100.0)])
def test_progress_is_clamped_to_0_100(session, given, stored):
    client = session.client("write")
    put = client.put(TASK, {"description": "t", "progress": given}, format="json")
    assert put.json()["progress"] == stored
    patched = client.patch(TASK, {"progress": given}, format="json")
    assert patched.json()["progress"] == stored
    assert TaskState.objects.get().progress == stored


def test_explicit_progress_wins_over_steps(session):
    response = session.client("write").put(
        TASK, {"description": "t", "current_step": 1, "total_steps": 4, "progress": 90}, format="json"
    )
    assert response.json()["progress"] == 90.0


def test_put_replaces_the_whole_task_state(session):
    client = session.client("write")
    client.put(
        TASK,
        {"description": "t", "current_step": 2, "total_steps": 5, "status": "blocked", "metadata": {"a": 1}},
        format="json",
    )
    body = client.put(TASK, {"description": "t"}, format="json").json()
    assert {key: body[key] for key in ("current_step", "total_steps", "progress", "status", "metadata")} == {
        "current_step": 0, "total_steps": None, "progress": 0.0, "status": "in_progress", "metadata": {},
    }
    assert TaskState.objects.count() == 1


def test_a_new_description_restarts_the_clock(session):
    client = session.client("write")
    with time_machine.travel(T0, tick=False) as traveller:
        client.put(TASK, {"description": "first"}, format="json")
        traveller.move_to(T0 + timedelta(minutes=1))
        same = client.put(TASK, {"description": "first", "current_step": 1}, format="json").json()
        assert _when(same["started_at"]) == T0 and _when(same["updated_at"]) == T0 + timedelta(minutes=1)
        traveller.move_to(T0 + timedelta(minutes=2))
        other = client.put(TASK, {"description": "second"}, format="json").json()
        assert _when(other["started_at"]) == _when(other["updated_at"]) == T0 + timedelta(minutes=2)


def test_patch_changes_only_what_it_names(session):
    client = session.client("write")
    with time_machine.travel(T0, tick=False) as traveller:
        client.put(TASK, {"description": "t", "total_steps": 4, "metadata": {"a": 1}}, format="json")
        traveller.move_to(T0 + timedelta(seconds=30))
        body = client.patch(TASK, {"current_step": 3}, format="json").json()
    assert (body["description"], body["current_step"], body["total_steps"], body["metadata"]) == ("t", 3, 4, {"a": 1})
    assert body["progress"] == 75.0  # derived from the steps
    assert _when(body["started_at"]) == T0 and _when(body["updated_at"]) == T0 + timedelta(seconds=30)
    assert client.patch(TASK, {"progress": 80}, format="json").json()["progress"] == 80.0
    assert client.patch(TASK, {"total_steps": 10}, format="json").json()["progress"] == 30.0
    assert client.patch(TASK, {"total_steps": None}, format="json").json()["total_steps"] is None


def test_completing_a_task_sets_progress_and_finished_at(session):
    client = session.client("write")
    with time_machine.travel(T0, tick=False) as traveller:
        client.put(TASK, {"description": "t", "current_step": 1, "total_steps": 4}, format="json")
        traveller.move_to(T0 + timedelta(minutes=3))
        done = client.patch(TASK, {"status": "completed"}, format="json").json()
        assert (done["status"], done["progress"]) == ("completed", 100.0)
        assert _when(done["finished_at"]) == T0 + timedelta(minutes=3)
        traveller.move_to(T0 + timedelta(minutes=4))
        # Later edits of a finished task keep its finish time and its progress.
        noted = client.patch(TASK, {"metadata": {"note": "receipt sent"}}, format="json").json()
        assert (noted["status"], noted["progress"]) == ("completed", 100.0)
        assert _when(noted["finished_at"]) == T0 + timedelta(minutes=3)
        reopened = client.patch(TASK, {"status": "in_progress"}, format="json").json()
        assert (reopened["finished_at"], reopened["progress"]) == (None, 25.0)
    failed = client.put(TASK, {"description": "t", "status": "failed"}, format="json").json()
    assert failed["finished_at"] is not None and failed["status"] == "failed"


def test_put_with_status_completed_sets_progress_100(session):
    body = session.client("write").put(TASK, {"description": "t", "status": "completed"}, format="json").json()
    assert (body["progress"], body["status"]) == (100.0, "completed") and body["finished_at"] is not None


@pytest.mark.parametrize("status", ["pending", "in_progress", "blocked", "completed", "failed", "cancelled"])
def test_every_status_choice_is_accepted(session, status):
    assert session.client("write").put(TASK, {"status": status}, format="json").json()["status"] == status


def test_current_step_beyond_total_steps_is_400_and_changes_nothing(session):
    client = session.client("write")
    put = client.put(TASK, {"description": "t", "current_step": 5, "total_steps": 4}, format="json")
    error = _assert_error(put, 400, "validation_error")
    assert "current_step" in error["details"]
    assert not TaskState.objects.exists()
    client.put(TASK, {"description": "t", "current_step": 2, "total_steps": 4}, format="json")
    _assert_error(client.patch(TASK, {"current_step": 5}, format="json"), 400, "validation_error")
    _assert_error(client.patch(TASK, {"total_steps": 1}, format="json"), 400, "validation_error")
    task = TaskState.objects.get()
    assert (task.current_step, task.total_steps, task.progress) == (2, 4, 50.0)


@pytest.mark.parametrize(
    "body",
    [
        {"progress": "NaN"},
        {"progress": "nan"},
        {"progress": "Infinity"},
        {"progress": "lots"},
        {"progress": "33"},
        {"progress": ""},
        {"progress": True},
        {"progress": [50]},
        {"status": "done"},
        {"status": None},
        {"current_step": -1},
        {"current_step": 1.5},
        {"current_step": "two"},
        {"total_steps": -1},
        {"total_steps": 2**31},
        {"description": 5},
        {"description": "nul \u0000"},
        {"metadata": [1]},
        {"metadata": "x"},
    ],
)
def test_bad_task_state_is_400_and_changes_nothing(session, body):
    client = session.client("write")
    _assert_error(client.put(TASK, {"description": "t", **body}, format="json"), 400, "validation_error")
    assert not TaskState.objects.exists()
    client.put(TASK, {"description": "t", "progress": 10}, format="json")
    _assert_error(client.patch(TASK, body, format="json"), 400, "validation_error")
    task = TaskState.objects.get()
    assert (task.description, task.progress, task.status, task.metadata) == ("t", 10.0, "in_progress", {})


def test_nan_as_a_json_literal_is_400(session):
    client = session.client("write")
    response = client.put(TASK, '{"description": "t", "progress": NaN}', content_type="application/json")
    assert response.status_code == 400 and "error" in response.json()
    assert not TaskState.objects.exists()


def test_patch_with_nothing_to_change_is_400(session):
    client = session.client("write")
    client.put(TASK, {"description": "t"}, format="json")
    _assert_error(client.patch(TASK, {}, format="json"), 400, "validation_error")
    _assert_error(client.patch(TASK, {"unknown": 1}, format="json"), 400, "validation_error")


def test_progress_null_in_patch_is_400(session):
    client = session.client("write")
    client.put(TASK, {"description": "t", "progress": 40}, format="json")
    _assert_error(client.patch(TASK, {"progress": None}, format="json"), 400, "validation_error")
    assert TaskState.objects.get().progress == 40.0


def test_missing_task_state_is_404(session):
    client = session.client("write")
    _assert_error(client.get(TASK), 404, "task_state_not_found")
    _assert_error(client.patch(TASK, {"progress": 5}, format="json"), 404, "task_state_not_found")
    _assert_error(client.delete(TASK), 404, "task_state_not_found")
    assert not TaskState.objects.exists()


def test_deleting_the_task_state(session):
    client = session.client("write")
    client.put(TASK, {"description": "t"}, format="json")
    assert client.delete(TASK).json() == {"deleted": True}
    assert not TaskState.objects.exists()
    _assert_error(client.get(TASK), 404, "task_state_not_found")


# --- Scratchpad -------------------------------------------------------------------------------------


def test_scratchpad_appends_numbered_timestamped_entries(session):
    client = session.client("write")
    with time_machine.travel(T0, tick=False) as traveller:
        first = client.post(PAD, {"content": "The user wants Rome.", "metadata": {"step": 1}}, format="json")
        traveller.move_to(T0 + timedelta(seconds=1))
        second = client.post(PAD, {"content": "Check flights first."}, format="json")
    assert first.status_code == 201, first.content
    body = first.json()
    assert body["entry"]["seq"] == 1 and body["entry"]["content"] == "The user wants Rome."
    assert body["entry"]["metadata"] == {"step": 1} and _when(body["entry"]["created_at"]) == T0
    assert (body["dropped"], body["entries"], body["limit"]) == (0, 1, 500)
    assert (second.json()["entry"]["seq"], second.json()["entries"], second.json()["entry"]["metadata"]) == (2, 2, {})
    listed = session.client("read").get(PAD).json()["results"]
    assert [(entry["seq"], entry["content"]) for entry in listed] == [
        (1, "The user wants Rome."), (2, "Check flights first.")
    ]
    assert _when(listed[1]["created_at"]) == T0 + timedelta(seconds=1)


def test_scratchpad_drops_the_oldest_entries_beyond_the_limit(session):
    _configure(session, scratchpad_max_entries=3)
    client = session.client("write")
    reports = [client.post(PAD, {"content": f"thought {i}"}, format="json").json() for i in range(1, 6)]
    assert [(r["entry"]["seq"], r["dropped"], r["entries"], r["limit"]) for r in reports] == [
        (1, 0, 1, 3), (2, 0, 2, 3), (3, 0, 3, 3), (4, 1, 3, 3), (5, 1, 3, 3)
    ]
    assert [entry["content"] for entry in client.get(PAD).json()["results"]] == ["thought 3", "thought 4", "thought 5"]
    # Lowering the limit drops several at once on the next append.
    _configure(session, scratchpad_max_entries=1)
    report = client.post(PAD, {"content": "thought 6"}, format="json").json()
    assert (report["dropped"], report["entries"], report["limit"]) == (3, 1, 1)
    assert list(ScratchpadEntry.objects.values_list("seq", flat=True)) == [6]


def test_scratchpad_list_is_paginated_in_seq_order(session):
    client = session.client("write")
    for i in range(5):
        client.post(PAD, {"content": f"e{i}"}, format="json")
    page = client.get(PAD + "?page_size=2").json()
    assert [entry["seq"] for entry in page["results"]] == [1, 2]
    assert [entry["seq"] for entry in client.get(page["next"]).json()["results"]] == [3, 4]


def test_clearing_the_scratchpad_keeps_numbering(session):
    client = session.client("write")
    for i in range(3):
        client.post(PAD, {"content": f"e{i}"}, format="json")
    assert client.delete(PAD).json() == {"deleted": 3}
    assert client.get(PAD).json()["results"] == []
    assert client.post(PAD, {"content": "after"}, format="json").json()["entry"]["seq"] == 4
    assert client.delete(PAD).json() == {"deleted": 1} and not ScratchpadEntry.objects.exists()


@pytest.mark.parametrize(
    "body",
    [{}, {"content": ""}, {"content": "   \n\t"}, {"content": None}, {"content": 5}, {"content": "nul \u0000"},
     {"content": "ok", "metadata": [1]}, {"content": "ok", "metadata": "x"}, ["content"]],
)
def test_bad_scratchpad_entries_are_400_and_store_nothing(session, body):
    _assert_error(session.client("write").post(PAD, body, format="json"), 400, "validation_error")
    assert not ScratchpadEntry.objects.exists()
    assert Session.objects.get().scratchpad_seq == 0


def test_scratchpad_entry_length_limit_is_413(session, settings):
    settings.SCRATCHPAD_MAX_ENTRY_CHARS = 100
    client = session.client("write")
    assert client.post(PAD, {"content": "x" * 100}, format="json").status_code == 201
    error = _assert_error(client.post(PAD, {"content": "y" * 101}, format="json"), 413, "entry_too_long")
    assert "100" in error["message"]
    assert list(ScratchpadEntry.objects.values_list("content", flat=True)) == ["x" * 100]


# --- Access, isolation and the session's lifecycle --------------------------------------------------

WRITES = [
    ("put", _key_url("k"), {"value": 1}),
    ("delete", _key_url("k"), None),
    ("delete", WM, None),
    ("put", TASK, {"description": "t"}),
    ("patch", TASK, {"progress": 5}),
    ("delete", TASK, None),
    ("post", PAD, {"content": "c"}),
    ("delete", PAD, None),
]
READS = [_key_url("k"), WM, TASK, PAD]


def _seed(world):
    client = world.client("write")
    assert _put(client, "k", "seed").status_code == 201
    assert client.put(TASK, {"description": "seed"}, format="json").status_code == 200
    assert client.post(PAD, {"content": "seed"}, format="json").status_code == 201


def _state():
    return (
        list(WorkingMemoryItem.objects.values_list("key", "value", "version")),
        list(TaskState.objects.values_list("description", "progress")),
        list(ScratchpadEntry.objects.values_list("seq", "content")),
    )


SEEDED = ([("k", "seed", 1)], [("seed", 0.0)], [(1, "seed")])


@pytest.mark.parametrize("method, url, body", WRITES)
def test_a_read_key_cannot_write(session, method, url, body):
    _seed(session)
    response = getattr(session.client("read"), method)(url, body, format="json")
    _assert_error(response, 403, "permission_denied")
    assert _state() == SEEDED


@pytest.mark.parametrize("url", READS)
def test_a_read_key_can_read(session, url):
    _seed(session)
    assert session.client("read").get(url).status_code == 200


@pytest.mark.parametrize("method, url, body", WRITES + [("get", url, None) for url in READS])
def test_no_key_is_401(session, method, url, body):
    _seed(session)
    response = getattr(APIClient(), method)(url, body, format="json")
    _assert_error(response, 401, "not_authenticated")
    assert _state() == SEEDED


@pytest.mark.parametrize("method, url, body", WRITES + [("get", url, None) for url in READS])
def test_another_tenants_session_is_404(session, tenant_b, method, url, body):
    _seed(session)
    response = getattr(tenant_b.client("admin"), method)(url, body, format="json")
    _assert_error(response, 404, "session_not_found")
    assert _state() == SEEDED


def test_tenants_with_the_same_session_id_see_only_their_own_state(session, tenant_b):
    _seed(session)
    other = tenant_b.client("write")
    assert other.post(f"{SESSION}/spawn", {"user_id": "alice"}, format="json").status_code == 201
    _assert_error(other.get(_key_url("k")), 404, "key_not_found")
    assert other.get(WM).json()["results"] == []
    _assert_error(other.get(TASK), 404, "task_state_not_found")
    assert other.get(PAD).json()["results"] == []
    assert other.delete(WM).json() == {"deleted": 0}
    assert _put(other, "k", "theirs").status_code == 201
    assert session.client("read").get(_key_url("k")).json()["value"] == "seed"


@pytest.mark.parametrize("method, url, body", WRITES + [("get", url, None) for url in READS])
def test_an_unknown_session_is_404(session, method, url, body):
    url = url.replace("/sessions/s-1/", "/sessions/nope/")
    response = getattr(session.client("write"), method)(url, body, format="json")
    _assert_error(response, 404, "session_not_found")
    assert not Session.objects.filter(external_id="nope").exists()


def test_a_session_created_by_messages_has_working_state(tenant_a):
    client = tenant_a.client("write")
    client.patch("/api/v1/stores/main", {"extraction_config": {"enabled": False}}, format="json")
    url = "/api/v1/stores/main/sessions/chat-9"
    posted = client.post(f"{url}/messages", {"user_id": "alice", "messages": [{"role": "user", "content": "hi"}]},
                         format="json")
    assert posted.status_code == 202, posted.content
    assert client.put(f"{url}/working-memory/k", {"value": 1}, format="json").status_code == 201
    assert WorkingMemoryItem.objects.get().session.external_id == "chat-9"


@pytest.mark.parametrize("method, url, body", WRITES)
def test_a_terminated_sessions_working_state_is_read_only(session, method, url, body):
    _seed(session)
    client = session.client("write")
    terminated = client.post(f"{SESSION}/terminate", {"wait": 0}, format="json")
    assert terminated.status_code == 200, terminated.content
    assert Session.objects.get().status == "terminated"
    _assert_error(getattr(client, method)(url, body, format="json"), 409, "session_terminated")
    assert _state() == SEEDED
    assert Session.objects.get().scratchpad_seq == 1
    for read_url in READS:
        assert client.get(read_url).status_code == 200


def test_a_paused_session_can_still_be_written(session):
    client = session.client("write")
    assert client.post(f"{SESSION}/pause", {}, format="json").status_code == 200
    assert _put(client, "k", 1).status_code == 201



