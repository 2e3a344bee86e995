"""Client mistakes are 4xx JSON errors naming the problem, never 500s, and write nothing."""

import json

import pytest

from apps.memories.models import Memory

BASE = "/api/v1/stores/main"


def _raw(client, method, path, payload: str):
    return getattr(client, method)(path, data=payload, content_type="application/json")


def _assert_error(response, status, code=None, mentions=None):
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"} and {"code", "message", "details"} <= set(body["error"])
    if code:
        assert body["error"]["code"] == code
    if mentions:
        assert mentions in json.dumps(body)
    return body


def test_malformed_json(tenant_a):
    response = _raw(tenant_a.client(), "post", f"{BASE}/memories", '{"user_id": "a", "content": ')
    _assert_error(response, 400, "malformed_request", "JSON")


def test_literal_nan_in_json_is_rejected(tenant_a):
    response = _raw(tenant_a.client(), "post", f"{BASE}/search", '{"query": "tea", "min_score": NaN}')
    _assert_error(response, 400, "malformed_request")


def test_body_must_be_an_object(tenant_a):
    response = tenant_a.client().post(f"{BASE}/memories", [{"user_id": "a"}], format="json")
    _assert_error(response, 400, "validation_error")


@pytest.mark.parametrize(
    "body, field",
    [
        ({"content": "no user"}, "user_id"),
        ({"user_id": "a"}, "content"),
        ({"user_id": 12, "content": "x"}, "user_id"),
        ({"user_id": "a", "content": ["x"]}, "content"),
        ({"user_id": "a", "content": "   "}, "content"),
        ({"user_id": "a", "content": "x", "memory_type": "rumour"}, "memory_type"),
        ({"user_id": "a", "content": "x", "importance": 1.5}, "importance"),
        ({"user_id": "a", "content": "x", "importance": "NaN"}, "importance"),
        ({"user_id": "a", "content": "x", "confidence": True}, "confidence"),
        ({"user_id": "a", "content": "x", "metadata": ["not", "object"]}, "metadata"),
        ({"user_id": "a", "content": "x", "metadata": {"k": "a\u0000b"}}, "metadata"),
        ({"user_id": "a", "content": "x", "tags": "one"}, "tags"),
        ({"user_id": "a", "content": "x", "tags": ["t"] * 100}, "tags"),
        ({"user_id": "a", "content": "x", "status": "superseded"}, "status"),
        ({"user_id": "a", "content": "x", "source": "extraction"}, "source"),
        ({"user_id": "a", "content": "x", "expires_at": "tomorrow"}, "expires_at"),
        ({"user_id": "a" * 256, "content": "x"}, "user_id"),
        ({"user_id": "a", "content": "nul \u0000 byte"}, "content"),
    ],
)
def test_memory_create_validation(tenant_a, body, field):
    response = tenant_a.client().post(f"{BASE}/memories", body, format="json")
    data = _assert_error(response, 400, "validation_error")
    assert field in data["error"]["details"], data
    assert field in data["error"]["message"]
    assert Memory.objects.count() == 0


def test_lone_surrogate_is_400(tenant_a):
    response = _raw(tenant_a.client(), "post", f"{BASE}/memories", '{"user_id": "a", "content": "bad \\ud800 text"}')
    _assert_error(response, 400, "validation_error", "content")
    assert Memory.objects.count() == 0


def test_unicode_round_trips(tenant_a):
    content = "Алиса 喜欢 🍵 — שלום — café\u0301 — 𝔘𝔫𝔦𝔠𝔬𝔡𝔢"
    created = tenant_a.client().post(f"{BASE}/memories", {"user_id": "ユーザー", "content": content}, format="json")
    assert created.status_code == 201
    fetched = tenant_a.client().get(f"{BASE}/memories/{created.json()['memory']['id']}").json()
    assert fetched["content"] == content and fetched["user_id"] == "ユーザー"
    results = tenant_a.client().post(f"{BASE}/search", {"query": "🍵 Алиса"}, format="json").json()["results"]
    assert results[0]["memory"]["id"] == fetched["id"]


def test_oversize_content_is_413_naming_the_limit(tenant_a):
    response = tenant_a.client().post(f"{BASE}/memories", {"user_id": "a", "content": "x" * 8193}, format="json")
    _assert_error(response, 413, "content_too_long", "8192")
    assert Memory.objects.count() == 0


