"""Shared fixtures: two tenants, each with staff (admin, reviewer, outsider), API keys and a store."""

from dataclasses import dataclass, field

import pytest
from channels.layers import channel_layers
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.db import connections
from rest_framework.test import APIClient

from apps.core.actors import Actor
from apps.memories.services import MemoryInput, memory_create, store_create, store_update
from apps.tenancy.models import Membership
from apps.tenancy.services import api_key_issue, membership_set, tenant_create


@pytest.fixture(autouse=True)
def _hash_embedder_and_no_model_by_default(settings):
    # The deterministic, download-free embedder is the test default; tests of the local model ask for it.
    settings.MEMORYHUB_DEFAULT_EMBEDDER = "hash"
    # Password hashing is deliberately slow; tests create many users.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # No model unless a test configures one (a fake server): the default extractor, auto, would otherwise call
    # whatever LLM_API_KEY names in the developer's shell.
    settings.LLM_API_KEY = settings.LLM_BASE_URL = ""


@dataclass
class TenantWorld:
    tenant: object
    admin: object
    reviewer: object
    store: object
    keys: dict = field(default_factory=dict)  # scope name -> raw key

    def client(self, scope: str = "admin") -> APIClient:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {self.keys[scope]}")
        return client


def build_tenant_world(slug: str) -> TenantWorld:
    User = get_user_model()
    tenant = tenant_create(name=slug.title(), slug=slug)
    admin = User.objects.create_user(f"{slug}-admin", password="pw-admin-123!", is_staff=True)
    reviewer = User.objects.create_user(f"{slug}-reviewer", password="pw-reviewer-123!", is_staff=True)
    membership_set(tenant=tenant, user=admin, role=Membership.Role.ADMIN)
    membership_set(tenant=tenant, user=reviewer, role=Membership.Role.REVIEWER)
    store = store_create(tenant=tenant, name="main", embedding_provider="hash")
    keys = {
        scope: api_key_issue(tenant=tenant, name=f"{slug}-{scope}", scopes=[scope]).raw_key
        for scope in ("read", "write", "admin")
    }
    return TenantWorld(tenant=tenant, admin=admin, reviewer=reviewer, store=store, keys=keys)


@pytest.fixture
def tenant_a(db) -> TenantWorld:
    return build_tenant_world("acme")


@pytest.fixture
def tenant_b(db) -> TenantWorld:
    return build_tenant_world("globex")


@pytest.fixture
def outsider(db):
    """A staff user who belongs to no tenant."""
    return get_user_model().objects.create_user("outsider", password="pw-outsider-123!", is_staff=True)


@pytest.fixture
def add_memory():
    """Create a memory through the service, as the system."""

    def _add(store, content, user_id="alice", **fields):
        item = MemoryInput(user_id=user_id, content=content, **fields)
        return memory_create(store=store, item=item, actor=Actor.system("test")).memory

    return _add


@pytest.fixture
def configure_store():
    """Change a store's settings through the service, as setup: a bad setting raises at once.

    Tests about PATCH /api/v1/stores/<name> itself call the endpoint and check its answer.
    """

    def _configure(store, **changes):
        return store_update(store=store, changes=changes)

    return _configure


@pytest.fixture
def inline_extraction(settings):
    """Extraction jobs run in the request, synchronously, instead of waiting for a worker."""
    settings.EXTRACTION_RUN_INLINE = True


@pytest.fixture(scope="session", autouse=True)
def _in_memory_channel_layer():
    """The test process is no server: the events its services publish stay in it, on the in-memory layer.
    The PostgreSQL layer would keep a pool of connections to the test database open after the tests (so it could
    not be dropped); tests/review/test_live_events.py runs the real layers between real processes."""
    django_settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    channel_layers.backends.clear()


@pytest.fixture(scope="session", autouse=True)
def _connections_closed_before_the_test_database_is_dropped(django_db_setup, django_db_blocker):
    """Async tests (websocket consumers) reach the database from the worker threads of asgiref's executor, whose
    connections outlive the tests that used them; one left open stops the test database from being dropped."""
    yield
    with django_db_blocker.unblock(), connections["default"].cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                       " WHERE datname = current_database() AND pid <> pg_backend_pid()")
