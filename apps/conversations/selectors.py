from django.db.models import QuerySet

from apps.conversations.models import Message, Session
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
