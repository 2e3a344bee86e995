"""The "shared" cache without Redis (settings.CACHES): Django's database cache, with a write as one statement.

DatabaseCache.set counts the table's rows (to cull it past MAX_ENTRIES), then selects the key and updates or
inserts it in a transaction: four round trips, about a millisecond, and the API throttles write a counter on every
request. Here a set is one upsert, and the table is culled as DatabaseCache culls it (its expired rows, then a
share of the rest past MAX_ENTRIES) on one set in CULL_EVERY of each thread instead of counted on every set.
Everything else is DatabaseCache's.
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
