"""What goes over the wire: paths and their encoding, query parameters, bodies, cursors and message seqs."""

from datetime import UTC, datetime

import pytest
from scripted_http import Reply

from memoryhub_client._transport import path

SESSION = {"session_id": "chat-1", "user_id": "alice", "status": "active"}
INGEST = {"accepted": 1, "duplicates": 0, "session": SESSION, "extraction_job": None}
ITEM = {"key": "k", "value": 1, "version": 1}
LIFECYCLE = {"success": True, "event": "spawn", "duration_ms": 3, "data": {"created": True, "session": SESSION}}


def memory(number: int) -> dict:
    return {"id": f"00000000-0000-0000-0000-{number:012d}", "content": f"memory {number}", "user_id": "alice"}


# --- Paths ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("key", "raw"), [
    ("plain", "plain"),
    ("order/items/1", "order%2Fitems%2F1"),
    ("café ☕", "caf%C3%A9%20%E2%98%95"),
    ("a?b#c%d&e=f+g", "a%3Fb%23c%25d%26e%3Df%2Bg"),
    ("..", "%2E%2E"),  # unencoded, URL normalisation would make this the session's own URL
    (".", "%2E"),
    ("...", "..."),
])
def test_working_memory_keys_are_percent_encoded_whole(server, hub, key, raw):
    server.script(Reply(body=ITEM))

    hub.working_memory.get("main", "chat-1", key)

    request = server.requests[0]
    assert request.raw_path == f"/api/v1/stores/main/sessions/chat-1/working-memory/{raw}"
    assert request.path.rsplit("/working-memory/", 1)[1] == key


def test_a_delete_of_key_dot_dot_goes_to_the_key_not_the_session(server, hub):
    server.script(Reply(body={"deleted": True, "key": ".."}))

    hub.working_memory.delete("main", "chat-1", "..")

    assert server.requests[0].method == "DELETE"
    assert server.requests[0].raw_path.endswith("/sessions/chat-1/working-memory/%2E%2E")


def test_session_and_user_ids_are_encoded_too(server, hub):
    server.script(Reply(body=SESSION), Reply(body={"user_id": "a b"}))

    hub.sessions.get("main", "chat 1/ü")
    hub.users.erase("main", "a b")

    assert server.requests[0].raw_path == "/api/v1/stores/main/sessions/chat%201%2F%C3%BC"
    assert (server.requests[1].method, server.requests[1].raw_path) == ("DELETE", "/api/v1/stores/main/users/a%20b")


def test_path_helper_encodes_every_segment():
    assert path("stores", "main", "sessions", "a/b", "working-memory", "x y") == (
        "stores/main/sessions/a%2Fb/working-memory/x%20y"
    )


# --- Bodies and parameters ------------------------------------------------------------------------


def test_memory_add_sends_the_given_fields_only(server, hub):
    server.script(Reply(201, {"memory": memory(1), "duplicate": False}))
    expires = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)

    result = hub.memories.add("main", user_id="alice", content="Alice likes tea", tags=("drinks",),
                              metadata={"plan": "pro"}, importance=0.9, expires_at=expires, status="pending_review")

    assert result.duplicate is False and result.memory.content == "memory 1"
    request = server.requests[0]
    assert (request.method, request.raw_path) == ("POST", "/api/v1/stores/main/memories")
    assert request.headers["content-type"] == "application/json"
    assert request.body == {
        "user_id": "alice", "content": "Alice likes tea", "memory_type": "fact", "tags": ["drinks"],
        "metadata": {"plan": "pro"}, "importance": 0.9, "expires_at": "2030-01-02T03:04:05+00:00",
        "status": "pending_review",
    }


def test_a_naive_datetime_is_refused_before_anything_is_sent(server, hub):
    with pytest.raises(ValueError, match="timezone"):
        hub.memories.add("main", user_id="alice", content="x", expires_at=datetime(2030, 1, 1))
    assert server.requests == []


