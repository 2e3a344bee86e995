"""After a user is erased, no column of any table holds their words: memories, history, conversations,
working state, checkpoints, extraction results, stored Idempotency-Key responses, the admin's log.

The scan reads every text-like column of every table in the schema, so a table added later is covered
without touching this test. Another user of the same store keeps different words; finding theirs proves
the scan can see what it looks for, and that erasing one user takes nothing of the other's.
"""

import json

import pytest
from django.contrib.admin.models import LogEntry
from django.db import connection
from django.urls import reverse
from django_q.models import Task

from apps.memories.models import Memory
from apps.tenancy.models import IdempotencyRecord

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("inline_extraction")]

TARGET = "zelda-erase-9f3"
TARGET_SESSION = f"{TARGET}-chat"
OTHER = "otto-keep-5b1"
OTHER_SESSION = f"{OTHER}-chat"
# Made-up words, each written one way only, so a hit names the path that kept it.
TARGET_WORDS = [
    "quokkaberry",  # a memory added with an Idempotency-Key
    "marzipantler",  # the same memory changed with PATCH
    "wibblewort",  # the same memory changed in the admin ("Recent actions")
    "Vexlantia",  # a message, and the memory extracted from it by a flush
    "flurbtastic",  # a working-memory value (its stored response has no user_id)
    "scratchzyx",  # a scratchpad note
    "plumbusquest",  # the task description, also in the checkpoint and the episode
    "snapshotrix",  # a checkpoint's description
    TARGET,  # the user id, and the session id made from it
]
OTHER_WORDS = ["otterplum", "Ottershire", "otterticket", OTHER]
TEXT_TYPES = ("text", "character varying", "character", "json", "jsonb", "ARRAY", "tsvector")


def _columns() -> list[tuple[str, str]]:
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT c.table_name, c.column_name
              FROM information_schema.columns c
              JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
             WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' AND c.data_type = ANY(%s)
             ORDER BY 1, 2
            """,
            [list(TEXT_TYPES)],
        )
        return cursor.fetchall()


def _where_found(words: list[str]) -> dict[str, list[str]]:
    """word -> ["table.column", ...] of every column (cast to text) that contains it, ignoring case."""
    found = {word: [] for word in words}
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        for table, column in _columns():
            cursor.execute(
                f"SELECT {quote(column)}::text FROM {quote(table)} WHERE {quote(column)}::text ILIKE ANY(%s)",
                [[f"%{word}%" for word in words]],
            )
            for (value,) in cursor.fetchall():
                for word in words:
                    if word.lower() in value.lower() and f"{table}.{column}" not in found[word]:
                        found[word].append(f"{table}.{column}")
    # django-q2 pickles task arguments and results (base64 in a text column, unreadable to ILIKE).
    for task in Task.objects.all():
        text = repr((task.name, task.func, task.args, task.kwargs, task.result)).lower()
        for word in words:
            if word.lower() in text:
                found[word].append("django_q_task (pickled)")
    return found


def _keyed(client, method, path, body=None, *, key):
    response = getattr(client, method)(path, body, format="json", HTTP_IDEMPOTENCY_KEY=key)
    assert response.status_code < 300, (path, response.content)
    return response


def _admin_edit(client, memory, content):
    count = memory.revisions.count()
    response = client.post(reverse("admin:memories_memory_change", args=[memory.pk]), {
        "content": content, "memory_type": memory.memory_type, "status": memory.status,
        "metadata": json.dumps(memory.metadata), "tags": ",".join(memory.tags),
        "importance": str(memory.importance), "confidence": str(memory.confidence),
        "revisions-TOTAL_FORMS": str(count), "revisions-INITIAL_FORMS": str(count),
        "revisions-MIN_NUM_FORMS": "0", "revisions-MAX_NUM_FORMS": "1000",
    })
    assert response.status_code == 302, response.content


def _say(client, text, *, user_id, session_id, key):
    """Post a user message (a new session the first time) and return the session's URL."""
    session = f"/api/v1/stores/main/sessions/{session_id}"
    _keyed(client, "post", f"{session}/messages", {"user_id": user_id, "messages": [{"role": "user", "content": text}]},
           key=key)
    return session


def test_erasing_a_user_leaves_none_of_their_words_in_any_table(tenant_a, client, configure_store):
    configure_store(tenant_a.store, extraction_config={"every_n_turns": 5})
    api = tenant_a.client("write")

    # The user to erase: a memory, edited through the API and in the admin.
    created = _keyed(api, "post", "/api/v1/stores/main/memories",
                     {"user_id": TARGET, "content": "Zelda loves quokkaberry pie", "session_id": TARGET_SESSION},
                     key="t-memory").json()["memory"]
    _keyed(api, "patch", f"/api/v1/stores/main/memories/{created['id']}", {"content": "Zelda loves marzipantler"},
           key="t-patch")
    client.force_login(tenant_a.admin)
    _admin_edit(client, Memory.objects.get(pk=created["id"]), "Zelda grows wibblewort")

    # ... a conversation with working state, a checkpoint, a flush that extracts, and the end of it.
    session = _say(api, "I live in Vexlantia", user_id=TARGET, session_id=TARGET_SESSION, key="t-messages")
    _keyed(api, "put", f"{session}/working-memory/ticket", {"value": {"code": "flurbtastic"}}, key="t-working")
    _keyed(api, "post", f"{session}/scratchpad", {"content": "scratchzyx: check the ferry"}, key="t-scratchpad")
    _keyed(api, "put", f"{session}/task-state", {"description": "Book the plumbusquest trip"}, key="t-task")
    _keyed(api, "post", f"{session}/checkpoints", {"description": "before snapshotrix"}, key="t-checkpoint")
    flushed = _keyed(api, "post", f"{session}/flush?wait=5", key="t-flush").json()
    assert any("Vexlantia" in change["content"] for change in flushed["changes"]), flushed
    _keyed(api, "post", f"{session}/terminate", {"wait": 0}, key="t-terminate")

    # Another user of the same store, with words of their own.
    other_memory = _keyed(api, "post", "/api/v1/stores/main/memories",
                          {"user_id": OTHER, "content": "Otto loves otterplum jam"}, key="o-memory").json()["memory"]
    _admin_edit(client, Memory.objects.get(pk=other_memory["id"]), "Otto loves otterplum tart")
    other_session = _say(api, "I live in Ottershire", user_id=OTHER, session_id=OTHER_SESSION, key="o-messages")
    _keyed(api, "put", f"{other_session}/working-memory/ticket", {"value": "otterticket"}, key="o-working")
    _keyed(api, "post", f"{other_session}/flush?wait=5", key="o-flush")

    before = _where_found(TARGET_WORDS)
    assert all(before.values()), before  # each word was written somewhere

    erased = _keyed(tenant_a.client("admin"), "delete", f"/api/v1/stores/main/users/{TARGET}", key="t-erase")
    assert erased.json()["memories"] >= 3 and erased.json()["sessions"] == 1

    left = {word: places for word, places in _where_found(TARGET_WORDS).items() if places}
    assert left == {}, "; ".join(f"{word} in {', '.join(places)}" for word, places in left.items())
    kept = _where_found(OTHER_WORDS)
    assert all(kept.values()), kept
    assert set(IdempotencyRecord.objects.values_list("key", flat=True)) == {
        "o-memory", "o-messages", "o-working", "o-flush",
    }
    assert LogEntry.objects.filter(object_repr="Otto loves otterplum tart").exists()
