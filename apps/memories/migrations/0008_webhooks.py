"""Outgoing webhooks of a store and their delivery log, and the schedule of the webhook sweep (every 5 minutes:
deliveries whose task was lost are enqueued again, deliveries past their retention are deleted)."""

import django.contrib.postgres.fields
import django.core.serializers.json
import django.db.models.deletion
import uuid
from django.db import migrations, models


def create_sweep_schedule(apps, schema_editor):
    apps.get_model("django_q", "Schedule").objects.update_or_create(
        name="webhook-sweep",
        defaults={
            "func": "apps.memories.tasks.sweep_webhook_deliveries",
            "schedule_type": "I",  # MINUTES
            "minutes": 5,
            "repeats": -1,
        },
    )


def delete_sweep_schedule(apps, schema_editor):
    apps.get_model("django_q", "Schedule").objects.filter(name="webhook-sweep").delete()


class Migration(migrations.Migration):

    dependencies = [
        ('memories', '0007_revision_action_supersede'),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    operations = [
        migrations.CreateModel(
            name='Webhook',
            fields=[
                ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ('created_at', models.DateTimeField(auto_now_add=True, db_index=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('url', models.CharField(max_length=2000)),
                ('description', models.TextField(blank=True, default='')),
                ('event_types', django.contrib.postgres.fields.ArrayField(base_field=models.CharField(max_length=64), blank=True, default=list, size=None)),
                ('secret', models.CharField(max_length=100)),
                ('is_active', models.BooleanField(default=True)),
                ('disabled_at', models.DateTimeField(blank=True, null=True)),
                ('disabled_reason', models.TextField(blank=True, default='')),
                ('consecutive_failures', models.PositiveIntegerField(default=0)),
                ('store', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='webhooks', to='memories.memorystore')),
            ],
            options={
                'ordering': ['created_at'],
            },
        ),
        migrations.CreateModel(
            name='WebhookDelivery',
            fields=[
                ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ('created_at', models.DateTimeField(auto_now_add=True, db_index=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('event_id', models.CharField(max_length=64)),
                ('event_type', models.CharField(max_length=64)),
                ('user_id', models.CharField(blank=True, default='', max_length=255)),
                ('payload', models.JSONField(encoder=django.core.serializers.json.DjangoJSONEncoder)),
                ('status', models.CharField(choices=[('queued', 'Queued'), ('succeeded', 'Succeeded'), ('failed', 'Failed')], default='queued', max_length=10)),
                ('attempts', models.PositiveSmallIntegerField(default=0)),
                ('next_attempt_at', models.DateTimeField(blank=True, null=True)),
                ('response_status', models.PositiveSmallIntegerField(blank=True, null=True)),
                ('last_error', models.TextField(blank=True, default='')),
                ('duration_ms', models.PositiveIntegerField(blank=True, null=True)),
                ('delivered_at', models.DateTimeField(blank=True, null=True)),
                ('webhook', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='deliveries', to='memories.webhook')),
            ],
            options={
                'verbose_name_plural': 'webhook deliveries',
                'ordering': ['-created_at'],
                'indexes': [models.Index(fields=['webhook', '-created_at'], name='webhook_delivery_log'), models.Index(fields=['webhook', 'user_id'], name='webhook_delivery_user'), models.Index(condition=models.Q(('status', 'queued')), fields=['next_attempt_at'], name='webhook_delivery_due')],
                'constraints': [models.CheckConstraint(condition=models.Q(('status__in', ['queued', 'succeeded', 'failed'])), name='webhook_delivery_status_valid')],
            },
        ),
        migrations.RunPython(create_sweep_schedule, delete_sweep_schedule),
    ]
