import math
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.text import slugify

from apps.core.background import LeaseKeeper
from apps.core.errors import ApplicationError, ConflictError
from apps.core.fields import is_storable_json
from apps.tenancy.models import TENANT_LIMIT_FIELDS, ApiKey, IdempotencyRecord, Membership, Tenant
from apps.tenancy.selectors import api_key_hash

KEY_PREFIX = "mh_"


@dataclass(frozen=True)
class IssuedApiKey:
    api_key: ApiKey
    raw_key: str  # shown once, never stored


def tenant_create(*, name: str, slug: str | None = None) -> Tenant:
    """Create a tenant; the slug defaults to one derived from the name."""
    slug = slug or slugify(name)
    if not slug:
        raise ApplicationError("A tenant needs a name made of letters or digits.")
    if Tenant.objects.filter(slug=slug).exists():
        raise ApplicationError(f"Tenant {slug!r} already exists.", code="conflict", status_code=409)
    return Tenant.objects.create(name=name, slug=slug)


def tenant_update(*, tenant: Tenant, name: str) -> Tenant:
    """Rename a tenant; its slug is fixed because keys, stores and URLs refer to it."""
    if not name.strip():
        raise ApplicationError("A tenant needs a name.", code="validation_error", details={"name": ["Blank."]})
    if name != tenant.name:
        tenant.name = name
        tenant.save(update_fields=["name", "updated_at"])
    return tenant


def tenant_limits_set(*, tenant: Tenant, limits: dict[str, int | None]) -> Tenant:
    """Set some of a tenant's own limits (TENANT_LIMIT_FIELDS): a number, 0 for none, None for the server's default.
    Lowering a quota below what the tenant holds refuses new memories or stores; it removes nothing."""
    unknown = sorted(set(limits) - set(TENANT_LIMIT_FIELDS))
    if unknown:
        raise ApplicationError(f"Unknown limit(s): {', '.join(unknown)}.", code="validation_error")
    invalid = {name: ["Must be a whole number, 0 or more, or empty."] for name, value in limits.items()
               if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0)}
    if invalid:
        raise ApplicationError("Invalid limits.", code="validation_error", details=invalid)
    changed = [name for name, value in limits.items() if getattr(tenant, name) != value]
    for name in changed:
        setattr(tenant, name, limits[name])
    if changed:
        tenant.save(update_fields=[*changed, "updated_at"])
    return tenant


def membership_set(*, tenant: Tenant, user, role: str) -> Membership:
    """Give a staff user a role in a tenant (creating or changing the membership)."""
    if role not in Membership.Role.values:
        raise ApplicationError(f"Unknown role {role!r}.")
    membership, _ = Membership.objects.update_or_create(tenant=tenant, user=user, defaults={"role": role})
    return membership


def membership_remove(*, membership: Membership) -> None:
    """Take a staff user out of a tenant."""
    membership.delete()


def _normalise_scopes(scopes: list[str]) -> list[str]:
    unknown = sorted(set(scopes) - set(ApiKey.Scope.values))
    if unknown:
        raise ApplicationError(
            f"Unknown scope(s): {', '.join(unknown)}; use read, write or admin.", code="validation_error"
        )
    if not scopes:
        raise ApplicationError("An API key needs at least one scope.", code="validation_error")
    return sorted(set(scopes), key=lambda scope: ApiKey.SCOPE_RANK[scope])


@transaction.atomic
def api_key_issue(
    *, tenant: Tenant, name: str, scopes: list[str], store_names: list[str] | None = None, created_by=None
) -> IssuedApiKey:
    """Create an API key; the raw key is returned once and only its hash is kept."""
    public_part = secrets.token_hex(4)
    raw_key = f"{KEY_PREFIX}{public_part}_{secrets.token_urlsafe(24)}"
    api_key = ApiKey.objects.create(
        tenant=tenant,
        name=name,
        prefix=f"{KEY_PREFIX}{public_part}",
        key_hash=api_key_hash(raw_key),
        scopes=_normalise_scopes(scopes),
        store_names=sorted(set(store_names or [])),
        created_by=created_by,
    )
    return IssuedApiKey(api_key=api_key, raw_key=raw_key)


def api_key_update(*, api_key: ApiKey, name: str | None = None, store_names: list[str] | None = None) -> ApiKey:
    """Rename a key or change the stores it may use; its secret and scopes never change."""
    updated = []
    if name is not None and name != api_key.name:
        if not name.strip():
            raise ApplicationError("An API key needs a name.", code="validation_error", details={"name": ["Blank."]})
        api_key.name = name
        updated.append("name")
    if store_names is not None and sorted(set(store_names)) != api_key.store_names:
        api_key.store_names = sorted(set(store_names))
        updated.append("store_names")
    if updated:
        api_key.save(update_fields=[*updated, "updated_at"])
    return api_key


def api_key_revoke(*, api_key: ApiKey) -> ApiKey:
    """Revoke a key; requests with it fail from now on. Revoking twice is harmless."""
    if api_key.revoked_at is None:
        api_key.revoked_at = timezone.now()
        api_key.save(update_fields=["revoked_at", "updated_at"])
    return api_key


# --- Idempotency keys -------------------------------------------------------------------------------


