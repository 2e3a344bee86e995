"""Hand-written SQL on the hot paths of the API: rows loaded as the ORM loads them, and a cursor that sends
parameters apart from the statement.

Every API call looks up its key and most look up a store; compiling those querysets cost more than running
them (about 1 ms of Python for a lookup by a unique column on the reference machine, against 0.3 ms for the
statement). These lookups write their statement once, and `RowLoader` turns its rows into model instances
with the fields' database converters applied (a JSONField's decoding, for one), as a queryset would.
"""

from contextlib import contextmanager

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.postgresql.base import TIMESTAMPTZ_OID, ServerBindingCursor
from django.db.backends.postgresql.psycopg_any import register_tzloader
from django.utils.asyncio import async_unsafe
from psycopg.pq import Format


class RowLoader:
    """Instances of `model` from rows holding the columns of `fields` (attnames; default: every concrete
    field), in the model's field order, as `select_list` names them."""

    def __init__(self, model, fields: tuple[str, ...] | None = None):
        opts = model._meta
        wanted = set(fields) if fields is not None else None
        unknown = (wanted or set()) - {field.attname for field in opts.concrete_fields}
        if unknown:
            raise ValueError(f"{model.__name__} has no concrete field {sorted(unknown)}")
        # Model.from_db expects the loaded fields in the model's own order.
        self.model = model
        self.fields = [field for field in opts.concrete_fields if wanted is None or field.attname in wanted]
        self.attnames = [field.attname for field in self.fields]
        self._converters: dict[str, list] = {}

    def __len__(self) -> int:
        return len(self.fields)

    def select_list(self, table_alias: str) -> str:
        return ", ".join(f'{table_alias}."{field.column}"' for field in self.fields)

    def load(self, values, *, using: str = DEFAULT_DB_ALIAS):
        connection = connections[using]
        values = list(values)
        for index, column, converters in self._converters_for(connection):
            for convert in converters:
                values[index] = convert(values[index], column, connection)
        return self.model.from_db(using, self.attnames, values)

    def _converters_for(self, connection) -> list:
        converters = self._converters.get(connection.alias)
        if converters is None:
            converters = []
            for index, field in enumerate(self.fields):
                column = field.get_col(self.model._meta.db_table)
                # The order the ORM's compiler applies them in: the backend's, then the field's.
                found = connection.ops.get_db_converters(column) + column.get_db_converters(connection)
                if found:
                    converters.append((index, column, found))
            self._converters[connection.alias] = converters
        return converters


@contextmanager
@async_unsafe
def server_binding_cursor(using: str = DEFAULT_DB_ALIAS):
    """A cursor of the connection `using` that sends parameters apart from the statement (psycopg's server-side
    binding). A statement run through it DB_PREPARE_THRESHOLD times on a connection is prepared there (settings);
    the threshold is set for this cursor's statements only, so psycopg neither counts nor keeps Django's own.

    Django's cursors bind parameters on the client: each value is quoted into the statement's text, which the
    server then parses. A search's query vector is 384 numbers or more, written out and parsed again at each of
    its places in the statement on every search; bound on the server, it travels once, as one parameter.
    Queries run through it are logged and their errors wrapped as through `connection.cursor()`.
    """
    connection = connections[using]
    connection.validate_thread_sharing()
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    database = connection.connection
    with connection.wrap_database_errors:
        cursor = ServerBindingCursor(database)
    # As Django's own cursors: the connection's time zone, if a test or a request changed it.
    if database.adapters.get_loader(TIMESTAMPTZ_OID, Format.TEXT).timezone != connection.timezone:
        register_tzloader(connection.timezone, cursor)
    wrapped = connection.make_debug_cursor(cursor) if connection.queries_logged else connection.make_cursor(cursor)
    threshold = database.prepare_threshold
    database.prepare_threshold = settings.DB_PREPARE_THRESHOLD or None
    try:
        with wrapped:
            yield wrapped
    finally:
        database.prepare_threshold = threshold
