import hashlib
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from apps.tenancy.models import ApiKey, Tenant


def api_key_hash(raw_key: str) -> str:
    # Keys are 190+ bits of randomness, so a fast hash is safe and keeps auth off the hot path.
    return hashlib.sha256(raw_key.encode("utf-8")).hexdigest()


def api_key_authenticate(*, raw_key: str) -> ApiKey | None:
    """The active key matching `raw_key`, with `last_used_at` refreshed at most once a minute."""
    try:
        api_key = ApiKey.objects.select_related("tenant").get(key_hash=api_key_hash(raw_key))
    except ApiKey.DoesNotExist:
        return None
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
