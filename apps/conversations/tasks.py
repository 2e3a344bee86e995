"""django-q2 tasks of the conversations app: thin wrappers over services."""

from apps.conversations import services


def purge_expired() -> dict:
    """Minutely (schedule created by a migration): delete expired working-memory items and checkpoints."""
    return {
        "working_memory_items": services.working_memory_purge_expired(),
        "checkpoints": services.checkpoint_purge_expired(),
    }
