from django.db import migrations


def create_purge_schedule(apps, schema_editor):
    Schedule = apps.get_model("django_q", "Schedule")
    Schedule.objects.update_or_create(
        name="working-state-purge",
        defaults={
            "func": "apps.conversations.tasks.purge_expired",
            "schedule_type": "I",  # MINUTES
            "minutes": 1,
            "repeats": -1,
        },
    )


def delete_purge_schedule(apps, schema_editor):
    apps.get_model("django_q", "Schedule").objects.filter(name="working-state-purge").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("conversations", "0002_working_state_checkpoints_events"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    operations = [migrations.RunPython(create_purge_schedule, delete_purge_schedule)]
