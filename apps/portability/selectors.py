"""Exports: a store as JSON Lines (export_store), and everything a store holds about one user as one JSON
document (the data-subject access request).

Both read in one REPEATABLE READ, read-only transaction, as pg_dump does: the counts in the header and the
records after it come from the same moment, whatever is written meanwhile. Rows come through server-side
cursors in primary-key order, a chunk at a time (`iterator(chunk_size=...)`, which also prefetches each chunk's
revisions or working state in one query), so memory use does not grow with the store.
"""

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection, transaction
from django.db.models import F, Prefetch, TextField
from django.db.models.functions import Cast
from django.utils import timezone

from apps.conversations.models import (
    Checkpoint,
    Message,
    ScratchpadEntry,
    Session,
    SessionEvent,
    TaskState,
    WorkingMemoryItem,
)
from apps.core.errors import PayloadTooLargeError
from apps.core.fields import iso_datetime
from apps.core.identifiers import normalise_identifier
from apps.extraction.models import ExtractionJob
from apps.memories.models import Memory, MemoryRevision, MemoryStore, WebhookDelivery
from apps.portability import records
from apps.portability.records import dumps

MEMORY_CHUNK = 1000
SESSION_CHUNK = 500
MESSAGE_CHUNK = 5000


@contextmanager
def _snapshot():
    """One consistent view for the whole export. Inside a transaction already (a test's), that one's view."""
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost:
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        yield


def _memories(store: MemoryStore, user_id: str | None, *, with_embeddings: bool):
    memories = Memory.objects.filter(store=store)
    if user_id is not None:
        memories = memories.filter(user_id=user_id)
    memories = memories.order_by("pk").defer("embedding", "search_vector").prefetch_related(
        Prefetch("revisions", queryset=MemoryRevision.objects.order_by("id"))
    )
    if with_embeddings:
        # pgvector's text form is a JSON array of the float4 values, shortest exact digits: written into the line
        # as it is, with no parsing into Python floats and no 17-digit float64 renderings of float4 values.
        memories = memories.annotate(embedding_text=Cast("embedding", TextField()))
    return memories.iterator(chunk_size=MEMORY_CHUNK)


def _memory_line(memory) -> str:
    line = dumps(records.memory_record(memory, memory.revisions.all()))
    embedding = getattr(memory, "embedding_text", None)
    return f'{line[:-1]},"embedding":{embedding}}}' if embedding is not None else line


def _task_state(session) -> TaskState | None:
    try:
        return session.task_state
    except TaskState.DoesNotExist:
        return None


def _sessions(store: MemoryStore, user_id: str | None):
    sessions = Session.objects.filter(store=store)
    if user_id is not None:
        sessions = sessions.filter(user_id=user_id)
    now = timezone.now()
    # Expired working-memory keys and checkpoints are already invisible (the purge deletes them later): not data.
    sessions = sessions.order_by("pk").select_related("task_state").prefetch_related(
        Prefetch("working_memory_items", queryset=WorkingMemoryItem.objects.live(now).order_by("key")),
        Prefetch("scratchpad_entries", queryset=ScratchpadEntry.objects.order_by("seq")),
        Prefetch("checkpoints", queryset=Checkpoint.objects.live(now).order_by("created_at", "id")),
        Prefetch("events", queryset=SessionEvent.objects.order_by("id")),
    )
    return sessions.iterator(chunk_size=SESSION_CHUNK)


def _session_record(session) -> dict:
    return records.session_record(
        session, working_memory=session.working_memory_items.all(), task_state=_task_state(session),
        scratchpad=session.scratchpad_entries.all(), checkpoints=session.checkpoints.all(),
        events=session.events.all(),
    )


def _messages(sessions):
    messages = Message.objects.filter(session__in=sessions).annotate(external_id=F("session__external_id"))
    return messages.order_by("session_id", "seq").iterator(chunk_size=MESSAGE_CHUNK)


def store_export_counts(*, store: MemoryStore, user_id: str | None = None) -> dict[str, int]:
    memories = Memory.objects.filter(store=store)
    revisions = MemoryRevision.objects.filter(store=store)
    sessions = Session.objects.filter(store=store)
    if user_id is not None:
        memories, revisions, sessions = (rows.filter(user_id=user_id) for rows in (memories, revisions, sessions))
    return {
        "memories": memories.count(),
        "revisions": revisions.count(),
        "sessions": sessions.count(),
        "messages": Message.objects.filter(session__in=sessions).count(),
    }


