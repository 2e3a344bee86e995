"""Per-store extraction settings: the store's overrides (MemoryStore.extraction_config) over the defaults
here. Only the keys a store sets are stored, so a changed default reaches every store that did not set it."""

from dataclasses import asdict, dataclass

from apps.core.errors import ApplicationError

EXTRACTORS = ("rules", "llm")


@dataclass(frozen=True)
class ExtractionSettings:
    enabled: bool = True
    extractor: str = "rules"
    every_n_turns: int = 1  # extract after this many new user turns
    idle_seconds: int = 300  # extract a session quiet for this long (0 = never)
    on_session_end: bool = True

    def as_dict(self) -> dict:
        return asdict(self)


def _invalid(field: str, message: str) -> ApplicationError:
    return ApplicationError(
        f"extraction_config.{field}: {message}", code="validation_error", details={"extraction_config": {field: [message]}}
    )


def extraction_settings_validate(raw: dict | None) -> ExtractionSettings:
    """Check an extraction config (partial configs take defaults); raises a 400-worthy error."""
    raw = raw or {}
    if not isinstance(raw, dict):
        raise _invalid("", "must be a JSON object")
    known = set(ExtractionSettings.__dataclass_fields__)
    for key in raw:
        if key not in known:
            raise _invalid(key, f"unknown setting; allowed: {', '.join(sorted(known))}")
    values = {**ExtractionSettings().as_dict(), **raw}
    for name in ("enabled", "on_session_end"):
        if not isinstance(values[name], bool):
            raise _invalid(name, "must be true or false")
    if values["extractor"] not in EXTRACTORS:
        raise _invalid("extractor", f"must be one of {', '.join(EXTRACTORS)}")
    for name, low, high in (("every_n_turns", 1, 1000), ("idle_seconds", 0, 7 * 24 * 3600)):
        value = values[name]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise _invalid(name, f"must be an integer from {low} to {high}")
    return ExtractionSettings(**values)


def extraction_overrides_validate(raw: dict | None) -> dict:
    """Check a store's overrides; returns them as given (without the defaults) or raises a 400-worthy error."""
    extraction_settings_validate(raw)
    return dict(raw or {})


def extraction_settings_for(store) -> ExtractionSettings:
    return extraction_settings_validate(store.extraction_config)
