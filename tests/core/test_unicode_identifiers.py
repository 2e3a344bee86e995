"""User, agent, session and run ids are compared in Unicode NFC: "José" typed composed (é, U+00E9) or
decomposed (e + U+0301) is one user, one session, one run, wherever it comes in (body, query, URL, admin)."""

from urllib.parse import quote

from django.urls import reverse

from apps.conversations.models import Message, Session
from apps.memories.models import Memory, MemoryRevision

COMPOSED = "Jos\u00e9"
DECOMPOSED = "Jose\u0301"
SESSION_COMPOSED = "s\u00e9ance"
SESSION_DECOMPOSED = "se\u0301ance"
BASE = "/api/v1/stores/main"


def test_the_two_forms_differ_as_strings():
    assert COMPOSED != DECOMPOSED and SESSION_COMPOSED != SESSION_DECOMPOSED


def _add(client, user_id, content, **fields):
    return client.post(f"{BASE}/memories", {"user_id": user_id, "content": content, **fields}, format="json")


def test_adding_a_memory_in_either_form_is_the_same_user(tenant_a):
    client = tenant_a.client("write")
    first = _add(client, DECOMPOSED, "José likes tea", agent_id=f"bot-{DECOMPOSED}", session_id=SESSION_DECOMPOSED)
    again = _add(client, COMPOSED, "José likes tea")
    assert first.status_code == 201 and again.status_code == 200
    assert again.json()["duplicate"] is True and again.json()["memory"]["id"] == first.json()["memory"]["id"]
    memory = Memory.objects.get()
    assert (memory.user_id, memory.agent_id, memory.session_id) == (COMPOSED, f"bot-{COMPOSED}", SESSION_COMPOSED)
    assert first.json()["memory"]["user_id"] == COMPOSED
    assert set(MemoryRevision.objects.values_list("user_id", flat=True)) == {COMPOSED}


def test_bulk_add_and_patch_store_ids_in_nfc(tenant_a):
    client = tenant_a.client("write")
    response = client.post(f"{BASE}/memories/bulk", {"memories": [
        {"user_id": DECOMPOSED, "content": "José has a cat"},
        {"user_id": COMPOSED, "content": "José has a cat"},
    ]}, format="json")
    assert response.status_code == 201 and response.json()["duplicates"] == 1
    memory = Memory.objects.get()
    patched = client.patch(f"{BASE}/memories/{memory.pk}", {"agent_id": DECOMPOSED}, format="json")
    assert patched.status_code == 200
    memory.refresh_from_db()
    assert (memory.user_id, memory.agent_id) == (COMPOSED, COMPOSED)


def test_list_filters_match_either_form(tenant_a, add_memory):
    add_memory(tenant_a.store, "José likes tea", user_id=COMPOSED, agent_id=COMPOSED, session_id=SESSION_COMPOSED)
    add_memory(tenant_a.store, "Bob likes tea", user_id="bob")
    client = tenant_a.client("read")
    for query in (f"user_id={quote(DECOMPOSED)}", f"agent_id={quote(DECOMPOSED)}",
                  f"session_id={quote(SESSION_DECOMPOSED)}"):
        results = client.get(f"{BASE}/memories?{query}").json()["results"]
        assert [hit["content"] for hit in results] == ["José likes tea"], query


def test_search_filters_match_either_form(tenant_a, add_memory):
    add_memory(tenant_a.store, "José likes green tea", user_id=COMPOSED, agent_id=COMPOSED,
               session_id=SESSION_COMPOSED)
    add_memory(tenant_a.store, "Bob likes green tea", user_id="bob")
    client = tenant_a.client("read")
    for filters in ({"user_id": DECOMPOSED}, {"agent_id": DECOMPOSED}, {"session_id": SESSION_DECOMPOSED}):
        response = client.post(f"{BASE}/search", {"query": "green tea", **filters}, format="json")
        assert [hit["memory"]["content"] for hit in response.json()["results"]] == ["José likes green tea"], filters


