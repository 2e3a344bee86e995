"""A store's settings: what it overrides (MemoryStore.extraction_config, .working_memory_config) over
the server defaults, checked against one table of limits.

Only the keys a store sets are stored, so changing a server default changes every store that did not
choose otherwise. The apps that act on the settings (extraction, working state) read the effective
values through `extraction_settings_for` and `working_state_settings_for`.
"""

from dataclasses import asdict, dataclass

from django.conf import settings

from apps.core.errors import ApplicationError
from apps.memories.search import SEARCH_MODES

# auto: llm when this server has a model configured, rules otherwise (resolve_extractor).
EXTRACTORS = ("auto", "rules", "llm")


@dataclass(frozen=True)
class Limit:
    """One setting: its type, its range or choices, and its default (a value, or a Django setting's name)."""

    kind: type  # bool, int, float or str
    default: object = None
    setting: str = ""  # the Django setting holding the server-wide default, when there is one
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()

    def server_default(self):
        return getattr(settings, self.setting) if self.setting else self.default

    def problem(self, value) -> str | None:
        """Why `value` is not acceptable, or None."""
        if self.kind is bool:
            return None if isinstance(value, bool) else "must be true or false"
        if self.choices:
            return None if value in self.choices else f"must be one of {', '.join(self.choices)}"
        numeric = (int, float) if self.kind is float else (int,)
        kind_name = "a number" if self.kind is float else "an integer"
        if isinstance(value, bool) or not isinstance(value, numeric) or not self.low <= value <= self.high:
            return f"must be {kind_name} from {self.low:g} to {self.high:g}"
        return None


DAY = 24 * 3600

LIMITS: dict[str, dict[str, Limit]] = {
    "extraction_config": {
        "enabled": Limit(bool, default=True),
        "extractor": Limit(str, setting="EXTRACTION_DEFAULT_EXTRACTOR", choices=EXTRACTORS),
        "every_n_turns": Limit(int, default=1, low=1, high=1000),  # extract after this many new user turns
        "idle_seconds": Limit(int, default=300, low=0, high=7 * DAY),  # extract a quiet session (0 = never)
        "on_session_end": Limit(bool, default=True),
        # A job whose model stays unreachable or keeps answering malformed output runs the rules extractor on
        # its last attempt instead of failing (the job records it).
        "fallback_to_rules": Limit(bool, setting="EXTRACTION_FALLBACK_TO_RULES"),
    },
    "working_memory_config": {
        # 0: items without a ttl never expire
        "default_ttl_seconds": Limit(int, setting="WORKING_MEMORY_DEFAULT_TTL_SECONDS", low=0, high=365 * DAY),
        "max_items": Limit(int, setting="WORKING_MEMORY_MAX_ITEMS", low=1, high=100_000),
        "max_value_bytes": Limit(int, setting="WORKING_MEMORY_MAX_VALUE_BYTES", low=16, high=4 * 1024 * 1024),
        "scratchpad_max_entries": Limit(int, setting="SCRATCHPAD_MAX_ENTRIES", low=1, high=100_000),
        # 0: checkpoints are kept until deleted
        "checkpoint_ttl_seconds": Limit(int, setting="CHECKPOINT_TTL_SECONDS", low=0, high=365 * DAY),
        "max_checkpoints": Limit(int, setting="CHECKPOINT_MAX_PER_SESSION", low=1, high=10_000),
    },
    "search_defaults": {
        "mode": Limit(str, default="hybrid", choices=SEARCH_MODES),
        "limit": Limit(int, default=10, low=1, high=100),
        "min_score": Limit(float, default=None, low=-1, high=1),  # None: every hit, however weak
        # Ranking (apps/memories/search.py): reciprocal rank fusion's constant, each signal's weight in it,
        # and how many memories each signal contributes to the fusion.
        "fusion_k": Limit(int, setting="SEARCH_FUSION_K", low=1, high=1000),
        "vector_weight": Limit(float, setting="SEARCH_VECTOR_WEIGHT", low=0, high=10),
        "keyword_weight": Limit(float, setting="SEARCH_KEYWORD_WEIGHT", low=0, high=10),
        "candidate_depth": Limit(int, setting="SEARCH_CANDIDATE_DEPTH", low=10, high=1000),
    },
}


