from django.db import migrations

# History must not be rewritten: refuse UPDATE on revisions at the database level, so no code path
# (admin, shell, a future bug) can alter a recorded change. DELETE stays possible for erasure.
FORWARD = """
CREATE OR REPLACE FUNCTION memoryhub_refuse_revision_update() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'memory revisions are append-only' USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER memories_memoryrevision_append_only
    BEFORE UPDATE ON memories_memoryrevision
    FOR EACH ROW EXECUTE FUNCTION memoryhub_refuse_revision_update();
"""

REVERSE = """
DROP TRIGGER IF EXISTS memories_memoryrevision_append_only ON memories_memoryrevision;
DROP FUNCTION IF EXISTS memoryhub_refuse_revision_update();
"""


class Migration(migrations.Migration):
    dependencies = [("memories", "0001_memory_stores_memories_revisions")]

    operations = [migrations.RunSQL(FORWARD, REVERSE)]