def test_search_body(server, hub):
    server.script(Reply(body={"mode": "vector", "results": [
        {"memory": memory(1), "score": 0.9, "vector_rank": 1, "keyword_rank": None, "similarity": 0.9},
    ]}))

    hits = hub.search("main", "tea", user_id="alice", mode="vector", min_score=0.1, memory_types=["fact"],
                      metadata={"plan": "pro"}, tags=["drinks"], include_pending=True, limit=5)

    assert [(hit.memory.id, hit.score, hit.vector_rank, hit.keyword_rank) for hit in hits] == [
        (memory(1)["id"], 0.9, 1, None)
    ]
    assert server.requests[0].body == {
        "query": "tea", "user_id": "alice", "limit": 5, "mode": "vector", "min_score": 0.1,
        "memory_types": ["fact"], "metadata": {"plan": "pro"}, "tags": ["drinks"], "include_pending": True,
    }


def test_search_time_filters_and_explain(server, hub):
    explained = {"vector": {"rank": 2, "similarity": 0.5, "contribution": 0.4},
                 "keyword": {"rank": 1, "score": 3.2, "contribution": 0.5}}
    server.script(Reply(body={"mode": "hybrid", "results": [
        {"memory": memory(1), "score": 0.9, "vector_rank": 2, "keyword_rank": 1, "similarity": 0.5,
         "keyword_score": 3.2, "explain": explained},
    ], "explain": {"fusion_k": 5}}))

    hits = hub.search("main", "tea", user_id="alice", include_superseded=True, explain=True,
                      valid_at=datetime(2026, 3, 1, tzinfo=UTC), created_after="2026-01-01T00:00:00Z",
                      created_before=datetime(2026, 6, 1, tzinfo=UTC))

    assert (hits[0].keyword_score, hits[0].explain) == (3.2, explained)
    assert server.requests[0].body == {
        "query": "tea", "user_id": "alice", "limit": 10, "valid_at": "2026-03-01T00:00:00+00:00",
        "created_after": "2026-01-01T00:00:00Z", "created_before": "2026-06-01T00:00:00+00:00",
        "include_superseded": True, "explain": True,
    }


def test_search_with_limit_none_leaves_the_limit_to_the_store(server, hub):
    server.script(Reply(body={"results": []}))

    hub.search("main", "tea", limit=None)

    assert server.requests[0].body == {"query": "tea"}


def test_memory_list_filters_become_query_parameters(server, hub):
    server.script(Reply.page([memory(1)]))

    page = hub.memories.list("main", user_id="alice", include_expired=True, page_size=20,
                             created_after=datetime(2025, 1, 1, tzinfo=UTC), metadata={"plan": "pro", "tier": 2})

    assert [item.id for item in page.items] == [memory(1)["id"]] and page.next_cursor is None
    assert server.requests[0].query == {
        "user_id": ["alice"], "include_expired": ["true"], "page_size": ["20"],
        "created_after": ["2025-01-01T00:00:00+00:00"], "metadata.plan": ["pro"], "metadata.tier": ["2"],
    }


def test_memory_update_and_delete(server, hub):
    server.script(Reply(body=memory(1)), Reply(body={"deleted": True, "hard": False}),
                  Reply(body={"deleted": True, "hard": True}))

    hub.memories.update("main", memory(1)["id"], reason="typo", content="fixed")
    hub.memories.delete("main", memory(1)["id"], reason="wrong")
    hub.memories.delete("main", memory(1)["id"], hard=True)

    update, soft, hard = server.requests
    assert (update.method, update.body) == ("PATCH", {"content": "fixed", "reason": "typo"})
    assert (soft.method, soft.query) == ("DELETE", {"reason": ["wrong"]})
    assert hard.query == {"hard": ["true"]}


def test_spawn_takes_working_memory_as_a_dict_or_items(server, hub):
    server.script(Reply(201, LIFECYCLE), Reply(201, LIFECYCLE))

    result = hub.lifecycle.spawn("main", "task-7", user_id="carol", working_memory={"order": {"id": "A-1"}},
                                 task_state={"description": "Replace the kettle", "total_steps": 3})
    hub.lifecycle.spawn("main", "task-8", user_id="carol",
                        working_memory=[{"key": "otp", "value": "1234", "ttl_seconds": 60}])

    assert result.event == "spawn" and result.session.session_id == "chat-1" and result.data["created"] is True
    first, second = server.requests
    assert first.body == {
        "agent_id": "", "user_id": "carol", "working_memory": [{"key": "order", "value": {"id": "A-1"}}],
        "task_state": {"description": "Replace the kettle", "total_steps": 3},
    }
    assert second.body["working_memory"] == [{"key": "otp", "value": "1234", "ttl_seconds": 60}]


