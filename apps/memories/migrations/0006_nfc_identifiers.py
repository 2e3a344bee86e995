"""User, agent and session ids of memories and revisions in Unicode NFC, as the API now stores them.

Before, "José" sent composed and decomposed made two users: search, lists and erase saw only the form
they were given. This rewrites the stored ids in NFC (apps.core.identifiers) so both forms are one user.

Collisions: two live memories of one store with the same content, one per form of a user id, become
one user's duplicates, which the unique index on live content refuses. The one whose id was not in
NFC (of several such, all but the oldest) is retired as superseded by the other, with a revision
saying why, as consolidation retires a duplicate: nothing is deleted and both stay in history. Revisions are append-only (a trigger refuses
UPDATE); this migration lifts the trigger for its own transaction only, to rewrite the user_id column
(which erase matches on), and leaves the recorded before/after snapshots as they were written.
"""

import logging
import unicodedata
import uuid
from datetime import datetime

from django.db import migrations
from django.utils import timezone

logger = logging.getLogger(__name__)

LIVE_STATUSES = ("active", "pending_review")
# apps.memories.services.revisions.SNAPSHOT_FIELDS when this was written (a migration must not follow later edits).
SNAPSHOT_FIELDS = (
    "content", "provenance", "superseded_by_id", "memory_type", "status", "metadata", "tags", "importance",
    "confidence", "agent_id", "session_id", "valid_from", "valid_to", "expires_at",
)
TRIGGER = "memories_memoryrevision_append_only"


MAX_ID_LENGTH = 255  # every id column


def nfc(value: str) -> str:
    """The NFC form of an id, or the id as it is when that form would not fit its column (NFC can lengthen
    a string: some precomposed characters decompose); such an id is left alone, and logged."""
    normal = unicodedata.normalize("NFC", value)
    if len(normal) > MAX_ID_LENGTH:
        logger.warning("Id %r kept as it is: its NFC form is longer than %s characters.", value, MAX_ID_LENGTH)
        return value
    return normal


def ids_not_in_nfc(connection, model, columns) -> list:
    """Primary keys of the rows with a column not in NFC, found by PostgreSQL (IS NFC NORMALIZED, 13+)."""
    quote = connection.ops.quote_name
    where = " OR ".join(f"{quote(model._meta.get_field(name).column)} IS NOT NFC NORMALIZED" for name in columns)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {quote(model._meta.pk.column)} FROM {quote(model._meta.db_table)} WHERE {where}")
        return [row[0] for row in cursor.fetchall()]


def _snapshot(memory) -> dict:
    snapshot = {}
    for name in SNAPSHOT_FIELDS:
        value = getattr(memory, name)
        if isinstance(value, datetime):
            value = value.isoformat()
        elif isinstance(value, uuid.UUID):
            value = str(value)
        snapshot[name] = value
    return snapshot


def _retire_duplicate(Memory, MemoryRevision, memory, survivor, ids: dict) -> None:
    before = _snapshot(memory)
    memory.status, memory.superseded_by_id, memory.valid_to = "superseded", survivor.pk, timezone.now()
    for name, value in ids.items():
        setattr(memory, name, value)
    after = _snapshot(memory)
    Memory.objects.filter(pk=memory.pk).update(
        **ids, status=memory.status, superseded_by_id=survivor.pk, valid_to=memory.valid_to, updated_at=timezone.now()
    )
    MemoryRevision.objects.create(
        memory_id=memory.pk,
        store_id=memory.store_id,
        user_id=ids["user_id"],
        action="update",
        changed_fields=sorted(name for name in SNAPSHOT_FIELDS if before[name] != after[name]),
        before=before,
        after=after,
        actor_type="system",
        actor_label="migration memories.0006_nfc_identifiers",
        reason=f"same content as memory {survivor.pk} once the user id is in Unicode NFC",
    )
    logger.warning("Memory %s superseded by %s: the same content once its user id is in NFC.", memory.pk, survivor.pk)


def normalise_identifiers(apps, schema_editor) -> None:
    Memory = apps.get_model("memories", "Memory")
    MemoryRevision = apps.get_model("memories", "MemoryRevision")
    connection = schema_editor.connection

    # Revisions first: ALTER TABLE is refused once this transaction has queued trigger events on the table
    # (the foreign-key checks of the revisions written below).
    revision_pks = ids_not_in_nfc(connection, MemoryRevision, ("user_id",))
    if revision_pks:
        by_user: dict[str, list] = {}
        for pk, user_id in MemoryRevision.objects.filter(pk__in=revision_pks).values_list("pk", "user_id"):
            by_user.setdefault(user_id, []).append(pk)
        schema_editor.execute(f"ALTER TABLE memories_memoryrevision DISABLE TRIGGER {TRIGGER}")
        for user_id, pks in by_user.items():
            MemoryRevision.objects.filter(pk__in=pks).update(user_id=nfc(user_id))
        schema_editor.execute(f"ALTER TABLE memories_memoryrevision ENABLE TRIGGER {TRIGGER}")

    pks = ids_not_in_nfc(connection, Memory, ("user_id", "agent_id", "session_id"))
    # Oldest first: of two forms of one memory, the older stays live.
    memories = Memory.objects.filter(pk__in=pks).defer("embedding", "search_vector").order_by("created_at", "id")
    for memory in memories:
        ids = {name: nfc(getattr(memory, name)) for name in ("user_id", "agent_id", "session_id")}
        if ids == {name: getattr(memory, name) for name in ids}:
            continue  # PostgreSQL's Unicode tables are newer or older than Python's: nothing to do here
        survivor = None
        if memory.status in LIVE_STATUSES:
            survivor = (
                Memory.objects.filter(
                    store_id=memory.store_id, user_id=ids["user_id"], content_hash=memory.content_hash,
                    status__in=LIVE_STATUSES,
                )
                .exclude(pk=memory.pk)
                .only("pk")
                .first()
            )
        if survivor is not None:
            _retire_duplicate(Memory, MemoryRevision, memory, survivor, ids)
        else:
            Memory.objects.filter(pk=memory.pk).update(**ids)


class Migration(migrations.Migration):
    dependencies = [("memories", "0005_memory_verbose_name_plural")]

    operations = [migrations.RunPython(normalise_identifiers, migrations.RunPython.noop)]
