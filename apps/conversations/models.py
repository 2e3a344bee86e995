from django.db import models
from django.utils import timezone

from apps.core.models import BaseModel
from apps.memories.models import MemoryStore


class Session(BaseModel):
    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        PAUSED = "paused", "Paused"
        TERMINATED = "terminated", "Terminated"

    store = models.ForeignKey(MemoryStore, on_delete=models.CASCADE, related_name="sessions")
    external_id = models.CharField(max_length=255, help_text="The client's session id, unique per store.")
    user_id = models.CharField(max_length=255)
    agent_id = models.CharField(max_length=255, blank=True, default="")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.ACTIVE)
    metadata = models.JSONField(default=dict, blank=True)
    message_count = models.PositiveIntegerField(default=0)
    last_seq = models.PositiveIntegerField(default=0)
    last_activity_at = models.DateTimeField(default=timezone.now)
    # Extraction high-water mark: messages with seq <= extracted_seq have been extracted.
    extracted_seq = models.PositiveIntegerField(default=0)
    # Highest seq already handed to an extraction job, and the user turns after it: the trigger.
    scheduled_seq = models.PositiveIntegerField(default=0)
    unscheduled_user_turns = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-last_activity_at"]
        constraints = [
            models.UniqueConstraint(fields=["store", "external_id"], name="unique_session_per_store"),
        ]
        indexes = [
            models.Index(fields=["store", "user_id"], name="session_store_user"),
            models.Index(fields=["store", "status", "last_activity_at"], name="session_store_status_activity"),
        ]

    def __str__(self):
        return f"{self.external_id} ({self.user_id})"

    @property
    def has_unextracted_messages(self) -> bool:
        return self.last_seq > self.extracted_seq


class Message(models.Model):
    class Role(models.TextChoices):
        USER = "user", "User"
        ASSISTANT = "assistant", "Assistant"
        SYSTEM = "system", "System"
        TOOL = "tool", "Tool"

    id = models.BigAutoField(primary_key=True)
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="messages")
    seq = models.PositiveIntegerField(help_text="Server-assigned, monotonic per session.")
    role = models.CharField(max_length=20, choices=Role.choices)
    content = models.JSONField(help_text="Content blocks, e.g. [{'text': ...}, {'toolUse': {...}}].")
    text = models.TextField(blank=True, default="", help_text="The text blocks, flattened.")
    client_run_id = models.CharField(max_length=255, blank=True, default="")
    client_seq = models.PositiveIntegerField(null=True, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["session", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["session", "seq"], name="unique_message_seq"),
            # Idempotency of client retries: one row per (run, client seq) in a session.
            models.UniqueConstraint(
                fields=["session", "client_run_id", "client_seq"],
                condition=models.Q(client_seq__isnull=False),
                name="unique_client_message",
            ),
        ]

    def __str__(self):
        return f"{self.session_id}#{self.seq} {self.role}"