def store_export_lines(
    *, store: MemoryStore, with_embeddings: bool = False, user_id: str | None = None
) -> Iterator[str]:
    """The store (or one user's part of it) as JSON Lines, each line without its newline: a header, then one
    line per memory (with its revisions; with its embedding if asked), per session (with its working state,
    checkpoints and lifecycle log), per message."""
    user_id = normalise_identifier(user_id) if user_id is not None else None
    with _snapshot():
        yield dumps({
            "type": "header",
            "format": records.STORE_EXPORT_FORMAT,
            "version": records.FORMAT_VERSION,
            "exported_at": iso_datetime(timezone.now()),
            "tenant": {"slug": store.tenant.slug, "name": store.tenant.name},
            "store": records.store_record(store),
            "user_id": user_id,
            "with_embeddings": with_embeddings,
            "counts": store_export_counts(store=store, user_id=user_id),
        })
        for memory in _memories(store, user_id, with_embeddings=with_embeddings):
            yield _memory_line(memory)
        for session in _sessions(store, user_id):
            yield dumps(_session_record(session))
        sessions = Session.objects.filter(store=store)
        if user_id is not None:
            sessions = sessions.filter(user_id=user_id)
        for message in _messages(sessions):
            yield dumps(records.message_record(message, message.external_id))


class _BoundedDocument:
    """A JSON document written piece by piece, refused once it passes `max_bytes` (before it takes more memory)."""

    def __init__(self, max_bytes: int, *, store: MemoryStore, user_id: str):
        self.parts: list[bytes] = []
        self.size = 0
        self.max_bytes = max_bytes
        self.store = store
        self.user_id = user_id

    def write(self, text: str) -> None:
        data = text.encode("utf-8")
        self.size += len(data)
        if self.size > self.max_bytes:
            raise PayloadTooLargeError(
                f"Everything store {self.store.name!r} holds about user {self.user_id!r} is more than "
                f"{self.max_bytes:,} bytes as one document. Export it as JSON Lines on the server instead: "
                f"manage.py export_store {self.store.tenant.slug} {self.store.name} --user <user id>.",
                code="export_too_large",
                details={"max_bytes": self.max_bytes},
            )
        self.parts.append(data)

    def write_list(self, name: str, texts, *, first: bool = False) -> int:
        self.write(f'{"" if first else ","}"{name}":[')
        count = 0
        for text in texts:
            self.write(f",{text}" if count else text)
            count += 1
        self.write("]")
        return count

    def value(self) -> bytes:
        return b"".join(self.parts)


def user_export_document(*, store: MemoryStore, user_id: str, max_bytes: int) -> bytes:
    """Everything `store` holds about one user, as one JSON document: every memory in every status with its
    history and provenance, every session with its messages, working state, checkpoints and lifecycle log, the
    extraction jobs that read those messages, and the webhook deliveries that carried the user's data out.
    PayloadTooLargeError once it passes `max_bytes`."""
    user_id = normalise_identifier(user_id)
    document = _BoundedDocument(max_bytes, store=store, user_id=user_id)
    with _snapshot():
        head = dumps({"format": records.USER_EXPORT_FORMAT, "version": records.FORMAT_VERSION,
                      "exported_at": iso_datetime(timezone.now()), "store": store.name, "user_id": user_id})
        document.write(head[:-1] + ",")
        counts = {"memories": document.write_list(
            "memories", (_memory_line(memory) for memory in _memories(store, user_id, with_embeddings=False)),
            first=True,
        )}
        sessions, message_count = {}, 0
        document.write(',"sessions":[')
        for session in _sessions(store, user_id):
            record = dumps(_session_record(session))
            document.write(("," if sessions else "") + record[:-1] + ',"messages":[')
            messages = Message.objects.filter(session=session).order_by("seq").iterator(chunk_size=MESSAGE_CHUNK)
            for index, message in enumerate(messages):
                document.write(("," if index else "") + dumps(records.message_record(message, session.external_id)))
                message_count += 1
            document.write("]}")
            sessions[session.pk] = session.external_id
        document.write("]")
        counts["sessions"], counts["messages"] = len(sessions), message_count
        jobs = ExtractionJob.objects.filter(store=store, session__user_id=user_id).order_by("created_at", "id")
        counts["extraction_jobs"] = document.write_list("extraction_jobs", (
            dumps(records.extraction_job_record(job, sessions.get(job.session_id, ""))) for job in jobs.iterator()
        ))
        deliveries = WebhookDelivery.objects.filter(webhook__store=store, user_id=user_id).select_related("webhook")
        counts["webhook_deliveries"] = document.write_list("webhook_deliveries", (
            dumps(records.webhook_delivery_record(delivery))
            for delivery in deliveries.order_by("created_at", "id").iterator()
        ))
        document.write(f',"counts":{dumps(counts)}}}')
    return document.value()
