from django.db import migrations


def create_schedule(apps, schema_editor):
    apps.get_model("django_q", "Schedule").objects.update_or_create(
        name="idempotency-purge",
        defaults={
            "func": "apps.tenancy.tasks.purge_idempotency_records",
            "schedule_type": "H",  # HOURLY
            "repeats": -1,
        },
    )


def delete_schedule(apps, schema_editor):
    apps.get_model("django_q", "Schedule").objects.filter(name="idempotency-purge").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("tenancy", "0002_idempotency_records"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    operations = [migrations.RunPython(create_schedule, delete_schedule)]
