"""Typed results of the memoryhub API.

Each is a frozen dataclass built by `from_json` from the server's JSON. Fields the server leaves out get
their defaults and fields this client does not know are kept: `raw` is the whole JSON object as received,
so a newer server never breaks an older client.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from typing import Any, ClassVar, Generic, TypeVar
from urllib.parse import parse_qs, urlsplit

T = TypeVar("T")
M = TypeVar("M", bound="Model")


def parse_datetime(value: Any) -> datetime | None:
    """An ISO 8601 time from the server; None (or anything unreadable, which stays in `raw`) is None."""
    if isinstance(value, datetime):
        return value
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            return None
    return None


def _raw() -> Any:
    return field(default_factory=dict, repr=False, compare=False)


class Model:
    """Base of the result types: `from_json` fills the dataclass fields, converting those in `_parsers`."""

    _parsers: ClassVar[dict[str, Callable[[Any], Any]]] = {}

    @classmethod
    def from_json(cls: type[M], data: Any) -> M:
        if not isinstance(data, dict):
            raise TypeError(f"{cls.__name__}.from_json expects a JSON object, got {type(data).__name__}")
        values: dict[str, Any] = {}
        for spec in fields(cls):  # type: ignore[arg-type]
            if spec.name == "raw" or spec.name not in data:
                continue  # the default applies
            value = data[spec.name]
            parser = cls._parsers.get(spec.name)
            values[spec.name] = parser(value) if parser is not None and value is not None else value
        return cls(**values, raw=dict(data))  # type: ignore[call-arg]

    def to_dict(self) -> dict[str, Any]:
        """The JSON object this was built from."""
        return dict(self.raw)  # type: ignore[attr-defined]


def _list_of(parser: Callable[[Any], T]) -> Callable[[Any], list[T]]:
    return lambda values: [parser(value) for value in values]


def _times(*names: str) -> dict[str, Callable[[Any], Any]]:
    return {name: parse_datetime for name in names}


# --- Stores -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Store(Model):
    id: str = ""
    name: str = ""
    description: str = ""
    embedding_provider: str = ""
    embedding_model: str = ""
    embedding_dimension: int = 0
    review_policy: str = ""
    search_defaults: dict = field(default_factory=dict)
    max_content_length: int | None = None
    extraction_config: dict = field(default_factory=dict)
    extraction_settings: dict = field(default_factory=dict)
    working_memory_config: dict = field(default_factory=dict)
    working_memory_limits: dict = field(default_factory=dict)
    created_at: datetime | None = None
    updated_at: datetime | None = None
    raw: dict = _raw()

    _parsers = _times("created_at", "updated_at")


@dataclass(frozen=True)
class ApiKeyInfo(Model):
    """The calling API key: its tenant, scopes and the stores it may use (None: every store); the limits in force
    (`limits`: `requests_per_minute` by kind of request — reads, writes, searches, flushes —, `max_memories`,
    `max_stores`, `max_request_bytes`; None: no limit) and what the tenant holds (`usage`: `memories`, `stores`).
    A server older than these two leaves them empty."""

    name: str = ""
    prefix: str = ""
    tenant: str = ""
    scopes: list[str] = field(default_factory=list)
    can_write: bool = False
    stores: list[str] | None = None
    created_at: datetime | None = None
    limits: dict = field(default_factory=dict)
    usage: dict = field(default_factory=dict)
    raw: dict = _raw()

    _parsers = _times("created_at")

    def allows_store(self, name: str) -> bool:
        return self.stores is None or name in self.stores


# --- Memories ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Memory(Model):
    id: str = ""
    store: str = ""
    user_id: str = ""
    agent_id: str = ""
    session_id: str = ""
    content: str = ""
    memory_type: str = ""
    metadata: dict = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    importance: float | None = None
    confidence: float | None = None
    status: str = ""
    source: str = ""
    provenance: dict = field(default_factory=dict)
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    expires_at: datetime | None = None
    superseded_by: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    raw: dict = _raw()

    _parsers = _times("valid_from", "valid_to", "expires_at", "created_at", "updated_at")


@dataclass(frozen=True)
class MemoryWriteResult(Model):
    """The memory written, or the existing one when the user already had this content (`duplicate`)."""

    memory: Memory = field(default_factory=Memory)
    duplicate: bool = False
    raw: dict = _raw()

    _parsers = {"memory": Memory.from_json}


@dataclass(frozen=True)
class Revision(Model):
    id: int = 0
    action: str = ""
    changed_fields: list[str] = field(default_factory=list)
    before: dict | None = None
    after: dict | None = None
    actor_type: str = ""
    actor_id: str = ""
    actor_label: str = ""
    reason: str = ""
    context: dict = field(default_factory=dict)
    created_at: datetime | None = None
    raw: dict = _raw()

    _parsers = _times("created_at")


@dataclass(frozen=True)
class SearchHit(Model):
    """A search result: the memory, its score and the evidence behind it (ranks, cosine similarity)."""

    memory: Memory = field(default_factory=Memory)
    score: float = 0.0
    vector_rank: int | None = None
    keyword_rank: int | None = None
    similarity: float | None = None
    keyword_score: float | None = None  # BM25
    explain: dict | None = None  # with search(explain=True): rank, score and share of the fused score per signal
    raw: dict = _raw()

    _parsers = {"memory": Memory.from_json}


# --- Sessions, messages, extraction -----------------------------------------------------------------


@dataclass(frozen=True)
class Session(Model):
    session_id: str = ""
    store: str = ""
    user_id: str = ""
    agent_id: str = ""
    status: str = ""
    metadata: dict = field(default_factory=dict)
    message_count: int = 0
    last_seq: int = 0
    extracted_seq: int = 0
    last_activity_at: datetime | None = None
    created_at: datetime | None = None
    ended_at: datetime | None = None
    episode_memory_id: str | None = None
    raw: dict = _raw()

    _parsers = _times("last_activity_at", "created_at", "ended_at")


@dataclass(frozen=True)
class Message(Model):
    seq: int = 0
    role: str = ""
    content: Any = None
    text: str = ""
    run_id: str = ""
    client_seq: int | None = None
    metadata: dict = field(default_factory=dict)
    created_at: datetime | None = None
    raw: dict = _raw()

    _parsers = _times("created_at")


@dataclass(frozen=True)
class IngestResult(Model):
    """Messages stored (`accepted`) and skipped as repeats of a (run_id, seq) already stored (`duplicates`)."""

    accepted: int = 0
    duplicates: int = 0
    seqs: list[int] = field(default_factory=list)  # the session seq of each message sent, repeats included
    session: Session = field(default_factory=Session)
    extraction_job: str | None = None
    raw: dict = _raw()

    _parsers = {"session": Session.from_json}


@dataclass(frozen=True)
class Job(Model):
    """An extraction job."""

    id: str = ""
    store: str = ""
    session_id: str = ""
    from_seq: int = 0
    to_seq: int = 0
    status: str = ""
    trigger: str = ""
    extractor: str = ""
    fallback_reason: str = ""
    attempts: int = 0
    max_attempts: int = 0
    error: str = ""
    added: int = 0
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0
    run_after: datetime | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    duration_ms: int | None = None
    created_at: datetime | None = None
    raw: dict = _raw()

    _parsers = _times("run_after", "started_at", "finished_at", "created_at")


@dataclass(frozen=True)
class MemoryChange(Model):
    """What an extraction job did to one memory."""

    memory_id: str = ""
    action: str = ""  # create, update, supersede, delete
    status: str = ""
    content: str = ""
    superseded_by: str | None = None  # for a supersede: the memory that replaced this one
    job_id: str = ""
    message_seqs: list[int] = field(default_factory=list)
    raw: dict = _raw()


@dataclass(frozen=True)
class FlushResult(Model):
    """`complete` when every message of the session was extracted within the wait; the jobs that cover the
    messages asked about (the newest 50; `more_jobs` when older ones were left out) and their changes."""

    complete: bool = False
    session: Session = field(default_factory=Session)
    jobs: list[Job] = field(default_factory=list)
    more_jobs: bool = False
    changes: list[MemoryChange] = field(default_factory=list)
    raw: dict = _raw()

    _parsers = {
        "session": Session.from_json,
        "jobs": _list_of(Job.from_json),
        "changes": _list_of(MemoryChange.from_json),
    }


@dataclass(frozen=True)
class SessionEvent(Model):
    id: int = 0
    event: str = ""
    from_status: str = ""
    to_status: str = ""
    checkpoint_id: str | None = None
    data: dict = field(default_factory=dict)
    duration_ms: int = 0
    actor_type: str = ""
    actor_label: str = ""
    created_at: datetime | None = None
    raw: dict = _raw()

    _parsers = _times("created_at")


# --- Working state ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class WorkingMemoryItem(Model):
    key: str = ""
    value: Any = None
    version: int = 0
    size_bytes: int = 0
    expires_at: datetime | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    raw: dict = _raw()

    _parsers = _times("expires_at", "created_at", "updated_at")


@dataclass(frozen=True)
class TaskState(Model):
    description: str = ""
    current_step: int = 0
    total_steps: int | None = None
    progress: float = 0.0
    status: str = ""
    metadata: dict = field(default_factory=dict)
    started_at: datetime | None = None
    updated_at: datetime | None = None
    finished_at: datetime | None = None
    raw: dict = _raw()

    _parsers = _times("started_at", "updated_at", "finished_at")


@dataclass(frozen=True)
class ScratchpadEntry(Model):
    seq: int = 0
    content: str = ""
    metadata: dict = field(default_factory=dict)
    created_at: datetime | None = None
    raw: dict = _raw()

    _parsers = _times("created_at")


@dataclass(frozen=True)
class ScratchpadAppendResult(Model):
    """The entry written; `dropped` oldest entries were removed to keep `entries` within `limit`."""

    entry: ScratchpadEntry = field(default_factory=ScratchpadEntry)
    dropped: int = 0
    entries: int = 0
    limit: int = 0
    raw: dict = _raw()

    _parsers = {"entry": ScratchpadEntry.from_json}


@dataclass(frozen=True)
class Checkpoint(Model):
    """A snapshot of a session's working state; `snapshot` only from `checkpoints.get`, `pruned` from create."""

    id: str = ""
    session_id: str = ""
    description: str = ""
    kind: str = ""
    message_seq: int = 0
    extracted_seq: int = 0
    counts: dict = field(default_factory=dict)
    size_bytes: int = 0
    expires_at: datetime | None = None
    created_by: str = ""
    created_at: datetime | None = None
    snapshot: dict | None = None
    pruned: list[str] = field(default_factory=list)
    raw: dict = _raw()

    _parsers = _times("expires_at", "created_at")