def test_terminate_and_context_bodies(server, hub):
    server.script(Reply(body={**LIFECYCLE, "event": "terminate"}),
                  Reply(body={"context": "<memory/>", "format": "xml", "token_budget": 500, "tokens_estimated": 3,
                              "included": [], "left_out": [], "kinds": {}}))

    hub.lifecycle.terminate("main", "task-7", outcome="success", lessons=["Check the warranty"], wait=5)
    result = hub.context("main", "kettle?", user_id="carol", session_id="task-7", token_budget=500,
                         kinds=["facts"], shares={"facts": 1.0})

    assert result.context == "<memory/>" and result.tokens_estimated == 3
    terminate, context = server.requests
    assert terminate.body == {"task": "", "clear_working_memory": False, "outcome": "success",
                              "lessons": ["Check the warranty"], "wait": 5}
    assert context.body == {"query": "kettle?", "user_id": "carol", "token_budget": 500, "format": "xml",
                            "session_id": "task-7", "kinds": ["facts"], "shares": {"facts": 1.0}}


def test_working_memory_put_body(server, hub):
    server.script(Reply(201, ITEM), Reply(200, ITEM))

    hub.working_memory.put("main", "chat-1", "k", None)
    hub.working_memory.put("main", "chat-1", "k", {"a": [1, 2]}, ttl_seconds=60, if_version=0)

    assert server.requests[0].body == {"value": None}  # null is a value
    assert server.requests[1].body == {"value": {"a": [1, 2]}, "ttl_seconds": 60, "if_version": 0}
    assert server.requests[1].method == "PUT"


# --- Webhooks -------------------------------------------------------------------------------------

WEBHOOK_ID = "5b0d8a4e-0000-4000-8000-000000000001"
DELIVERY_ID = "5b0d8a4e-0000-4000-8000-0000000000d1"
WEBHOOK = {"id": WEBHOOK_ID, "store": "main", "url": "https://crm.example.com/hook", "description": "CRM",
           "event_types": ["memory.created"], "is_active": True, "disabled_at": None, "disabled_reason": "",
           "consecutive_failures": 0, "created_at": "2026-11-21T10:00:00Z", "updated_at": "2026-11-21T10:00:00Z"}
DELIVERY = {"id": DELIVERY_ID, "webhook_id": WEBHOOK_ID, "event_id": "evt_1", "event_type": "ping",
            "status": "queued", "attempts": 0, "payload": {"type": "ping"}}


def test_webhook_calls_go_to_the_store_webhook_paths(server, hub):
    server.script(
        Reply(201, {**WEBHOOK, "secret": "whsec_1"}), Reply(body={"results": [WEBHOOK]}), Reply(body=WEBHOOK),
        Reply(body={**WEBHOOK, "is_active": False}), Reply(body={**WEBHOOK, "secret": "whsec_2"}),
        Reply(202, DELIVERY), Reply(202, {**DELIVERY, "event_type": "memory.created"}),
        Reply(body={"deleted": True, "id": WEBHOOK_ID}),
    )

    created = hub.webhooks.create("main", "https://crm.example.com/hook", event_types=("memory.created",),
                                  description="CRM")
    listed = hub.webhooks.list("main")
    fetched = hub.webhooks.get("main", WEBHOOK_ID)
    disabled = hub.webhooks.update("main", WEBHOOK_ID, is_active=False)
    rotated = hub.webhooks.rotate_secret("main", WEBHOOK_ID)
    ping = hub.webhooks.send_test("main", WEBHOOK_ID)
    retried = hub.webhooks.retry_delivery("main", WEBHOOK_ID, DELIVERY_ID)
    deleted = hub.webhooks.delete("main", WEBHOOK_ID)

    assert (created.secret, rotated.secret, fetched.secret) == ("whsec_1", "whsec_2", None)
    assert [webhook.url for webhook in listed] == ["https://crm.example.com/hook"] and fetched.is_active
    assert disabled.is_active is False and deleted == {"deleted": True, "id": WEBHOOK_ID}
    assert (ping.event_type, ping.status, retried.event_type) == ("ping", "queued", "memory.created")
    webhook = f"/api/v1/stores/main/webhooks/{WEBHOOK_ID}"
    assert [(request.method, request.raw_path, request.body) for request in server.requests] == [
        ("POST", "/api/v1/stores/main/webhooks",
         {"url": "https://crm.example.com/hook", "description": "CRM", "event_types": ["memory.created"]}),
        ("GET", "/api/v1/stores/main/webhooks", None),
        ("GET", webhook, None),
        ("PATCH", webhook, {"is_active": False}),
        ("POST", f"{webhook}/rotate-secret", None),
        ("POST", f"{webhook}/test", None),
        ("POST", f"{webhook}/deliveries/{DELIVERY_ID}/retry", None),
        ("DELETE", webhook, None),
    ]


