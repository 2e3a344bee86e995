"""The request core of both clients: configuration, URLs, retries with backoff, error mapping.

A request is described by a `Call` (built in `_api.py`); `SyncTransport` and `AsyncTransport` send it
through one `httpx.Client` / `httpx.AsyncClient` and return the parsed result.

Retries (at most `max_retries`, exponential backoff with full jitter, a 429's Retry-After honoured up to
`max_backoff_seconds`) happen on connection errors, timeouts, 429, 500, 502, 503 and 504, for calls that
are safe to repeat: GET/PUT/DELETE, reads sent as POST (search, context), writes the server deduplicates
(memory add, messages with a run_id) and calls with an idempotency key. Every other POST/PATCH gets an
`Idempotency-Key` minted for the call (unless `auto_idempotency_keys=False`), kept across its retries:
the server runs it once and answers a retry with the first response. A connection that could not even
be opened is retried for every call, since nothing reached the server.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os
import random
import re
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Generic, TypeVar
from urllib.parse import quote

import httpx

from memoryhub_client._version import __version__
from memoryhub_client.errors import (
    APIError,
    ConfigurationError,
    ConnectionFailed,
    InvalidRequest,
    RateLimited,
    error_class_for,
)

logger = logging.getLogger("memoryhub_client")

T = TypeVar("T")

API_PREFIX = "api/v1/"
URL_ENV = "MEMORYHUB_URL"
API_KEY_ENV = "MEMORYHUB_API_KEY"
USER_AGENT = f"memoryhub-client/{__version__}"

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
# The methods the server honours Idempotency-Key on: every write. PUT and DELETE get one too: repeated,
# they end in the same state, but a retry after a lost answer would otherwise see 409 (a compare-and-set
# PUT) or 404 (a DELETE) for a write that succeeded.
IDEMPOTENCY_KEY_METHODS = frozenset({"POST", "PATCH", "PUT", "DELETE"})
# Errors raised before the request was sent: repeating it cannot do anything twice.
NOT_SENT_ERRORS = (httpx.ConnectError, httpx.ConnectTimeout)


def path(*segments: Any) -> str:
    """A URL path below /api/v1/ from raw segments, each percent-encoded whole (slashes included).

    "." and ".." are encoded too: left as they are, URL normalisation would turn
    `.../working-memory/..` into the session's own URL.
    """
    encoded = []
    for segment in segments:
        text = quote(str(segment), safe="")
        if text in {".", ".."}:
            text = text.replace(".", "%2E")
        encoded.append(text)
    return "/".join(encoded)


@dataclass(frozen=True)
class Call(Generic[T]):
    """One API request: where it goes, what it sends, whether it may be repeated, how to read the answer."""

    method: str
    path: str
    parse: Callable[[Any], T]
    params: Mapping[str, Any] | None = None
    body: Any = None
    retry: bool | None = None  # None: decided by the method (GET, PUT, DELETE are safe)
    idempotency_key: str | None = None
    extra_timeout: float = 0.0  # seconds the server may legitimately wait (flush, terminate)
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def retryable(self) -> bool:
        if self.idempotency_key:
            return True
        if self.retry is not None:
            return self.retry
        return self.method in SAFE_METHODS


def json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value!r}: give it a timezone (the API speaks UTC)")
        return value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def encode_body(body: Any) -> bytes:
    try:
        return json.dumps(body, default=json_default, ensure_ascii=False, separators=(",", ":"),
                          allow_nan=False).encode()
    except (TypeError, ValueError) as exc:
        raise InvalidRequest(f"The request body cannot be sent as JSON: {exc}") from exc


def _error_code(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return ""
    error = body.get("error") if isinstance(body, dict) else None
    return str(error.get("code", "")) if isinstance(error, dict) else ""


def query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime | date):
        return json_default(value)
    return str(value)


def retry_after_seconds(headers: Mapping[str, str], *, now: datetime | None = None) -> float | None:
    """Retry-After as seconds or as an HTTP date; None when absent or unreadable."""
    value = (headers.get("retry-after") or "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


def _text_summary(body: Any, response: httpx.Response) -> str:
    """A one-line message from a body that is not memoryhub's JSON: an HTML page's title, or the text."""
    if not isinstance(body, str) or not body.strip():
        return ""
    if "html" in response.headers.get("content-type", ""):
        title = _TITLE.search(body)
        return " ".join(title.group(1).split())[:200] if title else ""
    return body.strip()[:500]


def error_from_response(response: httpx.Response) -> APIError:
    """The exception for an error answer, carrying the parsed `{"error": {...}}` body when there is one."""
    text = response.text
    try:
        body: Any = response.json() if text else None
    except ValueError:
        body = text
    error = body.get("error") if isinstance(body, dict) else None
    error = error if isinstance(error, dict) else {}
    status = response.status_code
    code = str(error.get("code") or f"http_{status}")
    message = str(error.get("message") or _text_summary(body, response) or response.reason_phrase or "error")
    kwargs: dict[str, Any] = {
        "details": error.get("details") or {},
        "body": body,
        "headers": dict(response.headers),
        "method": response.request.method,
        "url": str(response.request.url),
    }
    cls = error_class_for(status)
    if cls is RateLimited:
        kwargs["retry_after"] = retry_after_seconds(response.headers)
    return cls(status, code, message, **kwargs)


def decode_success(response: httpx.Response) -> Any:
    if not response.content:
        return None
    try:
        return response.json()
    except ValueError as exc:
        raise APIError(
            response.status_code,
            "invalid_response",
            f"Expected JSON from {response.request.method} {response.request.url}, got "
            f"{response.headers.get('content-type', 'no content type')}: {response.text[:200]!r}",
            body=response.text,
            headers=dict(response.headers),
            method=response.request.method,
            url=str(response.request.url),
        ) from exc


def root_url(base_url: str | None) -> str:
    """The server's /api/v1/ URL from a base URL (the server root, or already ending in /api/v1)."""
    base_url = base_url if base_url is not None else os.environ.get(URL_ENV)
    if not base_url or not base_url.strip():
        raise ConfigurationError(f"No memoryhub URL: pass base_url= or set {URL_ENV} (e.g. http://127.0.0.1:8000).")
    base_url = base_url.strip().rstrip("/")
    if not base_url.startswith(("http://", "https://")):
        raise ConfigurationError(f"The memoryhub URL must start with http:// or https://, got {base_url!r}.")
    if base_url.endswith("/api/v1"):
        base_url = base_url.removesuffix("api/v1").rstrip("/")
    return f"{base_url}/{API_PREFIX}"


