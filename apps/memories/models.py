from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex, OpClass
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.core.serializers.json import DjangoJSONEncoder
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models.functions import Cast
from django.utils import timezone
from pgvector.django import HnswIndex, VectorField

from apps.core.embeddings import SUPPORTED_DIMENSIONS, Embedder, get_embedder
from apps.core.models import BaseModel
from apps.tenancy.models import Tenant

FULL_TEXT_CONFIG = "english"


class MemoryStoreQuerySet(models.QuerySet):
    def for_tenant(self, tenant):
        return self.filter(tenant=tenant)


class MemoryStore(BaseModel):
    class ReviewPolicy(models.TextChoices):
        AUTO = "auto", "Publish extracted memories at once"
        REVIEW = "review", "Hold extracted memories for review"

    class EmbeddingProvider(models.TextChoices):
        HASH = "hash", "Feature hashing (offline, deterministic)"
        LOCAL = "local", "all-MiniLM-L6-v2 on this machine"
        OPENAI = "openai", "OpenAI-compatible embeddings API"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="stores")
    name = models.SlugField(max_length=100)
    description = models.TextField(blank=True, default="")
    # Fixed at creation: vectors of different models or dimensions cannot be compared.
    embedding_provider = models.CharField(max_length=20, choices=EmbeddingProvider.choices)
    embedding_model = models.CharField(max_length=200)
    embedding_dimension = models.PositiveSmallIntegerField()
    review_policy = models.CharField(max_length=10, choices=ReviewPolicy.choices, default=ReviewPolicy.AUTO)
    search_defaults = models.JSONField(default=dict, blank=True)
    max_content_length = models.PositiveIntegerField(default=8192)
    # The store's overrides, validated by apps.memories.store_settings; missing keys take the defaults there.
    extraction_config = models.JSONField(default=dict, blank=True)
    # Overrides of the working-state limits, validated by apps.memories.store_settings.
    working_memory_config = models.JSONField(default=dict, blank=True)

    objects = MemoryStoreQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["tenant", "name"], name="unique_store_name_per_tenant")]

    def __str__(self):
        return f"{self.tenant.slug}/{self.name}"

    @property
    def embedder(self) -> Embedder:
        """The store's embedder (built once per process and shared)."""
        return get_embedder(
            provider=self.embedding_provider, model=self.embedding_model, dimension=int(self.embedding_dimension)
        )


class MemoryQuerySet(models.QuerySet):
    def for_tenant(self, tenant):
        return self.filter(store__tenant=tenant)

    def not_expired(self, now=None):
        now = now or timezone.now()
        return self.filter(models.Q(expires_at__isnull=True) | models.Q(expires_at__gt=now))


class Memory(BaseModel):
    class Type(models.TextChoices):
        FACT = "fact", "Fact"
        PREFERENCE = "preference", "Preference"
        EPISODE = "episode", "Episode"
        PROCEDURE = "procedure", "Procedure"

    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        PENDING_REVIEW = "pending_review", "Pending review"
        REJECTED = "rejected", "Rejected"
        SUPERSEDED = "superseded", "Superseded"
        DELETED = "deleted", "Deleted"

    class Source(models.TextChoices):
        API = "api", "API"
        EXTRACTION = "extraction", "Extraction"
        ADMIN = "admin", "Admin"
        IMPORT = "import", "Import"

    # Statuses under which a memory counts as known; duplicates are detected among these.
    LIVE_STATUSES = (Status.ACTIVE, Status.PENDING_REVIEW)

    store = models.ForeignKey(MemoryStore, on_delete=models.CASCADE, related_name="memories")
    user_id = models.CharField(max_length=255)
    agent_id = models.CharField(max_length=255, blank=True, default="")
    session_id = models.CharField(max_length=255, blank=True, default="")
    content = models.TextField()
    memory_type = models.CharField(max_length=20, choices=Type.choices, default=Type.FACT)
    metadata = models.JSONField(default=dict, blank=True)
    tags = ArrayField(models.CharField(max_length=64), default=list, blank=True)
    importance = models.FloatField(default=0.5, validators=[MinValueValidator(0.0), MaxValueValidator(1.0)])
    confidence = models.FloatField(default=1.0, validators=[MinValueValidator(0.0), MaxValueValidator(1.0)])
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.ACTIVE)
    source = models.CharField(max_length=20, choices=Source.choices, default=Source.API)
    provenance = models.JSONField(default=dict, blank=True)
    valid_from = models.DateTimeField(default=timezone.now)
    valid_to = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="supersedes"
    )
    content_hash = models.CharField(max_length=64)
    # Untyped `vector`: stores use embedders of different dimensions. Each supported dimension
    # has a partial HNSW index over `embedding::vector(dim)`, selected by `embedding_dimension`.
    embedding = VectorField(null=True, blank=True)
    embedding_dimension = models.PositiveSmallIntegerField()
    search_vector = models.GeneratedField(
        expression=SearchVector("content", config=FULL_TEXT_CONFIG),
        output_field=SearchVectorField(),
        db_persist=True,
    )

    objects = MemoryQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "memories"
        indexes = [
            models.Index(fields=["store", "user_id", "status"], name="memory_store_user_status"),
            models.Index(fields=["store", "-created_at"], name="memory_store_created"),
            models.Index(fields=["store", "session_id"], name="memory_store_session"),
            GinIndex(fields=["search_vector"], name="memory_search_vector"),
            GinIndex(fields=["metadata"], opclasses=["jsonb_path_ops"], name="memory_metadata"),
            GinIndex(fields=["tags"], name="memory_tags"),
            *[
                HnswIndex(
                    OpClass(Cast("embedding", VectorField(dimensions=dimension)), name="vector_cosine_ops"),
                    name=f"memory_embedding_hnsw_{dimension}",
                    condition=models.Q(embedding_dimension=dimension),
                    m=16,
                    ef_construction=64,
                )
                for dimension in SUPPORTED_DIMENSIONS
            ],
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["store", "user_id", "content_hash"],
                condition=models.Q(status__in=["active", "pending_review"]),
                name="unique_live_memory_content",
            ),
            models.CheckConstraint(
                condition=models.Q(importance__gte=0, importance__lte=1), name="memory_importance_0_1"
            ),
            models.CheckConstraint(
                condition=models.Q(confidence__gte=0, confidence__lte=1), name="memory_confidence_0_1"
            ),
            models.CheckConstraint(
                condition=models.Q(status__in=["active", "pending_review", "rejected", "superseded", "deleted"]),
                name="memory_status_valid",
            ),
        ]

    def __str__(self):
        return self.content[:80]

    @property
    def is_expired(self) -> bool:
        return self.expires_at is not None and self.expires_at <= timezone.now()


