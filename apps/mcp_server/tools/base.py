"""What every tool shares: its declaration, the scope check, argument validation by the REST API's serializers,
and errors in the REST API's words.

A tool's arguments are two serializers merged into one JSON object: `arguments`, what the REST API takes from
the URL (the store, a memory or session id) and MCP adds (a cursor), and `body`, the REST operation's own input
serializer, used unchanged so that a bad value gets the REST API's message (`limit: Ensure this value is
greater than or equal to 1.`). A key neither declares is refused, as the REST API refuses unknown fields.
"""

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest
from django_mcpz.server import ToolError
from rest_framework import serializers

from apps.core.actors import Actor
from apps.core.api import unknown_fields, validated
from apps.core.errors import api_exception_handler
from apps.core.permissions import scope_missing
from apps.mcp_server.schemas import object_schema
from apps.memories import selectors as memory_selectors
from apps.memories.models import MemoryStore
from apps.tenancy.models import ApiKey
from apps.tenancy.throttling import api_key_rate_check


class StoreArguments(serializers.Serializer):
    store = serializers.SlugField(
        max_length=100, help_text="The memory store's name; list_stores shows the stores this key may use."
    )


class NoArguments(serializers.Serializer):
    pass


@dataclass
class ToolCall:
    """One call of a tool: the HTTP request, the calling API key and the validated arguments."""

    request: HttpRequest
    api_key: ApiKey
    arguments: dict  # validated by the tool's `arguments` serializer
    body: dict  # validated by the tool's `body` serializer (the REST operation's), {} without one

    @property
    def actor(self) -> Actor:
        return Actor.for_api_key(self.api_key)

    @cached_property
    def store(self) -> MemoryStore:
        """The `store` argument, resolved as the REST API resolves the store of its URL for this key."""
        return memory_selectors.store_get(api_key=self.api_key, name=self.arguments["store"])


@dataclass(frozen=True)
class Tool:
    name: str
    scope: str
    description: str
    run: Callable[[ToolCall], dict]
    arguments: type[serializers.Serializer]
    throttle_scope: str  # the kind of request its REST operation counts as (apps.tenancy.throttling)
    body: type[serializers.Serializer] | None = None
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False

    @cached_property
    def _merged(self) -> serializers.Serializer:
        """Both serializers' fields in one, for the schema and the unknown-key check (never to validate:
        each serializer validates its own keys, with its own validate())."""
        bases = (self.arguments, self.body) if self.body else (self.arguments,)
        descriptions = {}
        for base in reversed(bases):
            descriptions.update(getattr(base, "descriptions", {}))
        return type(f"{self.name}_arguments", bases, {"descriptions": descriptions})()

    def input_schema(self) -> dict:
        return object_schema(self._merged)

    def __call__(self, request: HttpRequest, raw_arguments: dict) -> dict:
        """Run the tool for django-mcpz; a refusal is raised as a ToolError in the REST API's words."""
        try:
            return self._run(request, raw_arguments)
        except Exception as error:
            response = api_exception_handler(error, {})
            if response is None:
                raise  # a bug, not the caller's mistake: django-mcpz logs it and answers without the trace
            raise ToolError(error_text(response.data["error"])) from None

    def _run(self, request: HttpRequest, raw_arguments: dict) -> dict:
        api_key = request.api_key
        if not api_key.has_scope(self.scope):
            raise scope_missing(self.scope)
        api_key_rate_check(api_key, self.throttle_scope)
        unknown = unknown_fields(self._merged, raw_arguments)
        if unknown:
            raise serializers.ValidationError(unknown)
        own = set(self.arguments().fields)
        arguments = validated(self.arguments, {key: value for key, value in raw_arguments.items() if key in own})
        body = {}
        if self.body is not None:
            body = validated(self.body, {key: value for key, value in raw_arguments.items() if key not in own})
        return self.run(ToolCall(request=request, api_key=api_key, arguments=dict(arguments), body=dict(body)))


def error_text(error: dict) -> str:
    """`code: message`, and the details when they say more than the message (several fields at fault)."""
    text = f"{error['code']}: {error['message']}"
    details = error.get("details") or {}
    if isinstance(details, dict) and len(details) > 1:
        text += f"\nDetails: {json.dumps(details, ensure_ascii=False, default=str)}"
    return text


TOOLS: list[Tool] = []


def tool(
    *,
    scope: str,
    description: str,
    arguments: type[serializers.Serializer] = StoreArguments,
    body: type[serializers.Serializer] | None = None,
    read_only: bool = False,
    destructive: bool = False,
    idempotent: bool = False,
    throttle_scope: str | None = None,
):
    """Declare the decorated function a tool, named after it; apps.mcp_server.server serves every one. Each call
    counts against the key's rate of `throttle_scope` requests: by default reads for a read scope, else writes."""

    def declare(run: Callable[[ToolCall], dict]) -> Callable[[ToolCall], dict]:
        shared = set(arguments().fields) & set(body().fields) if body else set()
        if shared:  # one key would be validated by both serializers and reach the tool only in one
            raise ImproperlyConfigured(f"{run.__name__}: both arguments and body declare {sorted(shared)}.")
        TOOLS.append(Tool(name=run.__name__, scope=scope, description=description, run=run, arguments=arguments,
                          throttle_scope=throttle_scope or ("reads" if scope == "read" else "writes"), body=body,
                          read_only=read_only, destructive=destructive, idempotent=idempotent))
        return run

    return declare
