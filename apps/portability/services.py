"""Importing a store's JSON Lines export (apps.portability.selectors.store_export_lines) into a store.

- **Ids**: a record keeps its id when it comes home, into the store it was exported from (the same store id,
  which a store recreated from the header keeps when that id is free, e.g. on a new server); into any other
  store each id becomes uuid5(target store id, original id). Deterministic either way, so a rerun finds what an
  earlier run wrote, supersede links and episode memories point at the right rows without a lookup table, and
  copies in two stores never collide.
- **Idempotent, insert-only**: a memory whose id is there, a session whose session id is there, a message whose
  (session, seq) is there is left as it is; importing the same file twice changes nothing.
- **Batches**: each batch of lines is checked whole, embedded (outside any transaction), then written in one
  transaction: a bad line or a crash leaves whole batches, and a rerun completes the rest.
- **History**: the revisions of an imported memory come with it, followed by one `create` revision of its own
  (reason "Imported from …", context `import`): an import is a change, and the history says so.
- **Embeddings** are carried when the file has them and the header's embedder (provider, model, dimension) is the
  target store's; otherwise computed with the store's embedder, a batch at a time.
- An import announces nothing on the live events and webhooks: a million `memory.created` would flood them.
"""

import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from django.db import IntegrityError, connection, transaction

from apps.conversations.models import (
    Checkpoint,
    Message,
    ScratchpadEntry,
    Session,
    SessionEvent,
    TaskState,
    WorkingMemoryItem,
)
from apps.core.actors import Actor
from apps.core.bulk import copy_rows
from apps.core.errors import ConflictError
from apps.memories.models import Memory, MemoryRevision, MemoryStore
from apps.memories.normalise import content_hash
from apps.memories.quotas import check_memory_quota
from apps.memories.services import memory_snapshot, store_create
from apps.memories.services.revisions import revision_for
from apps.portability import records
from apps.portability.parsing import ImportFileError, Record, parse_line
from apps.tenancy.models import Tenant

# Records per transaction: a memory batch is also one call to the embedder.
BATCH_SIZES = {"memory": 500, "session": 200, "message": 2000}
TIMES = ("created_at", "updated_at")


@dataclass
class ImportResult:
    store: MemoryStore
    created_store: bool
    embeddings: str  # "carried" or "computed"
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys((
        "memories", "memories_present", "memories_duplicate", "revisions", "sessions", "sessions_present",
        "messages", "messages_present", "links",
    ), 0))


@dataclass
class _Memory:
    line: int
    source_id: uuid.UUID
    successor: uuid.UUID | None  # the source id of the memory that superseded it
    memory: Memory
    revisions: list[MemoryRevision]
    embedding: list[float] | None


# --- Header and target store ------------------------------------------------------------------------


def _read_header(number: int, text: str) -> Record:
    header = Record(parse_line(number, text), number, "header")
    if header.data.get("type") != "header" or header.data.get("format") != records.STORE_EXPORT_FORMAT:
        raise ImportFileError(
            f"line {number}: not a memoryhub store export (the first line must be its header, "
            f'"type": "header", "format": "{records.STORE_EXPORT_FORMAT}").', details={"line": number})
    version = header.integer("version")
    if version > records.FORMAT_VERSION:
        raise ImportFileError(
            f"line {number}: the file is format version {version}, written by a newer memoryhub; this one reads "
            f"version {records.FORMAT_VERSION}.", details={"line": number})
    return header


def _target_store(tenant: Tenant, name: str, header: Record) -> tuple[MemoryStore, bool]:
    store = MemoryStore.objects.filter(tenant=tenant, name=name).select_related("tenant").first()
    if store is not None:
        return store, False
    config = header.nested("store", header.data.get("store"), "")
    exported_id = config.uuid("id")
    settings = {key: config.data[key] for key in records.STORE_FIELDS if key in config.data and key != "name"}
    store = store_create(
        tenant=tenant, name=name, **settings,
        # Home again (a new server, or the store was deleted): its memories keep their ids.
        store_id=None if MemoryStore.objects.filter(pk=exported_id).exists() else exported_id,
    )
    return store, True


