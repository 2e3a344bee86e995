from django.db import migrations


def create_sweep_schedule(apps, schema_editor):
    Schedule = apps.get_model("django_q", "Schedule")
    Schedule.objects.update_or_create(
        name="extraction-sweep",
        defaults={
            "func": "apps.extraction.tasks.sweep",
            "schedule_type": "I",  # MINUTES
            "minutes": 1,
            "repeats": -1,
        },
    )


def delete_sweep_schedule(apps, schema_editor):
    apps.get_model("django_q", "Schedule").objects.filter(name="extraction-sweep").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("extraction", "0001_extraction_jobs"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    operations = [migrations.RunPython(create_sweep_schedule, delete_sweep_schedule)]
