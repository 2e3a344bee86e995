"""The "shared" cache without Redis (settings.CACHES): Django's database cache, with a write as one statement, and
counters incremented atomically (the API's rate limits).

DatabaseCache.set counts the table's rows (to cull it past MAX_ENTRIES), then selects the key and updates or
inserts it in a transaction: four round trips, about a millisecond. Here a set is one upsert, and the table is
culled as DatabaseCache culls it (its expired rows, then a share of the rest past MAX_ENTRIES) on one set in
CULL_EVERY of each thread instead of counted on every set. Everything else is DatabaseCache's.

A counter (`count_up`) cannot be a get then a set: concurrent requests would each read the same count and write it
back plus one, and N parallel clients would get N times their limit. It is one upsert that adds one and returns the
new count, kept as plain digits in the value column: a counter key is read only through count_up.
"""

import base64
import itertools
import pickle
from datetime import UTC, datetime

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.db import DatabaseCache
from django.db import connections, router
from django.utils.timezone import now as tz_now

CULL_EVERY = 1000


class PostgresCache(DatabaseCache):
    def __init__(self, table, params):
        super().__init__(table, params)
        self._sets = itertools.count(1)

    def _base_set(self, mode, key, value, timeout=DEFAULT_TIMEOUT):
        if mode != "set":
            return super()._base_set(mode, key, value, timeout)
        timeout = self.get_backend_timeout(timeout)
        expires = datetime.max.replace(tzinfo=UTC) if timeout is None else datetime.fromtimestamp(timeout, tz=UTC)
        encoded = base64.b64encode(pickle.dumps(value, self.pickle_protocol)).decode("latin1")
        db = router.db_for_write(self.cache_model_class)
        connection = connections[db]
        table = connection.ops.quote_name(self._table)
        with connection.cursor() as cursor:
            if next(self._sets) % CULL_EVERY == 0:
                cursor.execute(f"SELECT COUNT(*) FROM {table}")
                self._cull(db, cursor, tz_now().replace(microsecond=0), cursor.fetchone()[0])
            cursor.execute(
                f"INSERT INTO {table} (cache_key, value, expires) VALUES (%s, %s, %s) "
                "ON CONFLICT (cache_key) DO UPDATE SET value = EXCLUDED.value, expires = EXCLUDED.expires",
                [key, encoded, expires.replace(microsecond=0)],
            )
        return True

    def count_up(self, key: str, timeout: int) -> int:
        """Add one to the counter `key` (created at 1, expiring in `timeout` seconds) and return its new value,
        in one statement: concurrent calls each see their own count."""
        key = self.make_and_validate_key(key)
        expires = datetime.fromtimestamp(self.get_backend_timeout(timeout), tz=UTC).replace(microsecond=0)
        connection = connections[router.db_for_write(self.cache_model_class)]
        table = connection.ops.quote_name(self._table)
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {table} AS counter (cache_key, value, expires) VALUES (%(key)s, '1', %(expires)s) "
                "ON CONFLICT (cache_key) DO UPDATE SET "
                # A row left from an earlier use of the key (expired, not culled yet) starts again at 1.
                "value = CASE WHEN counter.expires > %(now)s THEN (counter.value::bigint + 1)::text ELSE '1' END, "
                "expires = CASE WHEN counter.expires > %(now)s THEN counter.expires ELSE EXCLUDED.expires END "
                "RETURNING value::bigint",
                # The clock DatabaseCache reads expiry by: this process's, not the database server's.
                {"key": key, "expires": expires, "now": tz_now()},
            )
            return cursor.fetchone()[0]


def count_up(cache, key: str, timeout: int) -> int:
    """Add one to the counter `key` of a shared cache and return its new value, atomically: one statement on the
    database cache, SET NX then INCR on Redis (Django's RedisCache.incr is Redis's INCR)."""
    if isinstance(cache, PostgresCache):
        return cache.count_up(key, timeout)
    for _ in range(2):
        cache.add(key, 0, timeout=timeout)
        try:
            return cache.incr(key)
        except ValueError:  # expired between the two calls: create it again
            continue
    return 1
