from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("extraction", "0002_sweep_schedule"),
    ]

    operations = [
        migrations.AddField(
            model_name="extractionjob",
            name="fallback_reason",
            field=models.TextField(blank=True, default=""),
        ),
    ]
