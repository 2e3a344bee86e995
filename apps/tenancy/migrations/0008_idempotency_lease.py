from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("tenancy", "0007_shared_cache_table"),
    ]

    operations = [
        migrations.AddField(
            model_name="idempotencyrecord",
            name="lease_expires_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        # Claims made before leases: abandoned five minutes after they were made, as they were then.
        migrations.RunSQL(
            "UPDATE tenancy_idempotencyrecord SET lease_expires_at = created_at + interval '300 seconds'"
            " WHERE status_code IS NULL",
            migrations.RunSQL.noop,
        ),
    ]
