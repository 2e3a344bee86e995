"""The table of the "shared" cache (settings.CACHES: the API throttles' counters) when there is no Redis.

createcachetable with the table's name creates it whatever the settings say, so switching between Redis and
the database later needs no step; it leaves an existing table alone. The test database gets it from here too.
Unlogged: a counter is rewritten on every API request, and one lost in a crash costs nothing, so its writes
skip the write-ahead log and their commits wait for no disk flush.
"""

from django.core.management import call_command
from django.db import migrations

TABLE = "memoryhub_shared_cache"


def create_table(apps, schema_editor):
    call_command("createcachetable", TABLE, database=schema_editor.connection.alias, verbosity=0)
    schema_editor.execute(f"ALTER TABLE {schema_editor.quote_name(TABLE)} SET UNLOGGED")


def drop_table(apps, schema_editor):
    schema_editor.execute(f"DROP TABLE IF EXISTS {schema_editor.quote_name(TABLE)}")


class Migration(migrations.Migration):
    dependencies = [("tenancy", "0006_tenant_limits")]

    operations = [migrations.RunPython(create_table, drop_table, elidable=False)]
