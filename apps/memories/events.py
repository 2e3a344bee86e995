"""What changed in a store, as its listeners hear it: the event types and the events services build.
apps.memories.services.events publishes them."""

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime

from apps.core.fields import iso_datetime


class EventType:
    MEMORY_CREATED = "memory.created"
    MEMORY_UPDATED = "memory.updated"
    MEMORY_STATUS_CHANGED = "memory.status_changed"
    MEMORY_DELETED = "memory.deleted"
    JOB_FINISHED = "extraction_job.finished"
    JOB_FAILED = "extraction_job.failed"
    SESSION_CREATED = "session.created"
    SESSION_PAUSED = "session.paused"
    SESSION_RESUMED = "session.resumed"
    SESSION_TERMINATED = "session.terminated"
    SESSION_DELETED = "session.deleted"
    USER_ERASED = "user.erased"

    ALL = (
        MEMORY_CREATED, MEMORY_UPDATED, MEMORY_STATUS_CHANGED, MEMORY_DELETED, JOB_FINISHED, JOB_FAILED,
        SESSION_CREATED, SESSION_PAUSED, SESSION_RESUMED, SESSION_TERMINATED, SESSION_DELETED, USER_ERASED,
    )


@dataclass(frozen=True)
class Event:
    type: str
    store_id: str
    store_name: str
    data: dict
    id: str = field(default_factory=lambda: str(uuid.uuid4()))
    occurred_at: str = field(default_factory=lambda: iso_datetime(datetime.now(UTC)))

    def as_dict(self) -> dict:
        """The event as listeners receive it (websocket frame and webhook body)."""
        return {"id": self.id, "type": self.type, "store": self.store_name, "occurred_at": self.occurred_at,
                "data": self.data}


def store_group_name(store_id) -> str:
    """The channel-layer group of a store's live listeners."""
    return f"store.{store_id}"


def memory_event_data(memory, **extra) -> dict:
    """What an event says about a memory: enough to act on, the content included (webhooks index it)."""
    return {
        "memory": {
            "id": str(memory.pk),
            "user_id": memory.user_id,
            "agent_id": memory.agent_id,
            "session_id": memory.session_id,
            "content": memory.content,
            "memory_type": memory.memory_type,
            "status": memory.status,
            "source": memory.source,
            "confidence": memory.confidence,
            "importance": memory.importance,
            "created_at": iso_datetime(memory.created_at),
            "updated_at": iso_datetime(memory.updated_at),
        },
        **extra,
    }


def memory_event(event_type: str, memory, **extra) -> Event:
    return Event(type=event_type, store_id=str(memory.store_id), store_name=memory.store.name,
                 data=memory_event_data(memory, **extra))


def session_event(event_type: str, session, **extra) -> Event:
    """An event about a conversation session (any object with a session's fields, its store loaded)."""
    return Event(
        type=event_type, store_id=str(session.store_id), store_name=session.store.name,
        data={"session": {"id": session.external_id, "user_id": session.user_id, "agent_id": session.agent_id,
                          "status": session.status}, **extra},
    )
