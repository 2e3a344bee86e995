from django.db import migrations, models


class Migration(migrations.Migration):
    """Why a job ran the rules extractor instead of the model it was scheduled for (empty for every earlier job)."""

    dependencies = [("extraction", "0003_job_session_to_seq_index")]

    operations = [
        migrations.AddField(
            model_name="extractionjob",
            name="fallback_reason",
            field=models.TextField(blank=True, default=""),
        ),
    ]
