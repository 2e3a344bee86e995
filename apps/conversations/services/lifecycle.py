"""Agent lifecycle: spawn, pause, resume and terminate a session, each recorded in its event log.

    (new) --spawn--> active --pause--> paused --resume--> active
                       ^                  |
                       +------spawn-------+        active | paused --terminate--> terminated
"""

import time
from dataclasses import dataclass, field

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.conversations.models import Checkpoint, Session, SessionEvent, TaskState
from apps.conversations.services.checkpoints import restore_into, take_checkpoint
from apps.conversations.services.events import elapsed_ms, record_event
from apps.conversations.services.working_state import (
    TaskStateInput,
    WorkingMemoryWrite,
    lock_session,
    working_state_clear,
    write_items,
    write_task_state,
)
from apps.core.actors import Actor
from apps.core.errors import ApplicationError, ConflictError, NotFoundError
from apps.core.identifiers import normalise_identifier
from apps.extraction import services as extraction_services
from apps.memories.events import EventType, session_event
from apps.memories.models import Memory, MemoryStore
from apps.memories.services import MemoryInput, memory_create
from apps.memories.services.events import events_publish
from apps.memories.store_settings import extraction_settings_for

Event = SessionEvent.Event
Status = Session.Status


@dataclass(frozen=True)
class LifecycleResult:
    event: str
    session: Session
    data: dict
    duration_ms: int


def _invalid_transition(session: Session, event: str, allowed_from: list[str]) -> ConflictError:
    return ConflictError(
        f"Cannot {event} session {session.external_id!r}: it is {session.status} "
        f"({event} applies to a session that is {' or '.join(allowed_from)}).",
        code="invalid_transition",
        details={"status": session.status, "event": event, "allowed_from": allowed_from},
    )


_STATUS_EVENTS = {
    Status.PAUSED: EventType.SESSION_PAUSED,
    Status.TERMINATED: EventType.SESSION_TERMINATED,
    Status.ACTIVE: EventType.SESSION_RESUMED,
}


def _transition(session: Session, *, to_status: str, now) -> None:
    previous_status = session.status
    session.status = to_status
    session.last_activity_at = now
    session.save(update_fields=["status", "last_activity_at", "metadata", "agent_id", "ended_at", "updated_at"])
    if previous_status != to_status:
        events_publish([session_event(_STATUS_EVENTS[to_status], session, previous_status=previous_status)])


# --- spawn ------------------------------------------------------------------------------------------


def session_spawn(
    *,
    store: MemoryStore,
    external_id: str,
    user_id: str | None,
    actor: Actor,
    agent_id: str = "",
    metadata: dict | None = None,
    working_memory: list[WorkingMemoryWrite] | None = None,
    task_state: TaskStateInput | None = None,
) -> LifecycleResult:
    """Create the session (or reactivate a paused one) with optional initial working state, atomically."""
    started = time.monotonic()
    external_id, agent_id = normalise_identifier(external_id), normalise_identifier(agent_id)
    user_id = normalise_identifier(user_id) if user_id else user_id
    with transaction.atomic():
        session = Session.objects.select_for_update().filter(store=store, external_id=external_id).first()
        created = False
        if session is None:
            if not user_id:
                raise ApplicationError(
                    f"Session {external_id!r} does not exist; user_id is needed to create it.",
                    code="validation_error",
                    details={"user_id": ["Required when the session is new."]},
                )
            try:
                with transaction.atomic():
                    session = Session.objects.create(
                        store=store, external_id=external_id, user_id=user_id, agent_id=agent_id,
                        metadata=metadata or {},
                    )
                created = True
            except IntegrityError:  # a concurrent spawn or message post created it first
                session = Session.objects.select_for_update().get(store=store, external_id=external_id)
        session.store = store
        from_status = "" if created else session.status
        now = timezone.now()
        if created:
            events_publish([session_event(EventType.SESSION_CREATED, session)])
        if not created:
            if user_id and session.user_id != user_id:
                raise ConflictError(
                    f"Session {external_id!r} belongs to another user_id.",
                    code="session_user_mismatch",
                    details={"user_id": [f"This session's user_id is {session.user_id!r}."]},
                )
            if session.status != Status.PAUSED:
                raise _invalid_transition(session, Event.SPAWN, ["new", Status.PAUSED])
            session.metadata = {**session.metadata, **(metadata or {})}
            session.agent_id = agent_id or session.agent_id
            _transition(session, to_status=Status.ACTIVE, now=now)
        written = write_items(session, working_memory, now=now) if working_memory else []
        task = write_task_state(session, task_state, now=now) if task_state else None
        data = {"created": created, "working_memory": len(written), "task_state": task is not None}
        record_event(session, event=Event.SPAWN, from_status=from_status, to_status=Status.ACTIVE, actor=actor,
                     started=started, data=data)
    return LifecycleResult(event=Event.SPAWN, session=session, data=data, duration_ms=elapsed_ms(started))


