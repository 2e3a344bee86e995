"""The schedule of the channel layer's purge: every 5 minutes, the PostgreSQL layer's expired messages and group
memberships are deleted (apps.memories.tasks.purge_live_messages)."""

from django.db import migrations


def create_schedule(apps, schema_editor):
    apps.get_model("django_q", "Schedule").objects.update_or_create(
        name="live-messages-purge",
        defaults={
            "func": "apps.memories.tasks.purge_live_messages",
            "schedule_type": "I",  # MINUTES
            "minutes": 5,
            "repeats": -1,
        },
    )


def delete_schedule(apps, schema_editor):
    apps.get_model("django_q", "Schedule").objects.filter(name="live-messages-purge").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0008_webhooks"),
        ("channels_postgres", "0004_notify_ensure_payload_not_too_big"),
    ]

    operations = [migrations.RunPython(create_schedule, delete_schedule)]
