import pytest

from tests.conversations.working_state import SESSION


@pytest.fixture
def quiet_store(tenant_a, configure_store):
    """tenant_a with extraction off in its store, for tests about sessions alone (terminate waits for no job)."""
    configure_store(tenant_a.store, extraction_config={"enabled": False})
    return tenant_a


@pytest.fixture
def session(quiet_store):
    """quiet_store with an active session s-1 of alice."""
    response = quiet_store.client("admin").post(f"{SESSION}/spawn", {"user_id": "alice"}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["data"]["session"]["status"] == "active"
    return quiet_store
