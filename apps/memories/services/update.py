"""Changing memories: edits, status changes (approve, reject, delete, restore), supersede and retract."""

from django.db import transaction
from django.utils import timezone

from apps.core.actors import Actor
from apps.core.errors import ApplicationError, ConflictError
from apps.core.identifiers import normalise_identifier
from apps.memories.events import Event, EventType, memory_event
from apps.memories.models import Memory, MemoryRevision
from apps.memories.normalise import content_hash
from apps.memories.services.create import check_content, embed_texts
from apps.memories.services.events import events_publish
from apps.memories.services.revisions import memory_snapshot, revision_for

_EDITABLE_FIELDS = (
    "provenance",
    "superseded_by",
    "content",
    "memory_type",
    "metadata",
    "tags",
    "importance",
    "confidence",
    "status",
    "agent_id",
    "session_id",
    "valid_to",
    "expires_at",
)

def memory_update(
    *, memory: Memory, changes: dict, actor: Actor, reason: str = "", context: dict | None = None,
    from_statuses: tuple[str, ...] | None = None,
) -> Memory:
    """Edit a memory's content, metadata, tags, scores or status; re-embeds changed content.

    With `from_statuses`, only a memory in one of them is changed (checked under the row lock, so a
    concurrent change of status is not undone); otherwise a 409.
    """
    unknown = sorted(set(changes) - set(_EDITABLE_FIELDS))
    if unknown:
        raise ApplicationError(f"Cannot change {', '.join(unknown)}.", code="validation_error")
    changes = {
        name: normalise_identifier(value) if name in ("agent_id", "session_id") else value
        for name, value in changes.items()
    }
    store = memory.store
    new_vector = None
    new_hash = None
    if "content" in changes and changes["content"] != memory.content:
        check_content(store, changes["content"])
        new_hash = content_hash(changes["content"])
        new_vector = embed_texts(store, [changes["content"]])[0]

    with transaction.atomic():
        # Without the vector: an edit that keeps the content neither reads nor rewrites it.
        locked = (
            Memory.objects.select_for_update(of=("self",))
            .select_related("store")
            .defer("embedding", "search_vector")
            .get(pk=memory.pk)
        )
        if from_statuses is not None and locked.status not in from_statuses:
            raise ConflictError(f"This does not apply to a memory that is {locked.get_status_display().lower()}.",
                                code="invalid_status", details={"status": locked.status})
        if "content" in changes and changes["content"] != locked.content and new_hash is None:
            # The caller's copy was stale: it already had this content, the row has other content since.
            check_content(store, changes["content"])
            new_hash = content_hash(changes["content"])
            new_vector = embed_texts(store, [changes["content"]])[0]
        before = memory_snapshot(locked)
        for name, value in changes.items():
            setattr(locked, name, value)
        if new_hash is not None:
            locked.content_hash = new_hash
            locked.embedding = new_vector
        after = memory_snapshot(locked)
        if before == after:
            return locked
        # Only new content, or a memory coming back to life, can collide with another live memory.
        becomes_live = before["status"] not in Memory.LIVE_STATUSES and locked.status in Memory.LIVE_STATUSES
        if locked.status in Memory.LIVE_STATUSES and (new_hash is not None or becomes_live):
            clash = (
                Memory.objects.filter(
                    store_id=locked.store_id,
                    user_id=locked.user_id,
                    content_hash=locked.content_hash,
                    status__in=Memory.LIVE_STATUSES,
                )
                .exclude(pk=locked.pk)
                .first()
            )
            if clash:
                raise ConflictError(
                    "Another live memory of this user already has this content.",
                    code="duplicate_memory",
                    details={"existing_id": str(clash.pk)},
                )
        # Only the columns that changed: PostgreSQL recomputes the text search vector only when the content is among
        # the columns written, and the statement carries no values that are already there.
        changed = {"superseded_by" if name == "superseded_by_id" else name for name in after
                   if before[name] != after[name]}
        if new_hash is not None:
            changed |= {"content_hash", "embedding"}
        locked.save(update_fields=sorted(changed | {"updated_at"}))
        revision_for(
            memory=locked,
            action=_action_for(before, after),
            actor=actor,
            before=before,
            after=after,
            reason=reason,
            context=context,
        ).save()
        events_publish([_change_event(locked, before, after)])
        if before["status"] != Memory.Status.ACTIVE and after["status"] == Memory.Status.ACTIVE:
            _supersede_on_approval(memory=locked, actor=actor, context=context)
    return locked


def _change_event(memory: Memory, before: dict, after: dict) -> Event:
    changed = sorted(name for name in after if before[name] != after[name])
    if before["status"] == after["status"]:
        return memory_event(EventType.MEMORY_UPDATED, memory, changed_fields=changed)
    event_type = EventType.MEMORY_DELETED if after["status"] == Memory.Status.DELETED else EventType.MEMORY_STATUS_CHANGED
    return memory_event(event_type, memory, previous_status=before["status"], changed_fields=changed)


