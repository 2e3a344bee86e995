import pytest

from tests.conversations.working_state import SESSION


@pytest.fixture
def session(tenant_a, configure_store):
    """tenant_a with an active session s-1 of alice; extraction is off so terminate does not wait for it."""
    configure_store(tenant_a.store, extraction_config={"enabled": False})
    response = tenant_a.client("admin").post(f"{SESSION}/spawn", {"user_id": "alice"}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["data"]["session"]["status"] == "active"
    return tenant_a
