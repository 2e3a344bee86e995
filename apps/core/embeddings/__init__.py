"""Embedding providers, chosen per memory store: `hash`, `local` and `openai`."""

from apps.core.embeddings.base import (
    PROVIDERS,
    SUPPORTED_DIMENSIONS,
    Embedder,
    EmbeddingError,
    get_embedder,
    resolve_embedding_config,
    vector_literal,
)

__all__ = [
    "PROVIDERS",
    "SUPPORTED_DIMENSIONS",
    "Embedder",
    "EmbeddingError",
    "get_embedder",
    "resolve_embedding_config",
    "vector_literal",
]
