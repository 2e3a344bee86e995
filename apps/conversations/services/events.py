"""The session event log: one row per lifecycle transition or checkpoint restore."""

import time

from apps.conversations.models import Session, SessionEvent
from apps.core.actors import Actor


def elapsed_ms(started: float) -> int:
    """Milliseconds since `started`, a time.monotonic() reading."""
    return max(0, int((time.monotonic() - started) * 1000))


def record_event(
    session: Session,
    *,
    event: str,
    from_status: str,
    to_status: str,
    actor: Actor,
    started: float,
    checkpoint_id=None,
    data: dict | None = None,
) -> SessionEvent:
    return SessionEvent.objects.create(
        session=session,
        event=event,
        from_status=from_status,
        to_status=to_status,
        checkpoint_id=checkpoint_id,
        data=data or {},
        duration_ms=elapsed_ms(started),
        actor_type=actor.kind,
        actor_id=actor.id,
        actor_label=actor.label,
    )
