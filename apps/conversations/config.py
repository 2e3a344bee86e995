"""Per-store working-state limits, stored as overrides in MemoryStore.working_memory_config.

Only the keys a store sets are stored; the others follow the server-wide defaults in settings, so
changing a default changes every store that did not choose otherwise.
"""

from dataclasses import asdict, dataclass

from django.conf import settings

from apps.core.errors import ApplicationError

# name → (settings default, lowest, highest)
_LIMITS = {
    "default_ttl_seconds": ("WORKING_MEMORY_DEFAULT_TTL_SECONDS", 0, 365 * 24 * 3600),
    "max_items": ("WORKING_MEMORY_MAX_ITEMS", 1, 100_000),
    "max_value_bytes": ("WORKING_MEMORY_MAX_VALUE_BYTES", 16, 4 * 1024 * 1024),
    "scratchpad_max_entries": ("SCRATCHPAD_MAX_ENTRIES", 1, 100_000),
    "checkpoint_ttl_seconds": ("CHECKPOINT_TTL_SECONDS", 0, 365 * 24 * 3600),
    "max_checkpoints": ("CHECKPOINT_MAX_PER_SESSION", 1, 10_000),
}


@dataclass(frozen=True)
class WorkingStateSettings:
    default_ttl_seconds: int  # 0: items without a ttl never expire
    max_items: int
    max_value_bytes: int
    scratchpad_max_entries: int
    checkpoint_ttl_seconds: int  # 0: checkpoints are kept until deleted
    max_checkpoints: int

    def as_dict(self) -> dict:
        return asdict(self)


def _invalid(field: str, message: str) -> ApplicationError:
    return ApplicationError(
        f"working_memory_config.{field}: {message}",
        code="validation_error",
        details={"working_memory_config": {field: [message]}},
    )


def working_state_overrides_validate(raw: dict | None) -> dict:
    """Check a store's overrides (a partial dict); returns them unchanged or raises a 400-worthy error."""
    raw = raw or {}
    if not isinstance(raw, dict):
        raise _invalid("", "must be a JSON object")
    for key, value in raw.items():
        if key not in _LIMITS:
            raise _invalid(key, f"unknown setting; allowed: {', '.join(sorted(_LIMITS))}")
        _, low, high = _LIMITS[key]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise _invalid(key, f"must be an integer from {low} to {high}")
    return dict(raw)


def working_state_settings_for(store) -> WorkingStateSettings:
    overrides = store.working_memory_config or {}
    values = {name: overrides.get(name, getattr(settings, setting)) for name, (setting, _, _) in _LIMITS.items()}
    return WorkingStateSettings(**values)
