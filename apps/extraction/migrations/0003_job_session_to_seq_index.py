from django.db import migrations, models


class Migration(migrations.Migration):
    """The newest jobs of a session reaching past a seq (what a flush reports), from an index."""

    dependencies = [("extraction", "0002_sweep_schedule")]

    operations = [
        migrations.AddIndex(
            model_name="extractionjob",
            index=models.Index(fields=["session", "to_seq"], name="job_session_to_seq"),
        ),
    ]
