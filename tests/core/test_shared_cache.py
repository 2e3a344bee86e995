"""The shared cache without Redis (apps.core.cache.PostgresCache): Django's database cache whose set is one upsert,
in the unlogged table a migration creates."""

import threading
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.core.cache import caches
from django.db import connection

from apps.core import cache as cache_module
from apps.core.cache import PostgresCache

TABLE = "memoryhub_shared_cache"


def _rows() -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT COUNT(*) FROM {TABLE}")
        return cursor.fetchone()[0]


def test_the_shared_cache_is_the_upserting_database_cache_in_an_unlogged_table(db):
    assert isinstance(caches["shared"], PostgresCache)
    with connection.cursor() as cursor:
        cursor.execute("SELECT relpersistence FROM pg_class WHERE relname = %s", [TABLE])
        assert cursor.fetchone() == ("u",)


def test_set_writes_and_overwrites_one_row_and_honours_the_timeout(db):
    cache = caches["shared"]
    start = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
    with time_machine.travel(start, tick=False) as clock:
        cache.set("counter", (1, 1), timeout=30)
        cache.set("counter", (1, 2), timeout=30)
        cache.set("forever", "kept", timeout=None)
        assert cache.get("counter") == (1, 2) and _rows() == 2
        clock.move_to(start + timedelta(seconds=31))
        assert cache.get("counter") is None and cache.get("forever") == "kept"
    # The other writes are DatabaseCache's own.
    assert cache.add("new", 1) is True and cache.add("new", 2) is False and cache.get("new") == 1


def test_every_thousandth_set_culls_expired_rows(db, monkeypatch):
    monkeypatch.setattr(cache_module, "CULL_EVERY", 5)
    cache = PostgresCache(TABLE, {})
    start = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
    with time_machine.travel(start, tick=False) as clock:
        for number in range(3):
            cache.set(f"old-{number}", number, timeout=10)
        clock.move_to(start + timedelta(seconds=20))
        cache.set("new-0", 0, timeout=10)
        assert _rows() == 4  # expired rows stay until a cull
        cache.set("new-1", 1, timeout=10)  # the fifth set
        assert _rows() == 2


@pytest.mark.parametrize("timeout", [0, -5])
def test_a_set_that_expires_at_once_is_not_found(db, timeout):
    cache = caches["shared"]
    cache.set("gone", 1, timeout=timeout)
    assert cache.get("gone") is None


@pytest.mark.django_db(transaction=True)
def test_concurrent_counts_each_see_their_own_number(db):
    cache = caches["shared"]
    barrier = threading.Barrier(8)
    seen = []

    def count():
        try:
            barrier.wait()
            seen.extend(cache_module.count_up(cache, "requests", timeout=60) for _ in range(10))
        finally:
            connection.close()

    threads = [threading.Thread(target=count) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(seen) == list(range(1, 81))  # a get-then-set counter loses increments here


def test_a_counter_starts_again_once_it_has_expired(db):
    cache = caches["shared"]
    start = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
    with time_machine.travel(start, tick=False) as clock:
        assert [cache_module.count_up(cache, "window", timeout=10) for _ in range(3)] == [1, 2, 3]
        clock.move_to(start + timedelta(seconds=11))  # expired, its row not culled yet
        assert cache_module.count_up(cache, "window", timeout=10) == 1