class MemoryRevision(models.Model):
    """Append-only history of a memory; a database trigger refuses UPDATEs."""

    class Action(models.TextChoices):
        CREATE = "create", "Created"
        UPDATE = "update", "Edited"
        STATUS_CHANGE = "status_change", "Status changed"
        SUPERSEDE = "supersede", "Superseded"
        DELETE = "delete", "Deleted"
        RESTORE = "restore", "Restored"

    class ActorType(models.TextChoices):
        API_KEY = "api_key", "API key"
        USER = "user", "Staff user"
        SYSTEM = "system", "System"

    id = models.BigAutoField(primary_key=True)
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="revisions")
    store = models.ForeignKey(MemoryStore, on_delete=models.CASCADE, related_name="+")
    user_id = models.CharField(max_length=255)
    action = models.CharField(max_length=20, choices=Action.choices)
    changed_fields = ArrayField(models.CharField(max_length=50), default=list, blank=True)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    actor_type = models.CharField(max_length=10, choices=ActorType.choices)
    actor_id = models.CharField(max_length=64, blank=True, default="")
    actor_label = models.CharField(max_length=255, blank=True, default="")
    reason = models.TextField(blank=True, default="")
    context = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["memory", "id"]
        indexes = [models.Index(fields=["store", "user_id"], name="revision_store_user")]

    def __str__(self):
        return f"{self.action} {self.memory_id} by {self.actor_label or self.actor_type}"


class Webhook(BaseModel):
    """An address outside memoryhub told of a store's events (apps.memories.events), by signed POSTs."""

    store = models.ForeignKey(MemoryStore, on_delete=models.CASCADE, related_name="webhooks")
    url = models.CharField(max_length=2000)
    description = models.TextField(blank=True, default="")
    # The event types it receives; empty: every type, including types added later.
    event_types = ArrayField(models.CharField(max_length=64), default=list, blank=True)
    # Kept in plaintext, unlike API keys: each delivery is signed with it (HMAC needs the secret itself).
    secret = models.CharField(max_length=100)
    is_active = models.BooleanField(default=True)
    disabled_at = models.DateTimeField(null=True, blank=True)
    disabled_reason = models.TextField(blank=True, default="")
    # Deliveries that failed for good since the last success; at WEBHOOK_DISABLE_AFTER_FAILURES it is disabled.
    consecutive_failures = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["created_at"]

    def __str__(self):
        return self.url

    def wants(self, event_type: str) -> bool:
        return not self.event_types or event_type in self.event_types


class WebhookDelivery(BaseModel):
    """One event sent to one webhook: the payload as sent, and how its attempts went (the delivery log)."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"

    # No index of its own: webhook_delivery_log below starts with it.
    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries", db_index=False)
    event_id = models.CharField(max_length=64)
    event_type = models.CharField(max_length=64)
    # Whose data the payload holds (a memory's or session's user), so that erasing the user deletes it.
    user_id = models.CharField(max_length=255, blank=True, default="")
    # The encoder: an event's data may carry times and ids as Python objects; they are sent as strings.
    payload = models.JSONField(encoder=DjangoJSONEncoder)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    attempts = models.PositiveSmallIntegerField(default=0)
    # While queued: when the next attempt is due. An attempt under way pushes it out by its lease, so a
    # duplicated task finds nothing due, and the sweep finds a delivery whose worker died once it passes.
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True, default="")
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "webhook deliveries"
        indexes = [
            models.Index(fields=["webhook", "-created_at"], name="webhook_delivery_log"),
            models.Index(fields=["webhook", "user_id"], name="webhook_delivery_user"),
            # The sweep looks for queued deliveries whose task was lost: a small index of the open ones.
            models.Index(fields=["next_attempt_at"], condition=models.Q(status="queued"), name="webhook_delivery_due"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=["queued", "succeeded", "failed"]), name="webhook_delivery_status_valid"
            ),
        ]

    def __str__(self):
        return f"{self.event_type} to {self.webhook_id} ({self.status})"
