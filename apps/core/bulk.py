"""Fast inserts of many model instances with PostgreSQL COPY."""

from django.db import connections, router
from psycopg.types.json import Jsonb


def copy_rows(model, instances: list, *, exclude: tuple[str, ...] = (), verbatim: tuple[str, ...] = ()) -> None:
    """Insert `instances` of `model` with one COPY instead of a multi-row INSERT.

    Django's bulk_create compiles an INSERT with a placeholder per value; for hundreds of rows with
    384-float vectors that compilation costs more than the database's work. Values go through the
    fields' own get_db_prep_save, so what is stored is what bulk_create would store. Primary keys must
    be set by the caller (UUID defaults are) or be database defaults listed in `exclude`; generated
    columns must be excluded too. Fields in `verbatim` keep the instance's value where pre_save would
    replace it (auto_now_add, auto_now): a restore writes the times the rows had.
    """
    if not instances:
        return
    connection = connections[router.db_for_write(model)]
    fields = [
        field
        for field in model._meta.concrete_fields
        if field.name not in exclude and not getattr(field, "generated", False)
    ]
    columns = ", ".join(connection.ops.quote_name(field.column) for field in fields)
    statement = f"COPY {connection.ops.quote_name(model._meta.db_table)} ({columns}) FROM STDIN"
    # wrap_database_errors turns psycopg's errors into Django's (IntegrityError...), as the ORM does.
    with connection.cursor() as cursor, connection.wrap_database_errors:
        with cursor.cursor.copy(statement) as copy:
            for instance in instances:
                row = []
                for field in fields:
                    value = getattr(instance, field.attname) if field.name in verbatim else field.pre_save(
                        instance, add=True)
                    value = field.get_db_prep_save(value, connection)
                    if hasattr(value, "adapted"):  # Django's JSON adapter wraps the Python value
                        value = Jsonb(value.adapted)
                    row.append(value)
                copy.write_row(row)
    for instance in instances:
        instance._state.adding = False
        instance._state.db = connection.alias
