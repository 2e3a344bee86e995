"""SalienceScorer: the probability that a user's clause is a durable fact about them, from weights.json.

Two logistic regressions trained by `train.py` on the same data: `model` reads the clause's all-MiniLM-L6-v2
embedding (the local embedder's process-wide model) plus the hand features; `lexical` reads hashed words and
character trigrams (the `hash` embedder) plus the same hand features. Both are plain dot products over fixed
weights: the same clauses give the same scores.

The lexical score comes first and costs microseconds; a clause it puts clearly below `reject_below` or at or
above `accept_from` (weights.json `cascade`, chosen by train.py so that cross-validation loses nothing) keeps
that score, and only the rest are embedded, all in one call. When the local model is not installed the lexical
score decides every clause.
"""

import functools
import json
import logging
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np

from apps.core.embeddings import Embedder, EmbeddingError, get_embedder, resolve_embedding_config
from apps.extraction.salience.features import FEATURE_NAMES, hand_features

logger = logging.getLogger(__name__)

WEIGHTS_PATH = Path(__file__).with_name("weights.json")
LEXICAL_MODEL = "salience-lexical-v1"
LEXICAL_DIMENSION = 256

Embed = Callable[[list[str]], list[list[float]]]


def local_embedder() -> Embedder:
    """The `local` provider's default model (all-MiniLM-L6-v2): the same loaded instance as `local` stores use."""
    model, dimension = resolve_embedding_config(provider="local", model=None, dimension=None)
    return get_embedder(provider="local", model=model, dimension=dimension)


def lexical_embedder() -> Embedder:
    """The `hash` provider at the lexical regression's own model name and dimension."""
    model, dimension = resolve_embedding_config(provider="hash", model=LEXICAL_MODEL, dimension=LEXICAL_DIMENSION)
    return get_embedder(provider="hash", model=model, dimension=dimension)


def local_embed(texts: list[str]) -> list[list[float]]:
    """The clauses' vectors from the local model."""
    return local_embedder().embed(texts)


def lexical_vectors(texts: list[str]) -> np.ndarray:
    """Hashed words and trigrams of each clause, then the hand features."""
    embedder = lexical_embedder()
    return _with_hand(embedder.embed(texts), embedder.dimension, texts)


def model_vectors(embeddings, texts: list[str]) -> np.ndarray:
    """Each clause's local-model embedding, then the hand features."""
    return _with_hand(embeddings, local_embedder().dimension, texts)


def _with_hand(vectors, dimension: int, texts: list[str]) -> np.ndarray:
    return np.hstack([np.asarray(vectors, dtype=np.float64).reshape(len(texts), dimension), _hand(texts)])


def _hand(texts: list[str]) -> np.ndarray:
    return np.asarray([hand_features(text) for text in texts], dtype=np.float64).reshape(len(texts),
                                                                                         len(FEATURE_NAMES))


def sigmoid(values: np.ndarray) -> np.ndarray:
    """The logistic function; the clip keeps exp from overflowing on large margins."""
    return 1.0 / (1.0 + np.exp(-np.clip(values, -30.0, 30.0)))


class SalienceScorer:
    """Scores clauses with the embedding model, or with the lexical weights when the model is unavailable."""

    def __init__(self, *, weights_path: Path = WEIGHTS_PATH, embed: Embed | None = local_embed):
        weights = json.loads(weights_path.read_text(encoding="utf-8"))
        if weights["features"] != list(FEATURE_NAMES):
            raise ValueError(f"{weights_path} was trained on other hand features; re-run the training script")
        local = local_embedder()
        if weights["model"]["embedding"] != {"model": local.model, "dimension": local.dimension}:
            raise ValueError(f"{weights_path} was trained on another local embedding model; re-run the training script")
        self._model = (np.asarray(weights["model"]["weights"]), float(weights["model"]["bias"]))
        self._lexical = (np.asarray(weights["lexical"]["weights"]), float(weights["lexical"]["bias"]))
        self._reject_below = float(weights["cascade"]["reject_below"])
        self._accept_from = float(weights["cascade"]["accept_from"])
        self._embed = embed
        self._lock = threading.Lock()

    @property
    def backend(self) -> str:
        return "model" if self._embed is not None else "lexical"

    def score(self, texts: list[str], floors: list[float] | None = None) -> list[float]:
        """P(durable) of each clause, rounded to 3 places so float noise in the embedding cannot flip a decision.

        `floors` (one per text, optional): a clause whose lexical score is below its floor keeps that score, without
        the model (for clauses that must score high to be kept at all)."""
        if not texts:
            return []
        scores = _probabilities(lexical_vectors(texts), *self._lexical)
        embed = self._embed
        floors = floors or [0.0] * len(texts)
        undecided = [index for index, score in enumerate(scores)
                     if max(self._reject_below, floors[index]) <= score < self._accept_from]
        if embed is None or not undecided:
            return scores
        unsure = [texts[index] for index in undecided]
        try:
            vectors = model_vectors(embed(unsure), unsure)
        except EmbeddingError as exc:
            self._fall_back(exc)
            return scores
        for index, score in zip(undecided, _probabilities(vectors, *self._model), strict=True):
            scores[index] = score
        return scores

    def _fall_back(self, exc: EmbeddingError) -> None:
        with self._lock:
            if self._embed is None:
                return
            # A deployment without the 'local' extra: decide by the lexical weights from now on, and say so once.
            self._embed = None
        logger.warning("Salience classifier: the local embedding model is unavailable (%s); using the lexical "
                       "scorer from now on", exc.message)


def _probabilities(vectors: np.ndarray, weights: np.ndarray, bias: float) -> list[float]:
    return [round(float(value), 3) for value in sigmoid(vectors @ weights + bias)]


@functools.cache
def get_scorer() -> SalienceScorer:
    """The process-wide scorer (its model is the local embedder's, loaded on first use)."""
    return SalienceScorer()
