"""One JSON POST to an LLM API with timeouts and retries; every failure ends in ExtractionError."""

import logging
import random
from collections.abc import Callable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

from apps.extraction.extractors.base import ExtractionError
from apps.extraction.extractors.llm.config import LLMConfig

logger = logging.getLogger(__name__)

# 408 is a timeout the server noticed first; 529 is Anthropic's "overloaded". Other 4xx (a bad key,
# an unknown model, a schema the server rejects) would fail the same way again.
_RETRYABLE_CLIENT_STATUS = {408, 429}
_MAX_BACKOFF_SECONDS = 30.0


class RequestRefused(ExtractionError):
    """A 4xx the same request would get again; the provider may change the request and try once more."""

    def __init__(self, message: str, *, status_code: int, body: str):
        super().__init__(message)
        self.status_code = status_code
        self.body = body


class LLMHTTPClient:
    """Keeps one httpx.Client (and so its pooled connections) for the extractor's lifetime."""

    def __init__(self, *, config: LLMConfig, headers: dict[str, str], label: str, sleep: Callable[[float], None]):
        self.config = config
        self.label = label  # names the service in error messages, e.g. "LLM (anthropic, claude-haiku-4-5)"
        self._sleep = sleep
        self._client = httpx.Client(
            base_url=config.base_url.rstrip("/") + "/",
            headers={"Content-Type": "application/json", **headers},
            timeout=httpx.Timeout(config.timeout_seconds),
        )

    def close(self) -> None:
        self._client.close()

    def post_json(self, path: str, payload: dict) -> object:
        """The decoded JSON body of a 2xx answer to POST `path`."""
        attempts = self.config.max_retries + 1
        for attempt in range(attempts):
            last_attempt = attempt == attempts - 1
            try:
                response = self._client.post(path, json=payload)
            except httpx.TimeoutException as exc:
                problem = f"timed out after {self.config.timeout_seconds:g}s ({exc.__class__.__name__})"
                retry_after = None
            except httpx.TransportError as exc:
                problem = f"is unreachable ({exc.__class__.__name__}: {exc})"
                retry_after = None
            else:
                if response.is_success:
                    return self._decode(response)
                problem = f"answered HTTP {response.status_code}: {response.text[:300]}"
                if not _is_retryable(response.status_code):
                    raise RequestRefused(f"{self.label} {problem}", status_code=response.status_code,
                                         body=response.text[:4000])
                retry_after = _retry_after_seconds(response.headers)
            if last_attempt:
                raise ExtractionError(f"{self.label} {problem}; gave up after {attempts} attempt(s)")
            logger.warning("%s %s; retrying (attempt %d of %d)", self.label, problem[:120], attempt + 2, attempts)
            self._sleep(self._delay(attempt, retry_after))
        raise AssertionError("unreachable")

    def _decode(self, response: httpx.Response) -> object:
        try:
            return response.json()
        except ValueError as exc:
            raise ExtractionError(f"{self.label} sent a response body that is not JSON: {exc}") from exc

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        backoff = min(self.config.backoff_seconds * (2**attempt), _MAX_BACKOFF_SECONDS) * (0.5 + random.random())
        if retry_after is None:
            return backoff
        return max(backoff, min(retry_after, self.config.max_retry_after_seconds))


def _is_retryable(status_code: int) -> bool:
    return status_code in _RETRYABLE_CLIENT_STATUS or status_code >= 500


def _retry_after_seconds(headers: httpx.Headers) -> float | None:
    """Retry-After as seconds or an HTTP date, or OpenAI's retry-after-ms; None when absent or unreadable."""
    milliseconds = headers.get("retry-after-ms")
    if milliseconds:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())
