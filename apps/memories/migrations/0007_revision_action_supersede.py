"""A revision that retires a memory in favour of a newer one is a `supersede`, no longer an `update`.

Before, consolidation's supersede (and memories.0006's retiring of a duplicate) wrote `update`, the
word for an edit, so a history or a flush could not tell "the user moved" from "someone fixed a typo".
The revisions written so far get the new name where their own snapshots show a supersede (the status
became `superseded`): the label is derived from before/after exactly as the service now derives it, and
the snapshots, the actor and the reason stay as they were written. Revisions are append-only (a trigger
refuses UPDATE); like memories.0006, this lifts the trigger for its own transaction only.
"""

from django.db import migrations, models

TRIGGER = "memories_memoryrevision_append_only"
# The actions the service wrote for a change of status to superseded before `supersede` existed.
OLD_ACTIONS = ["update", "status_change", "restore"]
SUPERSEDES = """
    action = ANY(%(old)s) AND after->>'status' = 'superseded' AND before->>'status' <> 'superseded'
"""


def _relabel(schema_editor, *, sql: str, params: dict, when: str) -> None:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f"SELECT EXISTS (SELECT 1 FROM memories_memoryrevision WHERE {when})", params)
        if not cursor.fetchone()[0]:
            return  # no rows to relabel: no need to lift the trigger (and lock the table for it)
        cursor.execute(f"ALTER TABLE memories_memoryrevision DISABLE TRIGGER {TRIGGER}")
        cursor.execute(sql, params)
        cursor.execute(f"ALTER TABLE memories_memoryrevision ENABLE TRIGGER {TRIGGER}")


def name_supersedes(apps, schema_editor) -> None:
    _relabel(
        schema_editor,
        sql=f"UPDATE memories_memoryrevision SET action = 'supersede' WHERE {SUPERSEDES}",
        params={"old": OLD_ACTIONS},
        when=SUPERSEDES,
    )


def unname_supersedes(apps, schema_editor) -> None:
    _relabel(
        schema_editor,
        sql="UPDATE memories_memoryrevision SET action = 'update' WHERE action = %(new)s",
        params={"new": "supersede"},
        when="action = %(new)s",
    )


class Migration(migrations.Migration):
    dependencies = [("memories", "0006_nfc_identifiers")]

    operations = [
        migrations.AlterField(
            model_name="memoryrevision",
            name="action",
            field=models.CharField(
                choices=[
                    ("create", "Created"),
                    ("update", "Edited"),
                    ("status_change", "Status changed"),
                    ("supersede", "Superseded"),
                    ("delete", "Deleted"),
                    ("restore", "Restored"),
                ],
                max_length=20,
            ),
        ),
        migrations.RunPython(name_supersedes, unname_supersedes),
    ]