def test_a_webhook_without_event_types_leaves_them_to_the_server(server, hub):
    server.script(Reply(201, {**WEBHOOK, "event_types": [], "secret": "whsec_1"}))

    created = hub.webhooks.create("main", url="https://crm.example.com/hook")

    assert created.event_types == []
    assert server.requests[0].body == {"url": "https://crm.example.com/hook", "description": ""}


def test_a_retried_secret_rotation_keeps_its_key_so_the_server_rotates_once(server, hub, sleeps):
    server.script(Reply.error(503), Reply(body={**WEBHOOK, "secret": "whsec_2"}))

    assert hub.webhooks.rotate_secret("main", WEBHOOK_ID).secret == "whsec_2"

    keys = [request.headers.get("idempotency-key") for request in server.requests]
    assert len(keys) == 2 and keys[0] and keys[0] == keys[1]


def test_the_delivery_log_pages_by_cursor_with_its_status_filter(server, hub):
    next_link = f"http://x/api/v1/stores/main/webhooks/{WEBHOOK_ID}/deliveries?cursor=d2&status=failed"
    server.script(Reply.page([DELIVERY], next_link),
                  Reply.page([DELIVERY], next_link), Reply.page([{**DELIVERY, "id": "d-2"}]))

    page = hub.webhooks.deliveries("main", WEBHOOK_ID, status="failed", page_size=1)
    every = [delivery.id for delivery in hub.webhooks.iter_deliveries("main", WEBHOOK_ID, status="failed")]

    assert [delivery.id for delivery in page] == [DELIVERY_ID] and page.next_cursor == "d2"
    assert every == [DELIVERY_ID, "d-2"]
    assert {request.raw_path for request in server.requests} == {
        f"/api/v1/stores/main/webhooks/{WEBHOOK_ID}/deliveries"}
    assert [request.query for request in server.requests] == [
        {"status": ["failed"], "page_size": ["1"]}, {"status": ["failed"]}, {"status": ["failed"], "cursor": ["d2"]},
    ]


# --- Cursors --------------------------------------------------------------------------------------


def test_iter_follows_the_cursors_of_the_next_links(server, hub):
    # Only the cursor of a `next` link is used: its host may be a proxy's idea of the server.
    server.script(
        Reply.page([memory(1), memory(2)], "http://elsewhere.example/api/v1/stores/main/memories?cursor=c2&page_size=2"),
        Reply.page([memory(3), memory(4)], "http://elsewhere.example/api/v1/stores/main/memories?cursor=c3"),
        Reply.page([memory(5)]),
    )

    contents = [item.content for item in hub.memories.iter("main", user_id="alice", page_size=2)]

    assert contents == [f"memory {number}" for number in range(1, 6)]
    assert [request.param("cursor") for request in server.requests] == [None, "c2", "c3"]
    assert {request.param("user_id") for request in server.requests} == {"alice"}
    assert {request.raw_path for request in server.requests} == {"/api/v1/stores/main/memories"}


def test_a_page_exposes_its_next_cursor(server, hub):
    server.script(Reply.page([memory(1)], "http://x/api/v1/jobs?cursor=abc%3D"), Reply.page([]))

    page = hub.jobs.list(status="failed")
    hub.jobs.list(cursor=page.next_cursor)

    assert page.next_cursor == "abc="
    assert server.requests[1].param("cursor") == "abc="


def test_working_memory_list_collects_every_page(server, hub):
    server.script(Reply.page([ITEM], "http://x/?cursor=n1"), Reply.page([{**ITEM, "key": "l"}]))

    items = hub.working_memory.list("main", "chat-1", prefix="o")

    assert [item.key for item in items] == ["k", "l"]
    assert [request.query for request in server.requests] == [{"prefix": ["o"]}, {"prefix": ["o"], "cursor": ["n1"]}]


# --- Message seqs ---------------------------------------------------------------------------------