def _invalid(group: str, name: str, message: str) -> ApplicationError:
    where = f"{group}.{name}" if name else group
    return ApplicationError(f"{where}: {message}", code="validation_error", details={group: {name: [message]}})


def store_settings_validate(group: str, raw: dict | None, *, chosen: set[str] | None = None) -> dict:
    """Check a store's overrides for one group of settings; returns them as given or raises a 400-worthy error.

    `chosen` names the settings the caller is setting now (default: all of `raw`): an extractor must be
    ready to be chosen, but a store that chose one earlier keeps it if the server's configuration changed.
    """
    raw = raw or {}
    if not isinstance(raw, dict):
        raise _invalid(group, "", "must be a JSON object")
    limits = LIMITS[group]
    for name, value in raw.items():
        if name not in limits:
            raise _invalid(group, name, f"unknown setting; allowed: {', '.join(sorted(limits))}")
        problem = limits[name].problem(value)
        if problem:
            raise _invalid(group, name, problem)
    if group == "extraction_config" and "extractor" in raw and "extractor" in (raw.keys() if chosen is None else chosen):
        problem = extractor_problem(raw["extractor"])
        if problem:
            raise _invalid(group, "extractor", problem)
    if group == "search_defaults":
        weights = [raw.get(name, limits[name].server_default()) for name in ("vector_weight", "keyword_weight")]
        if sum(weights) <= 0:
            raise _invalid(group, "vector_weight", "vector_weight and keyword_weight cannot both be 0")
    return dict(raw)


def llm_configured() -> bool:
    """This server has a model for the llm extractor."""
    return bool(settings.LLM_API_KEY or settings.LLM_BASE_URL)


def resolve_extractor(extractor: str) -> str:
    """The extractor a job of a store that chose `extractor` runs: auto is llm when a model is configured."""
    if extractor == "auto":
        return "llm" if llm_configured() else "rules"
    return extractor


def extractor_problem(extractor: str) -> str | None:
    """Why `extractor` cannot run on this server, or None when it can (auto always can)."""
    if extractor == "llm" and not llm_configured():
        return ("the llm extractor needs a model and none is configured: set LLM_API_KEY (with LLM_PROVIDER "
                "and LLM_MODEL as needed), or LLM_BASE_URL for an OpenAI-compatible server that needs no key, "
                "and restart memoryhub")
    return None


def effective_settings(group: str, overrides: dict | None) -> dict:
    """The store's overrides over the server defaults, every setting of the group."""
    overrides = overrides or {}
    return {name: overrides.get(name, limit.server_default()) for name, limit in LIMITS[group].items()}


@dataclass(frozen=True)
class ExtractionSettings:
    enabled: bool
    extractor: str
    every_n_turns: int
    idle_seconds: int
    on_session_end: bool
    fallback_to_rules: bool

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class WorkingStateSettings:
    default_ttl_seconds: int
    max_items: int
    max_value_bytes: int
    scratchpad_max_entries: int
    checkpoint_ttl_seconds: int
    max_checkpoints: int

    def as_dict(self) -> dict:
        return asdict(self)


def extraction_settings_for(store) -> ExtractionSettings:
    return ExtractionSettings(**effective_settings("extraction_config", store.extraction_config))


@dataclass(frozen=True)
class SearchSettings:
    mode: str
    limit: int
    min_score: float | None
    fusion_k: int
    vector_weight: float
    keyword_weight: float
    candidate_depth: int


def search_settings_for(store) -> SearchSettings:
    """What a search of the store uses for what it does not say: the store's search_defaults over ours."""
    return SearchSettings(**effective_settings("search_defaults", store.search_defaults))


def working_state_settings_for(store) -> WorkingStateSettings:
    return WorkingStateSettings(**effective_settings("working_memory_config", store.working_memory_config))
