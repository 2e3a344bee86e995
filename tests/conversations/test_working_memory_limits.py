"""Working-memory limits: value size and item count, expiry (TTL) and the purge of expired keys."""

from datetime import timedelta

import time_machine

from apps.conversations import services, tasks
from apps.conversations.models import WorkingMemoryItem
from tests.conversations.working_state import T0, WM, assert_error, key_url, put_key, when


def test_value_size_limit_is_413_at_one_byte_over(session):
    client = session.client("write")
    # A string's compact JSON is its characters plus two quotes; the default limit is 64 KiB.
    at_limit = put_key(client, "big", "x" * (64 * 1024 - 2))
    assert (at_limit.status_code, at_limit.json()["size_bytes"], at_limit.json()["version"]) == (201, 64 * 1024, 1)
    response = put_key(client, "big", "y" * (64 * 1024 - 1))
    error = assert_error(response, 413, "value_too_large")
    assert error["details"] == {"key": "big", "size_bytes": 64 * 1024 + 1, "limit_bytes": 64 * 1024}
    item = WorkingMemoryItem.objects.get()
    assert (item.version, item.value[:1]) == (1, "x")


def test_value_size_counts_utf8_bytes_against_the_store_limit(session, configure_store):
    configure_store(session.store, working_memory_config={"max_value_bytes": 20})
    client = session.client("write")
    assert put_key(client, "k", "é" * 9).json()["size_bytes"] == 20
    error = assert_error(put_key(client, "other", "é" * 10), 413, "value_too_large")
    assert (error["details"]["size_bytes"], error["details"]["limit_bytes"]) == (22, 20)
    assert list(WorkingMemoryItem.objects.values_list("key", flat=True)) == ["k"]


def test_item_limit_is_409_and_writes_nothing(session, configure_store):
    configure_store(session.store, working_memory_config={"max_items": 3})
    client = session.client("write")
    for version, key in enumerate(("a", "b", "c"), start=1):
        created = put_key(client, key, key)
        assert (created.status_code, created.json()["key"], created.json()["version"]) == (201, key, version)
    error = assert_error(put_key(client, "d", "d"), 409, "working_memory_full")
    assert error["details"] == {"items": 3, "adding": 1, "limit": 3}
    assert sorted(WorkingMemoryItem.objects.values_list("key", flat=True)) == ["a", "b", "c"]
    # Overwriting an existing key at the limit still works.
    overwrite = put_key(client, "b", "B")
    assert (overwrite.status_code, overwrite.json()["version"]) == (200, 4)  # the session's 4th write
    # Deleting a key frees its slot.
    assert client.delete(key_url("a")).json() == {"deleted": True, "key": "a"}
    added = put_key(client, "d", "d")
    assert (added.status_code, added.json()["key"], added.json()["version"]) == (201, "d", 5)
    assert sorted(WorkingMemoryItem.objects.values_list("key", "value")) == [("b", "B"), ("c", "c"), ("d", "d")]


def test_an_expired_key_frees_its_slot(session, configure_store):
    configure_store(session.store, working_memory_config={"max_items": 2})
    client = session.client("write")
    with time_machine.travel(T0, tick=False) as traveller:
        put_key(client, "temp", 1, ttl_seconds=60)
        put_key(client, "kept", 2)
        assert_error(put_key(client, "new", 3), 409, "working_memory_full")
        traveller.move_to(T0 + timedelta(seconds=60))
        added = put_key(client, "new", 3)
        assert (added.status_code, added.json()["key"], added.json()["value"]) == (201, "new", 3)
        # The expired key is a new key again: it needs a slot, and there is none.
        assert_error(put_key(client, "temp", 4), 409, "working_memory_full")
        assert_error(client.get(key_url("temp")), 404, "key_not_found")
    assert sorted(WorkingMemoryItem.objects.live(T0 + timedelta(seconds=60)).values_list("key", flat=True)) == [
        "kept", "new"
    ]


def test_an_expired_key_is_invisible_at_once_and_purged_later(session):
    client = session.client("write")
    with time_machine.travel(T0, tick=False) as traveller:
        created = put_key(client, "otp", "123456", ttl_seconds=60)
        put_key(client, "keep", "forever")
        assert when(created.json()["expires_at"]) == T0 + timedelta(seconds=60)
        traveller.move_to(T0 + timedelta(seconds=59))
        assert client.get(key_url("otp")).json()["value"] == "123456"
        traveller.move_to(T0 + timedelta(seconds=60))
        assert_error(client.get(key_url("otp")), 404, "key_not_found")
        assert [item["key"] for item in client.get(WM).json()["results"]] == ["keep"]
        assert_error(client.delete(key_url("otp")), 404, "key_not_found")
        assert client.delete(WM).json() == {"deleted": 1}