def test_the_client_numbers_the_messages_of_a_run(server, hub):
    server.default = Reply(202, INGEST)

    hub.sessions.add_messages("main", "chat-1", user_id="alice", run_id="run-1",
                              messages=[{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}])
    hub.sessions.add_messages("main", "chat-1", user_id="alice", run_id="run-1",
                              messages=[{"role": "user", "content": "c"}])
    hub.sessions.add_messages("main", "chat-1", user_id="alice", run_id="run-2",
                              messages=[{"role": "user", "content": "d"}])

    seqs = [[message["seq"] for message in request.body["messages"]] for request in server.requests]
    assert seqs == [[0, 1], [2], [0]]
    assert server.requests[0].body["run_id"] == "run-1"


def test_given_seqs_are_kept_and_numbering_continues_after_them(server, hub):
    server.default = Reply(202, INGEST)

    hub.sessions.add_messages("main", "chat-1", user_id="alice", run_id="run-1", messages=[
        {"role": "user", "content": "a", "seq": 10},
        {"role": "assistant", "content": "b"},
        {"role": "user", "content": "c", "seq": 4, "metadata": {"x": 1}},
        {"role": "assistant", "content": "d"},
    ])

    sent = server.requests[0].body["messages"]
    assert [message["seq"] for message in sent] == [10, 11, 4, 12]
    assert sent[2]["metadata"] == {"x": 1}


def test_the_numbering_is_per_session(server, hub):
    server.default = Reply(202, INGEST)

    for session in ("chat-1", "chat-2", "chat-1"):
        hub.sessions.add_messages("main", session, user_id="alice", run_id="run-1",
                                  messages=[{"role": "user", "content": "x"}])

    assert [request.body["messages"][0]["seq"] for request in server.requests] == [0, 0, 1]


def test_messages_body_shape(server, hub):
    server.script(Reply(202, {**INGEST, "extraction_job": "8f0e2a7e-1111-4c1c-9a51-000000000001"}))

    result = hub.sessions.add_messages("main", "chat-1", user_id="alice", agent_id="bot", metadata={"channel": "web"},
                                       messages=[{"role": "user", "content": [{"text": "hi"}]}])

    assert result.accepted == 1 and result.extraction_job == "8f0e2a7e-1111-4c1c-9a51-000000000001"
    assert result.session.session_id == "chat-1"
    assert server.requests[0].body == {
        "user_id": "alice", "agent_id": "bot", "run_id": "", "metadata": {"channel": "web"},
        "messages": [{"role": "user", "content": [{"text": "hi"}]}],
    }


def test_flush_sends_since_seq_only_when_given(server, hub):
    flushed = {"complete": True, "session": SESSION, "jobs": [], "more_jobs": False, "changes": []}
    server.script(Reply(body=flushed), Reply(body=flushed))

    hub.sessions.flush("main", "chat-1", wait=2)
    hub.sessions.flush("main", "chat-1", wait=2, since_seq=4)

    assert [request.query for request in server.requests] == [{"wait": ["2"]}, {"wait": ["2"], "since_seq": ["4"]}]


def test_values_json_cannot_carry_raise_invalid_request_before_sending(server, hub):
    from memoryhub_client import InvalidRequest, MemoryHubError

    with pytest.raises(InvalidRequest) as caught:
        hub.memories.add("main", user_id="alice", content="x", metadata={"score": float("nan")})
    assert isinstance(caught.value, MemoryHubError) and isinstance(caught.value, ValueError)
    assert server.requests == []


def test_key_info(server, hub):
    server.script(Reply(200, {"name": "bot", "prefix": "mh_12345678", "tenant": "acme", "scopes": ["read"],
                              "can_write": False, "stores": ["main"], "created_at": "2026-11-21T10:00:00Z"}))
    info = hub.key_info()
    assert (info.name, info.can_write, info.allows_store("main"), info.allows_store("other")) == (
        "bot", False, True, False)
    assert server.requests[0].path.endswith("/api/v1/key")


def test_run_sequences_forget_the_oldest_runs():
    from memoryhub_client._api import RunSequences

    sequences = RunSequences()
    sequences.MAX_RUNS = 3
    for run in range(5):
        sequences.fill("main", "s", f"run-{run}", [{"role": "user", "content": "x"}])
    assert [key[2] for key in sequences._next] == ["run-2", "run-3", "run-4"]
    assert sequences.fill("main", "s", "run-4", [{"role": "user", "content": "y"}])[0]["seq"] == 1