def _action_for(before: dict, after: dict) -> str:
    if before["status"] != after["status"]:
        if after["status"] == Memory.Status.DELETED:
            return MemoryRevision.Action.DELETE
        if after["status"] == Memory.Status.SUPERSEDED:
            return MemoryRevision.Action.SUPERSEDE
        if before["status"] == Memory.Status.DELETED:
            return MemoryRevision.Action.RESTORE
        if set(k for k in after if before[k] != after[k]) == {"status"}:
            return MemoryRevision.Action.STATUS_CHANGE
    return MemoryRevision.Action.UPDATE


def memory_set_status(
    *, memory: Memory, status: str, actor: Actor, reason: str = "", context: dict | None = None,
    from_statuses: tuple[str, ...] | None = None,
) -> Memory:
    """Move a memory to another status (approve, reject, soft delete, restore), if it is in `from_statuses`."""
    if status not in Memory.Status.values:
        raise ApplicationError(f"Unknown status {status!r}.", code="validation_error")
    return memory_update(memory=memory, changes={"status": status}, actor=actor, reason=reason, context=context,
                         from_statuses=from_statuses)


def memory_supersede(*, old: Memory, new: Memory, actor: Actor, reason: str = "", context: dict | None = None) -> Memory:
    """Retire `old` in favour of `new`: superseded, linked to its successor, and valid until the new value
    took over (its valid_from, never later than now nor before the old one began), so the two never overlap."""
    now = timezone.now()
    ended = max(old.valid_from, min(new.valid_from, now))
    return memory_update(
        memory=old,
        changes={"status": Memory.Status.SUPERSEDED, "valid_to": ended, "superseded_by": new},
        actor=actor,
        reason=reason or "superseded by a newer value",
        context=context,
    )


def memory_invalidate(*, memory: Memory, actor: Actor, reason: str = "", context: dict | None = None) -> Memory:
    """End a memory's validity because it no longer holds (an explicit retraction)."""
    return memory_update(
        memory=memory,
        changes={"status": Memory.Status.DELETED, "valid_to": timezone.now()},
        actor=actor,
        reason=reason or "retracted",
        context=context,
    )


def memory_add_provenance(*, memory: Memory, source: dict, actor: Actor, context: dict | None = None) -> Memory:
    """Record that another conversation confirmed a memory (no new row for a repeated fact)."""
    provenance = dict(memory.provenance or {})
    sources = list(provenance.get("sources", []))
    if source in sources:
        return memory
    sources.append(source)
    provenance["sources"] = sources
    return memory_update(
        memory=memory, changes={"provenance": provenance}, actor=actor, reason="confirmed again", context=context
    )


def _supersede_on_approval(*, memory: Memory, actor: Actor, context: dict | None) -> None:
    """A reviewed memory that replaces an older value retires that value only once it is approved."""
    old_id = (memory.metadata or {}).get("supersedes")
    if not old_id:
        return
    old = Memory.objects.filter(
        pk=old_id, store_id=memory.store_id, user_id=memory.user_id, status=Memory.Status.ACTIVE
    ).first()
    if old is not None:
        memory_supersede(old=old, new=memory, actor=actor, context=context)


def memory_approve(
    *, memory: Memory, actor: Actor, reason: str = "", from_statuses: tuple[str, ...] | None = None
) -> Memory:
    """Publish a memory held for review."""
    return memory_set_status(memory=memory, status=Memory.Status.ACTIVE, actor=actor, reason=reason or "approved",
                             from_statuses=from_statuses)


def memory_reject(
    *, memory: Memory, actor: Actor, reason: str = "", from_statuses: tuple[str, ...] | None = None
) -> Memory:
    """Refuse a memory held for review; it stays in history but is never searched."""
    return memory_set_status(memory=memory, status=Memory.Status.REJECTED, actor=actor, reason=reason or "rejected",
                             from_statuses=from_statuses)


def memory_delete(
    *, memory: Memory, actor: Actor, reason: str = "", from_statuses: tuple[str, ...] | None = None
) -> Memory:
    """Soft-delete: the memory leaves search and lists but keeps its history and can be restored."""
    return memory_set_status(memory=memory, status=Memory.Status.DELETED, actor=actor, reason=reason,
                             from_statuses=from_statuses)


def memory_restore(
    *, memory: Memory, actor: Actor, reason: str = "", from_statuses: tuple[str, ...] | None = None
) -> Memory:
    """Bring back a soft-deleted (or rejected) memory as active."""
    return memory_set_status(memory=memory, status=Memory.Status.ACTIVE, actor=actor, reason=reason or "restored",
                             from_statuses=from_statuses)
