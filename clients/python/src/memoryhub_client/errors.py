"""Exceptions raised by the memoryhub client.

Every error answer of the server has one shape, `{"error": {"code", "message", "details"}}`; `APIError`
and its subclasses carry it parsed, along with the status, the raw body and the response headers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class MemoryHubError(Exception):
    """Base class of everything the client raises on purpose."""


class ConfigurationError(MemoryHubError):
    """The client is missing its base URL or API key, or got an invalid setting."""


class InvalidRequest(MemoryHubError, ValueError):
    """The request cannot be sent as given (a value JSON cannot carry, such as NaN or a naive datetime)."""


class ConnectionFailed(MemoryHubError):
    """The server could not be reached (connection refused, DNS, TLS, timeout), after any retries."""

    def __init__(self, message: str, *, method: str = "", url: str = "", attempts: int = 1):
        super().__init__(message)
        self.message = message
        self.method = method
        self.url = url
        self.attempts = attempts


class APIError(MemoryHubError):
    """The server answered with an error status."""

    def __init__(
        self,
        status_code: int,
        code: str,
        message: str,
        details: Any = None,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
        *,
        method: str = "",
        url: str = "",
    ):
        super().__init__(message)
        self.status_code = status_code
        self.code = code
        self.message = message
        self.details = details if details is not None else {}
        self.body = body
        self.headers = dict(headers or {})
        self.method = method
        self.url = url

    def __str__(self) -> str:
        return f"HTTP {self.status_code} {self.code}: {self.message}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status_code={self.status_code!r}, code={self.code!r}, message={self.message!r})"


class ValidationFailed(APIError):
    """400: the request was malformed or a value was refused; `details` names the fields."""


class PayloadTooLarge(ValidationFailed):
    """413: a body, batch, message or working-memory value over the server's limits."""


class AuthenticationFailed(APIError):
    """401: no API key, or an invalid or revoked one."""


class PermissionDenied(APIError):
    """403: the key lacks the scope (read < write < admin) or is limited to other stores."""


class NotFound(APIError):
    """404: no such object for this tenant (another tenant's objects are 404 too)."""


class Conflict(APIError):
    """409: a state that does not allow the request (a lifecycle transition, a compare-and-set, a full store)."""


class RateLimited(APIError):
    """429: too many requests; `retry_after` is the server's Retry-After in seconds, or None."""

    def __init__(self, *args: Any, retry_after: float | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.retry_after = retry_after


class ServerError(APIError):
    """5xx: the server (or something it depends on, such as an embedding API) failed."""


_BY_STATUS: dict[int, type[APIError]] = {
    400: ValidationFailed,
    401: AuthenticationFailed,
    403: PermissionDenied,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    429: RateLimited,
}


def error_class_for(status_code: int) -> type[APIError]:
    if status_code >= 500:
        return ServerError
    return _BY_STATUS.get(status_code, APIError)


__all__ = [
    "APIError",
    "AuthenticationFailed",
    "ConfigurationError",
    "Conflict",
    "ConnectionFailed",
    "MemoryHubError",
    "NotFound",
    "PayloadTooLarge",
    "PermissionDenied",
    "RateLimited",
    "ServerError",
    "ValidationFailed",
    "error_class_for",
]