@dataclass(frozen=True)
class IdempotencyClaim:
    """What to do with a request that carries an Idempotency-Key: replay a stored response, or run it
    (then `record` is the in-progress row to complete)."""

    record: IdempotencyRecord | None = None
    replay_status: int | None = None
    replay_body: object = None


class IdempotencyInProgress(ConflictError):
    """The key's first request is still running (its lease is alive); the answer says when to ask again."""

    def __init__(self, message: str, *, retry_after_seconds: int):
        super().__init__(message, code="idempotency_in_progress")
        self.retry_after_seconds = retry_after_seconds


def _idempotency_lease() -> timedelta:
    return timedelta(seconds=settings.IDEMPOTENCY_IN_PROGRESS_SECONDS)


def _renew_idempotency_leases(held: dict) -> None:
    IdempotencyRecord.objects.filter(pk__in=list(held), status_code__isnull=True).update(
        lease_expires_at=timezone.now() + _idempotency_lease()
    )


# A claim's lease is renewed while its request runs in this process, so a request may take as long as it needs, and
# a retry of one that died with its process (killed, redeployed) runs within IDEMPOTENCY_IN_PROGRESS_SECONDS.
_claim_leases = LeaseKeeper(
    "idempotency leases", period=lambda: settings.IDEMPOTENCY_IN_PROGRESS_SECONDS / 3, renew=_renew_idempotency_leases
)


def idempotency_claim(*, api_key: ApiKey, key: str, request_hash: str) -> IdempotencyClaim:
    """Claim a key for this request, or find the response of the earlier request that used it. A claim is held
    until idempotency_complete, which every claim must reach."""
    for _ in range(2):
        now = timezone.now()
        try:
            with transaction.atomic():
                record = IdempotencyRecord.objects.create(api_key=api_key, key=key, request_hash=request_hash,
                                                          lease_expires_at=now + _idempotency_lease())
            _claim_leases.hold(record.pk)
            return IdempotencyClaim(record=record)
        except IntegrityError:
            pass
        existing = IdempotencyRecord.objects.filter(api_key=api_key, key=key).first()
        if existing is None:
            continue  # purged or abandoned between the two statements: claim again
        if existing.request_hash != request_hash:
            raise ConflictError(
                "This Idempotency-Key was used for a different request; use a new key for a new request.",
                code="idempotency_key_reused",
            )
        if existing.status_code is not None:
            return IdempotencyClaim(replay_status=existing.status_code, replay_body=existing.response_body)
        if existing.lease_expires_at is not None and existing.lease_expires_at > now:
            raise IdempotencyInProgress(
                "A request with this Idempotency-Key is still in progress; retry later.",
                retry_after_seconds=max(1, math.ceil((existing.lease_expires_at - now).total_seconds())),
            )
        # Its lease ran out: the request that claimed it died mid-way (its process was killed). This one takes
        # over, unless the lease was renewed since the read.
        IdempotencyRecord.objects.filter(
            pk=existing.pk, status_code__isnull=True, lease_expires_at=existing.lease_expires_at
        ).delete()
    raise IdempotencyInProgress("Could not claim the Idempotency-Key; retry.", retry_after_seconds=1)


def idempotency_complete(*, record: IdempotencyRecord, status_code: int, body, user_ids=(), session_ids=()) -> None:
    """Keep the response for retries, with the users and sessions it concerns (see idempotency_forget).
    Not kept, so that a retry runs the request again: a server error, and an answer PostgreSQL cannot
    store (a 400 quoting a NUL of the request: such a request wrote nothing)."""
    _claim_leases.release(record.pk)  # first: if the database is down now, the lease must still run out
    if status_code >= 500 or not is_storable_json(body):
        IdempotencyRecord.objects.filter(pk=record.pk).delete()
        return
    IdempotencyRecord.objects.filter(pk=record.pk).update(
        status_code=status_code,
        response_body=body,
        completed_at=timezone.now(),
        lease_expires_at=None,
        user_ids=sorted(user_ids),
        session_ids=sorted(session_ids),
    )


def idempotency_forget(*, tenant: Tenant, user_id: str, session_ids: list[str]) -> int:
    """Delete the kept responses of a tenant's requests that concern a user: those naming the user, or one
    of the user's sessions (a working-memory value or a checkpoint says nothing of its user). For erasure.

    A record does not say which store it wrote to, so the match is tenant-wide: the same user or session
    id in another store of the tenant loses its kept responses too, and a late retry of one runs again.
    Responses kept before the users and sessions of a response were recorded (user_ids null but complete)
    are all forgotten: any of them may hold the user's data, and they expire within a day anyway. A
    request still in progress is left alone: it records whom it concerns only when it completes, and a
    write racing an erase can land after it anyway (a client that keeps writing keeps the user alive).
    """
    concerns_user = Q(user_ids__contains=[user_id]) | Q(session_ids__overlap=session_ids)
    unknown = Q(user_ids__isnull=True, status_code__isnull=False)
    deleted, _ = IdempotencyRecord.objects.filter(concerns_user | unknown, api_key__tenant=tenant).delete()
    return deleted


def idempotency_purge_expired() -> int:
    before = timezone.now() - timedelta(seconds=settings.IDEMPOTENCY_TTL_SECONDS)
    deleted, _ = IdempotencyRecord.objects.filter(created_at__lt=before).delete()
    return deleted
