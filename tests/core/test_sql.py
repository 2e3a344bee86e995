"""apps.core.sql: rows of hand-written SQL loaded as the ORM loads them, and the server-binding cursor."""

import pytest
from django.db import DataError, connection
from django.test.utils import CaptureQueriesContext

from apps.core.actors import Actor
from apps.core.sql import RowLoader, server_binding_cursor
from apps.memories.models import Memory, MemoryStore
from apps.memories.services import MemoryInput, memory_bulk_create, store_update
from apps.tenancy.models import ApiKey


def _load_by_pk(loader: RowLoader, model, pk):
    table = model._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {loader.select_list('r')} FROM {table} r WHERE r.id = %s", [pk])
        return loader.load(cursor.fetchone())


def test_a_loaded_row_equals_the_orms_instance_field_by_field(tenant_a):
    """JSON decoded, arrays as lists, datetimes aware: what the ORM's compiler would have made of the row."""
    [written] = memory_bulk_create(
        store=tenant_a.store, actor=Actor.system(),
        items=[MemoryInput(user_id="u1", content="Likes tea", metadata={"source": {"app": "crm"}, "n": 3},
                           tags=["drinks", "prefs"], provenance={"session": "s1"})],
    )
    loader = RowLoader(Memory, fields=("id", "created_at", "store_id", "user_id", "content", "metadata", "tags",
                                       "provenance", "valid_to", "importance"))
    loaded = _load_by_pk(loader, Memory, written.memory.pk)
    expected = Memory.objects.get(pk=written.memory.pk)
    for attname in loader.attnames:
        assert getattr(loaded, attname) == getattr(expected, attname), attname
    assert loaded.metadata == {"source": {"app": "crm"}, "n": 3}
    assert loaded.created_at.tzinfo is not None
    assert loaded._state.adding is False and loaded._state.db == "default"
    # Fields left out are deferred, loaded on access as the ORM's .only() would.
    assert loaded.get_deferred_fields() >= {"agent_id", "embedding"}
    assert loaded.agent_id == expected.agent_id


def test_a_store_and_a_key_load_whole(tenant_a):
    store_update(store=tenant_a.store, changes={"search_defaults": {"mode": "keyword", "limit": 7}})
    store = _load_by_pk(RowLoader(MemoryStore), MemoryStore, tenant_a.store.pk)
    assert store.search_defaults == MemoryStore.objects.get(pk=store.pk).search_defaults
    assert store.search_defaults["mode"] == "keyword"
    key = ApiKey.objects.filter(tenant=tenant_a.tenant).first()
    loaded = _load_by_pk(RowLoader(ApiKey), ApiKey, key.pk)
    assert loaded.scopes == key.scopes and isinstance(loaded.scopes, list)
    assert loaded.get_deferred_fields() == set()


def test_a_loader_refuses_a_field_the_model_does_not_have():
    with pytest.raises(ValueError, match="no concrete field"):
        RowLoader(Memory, fields=("id", "store"))  # the attname is store_id


def test_the_server_binding_cursor_sends_parameters_apart(db):
    with server_binding_cursor() as cursor:
        # The same parameter at two places: bound on the server, it is sent once, as $1.
        cursor.execute("SELECT %(vector)s::vector(3) <=> %(vector)s::vector(3)", {"vector": "[1,2,3]"})
        assert cursor.fetchone() == (0,)
        assert cursor.cursor.__class__.__name__ == "ServerBindingCursor"
        assert cursor.cursor._query.query.count(b"$1") == 2


def test_the_server_binding_cursor_is_logged_and_its_errors_wrapped(db, settings):
    with CaptureQueriesContext(connection) as captured, server_binding_cursor() as cursor:
        cursor.execute("SELECT %s::int", [7])
        assert cursor.fetchone() == (7,)
    assert len(captured.captured_queries) == 1
    with pytest.raises(DataError), server_binding_cursor() as cursor:
        cursor.execute("SELECT %s::int", ["seven"])


def test_a_statement_bound_on_the_server_is_prepared_once_it_repeats(db, settings):
    """DB_PREPARE_THRESHOLD (1 by default): run once, the connection prepares it on its next run. The threshold holds
    for this cursor's statements only: psycopg neither prepares nor keeps count of Django's own."""
    assert settings.DB_PREPARE_THRESHOLD == 1
    assert "prepare_threshold" not in settings.DATABASES["default"]["OPTIONS"]
    connection.ensure_connection()
    statement = "SELECT count(*) FROM memories_memory WHERE user_id = %s AND status <> %s"

    def prepared() -> list[str]:
        with connection.cursor() as cursor:  # Django's own cursor: bound on the client, never prepared itself
            cursor.execute("SELECT statement FROM pg_prepared_statements WHERE statement LIKE %s",
                           ["%FROM memories_memory WHERE user_id = $1%"])
            return [row[0] for row in cursor.fetchall()]

    for run in range(3):
        with server_binding_cursor() as cursor:
            cursor.execute(statement, [f"user-{run}", "deleted"])
            assert cursor.fetchone() == (0,)
        assert connection.connection.prepare_threshold is None
        assert len(prepared()) == (0 if run == 0 else 1), run


def test_no_statement_is_prepared_with_a_threshold_of_0(db, settings):
    settings.DB_PREPARE_THRESHOLD = 0
    for _ in range(3):
        with server_binding_cursor() as cursor:
            cursor.execute("SELECT %s::int + 40", [2])
            assert cursor.fetchone() == (42,)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s", ["%$1::int + 40%"])
        assert cursor.fetchone() == (0,)


def test_a_prepared_search_is_planned_for_its_own_values(db):
    with connection.cursor() as cursor:
        cursor.execute("SHOW plan_cache_mode")
        assert cursor.fetchone() == ("force_custom_plan",)


def test_the_search_statement_is_prepared_and_answers_as_before(tenant_a):
    from apps.memories.search import SearchQuery, memory_search

    memory_bulk_create(store=tenant_a.store, actor=Actor.system(),
                       items=[MemoryInput(user_id="u1", content=text) for text in ("Likes tea", "Lives in Oslo")])
    answers = [[hit.memory.content for hit in memory_search(store=tenant_a.store,
                                                            search=SearchQuery(query="tea", user_id="u1"))]
               for _ in range(4)]
    assert answers[0][0] == "Likes tea" and all(answer == answers[0] for answer in answers)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s", ["%vector_hits AS%"])
        assert cursor.fetchone()[0] == 1