# --- pause / resume ---------------------------------------------------------------------------------


def session_pause(*, session: Session, actor: Actor, description: str = "") -> LifecycleResult:
    """Pause an active session, taking an automatic checkpoint of its working state."""
    started = time.monotonic()
    with transaction.atomic():
        locked = lock_session(session)
        if locked.status != Status.ACTIVE:
            raise _invalid_transition(locked, Event.PAUSE, [Status.ACTIVE])
        now = timezone.now()
        taken = take_checkpoint(
            locked, description=description or "Automatic checkpoint on pause", kind=Checkpoint.Kind.PAUSE,
            ttl_seconds=None, actor=actor, now=now,
        )
        checkpoint = taken.checkpoint
        _transition(locked, to_status=Status.PAUSED, now=now)
        data = {
            "checkpoint_id": str(checkpoint.pk),
            "message_seq": checkpoint.message_seq,
            "working_memory": checkpoint.working_memory_items,
            "task_state": checkpoint.has_task_state,
            "scratchpad": checkpoint.scratchpad_entries,
            "pruned_checkpoints": taken.pruned,
        }
        record_event(locked, event=Event.PAUSE, from_status=Status.ACTIVE, to_status=Status.PAUSED, actor=actor,
                     started=started, checkpoint_id=checkpoint.pk, data=data)
    return LifecycleResult(event=Event.PAUSE, session=locked, data=data, duration_ms=elapsed_ms(started))


def _latest_since_pause(session: Session, live):
    """The newest live checkpoint taken at or after the last pause. Never an older one: if the pause's
    checkpoint expired or was deleted, restoring something from before the pause would silently undo
    work, so the working state is then left as it is."""
    pause = SessionEvent.objects.filter(session=session, event=Event.PAUSE).order_by("-id").first()
    if pause is None:
        return live.order_by("-created_at", "-id").first()
    paused_at = (
        Checkpoint.objects.filter(pk=pause.checkpoint_id).values_list("created_at", flat=True).first()
        or pause.created_at
    )
    return live.filter(created_at__gte=paused_at).order_by("-created_at", "-id").first()


def session_resume(
    *, session: Session, actor: Actor, checkpoint_id=None, clear_current: bool = True
) -> LifecycleResult:
    """Resume a paused session from a checkpoint (the given one, else the latest since the pause), atomically."""
    started = time.monotonic()
    with transaction.atomic():
        locked = lock_session(session)
        if locked.status != Status.PAUSED:
            raise _invalid_transition(locked, Event.RESUME, [Status.PAUSED])
        now = timezone.now()
        live = Checkpoint.objects.filter(session=locked).live(now)
        if checkpoint_id is not None:
            checkpoint = live.filter(pk=checkpoint_id).first()
            if checkpoint is None:
                raise NotFoundError(f"Checkpoint {checkpoint_id} not found in this session.", code="checkpoint_not_found")
        else:
            checkpoint = _latest_since_pause(locked, live)
        restored = restore_into(locked, checkpoint, clear_current=clear_current, now=now) if checkpoint else None
        _transition(locked, to_status=Status.ACTIVE, now=now)
        data = restored.as_data() if restored else {"checkpoint_id": None, "restored": None}
        record_event(locked, event=Event.RESUME, from_status=Status.PAUSED, to_status=Status.ACTIVE, actor=actor,
                     started=started, checkpoint_id=checkpoint.pk if checkpoint else None, data=data)
    return LifecycleResult(event=Event.RESUME, session=locked, data=data, duration_ms=elapsed_ms(started))


