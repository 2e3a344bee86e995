import hashlib
from datetime import timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone

from apps.core.sql import RowLoader
from apps.tenancy.models import ApiKey, Tenant


def api_key_hash(raw_key: str) -> str:
    # Keys are 190+ bits of randomness, so a fast hash is safe and keeps auth off the hot path.
    return hashlib.sha256(raw_key.encode("utf-8")).hexdigest()


_API_KEY_ROWS = RowLoader(ApiKey)
_TENANT_ROWS = RowLoader(Tenant)
# The key and its tenant, as select_related would read them: written out once (every API call runs it).
_API_KEY_SQL = (
    f"SELECT {_API_KEY_ROWS.select_list('k')}, {_TENANT_ROWS.select_list('t')} "
    f'FROM "{ApiKey._meta.db_table}" k JOIN "{Tenant._meta.db_table}" t ON t.id = k.tenant_id WHERE k.key_hash = %s'
)


def api_key_authenticate(*, raw_key: str) -> ApiKey | None:
    """The active key matching `raw_key`, with `last_used_at` refreshed at most once a minute."""
    with connection.cursor() as cursor:
        cursor.execute(_API_KEY_SQL, [api_key_hash(raw_key)])
        row = cursor.fetchone()
    if row is None:
        return None
    api_key = _API_KEY_ROWS.load(row[: len(_API_KEY_ROWS)])
    api_key.tenant = _TENANT_ROWS.load(row[len(_API_KEY_ROWS):])
    if api_key.is_revoked:
        return None
    now = timezone.now()
    touch_after = timedelta(seconds=settings.MEMORYHUB_API_KEY_TOUCH_SECONDS)
    if api_key.last_used_at is None or now - api_key.last_used_at >= touch_after:
        ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
        api_key.last_used_at = now
    return api_key


def tenants_for_user(user, *, role: str | None = None):
    """Tenants a staff user may see in the admin: all for superusers, else their memberships (of `role`)."""
    if not (user.is_authenticated and user.is_active and user.is_staff):
        return Tenant.objects.none()
    if user.is_superuser:
        return Tenant.objects.all()
    membership = {"memberships__user": user}
    if role is not None:
        # One filter() call: user and role must match on the same membership row.
        membership["memberships__role"] = role
    return Tenant.objects.filter(**membership)
