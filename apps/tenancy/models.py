from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models

from apps.core.models import BaseModel


def _limit_field(help_text: str) -> models.PositiveIntegerField:
    return models.PositiveIntegerField(
        null=True, blank=True, help_text=f"{help_text} Blank: the server's default; 0: no limit."
    )


class Tenant(BaseModel):
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=100, unique=True)
    # Limits of this tenant; null takes the server's default (settings), 0 lifts the limit (apps/tenancy/limits.py).
    reads_per_minute = _limit_field("Reads per minute and API key.")
    writes_per_minute = _limit_field("Writes per minute and API key.")
    searches_per_minute = _limit_field("Searches and context requests per minute and API key.")
    flushes_per_minute = _limit_field("Session flushes and terminations per minute and API key.")
    max_memories = _limit_field("Memories in all the tenant's stores, whatever their status.")
    max_stores = _limit_field("Stores.")
    max_request_bytes = _limit_field("Size of one API request body, in bytes (at most the server's own limit).")

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


TENANT_LIMIT_FIELDS = (
    "reads_per_minute", "writes_per_minute", "searches_per_minute", "flushes_per_minute",
    "max_memories", "max_stores", "max_request_bytes",
)  # fmt: skip


class Membership(BaseModel):
    class Role(models.TextChoices):
        ADMIN = "admin", "Admin"
        REVIEWER = "reviewer", "Reviewer"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.REVIEWER)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "tenant"], name="unique_membership")]

    def __str__(self):
        return f"{self.user} in {self.tenant} ({self.role})"


class ApiKeyQuerySet(models.QuerySet):
    def for_tenant(self, tenant):
        return self.filter(tenant=tenant)

    def active(self):
        return self.filter(revoked_at__isnull=True)


class ApiKey(BaseModel):
    class Scope(models.TextChoices):
        READ = "read", "Read"
        WRITE = "write", "Write"
        ADMIN = "admin", "Admin"

    # Scopes are ordered: a key may do what its highest scope or any lower one allows.
    SCOPE_RANK = {Scope.READ: 1, Scope.WRITE: 2, Scope.ADMIN: 3}

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=200)
    prefix = models.CharField(max_length=16, unique=True, help_text="Visible start of the key, for recognising it.")
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    scopes = ArrayField(models.CharField(max_length=10, choices=Scope.choices), default=list)
    store_names = ArrayField(
        models.CharField(max_length=100),
        default=list,
        blank=True,
        help_text="Limit the key to these stores (names); empty means every store of the tenant.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = ApiKeyQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "API key"
        verbose_name_plural = "API keys"

    def __str__(self):
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None

    def has_scope(self, scope: str) -> bool:
        needed = self.SCOPE_RANK[scope]
        return any(self.SCOPE_RANK.get(granted, 0) >= needed for granted in self.scopes)

    def allows_store(self, store_name: str) -> bool:
        return not self.store_names or store_name in self.store_names


class IdempotencyRecord(models.Model):
    """A write sent with an `Idempotency-Key` header, and its response, kept so a retry of the same
    request gets the same response instead of doing the write again."""

    id = models.BigAutoField(primary_key=True)
    api_key = models.ForeignKey(ApiKey, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    request_hash = models.CharField(max_length=64, help_text="sha256 of method, path and body.")
    status_code = models.PositiveSmallIntegerField(null=True, blank=True, help_text="Null while in progress.")
    response_body = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    # While in progress: renewed as long as the request runs; once past, its process died and a retry takes over.
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    # Whose data the request and its response hold, so erasing a user finds the responses to forget;
    # set on completion. Null: not known (in progress, or stored before these columns existed).
    user_ids = ArrayField(models.CharField(max_length=255), null=True, blank=True)
    session_ids = ArrayField(models.CharField(max_length=255), null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["api_key", "key"], name="unique_idempotency_key")]
        indexes = [
            GinIndex(fields=["user_ids"], name="idempotency_user_ids"),
            GinIndex(fields=["session_ids"], name="idempotency_session_ids"),
        ]

    def __str__(self):
        return f"{self.key} ({self.status_code or 'in progress'})"
