from django.db import models

from apps.conversations.models import Session
from apps.core.models import BaseModel
from apps.memories.models import MemoryStore


class ExtractionJob(BaseModel):
    """One unit of extraction work: the messages (from_seq, to_seq] of a session."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"

    class Trigger(models.TextChoices):
        TURNS = "turns", "Every N user turns"
        IDLE = "idle", "Session idle"
        FLUSH = "flush", "Flush requested"
        SESSION_END = "session_end", "Session ended"
        RETRY = "retry", "Retried by a person"

    OPEN_STATUSES = (Status.QUEUED, Status.RUNNING)

    store = models.ForeignKey(MemoryStore, on_delete=models.CASCADE, related_name="extraction_jobs")
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="extraction_jobs")
    from_seq = models.PositiveIntegerField()
    to_seq = models.PositiveIntegerField()
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    trigger = models.CharField(max_length=20, choices=Trigger.choices)
    # The extractor that ran (or will run): "rules" or "llm", never "auto", which is resolved when the job is
    # scheduled; "rules" after a fallback.
    extractor = models.CharField(max_length=20)
    # Why the job ran the rules extractor instead of the model it was scheduled for (the model's last error).
    fallback_reason = models.TextField(blank=True, default="")
    attempts = models.PositiveSmallIntegerField(default=0)
    max_attempts = models.PositiveSmallIntegerField(default=3)
    error = models.TextField(blank=True, default="")
    added = models.PositiveIntegerField(default=0)
    updated = models.PositiveIntegerField(default=0)
    deleted = models.PositiveIntegerField(default=0)
    unchanged = models.PositiveIntegerField(default=0)
    run_after = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # A running job whose lease has expired belongs to a worker that died; another may take it over.
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    q_task_id = models.CharField(max_length=64, blank=True, default="")

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            # One open job per session: jobs of a session run one after another, in seq order.
            models.UniqueConstraint(
                fields=["session"],
                condition=models.Q(status__in=["queued", "running"]),
                name="one_open_extraction_job_per_session",
            ),
        ]
        indexes = [
            models.Index(fields=["store", "status", "-created_at"], name="job_store_status_created"),
            models.Index(fields=["status", "lease_expires_at"], name="job_status_lease"),
            # A flush reports the newest jobs of a session that reach past a seq: a bounded index scan,
            # however many jobs a long session has had.
            models.Index(fields=["session", "to_seq"], name="job_session_to_seq"),
            # A worker's next job (services._NEXT_QUEUED): the oldest queued one of an extractor, found among the
            # queued jobs only, however many jobs have ever run.
            models.Index(fields=["extractor", "created_at", "id"], condition=models.Q(status="queued"),
                         name="job_queued_by_extractor"),
        ]

    def __str__(self):
        # Names the session when it was read with the job (the admin selects it), without a query otherwise.
        session = self.session.external_id if ExtractionJob.session.is_cached(self) else self.session_id
        return f"Extraction job {str(self.pk)[:8]} of session {session} ({self.status})"