@dataclass(frozen=True)
class LifecycleResult(Model):
    """The answer of spawn, pause, resume, terminate and restore: what the transition did, and the session."""

    success: bool = False
    event: str = ""
    duration_ms: int = 0
    data: dict = field(default_factory=dict)
    session: Session | None = None
    raw: dict = _raw()

    @classmethod
    def from_json(cls, data: Any) -> LifecycleResult:
        result = super().from_json(data)
        session = result.data.get("session") if isinstance(result.data, dict) else None
        return replace(result, session=Session.from_json(session)) if isinstance(session, dict) else result


# --- Webhooks ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Webhook(Model):
    """A store's outgoing webhook; `event_types` empty: every type. `secret` only from create and rotate_secret."""

    id: str = ""
    store: str = ""
    url: str = ""
    description: str = ""
    event_types: list[str] = field(default_factory=list)
    is_active: bool = False
    disabled_at: datetime | None = None
    disabled_reason: str = ""
    consecutive_failures: int = 0
    created_at: datetime | None = None
    updated_at: datetime | None = None
    secret: str | None = field(default=None, repr=False)  # kept out of repr, and so out of logs
    raw: dict = _raw()

    _parsers = _times("disabled_at", "created_at", "updated_at")


@dataclass(frozen=True)
class WebhookDelivery(Model):
    """One event sent (or being sent) to a webhook: status queued, succeeded or failed (every attempt)."""

    id: str = ""
    webhook_id: str = ""
    event_id: str = ""
    event_type: str = ""
    user_id: str = ""
    status: str = ""
    attempts: int = 0
    next_attempt_at: datetime | None = None
    response_status: int | None = None
    last_error: str = ""
    duration_ms: int | None = None
    delivered_at: datetime | None = None
    created_at: datetime | None = None
    payload: dict = field(default_factory=dict)  # the JSON body sent
    raw: dict = _raw()

    _parsers = _times("next_attempt_at", "delivered_at", "created_at")


