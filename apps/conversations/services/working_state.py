"""A session's working state: key/value working memory with TTLs, task state and the scratchpad.

Every write locks the session row first. Writes to one session are rare enough that serialising
them costs nothing, and it makes the item limit exact and concurrent puts to one key end in one
value whose version counts every write.
"""

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import models, transaction
from django.db.models.functions import Cast
from django.utils import timezone

from apps.conversations.models import ScratchpadEntry, Session, TaskState, WorkingMemoryItem
from apps.core.errors import ApplicationError, ConflictError, NotFoundError, PayloadTooLargeError
from apps.core.fields import find_unstorable_text
from apps.memories.store_settings import working_state_settings_for

MAX_KEY_LENGTH = 256
MAX_TTL_SECONDS = 365 * 24 * 3600


def lock_session(session: Session) -> Session:
    """The session row, locked for this transaction: every write to a session's state takes this lock first."""
    locked = Session.objects.select_for_update().filter(pk=session.pk).first()
    if locked is None:  # deleted (or its user erased) since it was read
        raise NotFoundError(f"Session {session.external_id!r} no longer exists.", code="session_not_found")
    locked.store = session.store
    return locked


def writable_session(session: Session) -> Session:
    """The session row locked for this transaction; a terminated session's state is read-only."""
    locked = lock_session(session)
    if locked.status == Session.Status.TERMINATED:
        raise ConflictError(
            f"Session {locked.external_id!r} is terminated; its working state is read-only.",
            code="session_terminated",
            details={"status": locked.status},
        )
    return locked


def live_items(session: Session, now: datetime):
    return WorkingMemoryItem.objects.filter(session=session).live(now)


# --- Working memory ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class WorkingMemoryWrite:
    key: str
    value: object
    ttl_seconds: int | None = None  # None: the store's default; 0: never expires
    expires_at: datetime | None = None  # an absolute expiry instead (a restored item keeps its own)


def check_key(key: str) -> None:
    if not isinstance(key, str) or not key:
        raise ApplicationError("A working-memory key must be a non-empty string.", code="invalid_key")
    if len(key) > MAX_KEY_LENGTH:
        raise ApplicationError(
            f"Key is {len(key)} characters; the limit is {MAX_KEY_LENGTH}.",
            code="invalid_key",
            details={"key": [f"At most {MAX_KEY_LENGTH} characters."]},
        )
    if key.startswith("_"):
        raise ApplicationError(
            f"Keys starting with '_' are reserved for memoryhub; {key!r} cannot be used.",
            code="reserved_key",
            details={"key": ["Keys starting with '_' are reserved."]},
        )
    problem = find_unstorable_text(key)
    if problem:
        raise ApplicationError(f"Key {problem}.", code="invalid_key", details={"key": [problem]})


def value_size(value) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def _check_value(value, *, key: str, limit: int) -> int:
    size = value_size(value)
    if size > limit:
        raise PayloadTooLargeError(
            f"The value of {key!r} is {size} bytes of JSON; the limit is {limit} bytes.",
            code="value_too_large",
            details={"key": key, "size_bytes": size, "limit_bytes": limit},
        )
    return size


def expiry_from_ttl(ttl_seconds: int | None, default_ttl: int, now: datetime) -> datetime | None:
    """When something given `ttl_seconds` (None: `default_ttl`; 0: never) expires."""
    ttl = default_ttl if ttl_seconds is None else ttl_seconds
    if isinstance(ttl, bool) or not isinstance(ttl, int) or not 0 <= ttl <= MAX_TTL_SECONDS:
        raise ApplicationError(
            f"ttl_seconds must be a whole number from 0 to {MAX_TTL_SECONDS}.",
            code="validation_error",
            details={"ttl_seconds": ["Out of range."]},
        )
    return now + timedelta(seconds=ttl) if ttl else None


def storable_json(value):
    """The value as the ORM must be given it: a bare None would be SQL NULL, not the JSON null it means.
    (A cast literal rather than Value(None, JSONField()), which bulk_update would still write as NULL.)"""
    return Cast(models.Value("null"), models.JSONField()) if value is None else value


def _check_room(session: Session, *, now: datetime, adding: int, limit: int) -> None:
    if adding <= 0:
        return
    current = live_items(session, now).count()
    if current + adding > limit:
        raise ConflictError(
            f"Working memory of session {session.external_id!r} holds {current} of {limit} items; "
            f"{adding} more do not fit. Delete keys or let them expire; nothing was written.",
            code="working_memory_full",
            details={"items": current, "adding": adding, "limit": limit},
        )