def _ingest(client, session_id, user_id, text, *, run_id, seq):
    return client.post(
        f"{BASE}/sessions/{quote(session_id)}/messages",
        {"user_id": user_id, "agent_id": user_id, "run_id": run_id,
         "messages": [{"role": "user", "content": text, "seq": seq}]},
        format="json",
    )


def test_messages_in_either_form_go_to_one_session_and_one_run(tenant_a):
    client = tenant_a.client("write")
    first = _ingest(client, SESSION_DECOMPOSED, DECOMPOSED, "hello", run_id=f"run-{DECOMPOSED}", seq=0)
    second = _ingest(client, SESSION_COMPOSED, COMPOSED, "again", run_id=f"run-{COMPOSED}", seq=1)
    retried = _ingest(client, SESSION_COMPOSED, DECOMPOSED, "hello", run_id=f"run-{COMPOSED}", seq=0)
    assert (first.status_code, second.status_code, retried.status_code) == (202, 202, 202), second.content
    assert retried.json()["duplicates"] == 1  # the same (run, seq) as the first message
    session = Session.objects.get()
    assert (session.external_id, session.user_id, session.agent_id) == (SESSION_COMPOSED, COMPOSED, COMPOSED)
    assert session.message_count == 2
    assert set(Message.objects.values_list("client_run_id", flat=True)) == {f"run-{COMPOSED}"}
    read = tenant_a.client("read")
    assert read.get(f"{BASE}/sessions/{quote(SESSION_DECOMPOSED)}").json()["session_id"] == SESSION_COMPOSED
    assert read.get(f"{BASE}/sessions?user_id={quote(DECOMPOSED)}").json()["results"][0]["user_id"] == COMPOSED


def test_spawn_and_session_scoped_routes_accept_either_form(tenant_a):
    client = tenant_a.client("write")
    spawned = client.post(f"{BASE}/sessions/{quote(SESSION_DECOMPOSED)}/spawn", {"user_id": DECOMPOSED},
                          format="json")
    assert spawned.status_code == 201, spawned.content
    put = client.put(f"{BASE}/sessions/{quote(SESSION_COMPOSED)}/working-memory/goal", {"value": "tea"},
                     format="json")
    assert put.status_code == 201
    context = client.post(f"{BASE}/context", {"query": "tea", "user_id": COMPOSED, "session_id": SESSION_DECOMPOSED},
                          format="json")
    assert context.status_code == 200, context.content
    assert Session.objects.get().external_id == SESSION_COMPOSED


def test_erasing_either_form_erases_both(tenant_a):
    writer = tenant_a.client("write")
    _add(writer, COMPOSED, "José likes tea")
    _add(writer, DECOMPOSED, "José lives in Porto")
    _ingest(writer, SESSION_DECOMPOSED, DECOMPOSED, "hello", run_id="r", seq=0)
    _add(writer, "bob", "Bob likes tea")

    response = tenant_a.client("admin").delete(f"{BASE}/users/{quote(DECOMPOSED)}")

    assert response.status_code == 200
    assert response.json() == {"user_id": COMPOSED, "memories": 2, "revisions": 2, "sessions": 1, "messages": 1}
    assert list(Memory.objects.values_list("user_id", flat=True)) == ["bob"]
    assert not Session.objects.exists()


def test_the_admin_memory_form_stores_ids_in_nfc(client, tenant_a):
    client.force_login(tenant_a.admin)
    response = client.post(reverse("admin:memories_memory_add"), {
        "store": tenant_a.store.pk, "user_id": DECOMPOSED, "agent_id": DECOMPOSED, "session_id": SESSION_DECOMPOSED,
        "content": "José is allergic to peanuts", "memory_type": "fact", "status": "active", "metadata": "{}",
        "tags": "", "importance": "0.5", "confidence": "1",
    })
    assert response.status_code == 302
    memory = Memory.objects.get()
    assert (memory.user_id, memory.agent_id, memory.session_id) == (COMPOSED, COMPOSED, SESSION_COMPOSED)