# --- terminate --------------------------------------------------------------------------------------


class Outcome:
    SUCCESS = "success"
    FAILURE = "failure"
    PARTIAL = "partial"
    CHOICES = (SUCCESS, FAILURE, PARTIAL)


@dataclass
class TerminateOptions:
    outcome: str | None = None  # None: from the task state (completed → success, failed/cancelled → failure, else partial)
    task: str = ""  # None/blank: the task state's description
    lessons: list[str] = field(default_factory=list)
    key_facts: list[str] = field(default_factory=list)  # added to the facts extracted from the session
    clear_working_memory: bool = False
    wait_seconds: float | None = None  # for the final extraction; None: TERMINATE_EXTRACTION_WAIT_SECONDS


MAX_EXTRACTED_KEY_FACTS = 20


def _outcome_from(task: TaskState | None) -> str:
    if task is None:
        return Outcome.PARTIAL
    if task.status == TaskState.Status.COMPLETED:
        return Outcome.SUCCESS
    if task.status in (TaskState.Status.FAILED, TaskState.Status.CANCELLED):
        return Outcome.FAILURE
    return Outcome.PARTIAL


def _extracted_facts(session: Session) -> list[Memory]:
    """Facts and preferences the session's messages gave, including ones the user already had
    (extraction then only adds the session to the existing memory's provenance)."""
    return list(
        Memory.objects.filter(
            store=session.store,
            user_id=session.user_id,
            provenance__contains={"sources": [{"session_id": session.external_id}]},
            status__in=Memory.LIVE_STATUSES,
            memory_type__in=[Memory.Type.FACT, Memory.Type.PREFERENCE],
        )
        .defer("embedding", "search_vector")
        .order_by("created_at", "id")[:MAX_EXTRACTED_KEY_FACTS]
    )


def episode_text(*, session: Session, task: str, outcome: str, task_state: TaskState | None, key_facts: list[str],
                 lessons: list[str], limit: int) -> str:
    """The episode as one searchable paragraph, cut to the store's content limit."""
    # The session id leads: it keeps two sessions' episodes distinct (memories are deduplicated by
    # content) and survives the cut to the store's length limit.
    parts = [f"Episode of session {session.external_id}.", f"Task: {task.rstrip('.')}." if task else "",
             f"Outcome: {outcome}."]
    if task_state and task_state.total_steps:
        parts.append(f"Reached step {task_state.current_step} of {task_state.total_steps} "
                     f"({task_state.progress:.0f}%).")
    if key_facts:
        parts.append("Key facts: " + "; ".join(fact.rstrip(".") for fact in key_facts) + ".")
    if lessons:
        parts.append("Lessons learned: " + "; ".join(lesson.rstrip(".") for lesson in lessons) + ".")
    if session.last_seq:
        parts.append(f"From messages 1–{session.last_seq}.")
    text = " ".join(part for part in parts if part)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _terminated_already(session: Session) -> ConflictError:
    return ConflictError(
        f"Session {session.external_id!r} is already terminated.",
        code="invalid_transition",
        details={
            "status": session.status,
            "event": Event.TERMINATE,
            "allowed_from": [Status.ACTIVE, Status.PAUSED],
            "episode_memory_id": str(session.episode_memory_id) if session.episode_memory_id else None,
        },
    )


def _termination_finished(session: Session) -> bool:
    return SessionEvent.objects.filter(session=session, event=Event.TERMINATE).exists()