def write_items(session: Session, writes: list[WorkingMemoryWrite], *, now: datetime) -> list[tuple]:
    """Upsert items of a locked session in two statements; returns [(item, created)] in the order given.
    Checks keys, sizes and the item limit first: nothing is written if one fails."""
    config = working_state_settings_for(session.store)
    prepared = []
    for write in writes:
        check_key(write.key)
        size = _check_value(write.value, key=write.key, limit=config.max_value_bytes)
        expires_at = write.expires_at if write.expires_at is not None else expiry_from_ttl(
            write.ttl_seconds, config.default_ttl_seconds, now
        )
        prepared.append((write, size, expires_at))
    existing = {
        item.key: item
        for item in WorkingMemoryItem.objects.filter(session=session, key__in=[write.key for write in writes])
    }
    new_keys = {write.key for write in writes if write.key not in existing or existing[write.key].is_expired(now)}
    _check_room(session, now=now, adding=len(new_keys), limit=config.max_items)
    to_create: dict[str, WorkingMemoryItem] = {}
    to_update: dict[str, WorkingMemoryItem] = {}
    results = []
    for write, size, expires_at in prepared:
        item = to_create.get(write.key) or existing.get(write.key)
        created = item is None or write.key in to_create or item.is_expired(now)  # over an expired one: new
        if item is None:
            item = to_create[write.key] = WorkingMemoryItem(session=session, key=write.key, created_at=now)
        elif write.key not in to_create:
            to_update[write.key] = item
            if created:
                item.created_at = now
        item.value, item.size_bytes, item.expires_at, item.updated_at = write.value, size, expires_at, now
        item.version = next_version(session)
        results.append((item, created))
    for item in (*to_create.values(), *to_update.values()):
        item.value = storable_json(item.value)
    WorkingMemoryItem.objects.bulk_create(to_create.values())
    WorkingMemoryItem.objects.bulk_update(
        to_update.values(), ["value", "size_bytes", "expires_at", "updated_at", "version", "created_at"]
    )
    for write, item_and_created in zip(writes, results, strict=True):
        item_and_created[0].value = write.value
    Session.objects.filter(pk=session.pk).update(working_memory_version=session.working_memory_version)
    return results


def next_version(session: Session) -> int:
    """The next write stamp of a locked session (saved by the caller)."""
    session.working_memory_version += 1
    return session.working_memory_version


def working_memory_put(
    *, session: Session, key: str, value, ttl_seconds: int | None = None, if_version: int | None = None
) -> tuple[WorkingMemoryItem, bool]:
    """Set one key (creating or replacing it); `if_version` makes it a compare-and-set. Returns (item, created)."""
    check_key(key)  # before the version check: a bad key is a 400, whatever the version says
    with transaction.atomic():
        locked = writable_session(session)
        now = timezone.now()
        if if_version is not None:
            current = live_items(locked, now).filter(key=key).values_list("version", flat=True).first() or 0
            if current != if_version:
                raise ConflictError(
                    f"Key {key!r} is at version {current}, not {if_version}; read it again and retry.",
                    code="version_conflict",
                    details={"key": key, "version": current, "expected_version": if_version},
                )
        [(item, created)] = write_items(locked, [WorkingMemoryWrite(key=key, value=value, ttl_seconds=ttl_seconds)],
                                        now=now)
    return item, created


def working_memory_delete(*, session: Session, key: str) -> None:
    """Delete one key; a missing or expired key is a 404."""
    with transaction.atomic():
        locked = writable_session(session)
        now = timezone.now()
        deleted, _ = live_items(locked, now).filter(key=key).delete()
        if not deleted:
            raise NotFoundError(f"No working-memory key {key!r} in this session.", code="key_not_found")


def working_memory_clear(*, session: Session) -> int:
    """Delete every key of the session; returns how many live keys there were."""
    with transaction.atomic():
        locked = writable_session(session)
        live = live_items(locked, timezone.now()).count()
        WorkingMemoryItem.objects.filter(session=locked).delete()
    return live


def working_memory_purge_expired(*, now: datetime | None = None, batch_size: int = 5000) -> int:
    """Delete expired items of every session (the minutely schedule); returns how many."""
    now = now or timezone.now()
    total = 0
    while True:
        ids = list(
            WorkingMemoryItem.objects.filter(expires_at__lte=now).values_list("pk", flat=True)[:batch_size]
        )
        if not ids:
            return total
        deleted, _ = WorkingMemoryItem.objects.filter(pk__in=ids, expires_at__lte=now).delete()
        total += deleted


# --- Task state -------------------------------------------------------------------------------------

_TASK_FIELDS = ("description", "current_step", "total_steps", "progress", "status", "metadata")


@dataclass
class TaskStateInput:
    description: str = ""
    current_step: int = 0
    total_steps: int | None = None
    progress: float | None = None  # None: derived from the steps when total_steps is known
    status: str = TaskState.Status.IN_PROGRESS
    metadata: dict = field(default_factory=dict)


def _clamp_progress(progress: float) -> float:
    return max(0.0, min(100.0, float(progress)))


