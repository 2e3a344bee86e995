from django.db import models
from django.utils import timezone

from apps.core.models import BaseModel
from apps.memories.models import Memory, MemoryStore


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
    scratchpad_seq = models.PositiveIntegerField(default=0, help_text="Last scratchpad entry number given out.")
    # Versions of working-memory items are stamps from this counter: never reused, even after a
    # delete or a restore, so a compare-and-set cannot succeed against a different value.
    working_memory_version = models.PositiveBigIntegerField(default=0)
    ended_at = models.DateTimeField(null=True, blank=True)
    # Set when terminate has written the session's episode: a repeated terminate does not write another.
    episode_memory = models.ForeignKey(
        Memory, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

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


class UnexpiredQuerySet(models.QuerySet):
    def live(self, now=None):
        """Rows whose expiry has not passed: expired rows are invisible before the purge deletes them."""
        return self.filter(models.Q(expires_at__isnull=True) | models.Q(expires_at__gt=now or timezone.now()))


class WorkingMemoryItem(models.Model):
    id = models.BigAutoField(primary_key=True)
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="working_memory_items")
    key = models.CharField(max_length=256)
    value = models.JSONField()
    size_bytes = models.PositiveIntegerField(help_text="Size of the value as compact UTF-8 JSON.")
    version = models.PositiveBigIntegerField(help_text="The session's write stamp of the last write to this key.")
    expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    objects = UnexpiredQuerySet.as_manager()

    class Meta:
        ordering = ["session", "key"]
        constraints = [
            models.UniqueConstraint(fields=["session", "key"], name="unique_working_memory_key"),
            models.CheckConstraint(condition=~models.Q(key__startswith="_"), name="working_memory_key_not_reserved"),
        ]
        indexes = [
            # The purge looks only at items that can expire.
            models.Index(fields=["expires_at"], name="working_memory_expiry", condition=models.Q(expires_at__isnull=False)),
        ]

    def __str__(self):
        return self.key

    def is_expired(self, now=None) -> bool:
        return self.expires_at is not None and self.expires_at <= (now or timezone.now())


class TaskState(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        IN_PROGRESS = "in_progress", "In progress"
        BLOCKED = "blocked", "Blocked"
        COMPLETED = "completed", "Completed"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    FINISHED_STATUSES = (Status.COMPLETED, Status.FAILED, Status.CANCELLED)

    session = models.OneToOneField(Session, on_delete=models.CASCADE, primary_key=True, related_name="task_state")
    description = models.TextField(blank=True, default="")
    current_step = models.PositiveIntegerField(default=0)
    total_steps = models.PositiveIntegerField(null=True, blank=True)
    progress = models.FloatField(default=0.0)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    metadata = models.JSONField(default=dict, blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=models.Q(progress__gte=0, progress__lte=100), name="task_progress_0_100"),
        ]

    def __str__(self):
        return self.description[:80] or f"task of {self.session_id}"


class ScratchpadEntry(models.Model):
    id = models.BigAutoField(primary_key=True)
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="scratchpad_entries")
    seq = models.PositiveIntegerField()
    content = models.TextField()
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["session", "seq"]
        verbose_name_plural = "scratchpad entries"
        constraints = [models.UniqueConstraint(fields=["session", "seq"], name="unique_scratchpad_seq")]

    def __str__(self):
        return f"#{self.seq} {self.content[:60]}"


class Checkpoint(BaseModel):
    class Kind(models.TextChoices):
        MANUAL = "manual", "Manual"
        PAUSE = "pause", "Automatic, on pause"

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="checkpoints")
    description = models.TextField(blank=True, default="")
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.MANUAL)
    # {"working_memory": [{key, value, expires_at, version}], "task_state": {...} | null,
    #  "scratchpad": [{seq, content, metadata, created_at}]}
    snapshot = models.JSONField()
    message_seq = models.PositiveIntegerField(help_text="The session's last message seq when the checkpoint was taken.")
    extracted_seq = models.PositiveIntegerField(default=0)
    working_memory_items = models.PositiveIntegerField(default=0)
    scratchpad_entries = models.PositiveIntegerField(default=0)
    has_task_state = models.BooleanField(default=False)
    size_bytes = models.PositiveIntegerField(default=0)
    expires_at = models.DateTimeField(null=True, blank=True)
    created_by = models.CharField(max_length=255, blank=True, default="")

    objects = UnexpiredQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["session", "-created_at"], name="checkpoint_session_created"),
            models.Index(fields=["expires_at"], name="checkpoint_expiry", condition=models.Q(expires_at__isnull=False)),
        ]

    def __str__(self):
        return self.description[:80] or f"checkpoint {self.pk}"


class SessionEvent(models.Model):
    """The session's lifecycle log: one row per transition or restore."""

    class Event(models.TextChoices):
        SPAWN = "spawn", "Spawned"
        PAUSE = "pause", "Paused"
        RESUME = "resume", "Resumed"
        TERMINATE = "terminate", "Terminated"
        RESTORE = "restore", "Checkpoint restored"

    id = models.BigAutoField(primary_key=True)
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="events")
    event = models.CharField(max_length=20, choices=Event.choices)
    from_status = models.CharField(max_length=20, blank=True, default="")
    to_status = models.CharField(max_length=20)
    checkpoint_id = models.UUIDField(null=True, blank=True, help_text="Not a foreign key: checkpoints can be deleted.")
    data = models.JSONField(default=dict, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    actor_type = models.CharField(max_length=10)
    actor_id = models.CharField(max_length=64, blank=True, default="")
    actor_label = models.CharField(max_length=255, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["session", "id"]

    def __str__(self):
        return f"{self.event} {self.from_status or '-'} → {self.to_status}"
