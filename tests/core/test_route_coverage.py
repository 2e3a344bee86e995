"""Every /api/v1 route and method has a row in an access matrix, so a new endpoint cannot ship without a
test of who may call it (no key, too small a scope, another tenant, the right scope).

The matrices: tests/core/test_auth_matrix.py (stores, memories, jobs, the key),
tests/conversations/test_access.py (sessions and their working state) and tests/memories/test_webhooks_api.py
(a store's webhooks and their deliveries)."""

import re
import uuid

from django.urls import URLPattern, URLResolver, get_resolver, resolve
from drf_spectacular.generators import SchemaGenerator

from apps.core.errors import json_not_found
from tests.conversations.test_access import _endpoints as session_endpoints
from tests.core.test_auth_matrix import _endpoints as store_endpoints
from tests.memories.test_webhooks_api import _endpoints as webhook_endpoints

API = "api/v1/"
# Open to everyone on purpose: the OpenAPI schema and its two viewers. (The catch-all JSON 404 is
# recognised by its view.)
PUBLIC_ROUTES = {"api/v1/schema", "api/v1/docs", "api/v1/redoc"}


def _routes(patterns, prefix=""):
    """(route, view) for every URL pattern, with the routes of included resolvers joined."""
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern.url_patterns, prefix + str(pattern.pattern))
        else:
            assert isinstance(pattern, URLPattern)
            yield prefix + str(pattern.pattern), pattern.callback


def _handled_methods(view_class) -> set[str]:
    return {
        method.upper()
        for method in view_class.http_method_names
        if method not in ("head", "options") and hasattr(view_class, method)
    }


def api_operations() -> dict[tuple[str, str], str]:
    """(route, HTTP method) -> the scope the view declares, for every API-key route under /api/v1."""
    operations = {}
    for route, view in _routes(get_resolver().url_patterns):
        if not route.startswith(API) or route in PUBLIC_ROUTES or view is json_not_found:
            continue
        view_class = view.view_class
        scopes = view_class.required_scopes
        handled = _handled_methods(view_class)
        # A handler without a declared scope is refused to every key (HasApiKey fails closed).
        assert handled == set(scopes), f"{route}: handles {sorted(handled)}, declares scopes for {sorted(scopes)}"
        for method in handled:
            operations[(route, method)] = scopes[method]
    return operations


def matrix_operations() -> set[tuple[str, str]]:
    """(route, HTTP method) of every row of the access matrices."""
    operations = set()
    endpoints = [*store_endpoints(uuid.uuid4(), uuid.uuid4()), *session_endpoints(uuid.uuid4()),
                 *webhook_endpoints(uuid.uuid4(), uuid.uuid4())]
    for method, path, *_ in endpoints:
        match = resolve(path.split("?")[0])
        assert match.func is not json_not_found, f"{method.upper()} {path} matches no route"
        operations.add((match.route, method.upper()))
    return operations


def test_the_walk_finds_every_operation_the_openapi_schema_publishes():
    # An independent list of the API (drf-spectacular's), so the walk cannot miss routes unnoticed.
    schema = SchemaGenerator().get_schema(request=None, public=True)
    published = {(path, method.upper()) for path, item in schema["paths"].items() for method in item
                 if method in ("get", "post", "put", "patch", "delete")}
    walked = {("/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route), method) for route, method in api_operations()}
    assert walked == published
    assert ("/api/v1/stores/{store_name}/sessions/{session_id}/flush", "POST") in walked


def test_every_api_route_and_method_is_in_an_access_matrix():
    missing = sorted(set(api_operations()) - matrix_operations())
    assert not missing, "Add these to tests/core/test_auth_matrix.py or tests/conversations/test_access.py: " + \
        ", ".join(f"{method} /{route}" for route, method in missing)

