"""Checkpoints: snapshots of a session's working state that it can be restored to."""

import dataclasses
import time
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from apps.conversations.models import Checkpoint, ScratchpadEntry, Session, SessionEvent, TaskState
from apps.conversations.services.events import elapsed_ms, record_event
from apps.conversations.services.working_state import (
    WorkingMemoryWrite,
    expiry_from_ttl,
    live_items,
    lock_session,
    value_size,
    working_state_clear,
    writable_session,
    write_items,
)
from apps.core.actors import Actor
from apps.core.errors import ConflictError, NotFoundError
from apps.core.fields import iso_datetime
from apps.memories.store_settings import working_state_settings_for


def _task_snapshot(task: TaskState | None) -> dict | None:
    if task is None:
        return None
    return {
        "description": task.description,
        "current_step": task.current_step,
        "total_steps": task.total_steps,
        "progress": task.progress,
        "status": task.status,
        "metadata": task.metadata,
        "started_at": iso_datetime(task.started_at),
        "updated_at": iso_datetime(task.updated_at),
        "finished_at": iso_datetime(task.finished_at),
    }


def working_state_snapshot(session: Session, *, now: datetime) -> dict:
    return {
        "working_memory": [
            {"key": item.key, "value": item.value, "expires_at": iso_datetime(item.expires_at), "version": item.version}
            for item in live_items(session, now).order_by("key")
        ],
        "task_state": _task_snapshot(TaskState.objects.filter(session=session).first()),
        "scratchpad": [
            {"seq": entry.seq, "content": entry.content, "metadata": entry.metadata, "created_at": iso_datetime(entry.created_at)}
            for entry in ScratchpadEntry.objects.filter(session=session).order_by("seq")
        ],
    }


@dataclass(frozen=True)
class CheckpointCreateResult:
    checkpoint: Checkpoint
    pruned: list  # ids of automatic checkpoints removed to stay within the per-session cap


def take_checkpoint(
    session: Session, *, description: str, kind: str, ttl_seconds: int | None, actor: Actor, now: datetime
) -> CheckpointCreateResult:
    """Snapshot a locked session. At the cap, an automatic checkpoint replaces the oldest automatic
    one; a manual checkpoint is refused (409) rather than silently deleting one the client made."""
    config = working_state_settings_for(session.store)
    expires_at = expiry_from_ttl(ttl_seconds, config.checkpoint_ttl_seconds, now)
    Checkpoint.objects.filter(session=session, expires_at__lte=now).delete()
    existing = Checkpoint.objects.filter(session=session)
    count = existing.count()
    pruned = []
    if count >= config.max_checkpoints:
        excess = count - config.max_checkpoints + 1
        automatic = list(
            existing.filter(kind=Checkpoint.Kind.PAUSE).order_by("created_at").values_list("pk", flat=True)[:excess]
        )
        if kind == Checkpoint.Kind.MANUAL or len(automatic) < excess:
            raise ConflictError(
                f"Session {session.external_id!r} has {count} checkpoints, the limit of this store; "
                "delete one before creating another.",
                code="checkpoint_limit_reached",
                details={"checkpoints": count, "limit": config.max_checkpoints},
            )
        Checkpoint.objects.filter(pk__in=automatic).delete()
        pruned = [str(pk) for pk in automatic]
    snapshot = working_state_snapshot(session, now=now)
    checkpoint = Checkpoint.objects.create(
        session=session,
        description=description,
        kind=kind,
        snapshot=snapshot,
        message_seq=session.last_seq,
        extracted_seq=session.extracted_seq,
        working_memory_items=len(snapshot["working_memory"]),
        scratchpad_entries=len(snapshot["scratchpad"]),
        has_task_state=snapshot["task_state"] is not None,
        size_bytes=value_size(snapshot),
        expires_at=expires_at,
        created_by=actor.label,
        created_at=now,
        updated_at=now,
    )
    return CheckpointCreateResult(checkpoint=checkpoint, pruned=pruned)


def checkpoint_create(
    *, session: Session, description: str = "", ttl_seconds: int | None = None, actor: Actor
) -> CheckpointCreateResult:
    """Snapshot the session's working memory, task state, scratchpad and message high-water mark."""
    with transaction.atomic():
        return take_checkpoint(
            writable_session(session), description=description, kind=Checkpoint.Kind.MANUAL,
            ttl_seconds=ttl_seconds, actor=actor, now=timezone.now(),
        )


def checkpoint_delete(*, checkpoint: Checkpoint) -> None:
    """Delete a checkpoint (also of a terminated session: deleting is how old state is cleaned up)."""
    with transaction.atomic():
        session = lock_session(checkpoint.session)
        deleted, _ = Checkpoint.objects.filter(pk=checkpoint.pk, session=session).delete()
    if not deleted:
        raise NotFoundError(f"Checkpoint {checkpoint.pk} not found.", code="checkpoint_not_found")