def test_oversize_request_body_is_413(tenant_a, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2048
    response = tenant_a.client().post(f"{BASE}/memories", {"user_id": "a", "content": "x" * 4000}, format="json")
    _assert_error(response, 413, "payload_too_large")


@pytest.mark.parametrize(
    "body, field",
    [
        ({}, "query"),
        ({"query": ""}, "query"),
        ({"query": "tea", "limit": 0}, "limit"),
        ({"query": "tea", "limit": 101}, "limit"),
        ({"query": "tea", "limit": 10**12}, "limit"),
        ({"query": "tea", "limit": "NaN"}, "limit"),
        ({"query": "tea", "limit": 2.5}, "limit"),
        ({"query": "tea", "limit": True}, "limit"),
        ({"query": "tea", "min_score": "NaN"}, "min_score"),
        ({"query": "tea", "min_score": "Infinity"}, "min_score"),
        ({"query": "tea", "mode": "fuzzy"}, "mode"),
        ({"query": "tea", "memory_types": ["gossip"]}, "memory_types"),
        ({"query": "tea", "metadata": "plan=pro"}, "metadata"),
        ({"query": "tea", "user_id": None}, "user_id"),
    ],
)
def test_search_validation(tenant_a, body, field):
    response = tenant_a.client().post(f"{BASE}/search", body, format="json")
    data = _assert_error(response, 400, "validation_error")
    assert field in data["error"]["details"]


@pytest.mark.parametrize(
    "query, field",
    [
        ("?memory_type=rumour", "memory_type"),
        ("?status=lost", "status"),
        ("?created_after=last-week", "created_after"),
        ("?include_expired=maybe", "include_expired"),
    ],
)
def test_list_rejects_bad_filters(tenant_a, query, field):
    response = tenant_a.client().get(f"{BASE}/memories{query}")
    data = _assert_error(response, 400, "validation_error")
    assert field in data["error"]["details"]


def test_bad_hard_flag_is_400(tenant_a, add_memory):
    memory = add_memory(tenant_a.store, "Alice likes tea")
    response = tenant_a.client().delete(f"{BASE}/memories/{memory.pk}?hard=perhaps")
    _assert_error(response, 400, "validation_error", "hard")
    memory.refresh_from_db()
    assert memory.status == "active"


def test_unknown_store_and_route_are_json_404(tenant_a):
    _assert_error(tenant_a.client().get("/api/v1/stores/nope/memories"), 404, "store_not_found")
    _assert_error(tenant_a.client().get("/api/v1/nothing-here"), 404, "not_found")
    bad_uuid = tenant_a.client().get(f"{BASE}/memories/not-a-uuid")
    _assert_error(bad_uuid, 404)


def test_wrong_method_is_json_405(tenant_a):
    _assert_error(tenant_a.client().put(f"{BASE}/search", {}, format="json"), 405, "method_not_allowed")


def test_non_json_content_type_is_415(tenant_a):
    response = tenant_a.client().post(f"{BASE}/memories", data="user_id=a", content_type="application/x-www-form-urlencoded")
    _assert_error(response, 415, "unsupported_media_type")


def test_bad_cursor_is_a_json_400_and_bad_page_size_falls_back_to_the_default(tenant_a, add_memory):
    add_memory(tenant_a.store, "Alice likes tea")  # every list and many bad cursors: tests/core/test_pagination.py
    _assert_error(tenant_a.client().get(f"{BASE}/memories?cursor=garbage"), 400, "validation_error", "cursor")
    response = tenant_a.client().get(f"{BASE}/memories?page_size=abc")
    assert response.status_code == 200 and len(response.json()["results"]) == 1


def test_unknown_api_paths_are_json_404_even_in_debug(tenant_a, settings):
    settings.DEBUG = True
    client = tenant_a.client("read")
    # A newline too: "." in a URL pattern stops at one, and Django's HTML 404 page answered instead.
    for url in ("/api/v1/nothing-here", "/api/v1/stores/main/memories/not-a-uuid/history/extra",
                "/api/v1/nothing\nhere", "/api/v1/stores/main/users/"):
        response = client.get(url)
        assert response.status_code == 404 and response["Content-Type"] == "application/json"
        assert response.json()["error"]["code"] == "not_found"


def test_users_with_slashes_in_their_id_can_be_erased(tenant_a, add_memory):
    add_memory(tenant_a.store, "Team Alice likes tea", user_id="team/alice")
    response = tenant_a.client("admin").delete("/api/v1/stores/main/users/team/alice")
    assert response.status_code == 200 and response.json()["memories"] == 1


def test_users_with_a_newline_in_their_id_can_be_erased(tenant_a, add_memory):
    add_memory(tenant_a.store, "Alice likes tea", user_id="alice\nsmith")
    response = tenant_a.client("admin").delete("/api/v1/stores/main/users/alice%0Asmith")
    assert response.status_code == 200 and response.json()["memories"] == 1


@pytest.mark.parametrize("method", ["post", "patch", "put", "delete"])
def test_writes_to_unknown_api_paths_are_json_404_not_csrf_403(tenant_a, method):
    from django.test import Client

    client = Client(enforce_csrf_checks=True, HTTP_AUTHORIZATION=f"Bearer {tenant_a.keys['admin']}")
    response = getattr(client, method)("/api/v1/stores/main/sessions/a/b/c/nothing", "{}",
                                       content_type="application/json")
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"
