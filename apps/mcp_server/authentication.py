"""The MCP endpoint's authentication: a memoryhub API key as a bearer token, exactly as the REST API takes it."""

import json

from django.http import HttpRequest, JsonResponse
from rest_framework import exceptions

from apps.core.errors import error_body
from apps.core.permissions import AUTHENTICATION_REQUIRED
from apps.tenancy.authentication import ApiKeyAuthentication

# JSON-RPC leaves -32000 to -32099 to the server; MCP claims -32020 and up.
UNAUTHORIZED = -32001


def _request_id(body: bytes) -> str | int | None:
    """The JSON-RPC id of the refused request, when it can be read, so the client can match the error to it."""
    try:
        message = json.loads(body)
    except ValueError:
        return None
    request_id = message.get("id") if isinstance(message, dict) else None
    return request_id if isinstance(request_id, str | int) and not isinstance(request_id, bool) else None


def _refusal(request: HttpRequest, code: str, message: str, *, invalid_token: bool) -> JsonResponse:
    """401 with a bearer challenge (RFC 6750) and a JSON-RPC error whose data is the REST API's error body: the
    official MCP clients show a JSON-RPC error's message, where a bare 401 reads "Server returned an error"."""
    challenge = 'Bearer realm="memoryhub"' + (', error="invalid_token"' if invalid_token else "")
    payload = {
        "jsonrpc": "2.0",
        "id": _request_id(request.body),
        "error": {"code": UNAUTHORIZED, "message": message, "data": error_body(code, message)},
    }
    return JsonResponse(payload, status=401, headers={"WWW-Authenticate": challenge})


def api_key_auth(request: HttpRequest) -> JsonResponse | None:
    """django-mcpz's auth hook: None lets the request through with `request.api_key` set, else the 401."""
    try:
        authenticated = ApiKeyAuthentication().authenticate(request)
    except exceptions.AuthenticationFailed as error:
        return _refusal(request, "authentication_failed", str(error.detail), invalid_token=True)
    if authenticated is None:
        return _refusal(request, "not_authenticated", AUTHENTICATION_REQUIRED, invalid_token=False)
    _, request.api_key = authenticated
    return None
