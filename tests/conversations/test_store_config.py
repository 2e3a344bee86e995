"""A store's working-state limits: overrides in working_memory_config, effective values in working_memory_limits."""

import pytest

URL = "/api/v1/stores/main"


def test_overrides_are_partial_and_null_returns_to_the_default(tenant_a, settings):
    client = tenant_a.client("admin")
    body = client.patch(URL, {"working_memory_config": {"max_items": 10, "default_ttl_seconds": 60}},
                        format="json").json()
    assert body["working_memory_config"] == {"max_items": 10, "default_ttl_seconds": 60}
    assert body["working_memory_limits"] == {
        "default_ttl_seconds": 60, "max_items": 10, "max_value_bytes": 65536, "scratchpad_max_entries": 500,
        "checkpoint_ttl_seconds": 604800, "max_checkpoints": 50,
    }
    body = client.patch(URL, {"working_memory_config": {"max_items": None}}, format="json").json()
    assert body["working_memory_config"] == {"default_ttl_seconds": 60}
    # A server default changes what every store without an override gets.
    settings.WORKING_MEMORY_MAX_ITEMS = 77
    assert client.get(URL).json()["working_memory_limits"]["max_items"] == 77


@pytest.mark.parametrize("config", [
    {"max_items": 0}, {"max_items": "10"}, {"max_items": True}, {"max_value_bytes": 10**9}, {"bogus": 1},
    {"checkpoint_ttl_seconds": -1}, {"scratchpad_max_entries": 1.5},
])
def test_bad_overrides_are_400_and_change_nothing(tenant_a, config):
    client = tenant_a.client("admin")
    response = client.patch(URL, {"working_memory_config": config}, format="json")
    assert response.status_code == 400, response.content
    assert "working_memory_config" in response.json()["error"]["details"]
    assert client.get(URL).json()["working_memory_config"] == {}


def test_stores_are_created_with_overrides(tenant_a):
    created = tenant_a.client("admin").post("/api/v1/stores", {
        "name": "agents", "embedding_provider": "hash", "working_memory_config": {"max_checkpoints": 5}}, format="json")
    assert created.status_code == 201, created.content
    assert created.json()["working_memory_limits"]["max_checkpoints"] == 5
    bad = tenant_a.client("admin").post("/api/v1/stores", {
        "name": "agents2", "embedding_provider": "hash", "working_memory_config": {"max_checkpoints": 0}}, format="json")
    assert bad.status_code == 400