def session_terminate(*, session: Session, actor: Actor, options: TerminateOptions | None = None) -> LifecycleResult:
    """End a session: final extraction of its tail, then one `episode` memory, then `terminated`.

    Three steps, because the extraction runs in a worker between them: (1) mark the session
    terminated, which stops new messages; (2) flush and wait for the extraction; (3) write the
    episode and the event. Step 3 runs once per session: a second call (concurrent, or a retry
    after a crash between the steps) finds the event and gets a 409; one that arrives before
    step 3 completes the termination in the first one's place.
    """
    options = options or TerminateOptions()
    started = time.monotonic()
    store = session.store
    extraction = extraction_settings_for(store)
    with transaction.atomic():
        locked = lock_session(session)
        if locked.status == Status.TERMINATED and _termination_finished(locked):
            raise _terminated_already(locked)
        from_status = locked.status if locked.status != Status.TERMINATED else ""
        if locked.status != Status.TERMINATED:
            now = timezone.now()
            locked.ended_at = now
            _transition(locked, to_status=Status.TERMINATED, now=now)

    extraction_report = {"ran": False, "complete": not locked.has_unextracted_messages, "jobs": []}
    if extraction.enabled and extraction.on_session_end:
        wait = settings.TERMINATE_EXTRACTION_WAIT_SECONDS if options.wait_seconds is None else options.wait_seconds
        jobs, complete = extraction_services.extraction_at_session_end(session=locked, wait_seconds=wait)
        extraction_report = {
            "ran": bool(jobs),
            "complete": complete,
            "jobs": [str(job.pk) for job in jobs],
            "added": sum(job.added for job in jobs),
            "updated": sum(job.updated for job in jobs),
            "deleted": sum(job.deleted for job in jobs),
        }

    with transaction.atomic():
        locked = lock_session(locked)
        if _termination_finished(locked):
            raise _terminated_already(locked)
        if not from_status:  # an earlier call marked the session terminated and did not finish
            last = SessionEvent.objects.filter(session=locked).order_by("-id").values_list("to_status", flat=True)
            from_status = last.first() or Status.ACTIVE
        task_state = TaskState.objects.filter(session=locked).first()
        outcome = options.outcome or _outcome_from(task_state)
        task = options.task or (task_state.description if task_state else "")
        extracted = _extracted_facts(locked)
        key_facts = list(options.key_facts) + [memory.content for memory in extracted]
        needs_review = store.review_policy == MemoryStore.ReviewPolicy.REVIEW
        episode = memory_create(
            store=store,
            item=MemoryInput(
                user_id=locked.user_id,
                agent_id=locked.agent_id,
                session_id=locked.external_id,
                content=episode_text(session=locked, task=task, outcome=outcome, task_state=task_state,
                                     key_facts=key_facts, lessons=list(options.lessons),
                                     limit=store.max_content_length),
                memory_type=Memory.Type.EPISODE,
                metadata={
                    "task": task,
                    "outcome": outcome,
                    "lessons": list(options.lessons),
                    "key_facts": key_facts,
                    "key_fact_memory_ids": [str(memory.pk) for memory in extracted],
                    "source_messages": {"session_id": locked.external_id, "from_seq": 1 if locked.last_seq else 0,
                                        "to_seq": locked.last_seq, "count": locked.message_count},
                },
                status=Memory.Status.PENDING_REVIEW if needs_review else Memory.Status.ACTIVE,
                source=Memory.Source.EXTRACTION,
                provenance={"sources": [{"session_id": locked.external_id,
                                         "message_seqs": [1, locked.last_seq] if locked.last_seq else []}]},
            ),
            actor=actor,
            reason=f"episode of session {locked.external_id}",
            context={"session_id": locked.external_id, "event": Event.TERMINATE},
        ).memory
        locked.episode_memory = episode
        locked.save(update_fields=["episode_memory", "updated_at"])
        cleared = working_state_clear(locked) if options.clear_working_memory else None
        data = {
            "episode_memory_id": str(episode.pk),
            "outcome": outcome,
            "extraction": extraction_report,
            "key_facts": len(key_facts),
            "lessons": len(options.lessons),
            "messages": locked.message_count,
            "cleared": cleared,
        }
        record_event(locked, event=Event.TERMINATE, from_status=from_status, to_status=Status.TERMINATED,
                     actor=actor, started=started, data=data)
    return LifecycleResult(event=Event.TERMINATE, session=locked, data=data, duration_ms=elapsed_ms(started))
