import functools
import threading
import time
from abc import ABC, abstractmethod
from array import array
from dataclasses import dataclass

from apps.core import metrics
from apps.core.errors import ApplicationError, UpstreamError

# Each dimension has its own partial HNSW index on the untyped `vector` column (see the
# memories migrations); a store must use one of them so its searches are index-backed.
SUPPORTED_DIMENSIONS = (256, 384, 512, 768, 1024, 1536)


class EmbeddingError(UpstreamError):
    default_code = "embedding_failed"


class Embedder(ABC):
    provider: str = ""

    def __init__(self, *, model: str, dimension: int):
        self.model = model
        self.dimension = dimension
        self._query_vector = None  # the last queries' vectors (embed_query), made on first use

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One vector of `self.dimension` floats per text, in order."""
        if not texts:
            return []
        if not metrics.enabled():
            return self._embed(texts)
        # Timed here, for every provider and every caller: searches, writes, extraction in the worker.
        started = time.perf_counter()
        try:
            vectors = self._embed(texts)
        except Exception:
            with metrics.recording():
                metrics.EMBEDDING_ERRORS.labels(provider=self.provider).inc()
            raise
        with metrics.recording():
            metrics.EMBEDDING_DURATION.labels(provider=self.provider).observe(time.perf_counter() - started)
            metrics.EMBEDDING_TEXTS.labels(provider=self.provider).inc(len(texts))
        return vectors

    @abstractmethod
    def _embed(self, texts: list[str]) -> list[list[float]]:
        """The provider's work behind embed(): `texts` is never empty."""

    def embed_query(self, text: str) -> list[float]:
        """A search query's vector. The last EMBEDDING_QUERY_CACHE_SIZE queries' are kept: agents ask the same
        things again (context building asks on every turn), and a vector costs milliseconds of model time on the
        local embedder, a round trip to an embeddings API on a remote one. Texts to store are never cached."""
        if self._query_vector is None:
            from django.conf import settings

            # Thread-safe, and a failure is not kept. Two threads making it at once each make one: one is kept.
            self._query_vector = functools.lru_cache(maxsize=settings.EMBEDDING_QUERY_CACHE_SIZE)(self._embed_query)
        return list(self._query_vector(text))

    def _embed_query(self, text: str) -> array:
        # 8 bytes a number, exact: a tuple of floats took four times the memory (50 MB for 1,024 queries of 1,536).
        return array("d", self.embed([text])[0])


@dataclass(frozen=True)
class ProviderSpec:
    name: str
    default_model: str
    default_dimension: int
    fixed_dimension: bool


def _specs() -> dict[str, ProviderSpec]:
    from django.conf import settings

    return {
        "hash": ProviderSpec("hash", "hash-ngram-v1", 384, fixed_dimension=False),
        "local": ProviderSpec("local", "all-MiniLM-L6-v2", 384, fixed_dimension=True),
        "openai": ProviderSpec(
            "openai",
            settings.EMBEDDING_OPENAI_MODEL,
            settings.EMBEDDING_OPENAI_DIMENSION,
            fixed_dimension=False,
        ),
    }


PROVIDERS = ("hash", "local", "openai")


def resolve_embedding_config(*, provider: str, model: str | None, dimension: int | None) -> tuple[str, int]:
    """Fill in provider defaults and check the combination; returns (model, dimension)."""
    spec = _specs().get(provider)
    if spec is None:
        raise ApplicationError(
            f"Unknown embedding provider {provider!r}; choose one of {', '.join(PROVIDERS)}.",
            code="validation_error",
            details={"embedding_provider": [f"Must be one of {', '.join(PROVIDERS)}."]},
        )
    model = model or spec.default_model
    dimension = dimension or spec.default_dimension
    if spec.fixed_dimension and dimension != spec.default_dimension:
        raise ApplicationError(
            f"The {provider} embedder produces {spec.default_dimension}-dimensional vectors.",
            code="validation_error",
            details={"embedding_dimension": [f"Must be {spec.default_dimension} for {provider}."]},
        )
    if provider == "local" and model != spec.default_model:
        raise ApplicationError(
            f"The local embedder ships only {spec.default_model}.",
            code="validation_error",
            details={"embedding_model": [f"Must be {spec.default_model}."]},
        )
    if dimension not in SUPPORTED_DIMENSIONS:
        raise ApplicationError(
            f"Embedding dimension {dimension} is not supported; use one of "
            f"{', '.join(map(str, SUPPORTED_DIMENSIONS))}.",
            code="validation_error",
            details={"embedding_dimension": [f"Must be one of {list(SUPPORTED_DIMENSIONS)}."]},
        )
    return model, dimension


_cache: dict[tuple[str, str, int], Embedder] = {}
_cache_lock = threading.Lock()


def vector_literal(vector) -> str:
    """A vector in pgvector's text form, for raw SQL: '[0.1,0.2,...]'."""
    return "[" + ",".join(repr(float(value)) for value in vector) + "]"


def get_embedder(*, provider: str, model: str, dimension: int) -> Embedder:
    """A process-wide embedder per (provider, model, dimension): models load once per process."""
    key = (provider, model, dimension)
    embedder = _cache.get(key)
    if embedder is not None:
        return embedder
    with _cache_lock:
        embedder = _cache.get(key)
        if embedder is None:
            embedder = _build(provider=provider, model=model, dimension=dimension)
            _cache[key] = embedder
    return embedder


def _build(*, provider: str, model: str, dimension: int) -> Embedder:
    if provider == "hash":
        from apps.core.embeddings.hashing import HashEmbedder

        return HashEmbedder(model=model, dimension=dimension)
    if provider == "local":
        from apps.core.embeddings.local import LocalEmbedder

        return LocalEmbedder(model=model, dimension=dimension)
    if provider == "openai":
        from apps.core.embeddings.openai import OpenAIEmbedder

        return OpenAIEmbedder(model=model, dimension=dimension)
    raise ApplicationError(f"Unknown embedding provider {provider!r}.")
