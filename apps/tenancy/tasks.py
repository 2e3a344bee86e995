"""django-q2 tasks of the tenancy app: thin wrappers over services."""

from apps.tenancy import services


def purge_idempotency_records() -> int:
    """Hourly (schedule created by a migration): forget responses kept for Idempotency-Key retries."""
    return services.idempotency_purge_expired()