def api_key_or_env(api_key: str | None) -> str:
    api_key = api_key if api_key is not None else os.environ.get(API_KEY_ENV)
    if not api_key or not api_key.strip():
        raise ConfigurationError(f"No memoryhub API key: pass api_key= or set {API_KEY_ENV}.")
    return api_key.strip()


class BaseTransport:
    """What the sync and async transports share: settings, headers and the retry policy."""

    def __init__(
        self,
        base_url: str | None,
        api_key: str | None,
        *,
        timeout: float,
        max_retries: int,
        connect_timeout: float | None = None,
        backoff_seconds: float,
        max_backoff_seconds: float,
        headers: Mapping[str, str] | None,
        auto_idempotency_keys: bool = True,
    ):
        self.base_url = root_url(base_url)
        api_key = api_key_or_env(api_key)
        if timeout is None or timeout <= 0:
            raise ConfigurationError(f"timeout must be a positive number of seconds, got {timeout!r}.")
        if max_retries < 0:
            raise ConfigurationError(f"max_retries must not be negative, got {max_retries!r}.")
        if backoff_seconds < 0 or max_backoff_seconds < 0:
            raise ConfigurationError("backoff_seconds and max_backoff_seconds must not be negative.")
        if connect_timeout is not None and connect_timeout <= 0:
            raise ConfigurationError(f"connect_timeout must be a positive number of seconds, got {connect_timeout!r}.")
        self.timeout = float(timeout)
        # A connection that cannot be made in a fraction of the read budget will not be made at all: an agent
        # on a dead network should learn that quickly, while an answer may legitimately take longer.
        self.connect_timeout = float(connect_timeout) if connect_timeout is not None else self.timeout
        self.max_retries = int(max_retries)
        self.backoff_seconds = float(backoff_seconds)
        self.max_backoff_seconds = float(max_backoff_seconds)
        self.auto_idempotency_keys = bool(auto_idempotency_keys)
        extra = {name: value for name, value in (headers or {}).items() if name.lower() != "authorization"}
        self.headers = {"Accept": "application/json", "User-Agent": USER_AGENT, **extra,
                        "Authorization": f"Bearer {api_key}"}
        self._random: Callable[[], float] = random.random  # replaced in tests to pin the jitter

    def client_timeout(self) -> httpx.Timeout:
        return httpx.Timeout(self.timeout, connect=self.connect_timeout)

    def prepare(self, call: Call[T]) -> Call[T]:
        """The call as it will be sent: a write without a key gets one of its own, kept across its retries.

        Not calls marked safe to repeat (reads sent as POST, messages with a run_id, memory add): the server
        needs no key for those, and a key would make it store their answers.
        """
        if (self.auto_idempotency_keys and self.max_retries and not call.idempotency_key
                and call.retry is not True and call.method in IDEMPOTENCY_KEY_METHODS):
            return dataclasses.replace(call, idempotency_key=uuid.uuid4().hex)
        return call

    def delay(self, retry: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number `retry` (0-based): the server's Retry-After, or full jitter."""
        if retry_after is not None:
            return min(retry_after, self.max_backoff_seconds)
        ceiling = min(self.max_backoff_seconds, self.backoff_seconds * (2**retry))
        return self._random() * ceiling

    def build_request(self, client: httpx.Client | httpx.AsyncClient, call: Call) -> httpx.Request:
        headers = dict(call.headers)
        content = None
        if call.body is not None:
            content = encode_body(call.body)
            headers["Content-Type"] = "application/json"
        if call.idempotency_key:
            headers["Idempotency-Key"] = call.idempotency_key
        params = {name: query_value(value) for name, value in (call.params or {}).items() if value is not None}
        timeout = (httpx.Timeout(self.timeout + call.extra_timeout, connect=self.connect_timeout)
                   if call.extra_timeout else httpx.USE_CLIENT_DEFAULT)
        return client.build_request(
            call.method, call.path, params=params, content=content, headers=headers, timeout=timeout
        )

    def next_delay(self, call: Call, retry: int, *, error: Exception | None = None,
                   response: httpx.Response | None = None) -> float | None:
        """The wait before repeating `call` after this failure, or None when it must not be repeated."""
        if retry >= self.max_retries:
            return None
        if error is not None:
            if call.retryable or isinstance(error, NOT_SENT_ERRORS):
                return self.delay(retry, None)
            return None
        assert response is not None
        if call.retryable and response.status_code in RETRY_STATUSES:
            return self.delay(retry, retry_after_seconds(response.headers))
        if call.idempotency_key and response.status_code == 409 and _error_code(response) == "idempotency_in_progress":
            # An earlier attempt of this call (say, one that timed out) is still running on the server:
            # wait for its answer rather than report a conflict for a write that is happening.
            return self.delay(retry, retry_after_seconds(response.headers))
        return None

    @staticmethod
    def connection_failed(call: Call, request: httpx.Request, error: Exception, attempts: int) -> ConnectionFailed:
        kind = "timed out" if isinstance(error, httpx.TimeoutException) else "failed"
        message = f"{call.method} {request.url} {kind} after {attempts} attempt(s): {type(error).__name__}: {error}"
        return ConnectionFailed(message, method=call.method, url=str(request.url), attempts=attempts)

    @staticmethod
    def log_retry(call: Call, problem: str, delay: float, retry: int, max_retries: int) -> None:
        logger.warning("memoryhub %s %s: %s; retry %d of %d in %.2fs", call.method, call.path, problem,
                       retry + 1, max_retries, delay)


class SyncTransport(BaseTransport):
    def __init__(self, base_url: str | None, api_key: str | None, *, transport: httpx.BaseTransport | None = None,
                 **settings: Any):
        super().__init__(base_url, api_key, **settings)
        self._client = httpx.Client(base_url=self.base_url, headers=self.headers, timeout=self.client_timeout(),
                                    transport=transport)
        self._sleep: Callable[[float], Any] = time.sleep

    def run(self, call: Call[T]) -> T:
        call = self.prepare(call)
        retry = 0
        while True:
            request = self.build_request(self._client, call)
            try:
                response = self._client.send(request)
            except httpx.TransportError as error:
                delay = self.next_delay(call, retry, error=error)
                if delay is None:
                    raise self.connection_failed(call, request, error, retry + 1) from error
                self.log_retry(call, type(error).__name__, delay, retry, self.max_retries)
            else:
                if response.is_success:
                    return call.parse(decode_success(response))
                delay = self.next_delay(call, retry, response=response)
                if delay is None:
                    raise error_from_response(response)
                self.log_retry(call, f"HTTP {response.status_code}", delay, retry, self.max_retries)
            self._sleep(delay)
            retry += 1

    def close(self) -> None:
        self._client.close()


class AsyncTransport(BaseTransport):
    def __init__(self, base_url: str | None, api_key: str | None, *,
                 transport: httpx.AsyncBaseTransport | None = None, **settings: Any):
        super().__init__(base_url, api_key, **settings)
        self._client = httpx.AsyncClient(base_url=self.base_url, headers=self.headers, timeout=self.client_timeout(),
                                         transport=transport)
        self._sleep: Callable[[float], Any] = asyncio.sleep

    async def run(self, call: Call[T]) -> T:
        call = self.prepare(call)
        retry = 0
        while True:
            request = self.build_request(self._client, call)
            try:
                response = await self._client.send(request)
            except httpx.TransportError as error:
                delay = self.next_delay(call, retry, error=error)
                if delay is None:
                    raise self.connection_failed(call, request, error, retry + 1) from error
                self.log_retry(call, type(error).__name__, delay, retry, self.max_retries)
            else:
                if response.is_success:
                    return call.parse(decode_success(response))
                delay = self.next_delay(call, retry, response=response)
                if delay is None:
                    raise error_from_response(response)
                self.log_retry(call, f"HTTP {response.status_code}", delay, retry, self.max_retries)
            await self._sleep(delay)
            retry += 1

    async def aclose(self) -> None:
        await self._client.aclose()