# --- Context ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ContextEntry(Model):
    """One candidate of context assembly: a memory id, `working_memory:<key>`, `task_state` or `scratchpad:<seq>`."""

    id: str = ""
    kind: str = ""
    source: str = ""
    type: str = ""
    score: float | None = None
    tokens: int = 0
    raw: dict = _raw()


@dataclass(frozen=True)
class ContextResult(Model):
    """A ready-to-inject block (`context`) within `token_budget`, and what went in and what was left out."""

    context: str = ""
    format: str = ""
    token_budget: int = 0
    tokens_estimated: int = 0
    included: list[ContextEntry] = field(default_factory=list)
    left_out: list[ContextEntry] = field(default_factory=list)
    kinds: dict = field(default_factory=dict)
    raw: dict = _raw()

    _parsers = {"included": _list_of(ContextEntry.from_json), "left_out": _list_of(ContextEntry.from_json)}


# --- Pages ------------------------------------------------------------------------------------------


def cursor_from_url(url: str | None) -> str | None:
    """The `cursor` query parameter of a `next`/`previous` link of a cursor-paginated answer."""
    if not url:
        return None
    values = parse_qs(urlsplit(url).query).get("cursor")
    return values[0] if values else None


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a list; pass `next_cursor` as `cursor=` for the next one (None: this was the last)."""

    items: list[T] = field(default_factory=list)
    next_cursor: str | None = None
    previous_cursor: str | None = None
    raw: dict = _raw()

    @classmethod
    def from_json(cls, data: Any, item: Callable[[Any], T]) -> Page[T]:
        if not isinstance(data, dict):
            raise TypeError(f"Page.from_json expects a JSON object, got {type(data).__name__}")
        return cls(
            items=[item(value) for value in data.get("results") or []],
            next_cursor=cursor_from_url(data.get("next")),
            previous_cursor=cursor_from_url(data.get("previous")),
            raw=dict(data),
        )

    def __iter__(self) -> Iterator[T]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


__all__ = [
    "Checkpoint",
    "ContextEntry",
    "ContextResult",
    "IngestResult",
    "Job",
    "LifecycleResult",
    "Memory",
    "MemoryChange",
    "MemoryWriteResult",
    "Message",
    "Page",
    "Revision",
    "ScratchpadAppendResult",
    "ScratchpadEntry",
    "SearchHit",
    "Session",
    "SessionEvent",
    "Store",
    "TaskState",
    "Webhook",
    "WebhookDelivery",
    "WorkingMemoryItem",
    "cursor_from_url",
    "parse_datetime",
]
