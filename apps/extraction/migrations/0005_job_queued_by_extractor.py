from django.db import migrations, models


class Migration(migrations.Migration):
    """The queued jobs of each extractor, oldest first: where a worker finds its next job."""

    dependencies = [("extraction", "0004_job_fallback_reason")]

    operations = [
        migrations.AddIndex(
            model_name="extractionjob",
            index=models.Index(
                condition=models.Q(("status", "queued")),
                fields=["extractor", "created_at", "id"],
                name="job_queued_by_extractor",
            ),
        ),
    ]
