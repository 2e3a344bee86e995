"""The MCP endpoint's authentication: a memoryhub API key as a bearer token, exactly as the REST API takes it."""

import json

from django.http import HttpRequest, JsonResponse
from rest_framework import exceptions

from apps.core.errors import PayloadTooLargeError, error_body
from apps.core.permissions import AUTHENTICATION_REQUIRED
from apps.tenancy.authentication import ApiKeyAuthentication
from apps.tenancy.limits import refuse_oversized_body
from apps.tenancy.throttling import FailedAuthenticationThrottle

# JSON-RPC leaves -32000 to -32099 to the server; MCP claims -32020 and up.
SERVER_ERROR = -32000
UNAUTHORIZED = -32001


def _request_id(body: bytes) -> str | int | None:
    """The JSON-RPC id of the refused request, when it can be read, so the client can match the error to it."""
    try:
        message = json.loads(body)
    except ValueError:
        return None
    request_id = message.get("id") if isinstance(message, dict) else None
    return request_id if isinstance(request_id, str | int) and not isinstance(request_id, bool) else None


def _refusal(request: HttpRequest, status: int, rpc_code: int, error: dict, headers: dict | None = None) -> JsonResponse:
    """The HTTP refusal with a JSON-RPC error whose data is the REST API's error body: the official MCP clients show
    a JSON-RPC error's message, where a bare status reads "Server returned an error"."""
    payload = {
        "jsonrpc": "2.0",
        "id": _request_id(request.body),
        "error": {"code": rpc_code, "message": error["error"]["message"], "data": error},
    }
    return JsonResponse(payload, status=status, headers=headers)


def _unauthenticated(request: HttpRequest, code: str, message: str, *, invalid_token: bool) -> JsonResponse:
    """401 with a bearer challenge (RFC 6750); past the failures allowed from the client's address, the REST API's
    429 instead, counted the same way (FailedAuthenticationThrottle): guessing keys here gains nothing."""
    throttle = FailedAuthenticationThrottle()
    if not throttle.allow_request(request, None):
        refused = throttle.refusal()
        return _refusal(request, 429, SERVER_ERROR,
                        error_body("rate_limited", str(refused.detail), refused.details),
                        headers={"Retry-After": str(refused.wait)})
    challenge = 'Bearer realm="memoryhub"' + (', error="invalid_token"' if invalid_token else "")
    return _refusal(request, 401, UNAUTHORIZED, error_body(code, message), headers={"WWW-Authenticate": challenge})


def api_key_auth(request: HttpRequest) -> JsonResponse | None:
    """django-mcpz's auth hook: None lets the request through with `request.api_key` set, else the refusal: a
    missing or wrong key, or a body past the key's tenant's size limit (the REST API's 413). The tools count each
    call against the key's rate (apps.mcp_server.tools.base)."""
    try:
        authenticated = ApiKeyAuthentication().authenticate(request)
    except exceptions.AuthenticationFailed as error:
        return _unauthenticated(request, "authentication_failed", str(error.detail), invalid_token=True)
    if authenticated is None:
        return _unauthenticated(request, "not_authenticated", AUTHENTICATION_REQUIRED, invalid_token=False)
    _, request.api_key = authenticated
    try:
        refuse_oversized_body(request.api_key.tenant, len(request.body))
    except PayloadTooLargeError as error:
        return _refusal(request, 413, SERVER_ERROR, error_body(error.code, error.message, error.details))
    return None
