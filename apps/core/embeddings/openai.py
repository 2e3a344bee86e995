import logging
import math
import random
import time

import httpx
from django.conf import settings

from apps.core.embeddings.base import Embedder, EmbeddingError

logger = logging.getLogger(__name__)

_RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
_MAX_RETRY_AFTER_SECONDS = 30.0


class OpenAIEmbedder(Embedder):
    """Any OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, Ollama, vLLM, LM Studio, TEI...)."""

    provider = "openai"

    def __init__(self, *, model: str, dimension: int):
        super().__init__(model=model, dimension=dimension)
        headers = {"Content-Type": "application/json"}
        if settings.EMBEDDING_OPENAI_API_KEY:
            headers["Authorization"] = f"Bearer {settings.EMBEDDING_OPENAI_API_KEY}"
        self._client = httpx.Client(
            base_url=settings.EMBEDDING_OPENAI_BASE_URL.rstrip("/") + "/",
            headers=headers,
            timeout=settings.EMBEDDING_TIMEOUT_SECONDS,
        )
        self.batch_size = settings.EMBEDDING_BATCH_SIZE
        self.max_retries = settings.EMBEDDING_MAX_RETRIES
        self.backoff_seconds = 0.5

    def _embed(self, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            vectors.extend(self._embed_batch(texts[start : start + self.batch_size]))
        return vectors

    def _embed_batch(self, batch: list[str]) -> list[list[float]]:
        payload = {"model": self.model, "input": batch, "encoding_format": "float"}
        for attempt in range(self.max_retries + 1):
            last_attempt = attempt == self.max_retries
            try:
                response = self._client.post("embeddings", json=payload)
            except httpx.TransportError as exc:
                if last_attempt:
                    raise EmbeddingError(f"Embedding service unreachable: {exc.__class__.__name__}: {exc}") from exc
                self._sleep(attempt, None)
                continue
            if response.status_code in _RETRYABLE_STATUS and not last_attempt:
                logger.warning("Embedding service answered %s; retrying", response.status_code)
                self._sleep(attempt, response.headers.get("Retry-After"))
                continue
            if response.status_code != 200:
                raise EmbeddingError(
                    f"Embedding service answered HTTP {response.status_code}: {response.text[:300]}"
                )
            return self._parse(response, expected=len(batch))
        raise AssertionError("unreachable")

    def _parse(self, response: httpx.Response, *, expected: int) -> list[list[float]]:
        try:
            items = sorted(response.json()["data"], key=lambda item: item["index"])
            indexes = [item["index"] for item in items]
            vectors = [[float(value) for value in item["embedding"]] for item in items]
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbeddingError(f"Embedding service sent a malformed response: {exc}") from exc
        if len(vectors) != expected:
            raise EmbeddingError(f"Embedding service returned {len(vectors)} vectors for {expected} inputs.")
        # A repeated or skipped index would pair a vector with the wrong text, silently.
        if indexes != list(range(expected)):
            raise EmbeddingError(f"Embedding service returned indexes {indexes[:20]} for {expected} inputs.")
        for vector in vectors:
            if len(vector) != self.dimension:
                raise EmbeddingError(
                    f"Embedding service returned {len(vector)}-dimensional vectors; "
                    f"this store expects {self.dimension}."
                )
            # PostgreSQL rejects NaN (which would surface as the client's fault), and a zero vector has
            # no cosine distance, so the memory would never be found by vector search.
            if not all(math.isfinite(value) for value in vector) or not any(vector):
                raise EmbeddingError("Embedding service returned a vector with NaN, infinite or only zero values.")
        return vectors

    def _sleep(self, attempt: int, retry_after: str | None) -> None:
        delay = self.backoff_seconds * (2**attempt) * (0.5 + random.random())
        if retry_after:
            try:
                delay = max(delay, min(float(retry_after), _MAX_RETRY_AFTER_SECONDS))
            except ValueError:
                pass
        time.sleep(delay)