def test_store_default_ttl_applies_when_no_ttl_is_given(session, configure_store):
    configure_store(session.store, working_memory_config={"default_ttl_seconds": 30})
    client = session.client("write")
    with time_machine.travel(T0, tick=False):
        defaulted = put_key(client, "a", 1).json()
        explicit_null = put_key(client, "b", 1, ttl_seconds=None).json()
        own = put_key(client, "c", 1, ttl_seconds=5).json()
        never = put_key(client, "d", 1, ttl_seconds=0).json()
    assert when(defaulted["expires_at"]) == when(explicit_null["expires_at"]) == T0 + timedelta(seconds=30)
    assert when(own["expires_at"]) == T0 + timedelta(seconds=5)
    assert never["expires_at"] is None


def test_a_rewrite_sets_a_new_expiry(session):
    client = session.client("write")
    with time_machine.travel(T0, tick=False) as traveller:
        put_key(client, "k", 1, ttl_seconds=10)
        traveller.move_to(T0 + timedelta(seconds=8))
        assert put_key(client, "k", 2, ttl_seconds=10).json()["version"] == 2
        traveller.move_to(T0 + timedelta(seconds=15))
        assert client.get(key_url("k")).json()["value"] == 2
        assert put_key(client, "k", 3, ttl_seconds=0).json()["expires_at"] is None
        traveller.move_to(T0 + timedelta(days=400))
        assert client.get(key_url("k")).json()["value"] == 3


def test_writing_over_an_expired_key_starts_it_again(session):
    client = session.client("write")
    with time_machine.travel(T0, tick=False) as traveller:
        for value in ("a", "b"):
            put_key(client, "k", value, ttl_seconds=10)
        traveller.move_to(T0 + timedelta(seconds=20))
        response = put_key(client, "k", "fresh")
    assert response.status_code == 201
    body = response.json()
    # A new item, but not version 1 again: versions are the session's write stamps and never repeat.
    assert (body["value"], body["version"], body["expires_at"]) == ("fresh", 3, None)
    assert when(body["created_at"]) == T0 + timedelta(seconds=20)
    assert WorkingMemoryItem.objects.count() == 1


def test_if_version_zero_matches_an_expired_key(session):
    client = session.client("write")
    with time_machine.travel(T0, tick=False) as traveller:
        put_key(client, "lock", "holder-1", ttl_seconds=30)
        assert_error(put_key(client, "lock", "holder-2", if_version=0), 409, "version_conflict")
        traveller.move_to(T0 + timedelta(seconds=31))
        taken = put_key(client, "lock", "holder-2", if_version=0)
    assert (taken.status_code, taken.json()["value"], taken.json()["version"]) == (201, "holder-2", 2)


def test_purge_deletes_only_expired_items(session):
    client = session.client("write")
    with time_machine.travel(T0, tick=False) as traveller:
        put_key(client, "short", 1, ttl_seconds=10)
        put_key(client, "long", 2, ttl_seconds=1000)
        put_key(client, "forever", 3, ttl_seconds=0)
        traveller.move_to(T0 + timedelta(seconds=10))
        assert WorkingMemoryItem.objects.count() == 3  # still stored, only hidden
        assert services.working_memory_purge_expired() == 1
        assert sorted(WorkingMemoryItem.objects.values_list("key", flat=True)) == ["forever", "long"]
        assert services.working_memory_purge_expired() == 0


def test_purge_task_reports_what_it_deleted(session):
    client = session.client("write")
    with time_machine.travel(T0, tick=False) as traveller:
        put_key(client, "a", 1, ttl_seconds=5)
        put_key(client, "b", 2, ttl_seconds=5)
        traveller.move_to(T0 + timedelta(hours=1))
        report = tasks.purge_expired()
    assert report["working_memory_items"] == 2
    assert not WorkingMemoryItem.objects.exists()


def test_purge_works_in_batches(session):
    client = session.client("write")
    with time_machine.travel(T0, tick=False):
        for index in range(5):
            put_key(client, f"k{index}", index, ttl_seconds=1)
    assert services.working_memory_purge_expired(now=T0 + timedelta(seconds=1), batch_size=2) == 5
    assert not WorkingMemoryItem.objects.exists()
