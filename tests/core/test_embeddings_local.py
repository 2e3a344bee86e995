"""The local all-MiniLM-L6-v2 embedder: real model, loaded once, good enough to find what matters."""

import math

import pytest

from apps.core.embeddings import get_embedder, resolve_embedding_config
from apps.core.embeddings.local import LocalEmbedder
from apps.core.errors import ApplicationError

MODEL = "all-MiniLM-L6-v2"
DIMENSION = 384

ALICE_MEMORIES = [
    "Alice is allergic to peanuts",
    "Alice prefers dark mode in every app",
    "Alice lives in Paris",
    "Alice's favourite band is Radiohead",
    "Alice works as a nurse",
]


def _local_embedder() -> LocalEmbedder:
    # The process-wide instance, as services and selectors get it: the model loads once per test run.
    return get_embedder(provider="local", model=MODEL, dimension=DIMENSION)


def _dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=False))


def test_local_store_config_is_fixed_to_minilm_384():
    assert resolve_embedding_config(provider="local", model=None, dimension=None) == (MODEL, DIMENSION)
    with pytest.raises(ApplicationError) as wrong_dimension:
        resolve_embedding_config(provider="local", model=None, dimension=768)
    assert "embedding_dimension" in wrong_dimension.value.details
    with pytest.raises(ApplicationError) as wrong_model:
        resolve_embedding_config(provider="local", model="all-mpnet-base-v2", dimension=None)
    assert "embedding_model" in wrong_model.value.details


@pytest.mark.slow
def test_vectors_are_384_dimensional_unit_vectors():
    texts = ["Alice is allergic to peanuts", "", "?!", "A longer sentence about nothing in particular. " * 20]

    vectors = _local_embedder().embed(texts)

    assert len(vectors) == len(texts)
    for vector in vectors:
        assert len(vector) == DIMENSION
        assert all(isinstance(value, float) and math.isfinite(value) for value in vector)
        assert math.sqrt(_dot(vector, vector)) == pytest.approx(1.0, abs=1e-4)


@pytest.mark.slow
def test_same_text_gives_the_same_vector_and_batching_keeps_order():
    embedder = _local_embedder()
    texts = ["Alice lives in Paris", "Alice works as a nurse"]
    batch = embedder.embed(texts)
    for text, vector in zip(texts, batch, strict=False):
        assert embedder.embed_query(text) == pytest.approx(vector, abs=1e-5)
    assert _dot(batch[0], batch[1]) < 0.99


@pytest.mark.slow
def test_model_is_loaded_once_per_process():
    embedder = _local_embedder()
    assert _local_embedder() is embedder

    embedder.embed(["first call"])
    model = embedder._model
    embedder.embed(["second call"])

    assert model is not None
    assert embedder._model is model
    assert get_embedder(provider="local", model=MODEL, dimension=DIMENSION)._model is model


@pytest.mark.slow
def test_embedding_nothing_returns_nothing():
    assert _local_embedder().embed([]) == []


@pytest.mark.slow
def test_meaning_beats_word_overlap():
    query, allergy, dark_mode, paris = _local_embedder().embed(
        ["What food can't she eat?", "Alice is allergic to peanuts", "Alice prefers dark mode", "Alice lives in Paris"]
    )
    assert _dot(query, allergy) > _dot(query, dark_mode)
    assert _dot(query, allergy) > _dot(query, paris)


# --- Through the API --------------------------------------------------------------------------------


@pytest.fixture
def local_store(tenant_a):
    client = tenant_a.client("admin")
    response = client.post("/api/v1/stores", {"name": "semantic", "embedding_provider": "local"}, format="json")
    assert response.status_code == 201, response.json()
    assert (response.json()["embedding_model"], response.json()["embedding_dimension"]) == (MODEL, DIMENSION)
    for content in ALICE_MEMORIES:
        added = client.post(
            "/api/v1/stores/semantic/memories", {"user_id": "alice", "content": content}, format="json"
        )
        assert added.status_code == 201, added.json()
    # Another user's allergy must not leak into Alice's results.
    added = client.post(
        "/api/v1/stores/semantic/memories", {"user_id": "bob", "content": "Bob is allergic to shellfish"}, format="json"
    )
    assert added.status_code == 201, added.json()
    return "semantic"


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["vector", None])
def test_allergy_ranks_first_for_a_question_about_food(tenant_a, local_store, mode):
    body = {"query": "What food can't she eat?", "user_id": "alice"}
    if mode:
        body["mode"] = mode

    response = tenant_a.client("read").post(f"/api/v1/stores/{local_store}/search", body, format="json")

    assert response.status_code == 200, response.json()
    payload = response.json()
    assert payload["mode"] == (mode or "hybrid")
    results = payload["results"]
    assert results[0]["memory"]["content"] == "Alice is allergic to peanuts"
    assert results[0]["vector_rank"] == 1
    assert {hit["memory"]["user_id"] for hit in results} == {"alice"}
    assert len(results) == len(ALICE_MEMORIES)
    if mode == "vector":
        similarities = [hit["similarity"] for hit in results]
        assert similarities == sorted(similarities, reverse=True)
        assert similarities[0] > similarities[1]


@pytest.mark.slow
def test_the_model_runs_on_the_configured_number_of_threads(settings):
    # The runtime is ONNX Runtime where it is installed (auto); tests/core/test_embeddings_local_onnx.py checks
    # torch's threads when it is forced.
    embedder = _local_embedder()
    embedder.embed(["warm"])

    assert embedder.runtime == "onnx"
    assert settings.EMBEDDING_LOCAL_THREADS == 1
    assert embedder._model.session.get_session_options().intra_op_num_threads == 1