def _apply_task_fields(task: TaskState, values: dict, *, now: datetime) -> None:
    """Set fields on `task`, keeping steps consistent and progress within 0–100."""
    for name, value in values.items():
        setattr(task, name, value)
    if task.total_steps is not None and task.current_step > task.total_steps:
        raise ApplicationError(
            f"current_step ({task.current_step}) is greater than total_steps ({task.total_steps}).",
            code="validation_error",
            details={"current_step": [f"At most total_steps ({task.total_steps})."]},
        )
    if values.get("progress") is not None:
        task.progress = _clamp_progress(values["progress"])
    elif task.status == TaskState.Status.COMPLETED:
        task.progress = 100.0  # also when a later change (metadata, steps) leaves the status as it is
    elif task.total_steps:
        task.progress = _clamp_progress(100.0 * task.current_step / task.total_steps)
    else:
        task.progress = _clamp_progress(task.progress or 0.0)
    if task.status in TaskState.FINISHED_STATUSES:
        task.finished_at = task.finished_at or now
    else:
        task.finished_at = None
    task.updated_at = now


def write_task_state(session: Session, data: TaskStateInput, *, now: datetime) -> TaskState:
    """Replace the task state of a locked session."""
    task = TaskState.objects.filter(session=session).first()
    new_task = task is None or task.description != data.description
    task = task or TaskState(session=session)
    task.finished_at = None
    _apply_task_fields(task, {name: getattr(data, name) for name in _TASK_FIELDS}, now=now)
    if new_task:
        task.started_at = now
    task.save()
    return task


def task_state_put(*, session: Session, data: TaskStateInput) -> TaskState:
    """Set the session's task (replacing the previous one); a new description restarts the clock."""
    with transaction.atomic():
        return write_task_state(writable_session(session), data, now=timezone.now())


def task_state_patch(*, session: Session, changes: dict) -> TaskState:
    """Change some fields of the task state (typically progress or current_step)."""
    unknown = set(changes) - set(_TASK_FIELDS)
    if unknown:
        raise ApplicationError(f"Unknown task-state fields: {', '.join(sorted(unknown))}.", code="validation_error")
    with transaction.atomic():
        locked = writable_session(session)
        task = TaskState.objects.filter(session=locked).first()
        if task is None:
            raise NotFoundError("This session has no task state yet; PUT one first.", code="task_state_not_found")
        _apply_task_fields(task, changes, now=timezone.now())
        task.save()
    return task


def task_state_delete(*, session: Session) -> None:
    with transaction.atomic():
        deleted, _ = TaskState.objects.filter(session=writable_session(session)).delete()
    if not deleted:
        raise NotFoundError("This session has no task state.", code="task_state_not_found")


# --- Scratchpad -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScratchpadAppendResult:
    entry: ScratchpadEntry
    dropped: int  # oldest entries removed to stay within the limit
    entries: int  # entries kept, including this one
    limit: int


def scratchpad_append(*, session: Session, content: str, metadata: dict | None = None) -> ScratchpadAppendResult:
    """Add a reasoning entry; beyond the store's limit the oldest entries are dropped (and counted)."""
    limit = working_state_settings_for(session.store).scratchpad_max_entries
    max_chars = settings.SCRATCHPAD_MAX_ENTRY_CHARS
    if len(content) > max_chars:
        raise PayloadTooLargeError(
            f"The entry is {len(content)} characters; the limit is {max_chars}.",
            code="entry_too_long",
            details={"content": [f"At most {max_chars} characters."]},
        )
    with transaction.atomic():
        locked = writable_session(session)
        locked.scratchpad_seq += 1
        Session.objects.filter(pk=locked.pk).update(scratchpad_seq=locked.scratchpad_seq)
        entry = ScratchpadEntry.objects.create(
            session=locked, seq=locked.scratchpad_seq, content=content, metadata=metadata or {}
        )
        entries = ScratchpadEntry.objects.filter(session=locked).count()
        dropped = 0
        if entries > limit:
            # Counted rather than computed from seq: a restored checkpoint leaves gaps in the numbering.
            newest_dropped = (
                ScratchpadEntry.objects.filter(session=locked).order_by("-seq").values_list("seq", flat=True)[limit]
            )
            dropped, _ = ScratchpadEntry.objects.filter(session=locked, seq__lte=newest_dropped).delete()
            entries -= dropped
    return ScratchpadAppendResult(entry=entry, dropped=dropped, entries=entries, limit=limit)


def scratchpad_clear(*, session: Session) -> int:
    with transaction.atomic():
        deleted, _ = ScratchpadEntry.objects.filter(session=writable_session(session)).delete()
    return deleted


def working_state_clear(session: Session) -> dict:
    """Delete the working memory, task state and scratchpad of a locked session; returns the counts."""
    now = timezone.now()
    counts = {
        "working_memory": live_items(session, now).count(),
        "task_state": TaskState.objects.filter(session=session).exists(),
    }
    WorkingMemoryItem.objects.filter(session=session).delete()
    TaskState.objects.filter(session=session).delete()
    counts["scratchpad"], _ = ScratchpadEntry.objects.filter(session=session).delete()
    return counts
