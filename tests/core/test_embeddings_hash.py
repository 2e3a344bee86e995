"""The hash embedder: deterministic, dimension-true, unit-length, and good enough to rank related text."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from apps.core.embeddings import SUPPORTED_DIMENSIONS, get_embedder, resolve_embedding_config
from apps.core.embeddings.hashing import HashEmbedder

PROJECT_ROOT = Path(__file__).resolve().parents[2]
MODEL = "hash-ngram-v1"


def _embedder(dimension: int = 384) -> HashEmbedder:
    return HashEmbedder(model=MODEL, dimension=dimension)


def _norm(vector: list[float]) -> float:
    return math.sqrt(sum(value * value for value in vector))


def _cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=False)) / (_norm(a) * _norm(b))


def test_same_text_gives_the_same_vector_across_calls_and_instances():
    first = _embedder().embed(["Alice is allergic to peanuts"])[0]
    again = _embedder().embed(["Alice is allergic to peanuts"])[0]
    via_query = _embedder().embed_query("Alice is allergic to peanuts")
    assert first == again == via_query


def test_vectors_match_a_fresh_process_with_a_different_hash_seed():
    # Stored vectors must stay valid across restarts, so nothing may depend on Python's salted hash().
    texts = ["Alice is allergic to peanuts", "Bob prefers dark mode", "naïve café ünïcode"]
    script = (
        "import json, sys\n"
        "from django.conf import settings\n"
        "settings.configure()\n"
        "import django\n"
        "django.setup()\n"
        "from apps.core.embeddings.hashing import HashEmbedder\n"
        "texts = json.loads(sys.argv[1])\n"
        f"print(json.dumps(HashEmbedder(model={MODEL!r}, dimension=256).embed(texts)))\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    completed = subprocess.run(
        [sys.executable, "-c", script, json.dumps(texts)],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(completed.stdout) == _embedder(256).embed(texts)


def test_vector_for_a_known_text_has_not_changed():
    # A golden value: changing the algorithm would silently invalidate every stored hash vector.
    vector = _embedder(256).embed_query("hello world")
    nonzero = {index: round(value, 6) for index, value in enumerate(vector) if value}
    assert list(nonzero.items())[:6] == [
        (1, 0.194896),
        (8, -0.194896),
        (27, -0.194896),
        (52, -0.194896),
        (76, -0.194896),
        (78, -0.556846),
    ]
    assert nonzero[139] == -0.556846


@pytest.mark.parametrize("dimension", SUPPORTED_DIMENSIONS)
def test_vectors_have_the_requested_dimension_and_unit_length(dimension):
    texts = ["Alice lives in Paris", "x", "A much longer text " * 50]
    vectors = _embedder(dimension).embed(texts)
    assert len(vectors) == len(texts)
    for vector in vectors:
        assert len(vector) == dimension
        assert all(isinstance(value, float) and math.isfinite(value) for value in vector)
        assert _norm(vector) == pytest.approx(1.0, abs=1e-9)


def test_dimension_changes_the_vector_not_just_its_length():
    short = _embedder(256).embed_query("Alice lives in Paris")
    long = _embedder(512).embed_query("Alice lives in Paris")
    assert len(short) == 256 and len(long) == 512
    assert long[:256] != short


@pytest.mark.parametrize("text", ["", "   ", "?!.,;:-", "…—«»"])
def test_text_without_words_gives_a_finite_unit_vector(text):
    vector = _embedder(384).embed_query(text)
    assert len(vector) == 384
    assert all(math.isfinite(value) for value in vector)
    assert _norm(vector) == pytest.approx(1.0)


def test_case_and_punctuation_do_not_change_the_vector():
    embedder = _embedder()
    assert embedder.embed_query("Peanut allergy!") == embedder.embed_query("peanut   ALLERGY")


def test_embedding_nothing_returns_nothing():
    assert _embedder().embed([]) == []


def test_batch_keeps_input_order():
    embedder = _embedder()
    texts = ["one", "two", "three"]
    assert embedder.embed(texts) == [embedder.embed_query(text) for text in texts]


def test_related_texts_are_closer_than_unrelated_ones():
    embedder = _embedder()
    allergy, peanut_allergy, dark_mode, paris = embedder.embed(
        ["allergic to peanuts", "peanut allergy", "prefers dark mode in every app", "lives in Paris"]
    )
    related = _cosine(allergy, peanut_allergy)
    assert related > 0.2
    assert related > _cosine(allergy, dark_mode)
    assert related > _cosine(allergy, paris)
    assert related > _cosine(peanut_allergy, dark_mode)
    assert related > _cosine(peanut_allergy, paris)


def test_identical_text_has_similarity_one_and_different_text_less():
    embedder = _embedder()
    a, b = embedder.embed(["Alice works as a nurse", "Alice works as a nurse"])
    c = embedder.embed_query("Bob works as a pilot")
    assert _cosine(a, b) == pytest.approx(1.0)
    assert _cosine(a, c) < 0.9


def test_get_embedder_returns_one_cached_hash_embedder_per_dimension(monkeypatch):
    from apps.core.embeddings import base

    monkeypatch.setattr(base, "_cache", {})
    model, dimension = resolve_embedding_config(provider="hash", model=None, dimension=None)
    assert (model, dimension) == (MODEL, 384)
    first = get_embedder(provider="hash", model=model, dimension=dimension)
    assert isinstance(first, HashEmbedder)
    assert get_embedder(provider="hash", model=model, dimension=dimension) is first
    other = get_embedder(provider="hash", model=model, dimension=256)
    assert other is not first and other.dimension == 256


@pytest.mark.parametrize("dimension", [100, 383, 4096])
def test_unsupported_dimensions_are_refused(dimension):
    from apps.core.errors import ApplicationError

    with pytest.raises(ApplicationError) as caught:
        resolve_embedding_config(provider="hash", model=None, dimension=dimension)
    assert caught.value.code == "validation_error"
    assert "embedding_dimension" in caught.value.details