def _embedder_of(config: Record) -> tuple:
    return (config.text("embedding_provider"), config.text("embedding_model"), config.integer("embedding_dimension"))


# --- The import ------------------------------------------------------------------------------------


class _Importer:
    def __init__(self, *, store: MemoryStore, header: Record, carry: bool, actor: Actor, result: ImportResult):
        self.store = store
        self.carry = carry
        self.actor = actor
        self.result = result
        config = header.nested("store", header.data.get("store"), "")
        self.exported_store_id = config.uuid("id")
        self.home = self.exported_store_id == store.pk
        tenant = header.data.get("tenant") if isinstance(header.data.get("tenant"), dict) else {}
        self.source = f"{tenant.get('slug', '?')}/{config.data.get('name', '?')}"
        self.exported_at = header.data.get("exported_at")
        self.seen = {"memory": 0, "session": 0, "message": 0, "revision": 0}
        # Sessions the target had before, not from this file: their messages are not merged into them.
        self.foreign_sessions: set[str] = set()

    def target_id(self, source_id: uuid.UUID) -> uuid.UUID:
        return source_id if self.home else uuid.uuid5(self.store.pk, str(source_id))

    def parse(self, kind: str, record: Record):
        self.seen[kind] += 1
        return {"memory": self._parse_memory, "session": self._parse_session, "message": self._parse_message}[kind](
            record)

    def flush(self, kind: str | None, batch: list) -> None:
        if not batch:
            return
        write = {"memory": self._write_memories, "session": self._write_sessions, "message": self._write_messages}
        try:
            write[kind](batch)
        except IntegrityError as exc:  # another writer (a second import of the file?) got there first
            first, last = (item.line if isinstance(item, _Memory) else item[0] for item in (batch[0], batch[-1]))
            raise ConflictError(
                f"lines {first}-{last}: {exc}. Nothing of these lines was written; run the import again "
                f"(it skips what is already there).", code="import_conflict") from exc

    # --- Memories

    def _map_snapshot(self, snapshot: dict | None) -> dict | None:
        if isinstance(snapshot, dict) and snapshot.get("superseded_by_id"):
            try:
                return {**snapshot, "superseded_by_id": str(self.target_id(uuid.UUID(snapshot["superseded_by_id"])))}
            except (TypeError, ValueError, AttributeError):
                return snapshot
        return snapshot

    def _parse_memory(self, record: Record) -> _Memory:
        store = self.store
        content = record.text("content", blank=False)
        if len(content) > store.max_content_length:
            record.fail("content", f"{len(content)} characters; store {store.name!r} allows "
                                   f"{store.max_content_length} (raise its max_content_length to import it)")
        source_id = record.uuid("id")
        memory = Memory(
            id=self.target_id(source_id), store=store, user_id=record.identifier("user_id", blank=False),
            agent_id=record.identifier("agent_id", ""), session_id=record.identifier("session_id", ""),
            content=content, memory_type=record.choice("memory_type", Memory.Type.values, Memory.Type.FACT),
            metadata=record.json_object("metadata", {}), tags=record.text_list("tags", []),
            importance=record.number("importance", 0.5), confidence=record.number("confidence", 1.0),
            status=record.choice("status", Memory.Status.values, Memory.Status.ACTIVE),
            source=record.choice("source", Memory.Source.values, Memory.Source.IMPORT),
            provenance=record.json_object("provenance", {}), valid_from=record.when("valid_from", nullable=False),
            valid_to=record.when("valid_to", None), expires_at=record.when("expires_at", None),
            content_hash=content_hash(content), embedding_dimension=store.embedding_dimension,
            created_at=record.when("created_at", nullable=False), updated_at=record.when("updated_at", nullable=False),
        )
        revisions = []
        for data in record.object_list("revisions", []):
            revision = record.nested("revisions", data, "")
            revisions.append(MemoryRevision(
                memory=memory, store_id=store.pk, user_id=memory.user_id,
                action=revision.choice("action", MemoryRevision.Action.values),
                changed_fields=revision.text_list("changed_fields", [], max_length=50),
                before=self._map_snapshot(revision.json_object("before", None, nullable=True)),
                after=self._map_snapshot(revision.json_object("after", None, nullable=True)),
                actor_type=revision.choice("actor_type", MemoryRevision.ActorType.values),
                actor_id=revision.text("actor_id", "", max_length=64),
                actor_label=revision.text("actor_label", "", max_length=255),
                reason=revision.text("reason", ""), context=revision.json_object("context", {}),
                created_at=revision.when("created_at", nullable=False),
            ))
        self.seen["revision"] += len(revisions)
        return _Memory(
            line=record.line, source_id=source_id, successor=record.uuid("superseded_by", None, nullable=True),
            memory=memory, revisions=revisions,
            embedding=record.vector("embedding", store.embedding_dimension) if self.carry else None,
        )

    def _write_memories(self, batch: list[_Memory]) -> None:
        store = self.store
        successors = {self.target_id(item.successor) for item in batch if item.successor}
        wanted = {item.memory.pk for item in batch} | successors
        found = dict(Memory.objects.filter(pk__in=wanted).values_list("pk", "store_id"))
        for item in batch:
            if found.get(item.memory.pk, store.pk) != store.pk:
                raise ImportFileError(f"line {item.line}: memory {item.source_id} is already in another store: "
                                      f"this file's ids were changed by hand?", details={"line": item.line})
        new = [item for item in batch if item.memory.pk not in found]
        self.result.counts["memories_present"] += len(batch) - len(new)
        new = self._without_live_duplicates(new)

        missing = [item for item in new if item.embedding is None]
        texts = list(dict.fromkeys(item.memory.content for item in missing))
        vectors = dict(zip(texts, store.embedder.embed(texts), strict=True)) if texts else {}
        for item in missing:
            item.embedding = vectors[item.memory.content]

        arriving = {item.memory.pk for item in new}
        revisions = []
        for item in new:
            memory = item.memory
            memory.embedding = item.embedding
            successor = self.target_id(item.successor) if item.successor else None
            memory.superseded_by_id = successor
            after = memory_snapshot(memory)  # the memory as imported, its link included
            if successor and successor not in arriving and found.get(successor) != store.pk:
                # Its successor comes later in the file: linked once it is there (link_superseded).
                memory.superseded_by_id = None
            revisions.extend(item.revisions)
            revisions.append(revision_for(
                memory=memory, action=MemoryRevision.Action.CREATE, actor=self.actor, before=None, after=after,
                reason=f"Imported from {self.source} (exported {self.exported_at})",
                context={"import": {"source": self.source, "source_store_id": str(self.exported_store_id),
                                    "source_memory_id": str(item.source_id), "exported_at": self.exported_at,
                                    "embedding": "carried" if self.carry else "computed"}},
            ))
        with transaction.atomic():
            # An import adds memories like any writer: past the tenant's quota it stops, its earlier batches kept
            # (a rerun once there is room goes on from there).
            check_memory_quota(store, adding=len(new))
            copy_rows(Memory, [item.memory for item in new], exclude=("search_vector",), verbatim=TIMES)
            copy_rows(MemoryRevision, revisions, exclude=("id",))
        self.result.counts["memories"] += len(new)
        self.result.counts["revisions"] += len(revisions)

    def _without_live_duplicates(self, items: list[_Memory]) -> list[_Memory]:
        """Leave out live memories whose content the user already has live in the store (the store allows one)."""
        live = [item for item in items if item.memory.status in Memory.LIVE_STATUSES]
        if not live:
            return items
        existing = set(Memory.objects.filter(
            store=self.store, status__in=Memory.LIVE_STATUSES, user_id__in={item.memory.user_id for item in live},
            content_hash__in={item.memory.content_hash for item in live},
        ).values_list("user_id", "content_hash"))
        kept = []
        for item in items:
            key = (item.memory.user_id, item.memory.content_hash)
            if item.memory.status in Memory.LIVE_STATUSES:
                if key in existing:
                    self.result.counts["memories_duplicate"] += 1
                    continue
                existing.add(key)
            kept.append(item)
        return kept

    def link_superseded(self) -> None:
        """Point memories at successors that came later in the file (or in a later run): the link their import
        revision records. Set-based, over the whole store, so a rerun after a crash completes it too."""
        with connection.cursor() as cursor:
            cursor.execute(
                f"""
                UPDATE {Memory._meta.db_table} AS memory
                   SET superseded_by_id = (revision.after->>'superseded_by_id')::uuid
                  FROM {MemoryRevision._meta.db_table} AS revision
                 WHERE revision.memory_id = memory.id
                   AND revision.store_id = %(store)s AND memory.store_id = %(store)s
                   AND memory.superseded_by_id IS NULL
                   AND revision.action = 'create' AND revision.context ? 'import'
                   AND revision.after->>'superseded_by_id' IS NOT NULL
                   AND EXISTS (SELECT 1 FROM {Memory._meta.db_table} AS successor
                                WHERE successor.id = (revision.after->>'superseded_by_id')::uuid
                                  AND successor.store_id = %(store)s)
                """,
                {"store": self.store.pk},
            )
            self.result.counts["links"] += cursor.rowcount

    # --- Sessions

    def _parse_session(self, record: Record) -> tuple:
        source_id = record.uuid("id")
        extracted_seq = record.integer("extracted_seq", 0)
        episode = record.uuid("episode_memory_id", None, nullable=True)
        session = Session(
            id=self.target_id(source_id), store=self.store, external_id=record.identifier("session_id", blank=False),
            user_id=record.identifier("user_id", blank=False), agent_id=record.identifier("agent_id", ""),
            status=record.choice("status", Session.Status.values, Session.Status.ACTIVE),
            metadata=record.json_object("metadata", {}), message_count=record.integer("message_count", 0),
            last_seq=record.integer("last_seq", 0), extracted_seq=extracted_seq,
            # The export carries no extraction jobs: what was scheduled but not extracted is scheduled again here.
            scheduled_seq=extracted_seq, unscheduled_user_turns=0,
            scratchpad_seq=record.integer("scratchpad_seq", 0),
            working_memory_version=record.integer("working_memory_version", 0, high=2**63 - 1),
            last_activity_at=record.when("last_activity_at", nullable=False), ended_at=record.when("ended_at", None),
            episode_memory_id=self.target_id(episode) if episode else None,
            created_at=record.when("created_at", nullable=False), updated_at=record.when("updated_at", nullable=False),
        )
        rows: dict[type, list] = {WorkingMemoryItem: [], TaskState: [], ScratchpadEntry: [], Checkpoint: [],
                                  SessionEvent: []}
        for data in record.object_list("working_memory", []):
            item = record.nested("working_memory", data, "item")
            key = item.text("key", blank=False, max_length=256)
            if key.startswith("_"):
                item.fail("key", "keys starting with '_' are reserved")
            value = item.json_value("value")
            rows[WorkingMemoryItem].append(WorkingMemoryItem(
                session=session, key=key, value=value, size_bytes=len(records.dumps(value).encode("utf-8")),
                version=item.integer("version", 0, high=2**63 - 1), expires_at=item.when("expires_at", None),
                created_at=item.when("created_at", nullable=False), updated_at=item.when("updated_at", nullable=False),
            ))
        task = record.json_object("task_state", None, nullable=True)
        if task is not None:
            task = record.nested("task_state", task, "")
            rows[TaskState].append(TaskState(
                session=session, description=task.text("description", ""),
                current_step=task.integer("current_step", 0), total_steps=task.integer("total_steps", None, nullable=True),
                progress=task.number("progress", 0.0, high=100.0),
                status=task.choice("status", TaskState.Status.values, TaskState.Status.PENDING),
                metadata=task.json_object("metadata", {}), started_at=task.when("started_at", nullable=False),
                updated_at=task.when("updated_at", nullable=False), finished_at=task.when("finished_at", None),
            ))
        for data in record.object_list("scratchpad", []):
            entry = record.nested("scratchpad", data, "entry")
            rows[ScratchpadEntry].append(ScratchpadEntry(
                session=session, seq=entry.integer("seq"), content=entry.text("content"),
                metadata=entry.json_object("metadata", {}), created_at=entry.when("created_at", nullable=False),
            ))
        for data in record.object_list("checkpoints", []):
            checkpoint = record.nested("checkpoints", data, "checkpoint")
            created_at = checkpoint.when("created_at", nullable=False)
            rows[Checkpoint].append(Checkpoint(
                id=self.target_id(checkpoint.uuid("id")), session=session,
                description=checkpoint.text("description", ""),
                kind=checkpoint.choice("kind", Checkpoint.Kind.values, Checkpoint.Kind.MANUAL),
                snapshot=checkpoint.json_object("snapshot"), message_seq=checkpoint.integer("message_seq", 0),
                extracted_seq=checkpoint.integer("extracted_seq", 0),
                working_memory_items=checkpoint.integer("working_memory_items", 0),
                scratchpad_entries=checkpoint.integer("scratchpad_entries", 0),
                has_task_state=checkpoint.boolean("has_task_state", False),
                size_bytes=checkpoint.integer("size_bytes", 0), expires_at=checkpoint.when("expires_at", None),
                created_by=checkpoint.text("created_by", "", max_length=255), created_at=created_at,
                updated_at=created_at,
            ))
        for data in record.object_list("events", []):
            event = record.nested("events", data, "event")
            checkpoint_id = event.uuid("checkpoint_id", None, nullable=True)
            rows[SessionEvent].append(SessionEvent(
                session=session, event=event.choice("event", SessionEvent.Event.values),
                from_status=event.text("from_status", "", max_length=20), to_status=event.text("to_status", max_length=20),
                checkpoint_id=self.target_id(checkpoint_id) if checkpoint_id else None,
                data=event.json_object("data", {}), duration_ms=event.integer("duration_ms", 0),
                actor_type=event.text("actor_type", max_length=10), actor_id=event.text("actor_id", "", max_length=64),
                actor_label=event.text("actor_label", "", max_length=255),
                created_at=event.when("created_at", nullable=False),
            ))
        return record.line, source_id, session, rows

    def _write_sessions(self, batch: list[tuple]) -> None:
        present = dict(Session.objects.filter(
            store=self.store, external_id__in=[session.external_id for _, _, session, _ in batch]
        ).values_list("external_id", "pk"))
        episodes = set(Memory.objects.filter(
            store=self.store, pk__in=[session.episode_memory_id for _, _, session, _ in batch if session.episode_memory_id]
        ).values_list("pk", flat=True))
        new, children = [], {}
        for _, _, session, rows in batch:
            if session.external_id in present:
                if present[session.external_id] != session.pk:
                    self.foreign_sessions.add(session.external_id)
                continue
            if session.episode_memory_id not in episodes:
                session.episode_memory_id = None
            new.append(session)
            for model, instances in rows.items():
                children.setdefault(model, []).extend(instances)
        with transaction.atomic():
            copy_rows(Session, new, verbatim=TIMES)
            copy_rows(WorkingMemoryItem, children.get(WorkingMemoryItem, []), exclude=("id",))
            copy_rows(TaskState, children.get(TaskState, []))
            copy_rows(ScratchpadEntry, children.get(ScratchpadEntry, []), exclude=("id",))
            copy_rows(Checkpoint, children.get(Checkpoint, []), verbatim=TIMES)
            copy_rows(SessionEvent, children.get(SessionEvent, []), exclude=("id",))
        self.result.counts["sessions"] += len(new)
        self.result.counts["sessions_present"] += len(batch) - len(new)

    # --- Messages

    def _parse_message(self, record: Record) -> tuple:
        content = record.json_value("content")
        if not isinstance(content, str | list):
            record.fail("content", "must be a string or a list of content blocks")
        message = Message(
            seq=record.integer("seq"), role=record.choice("role", Message.Role.values), content=content,
            text=record.text("text", ""), client_run_id=record.identifier("run_id", ""),
            client_seq=record.integer("client_seq", None, nullable=True), metadata=record.json_object("metadata", {}),
            created_at=record.when("created_at", nullable=False),
        )
        return record.line, record.identifier("session_id", blank=False), message

    def _write_messages(self, batch: list[tuple]) -> None:
        external_ids = {external_id for _, external_id, _ in batch}
        sessions = dict(Session.objects.filter(store=self.store, external_id__in=external_ids)
                        .values_list("external_id", "pk"))
        new = []
        for line, external_id, message in batch:
            if external_id not in sessions:
                raise ImportFileError(
                    f"line {line}: message of session {external_id!r}, which is neither earlier in the file nor in "
                    f"store {self.store.name!r}.", details={"line": line})
            if external_id not in self.foreign_sessions:
                message.session_id = sessions[external_id]
                new.append(message)
        present = set(Message.objects.filter(
            session_id__in={message.session_id for message in new}, seq__in={message.seq for message in new}
        ).values_list("session_id", "seq"))
        new = [message for message in new if (message.session_id, message.seq) not in present]
        with transaction.atomic():
            copy_rows(Message, new, exclude=("id",))
        self.result.counts["messages"] += len(new)
        self.result.counts["messages_present"] += len(batch) - len(new)

    def check_counts(self, header: Record) -> None:
        """A file that ends at a line boundary parses to the end: only the header's counts show what is missing."""
        counts = header.nested("counts", header.data.get("counts"), "")
        for kind, name in (("memory", "memories"), ("session", "sessions"), ("message", "messages"),
                           ("revision", "revisions")):
            expected = counts.integer(name, None, nullable=True, high=2**63 - 1)
            if expected is not None and expected != self.seen[kind]:
                raise ImportFileError(
                    f"the header announces {expected} {name} and the file holds {self.seen[kind]}: "
                    f"{'it was cut short (a truncated file?)' if self.seen[kind] < expected else 'lines were added'}. "
                    f"Everything before was imported.", details={name: {"expected": expected, "found": self.seen[kind]}})


