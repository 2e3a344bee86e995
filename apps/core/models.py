import uuid

from django.db import models


class BaseModel(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class WorkerHeartbeat(models.Model):
    """A background worker process's last sign of life: /readyz asks whether any was seen recently."""

    name = models.CharField(max_length=255, primary_key=True, help_text="host:pid of the worker process.")
    started_at = models.DateTimeField()
    seen_at = models.DateTimeField(db_index=True)

    def __str__(self):
        return f"{self.name} (seen {self.seen_at:%Y-%m-%d %H:%M:%S})"
