"""Session ids, user and agent ids of sessions, and run ids of messages in Unicode NFC, as the API now
stores them (apps.core.identifiers; memories and revisions: memories.0006_nfc_identifiers).

Collisions are left as they are, and logged:
- a session whose id in NFC is already another session's id in the same store (the client used both
  forms and got two sessions). Merging two transcripts, their seqs, working state and checkpoints is
  not something to guess at in a migration; the API (which normalises the id in the URL) now reaches
  the NFC one, the other stays visible in the admin. Its user and agent ids are normalised all the
  same, so erasing the user still finds it.
- a message whose run id in NFC repeats a (run id, seq) already in its session: it keeps its run id,
  which only means a retry of that old message in the other form would not be recognised.
"""

import logging
import unicodedata

from django.db import IntegrityError, migrations, transaction

logger = logging.getLogger(__name__)


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


def _update_unless_duplicate(queryset, **values) -> bool:
    try:
        with transaction.atomic():  # a savepoint: the migration goes on after a refused row
            queryset.update(**values)
        return True
    except IntegrityError:
        return False


def normalise_identifiers(apps, schema_editor) -> None:
    Session = apps.get_model("conversations", "Session")
    Message = apps.get_model("conversations", "Message")
    connection = schema_editor.connection

    session_pks = ids_not_in_nfc(connection, Session, ("external_id", "user_id", "agent_id"))
    for session in Session.objects.filter(pk__in=session_pks).order_by("created_at", "id"):
        people = {"user_id": nfc(session.user_id), "agent_id": nfc(session.agent_id)}
        row = Session.objects.filter(pk=session.pk)
        if not _update_unless_duplicate(row, external_id=nfc(session.external_id), **people):
            row.update(**people)
            logger.warning(
                "Session %s keeps its id, not in NFC: store %s has a session with that id in NFC.",
                session.pk, session.store_id,
            )

    message_pks = ids_not_in_nfc(connection, Message, ("client_run_id",))
    by_run: dict[tuple, list] = {}
    for pk, session_id, run_id in Message.objects.filter(pk__in=message_pks).values_list(
        "pk", "session_id", "client_run_id"
    ):
        by_run.setdefault((session_id, run_id), []).append(pk)
    for (_, run_id), pks in by_run.items():
        if _update_unless_duplicate(Message.objects.filter(pk__in=pks), client_run_id=nfc(run_id)):
            continue
        for pk in pks:
            if not _update_unless_duplicate(Message.objects.filter(pk=pk), client_run_id=nfc(run_id)):
                logger.warning("Message %s keeps its run id, not in NFC: its session has that run and seq in NFC.", pk)


class Migration(migrations.Migration):
    dependencies = [("conversations", "0004_working_memory_version_stamps")]

    operations = [migrations.RunPython(normalise_identifiers, migrations.RunPython.noop)]
