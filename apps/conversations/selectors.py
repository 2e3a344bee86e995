from django.db.models import QuerySet

from apps.conversations.models import (
    Checkpoint,
    Message,
    ScratchpadEntry,
    Session,
    SessionEvent,
    TaskState,
    WorkingMemoryItem,
)
from apps.core.errors import NotFoundError
from apps.memories.models import MemoryStore


def session_get(*, store: MemoryStore, external_id: str) -> Session:
    session = Session.objects.filter(store=store, external_id=external_id).first()
    if session is None:
        raise NotFoundError(f"Session {external_id!r} not found in store {store.name!r}.", code="session_not_found")
    session.store = store
    return session


def session_list(*, store: MemoryStore, user_id=None, agent_id=None, status=None) -> QuerySet[Session]:
    sessions = Session.objects.filter(store=store)
    for name, value in (("user_id", user_id), ("agent_id", agent_id), ("status", status)):
        if value is not None:
            sessions = sessions.filter(**{name: value})
    return sessions


def message_list(*, session: Session) -> QuerySet[Message]:
    return Message.objects.filter(session=session)


# --- Working state ----------------------------------------------------------------------------------


def working_memory_list(*, session: Session, prefix: str | None = None) -> QuerySet[WorkingMemoryItem]:
    items = WorkingMemoryItem.objects.filter(session=session).live()
    if prefix:
        items = items.filter(key__startswith=prefix)
    return items


def working_memory_get(*, session: Session, key: str) -> WorkingMemoryItem:
    item = WorkingMemoryItem.objects.filter(session=session, key=key).live().first()
    if item is None:
        raise NotFoundError(f"No working-memory key {key!r} in this session.", code="key_not_found")
    return item


def task_state_get(*, session: Session) -> TaskState:
    task = TaskState.objects.filter(session=session).first()
    if task is None:
        raise NotFoundError("This session has no task state.", code="task_state_not_found")
    return task


def scratchpad_list(*, session: Session) -> QuerySet[ScratchpadEntry]:
    return ScratchpadEntry.objects.filter(session=session)


def checkpoint_list(*, session: Session) -> QuerySet[Checkpoint]:
    """The session's unexpired checkpoints, without their snapshots."""
    return Checkpoint.objects.filter(session=session).live().defer("snapshot")


def checkpoint_get(*, session: Session, checkpoint_id) -> Checkpoint:
    checkpoint = Checkpoint.objects.filter(session=session, pk=checkpoint_id).live().first()
    if checkpoint is None:
        raise NotFoundError(f"Checkpoint {checkpoint_id} not found in this session.", code="checkpoint_not_found")
    checkpoint.session = session
    return checkpoint


def session_event_list(*, session: Session) -> QuerySet[SessionEvent]:
    return SessionEvent.objects.filter(session=session)