def store_import(
    *, tenant: Tenant, store_name: str, lines: Iterable[str], actor: Actor, reembed: bool = False,
    progress: Callable[[ImportResult], None] | None = None,
) -> ImportResult:
    """Import a store export (JSON Lines) into `store_name` of `tenant`, creating the store from the header when
    it is missing; idempotent. ImportFileError names the first bad line; the batches before it stay written."""
    numbered = ((number, text) for number, text in enumerate(lines, start=1) if text.strip())
    first = next(numbered, None)
    if first is None:
        raise ImportFileError("the file is empty: a store export starts with its header line.")
    header = _read_header(*first)
    file_embedder = _embedder_of(header.nested("store", header.data.get("store"), ""))
    with_embeddings = header.boolean("with_embeddings", False)
    store, created = _target_store(tenant, store_name, header)
    same_embedder = file_embedder == (store.embedding_provider, store.embedding_model, store.embedding_dimension)
    if with_embeddings and not same_embedder and not reembed:
        raise ConflictError(
            f"The file's vectors come from {'/'.join(map(str, file_embedder))}; store {store.name!r} uses "
            f"{store.embedding_provider}/{store.embedding_model}/{store.embedding_dimension}, and vectors of different "
            f"models cannot be compared. Import with --reembed to compute them with the store's embedder.",
            code="embedder_conflict")
    carry = with_embeddings and same_embedder and not reembed
    result = ImportResult(store=store, created_store=created, embeddings="carried" if carry else "computed")
    importer = _Importer(store=store, header=header, carry=carry, actor=actor, result=result)

    kind, batch = None, []
    for number, text in numbered:
        data = parse_line(number, text)
        record_type = data.get("type")
        if record_type not in BATCH_SIZES:
            raise ImportFileError(f"line {number}: unknown record type {record_type!r} (memory, session or message).",
                                  details={"line": number})
        if record_type != kind:
            importer.flush(kind, batch)
            kind, batch = record_type, []
        batch.append(importer.parse(record_type, Record(data, number, record_type)))
        if len(batch) >= BATCH_SIZES[kind]:
            importer.flush(kind, batch)
            batch = []
            if progress is not None:
                progress(result)
    importer.flush(kind, batch)
    importer.link_superseded()
    importer.check_counts(header)
    return result
