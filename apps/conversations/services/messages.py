"""Sessions and message ingest."""

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.conversations.content import normalise_content
from apps.conversations.models import Message, Session
from apps.core.admin_log import admin_log_forget
from apps.core.errors import ApplicationError, ConflictError, PayloadTooLargeError
from apps.core.identifiers import normalise_identifier
from apps.extraction import services as extraction_services
from apps.memories.events import EventType, session_event
from apps.memories.models import MemoryStore
from apps.memories.services.events import events_publish


@dataclass
class MessageInput:
    role: str
    content: object  # a string or a list of content blocks, as sent
    seq: int | None = None  # the client's sequence number within its run, for idempotency
    metadata: dict = field(default_factory=dict)
    created_at: datetime | None = None  # when it was said; None: when it arrives


# A client's clock may run a little ahead of ours; a time further ahead is a bug (or a wrong zone), and
# relative dates ("next Friday") would resolve against it.
MESSAGE_TIME_SKEW = timedelta(minutes=5)


@dataclass(frozen=True)
class IngestResult:
    session: Session
    accepted: int
    duplicates: int
    extraction_job: object | None
    seqs: list[int] = field(default_factory=list)  # the session seq of each message given, repeats included


def _locked_session(*, store: MemoryStore, external_id: str, user_id: str, agent_id: str, metadata: dict) -> Session:
    """The session row, created on first use, locked for this transaction (serialises seq assignment)."""
    session = Session.objects.select_for_update().filter(store=store, external_id=external_id).first()
    if session is None:
        try:
            with transaction.atomic():
                # The new row is this transaction's until it commits: as good as locked.
                session = Session.objects.create(
                    store=store, external_id=external_id, user_id=user_id, agent_id=agent_id, metadata=metadata
                )
            session.store = store
            events_publish([session_event(EventType.SESSION_CREATED, session)])
        except IntegrityError:  # another request created it first: wait for it and take the lock
            session = Session.objects.select_for_update().get(store=store, external_id=external_id)
    session.store = store
    return session


def messages_ingest(
    *,
    store: MemoryStore,
    session_external_id: str,
    user_id: str,
    agent_id: str = "",
    run_id: str = "",
    messages: list[MessageInput],
    metadata: dict | None = None,
) -> IngestResult:
    """Store new messages of a session in one transaction, skipping (run_id, seq) pairs already seen.

    Creates the session on first use and schedules extraction when the store's trigger says so; the
    extraction itself runs later in a worker. A message's `created_at` (when it was said, the reference
    of its relative dates) defaults to now; the batch's times need not be in order (`seq` is the order).
    """
    limit = settings.MEMORYHUB_MAX_MESSAGES_PER_BATCH
    if len(messages) > limit:
        raise PayloadTooLargeError(
            f"{len(messages)} messages in one request; the limit is {limit}.", code="batch_too_large"
        )
    session_external_id, user_id, agent_id, run_id = map(
        normalise_identifier, (session_external_id, user_id, agent_id, run_id)
    )
    prepared = []
    latest_allowed = timezone.now() + MESSAGE_TIME_SKEW
    for index, message in enumerate(messages):
        blocks, text = normalise_content(message.content, where=f"messages[{index}]")
        if message.created_at is not None and message.created_at > latest_allowed:
            field_name = f"messages[{index}].created_at"
            problem = (f"{message.created_at.isoformat()} is more than "
                       f"{MESSAGE_TIME_SKEW.total_seconds() / 60:g} minutes in the future.")
            raise ApplicationError(f"{field_name}: {problem}", code="validation_error",
                                   details={field_name: [problem]})
        prepared.append((message, blocks, text))

    with transaction.atomic():
        session = _locked_session(
            store=store, external_id=session_external_id, user_id=user_id, agent_id=agent_id, metadata=metadata or {}
        )
        if session.user_id != user_id:
            raise ConflictError(
                f"Session {session_external_id!r} belongs to another user_id.",
                code="session_user_mismatch",
                details={"user_id": [f"This session's user_id is {session.user_id!r}."]},
            )
        if session.status == Session.Status.TERMINATED:
            raise ConflictError(
                f"Session {session_external_id!r} is terminated; start a new session.",
                code="session_terminated",
                details={"status": session.status},
            )
        client_seqs = [message.seq for message, _, _ in prepared if message.seq is not None]
        seq_of_client_seq = dict(
            Message.objects.filter(session=session, client_run_id=run_id, client_seq__in=client_seqs).values_list(
                "client_seq", "seq"
            )
        ) if client_seqs else {}

        now = timezone.now()
        new_rows, duplicates, user_turns, seqs = [], 0, 0, []
        next_seq = session.last_seq
        for message, blocks, text in prepared:
            if message.seq is not None and message.seq in seq_of_client_seq:
                duplicates += 1
                seqs.append(seq_of_client_seq[message.seq])
                continue
            next_seq += 1
            seqs.append(next_seq)
            if message.seq is not None:
                seq_of_client_seq[message.seq] = next_seq
            new_rows.append(
                Message(
                    session=session,
                    seq=next_seq,
                    role=message.role,
                    content=blocks,
                    text=text,
                    client_run_id=run_id if message.seq is not None else "",
                    client_seq=message.seq,
                    metadata=message.metadata,
                    created_at=message.created_at or now,
                )
            )
            user_turns += message.role == Message.Role.USER
        if new_rows:
            Message.objects.bulk_create(new_rows)
            session.last_seq = next_seq
            session.message_count += len(new_rows)
            session.unscheduled_user_turns += user_turns
            # Arrival, not the messages' own times: an imported old conversation is not an idle session.
            session.last_activity_at = now
            if agent_id and not session.agent_id:
                session.agent_id = agent_id
            session.save(
                update_fields=[
                    "last_seq", "message_count", "unscheduled_user_turns", "last_activity_at", "agent_id", "updated_at"
                ]
            )
        job = extraction_services.extraction_after_ingest(session=session) if new_rows else None
    return IngestResult(session=session, accepted=len(new_rows), duplicates=duplicates, extraction_job=job, seqs=seqs)


def session_delete(*, session: Session) -> dict:
    """Delete a session with its messages and extraction jobs (memories extracted from it stay)."""
    with transaction.atomic():
        # Locked first, like every writer of the session's rows, so none can add a row mid-delete.
        locked = Session.objects.select_for_update().filter(pk=session.pk).first()
        if locked is None:
            return {"messages": 0}
        messages = locked.messages.count()
        admin_log_forget(Session.objects.filter(pk=locked.pk))
        locked.store = session.store
        events_publish([session_event(EventType.SESSION_DELETED, locked)])
        locked.delete()
    return {"messages": messages}