@dataclass(frozen=True)
class RestoreResult:
    checkpoint: Checkpoint
    cleared: dict | None  # what was removed first (clear_current), else None
    working_memory: int  # items written from the snapshot
    expired_skipped: int  # snapshot items whose expiry has passed since
    task_state: bool
    scratchpad: int
    session: Session | None = None  # as restored into, for the response
    duration_ms: int = 0

    def as_data(self) -> dict:
        return {
            "checkpoint_id": str(self.checkpoint.pk),
            "message_seq": self.checkpoint.message_seq,
            "cleared": self.cleared,
            "restored": {
                "working_memory": self.working_memory,
                "task_state": self.task_state,
                "scratchpad": self.scratchpad,
            },
            "expired_skipped": self.expired_skipped,
        }


def _restore_task_state(session: Session, snapshot: dict, now: datetime) -> None:
    TaskState.objects.filter(session=session).delete()
    TaskState.objects.create(
        session=session,
        description=snapshot["description"],
        current_step=snapshot["current_step"],
        total_steps=snapshot["total_steps"],
        progress=snapshot["progress"],
        status=snapshot["status"],
        metadata=snapshot["metadata"],
        started_at=parse_datetime(snapshot["started_at"]) or now,
        updated_at=now,
        finished_at=parse_datetime(snapshot["finished_at"]) if snapshot["finished_at"] else None,
    )


def restore_into(session: Session, checkpoint: Checkpoint, *, clear_current: bool, now: datetime) -> RestoreResult:
    """Write a checkpoint's snapshot over a locked session's working state (inside the caller's transaction).

    Items keep their absolute expiry: one that expired since the checkpoint stays gone. Without
    `clear_current`, the snapshot's keys overwrite current ones, other keys stay, the task state is
    replaced when the snapshot has one, and the scratchpad is left as it is.
    """
    snapshot = checkpoint.snapshot
    cleared = working_state_clear(session) if clear_current else None

    items = []
    expired_skipped = 0
    for saved in snapshot["working_memory"]:
        expires_at = parse_datetime(saved["expires_at"]) if saved["expires_at"] else None
        if expires_at is not None and expires_at <= now:
            expired_skipped += 1
            continue
        items.append((saved, expires_at))
    if items:
        # The limits apply as for any write: a restore that would overflow is refused whole.
        write_items(
            session,
            [WorkingMemoryWrite(key=saved["key"], value=saved["value"], ttl_seconds=0, expires_at=expires_at)
             for saved, expires_at in items],
            now=now,
        )
    if snapshot["task_state"] is not None:
        _restore_task_state(session, snapshot["task_state"], now)
    restored_entries = 0
    if clear_current and snapshot["scratchpad"]:
        ScratchpadEntry.objects.bulk_create(
            ScratchpadEntry(
                session=session,
                seq=entry["seq"],
                content=entry["content"],
                metadata=entry["metadata"],
                created_at=parse_datetime(entry["created_at"]) or now,
            )
            for entry in snapshot["scratchpad"]
        )
        restored_entries = len(snapshot["scratchpad"])
    return RestoreResult(
        checkpoint=checkpoint,
        cleared=cleared,
        working_memory=len(items),
        expired_skipped=expired_skipped,
        task_state=snapshot["task_state"] is not None,
        scratchpad=restored_entries,
    )


def checkpoint_restore(*, checkpoint: Checkpoint, clear_current: bool = True, actor: Actor) -> RestoreResult:
    """Replace the session's working state with the checkpoint's, atomically; the checkpoint stays."""
    started = time.monotonic()
    with transaction.atomic():
        session = writable_session(checkpoint.session)
        now = timezone.now()
        locked_checkpoint = Checkpoint.objects.filter(pk=checkpoint.pk, session=session).live(now).first()
        if locked_checkpoint is None:
            raise NotFoundError(f"Checkpoint {checkpoint.pk} not found.", code="checkpoint_not_found")
        result = restore_into(session, locked_checkpoint, clear_current=clear_current, now=now)
        record_event(
            session,
            event=SessionEvent.Event.RESTORE,
            from_status=session.status,
            to_status=session.status,
            actor=actor,
            checkpoint_id=locked_checkpoint.pk,
            data=result.as_data(),
            started=started,
        )
    return dataclasses.replace(result, session=session, duration_ms=elapsed_ms(started))


def checkpoint_purge_expired(*, now: datetime | None = None) -> int:
    deleted, _ = Checkpoint.objects.filter(expires_at__lte=now or timezone.now()).delete()
    return deleted
