"""The OpenAI-compatible embedder against a real local fake server: batching, order, retries, failures."""

import json
import time
from types import SimpleNamespace

import pytest

from apps.core.embeddings import EmbeddingError, get_embedder, resolve_embedding_config
from apps.core.embeddings import base as embeddings_base
from apps.core.embeddings import openai as openai_module
from apps.memories.models import Memory, MemoryRevision, MemoryStore
from tests.fakes.openai_server import FakeOpenAIServer, Reply, fake_vector
from tests.processes import free_port

MODEL = "text-embedding-3-small"
DIMENSION = 256
API_KEY = "sk-test-not-a-real-key"


@pytest.fixture
def fresh_embedders(monkeypatch):
    # Embedders are cached per (provider, model, dimension) and read settings when built: an empty
    # cache per test gives each one a client with that test's settings. The real cache is restored.
    cache: dict = {}
    monkeypatch.setattr(embeddings_base, "_cache", cache)
    yield cache
    for embedder in cache.values():
        client = getattr(embedder, "_client", None)
        if client is not None:
            client.close()


@pytest.fixture
def openai_server():
    with FakeOpenAIServer(dimension=DIMENSION) as server:
        yield server


@pytest.fixture
def openai_settings(settings, openai_server, fresh_embedders):
    settings.EMBEDDING_OPENAI_BASE_URL = openai_server.base_url
    settings.EMBEDDING_OPENAI_API_KEY = API_KEY
    settings.EMBEDDING_OPENAI_MODEL = MODEL
    settings.EMBEDDING_OPENAI_DIMENSION = DIMENSION
    settings.EMBEDDING_BATCH_SIZE = 2
    settings.EMBEDDING_TIMEOUT_SECONDS = 5.0
    settings.EMBEDDING_MAX_RETRIES = 2
    return settings


@pytest.fixture
def make_embedder(openai_settings):
    def _make(dimension: int = DIMENSION):
        embedder = get_embedder(provider="openai", model=MODEL, dimension=dimension)
        embedder.backoff_seconds = 0.001
        return embedder

    return _make


@pytest.fixture
def recorded_sleeps(monkeypatch):
    """Replace the embedder's sleep (only its module's `time`) with a recorder: no real waiting."""
    sleeps: list[float] = []
    monkeypatch.setattr(openai_module, "time", SimpleNamespace(sleep=sleeps.append))
    return sleeps


# --- Requests ---------------------------------------------------------------------------------------


def test_request_carries_model_input_and_bearer_key(make_embedder, openai_server):
    vector = make_embedder().embed_query("Alice is allergic to peanuts")

    assert vector == fake_vector("Alice is allergic to peanuts", DIMENSION)
    (request,) = openai_server.requests
    assert request.method == "POST"
    assert request.path == "/v1/embeddings"
    assert request.headers["authorization"] == f"Bearer {API_KEY}"
    assert request.headers["content-type"].startswith("application/json")
    assert request.body == {"model": MODEL, "input": ["Alice is allergic to peanuts"], "encoding_format": "float"}


def test_no_authorization_header_without_an_api_key(make_embedder, openai_settings, openai_server):
    openai_settings.EMBEDDING_OPENAI_API_KEY = ""
    make_embedder().embed(["hello"])
    assert "authorization" not in openai_server.requests[0].headers


def test_base_url_with_trailing_slash_reaches_the_same_endpoint(make_embedder, openai_settings, openai_server):
    openai_settings.EMBEDDING_OPENAI_BASE_URL = openai_server.base_url + "/"
    make_embedder().embed(["hello"])
    assert [request.path for request in openai_server.requests] == ["/v1/embeddings"]


def test_embedding_nothing_sends_nothing(make_embedder, openai_server):
    assert make_embedder().embed([]) == []
    assert openai_server.requests == []


def test_texts_are_sent_in_batches_in_order(make_embedder, openai_server):
    texts = ["one apple", "two bananas", "three cherries", "four dates", "five figs"]

    vectors = make_embedder().embed(texts)

    assert [request.inputs for request in openai_server.requests] == [
        ["one apple", "two bananas"],
        ["three cherries", "four dates"],
        ["five figs"],
    ]
    assert vectors == [fake_vector(text, DIMENSION) for text in texts]


def test_shuffled_response_items_come_back_in_input_order(make_embedder, openai_settings, openai_server):
    openai_settings.EMBEDDING_BATCH_SIZE = 3
    openai_server.default = Reply.ok(shuffle=True)
    texts = ["red", "green", "blue", "cyan", "magenta"]

    vectors = make_embedder().embed(texts)

    assert len(openai_server.requests) == 2
    assert vectors == [fake_vector(text, DIMENSION) for text in texts]
    assert vectors[0] != vectors[2]  # the fake's reversal would be visible if order were ignored


def test_a_repeated_query_is_embedded_once_and_texts_to_store_every_time(make_embedder, openai_server):
    embedder = make_embedder()
    first = embedder.embed_query("where does she work?")
    first.append(0.5)  # the caller's copy: the kept vector is not changed by it
    again = embedder.embed_query("where does she work?")
    embedder.embed(["where does she work?"])
    embedder.embed(["where does she work?"])

    assert again == fake_vector("where does she work?", DIMENSION)
    assert [request.inputs for request in openai_server.requests] == [["where does she work?"]] * 3


def test_a_failed_query_is_not_kept(make_embedder, openai_settings, openai_server):
    openai_settings.EMBEDDING_MAX_RETRIES = 0
    openai_server.script(Reply.server_error())
    embedder = make_embedder()
    with pytest.raises(EmbeddingError):
        embedder.embed_query("plan?")
    assert embedder.embed_query("plan?") == fake_vector("plan?", DIMENSION)
    assert len(openai_server.requests) == 2


def test_the_query_cache_can_be_turned_off(make_embedder, openai_settings, openai_server):
    openai_settings.EMBEDDING_QUERY_CACHE_SIZE = 0
    embedder = make_embedder()
    embedder.embed_query("plan?")
    embedder.embed_query("plan?")
    assert len(openai_server.requests) == 2


def test_the_query_cache_keeps_the_most_recent_queries(make_embedder, openai_settings, openai_server):
    openai_settings.EMBEDDING_QUERY_CACHE_SIZE = 2
    embedder = make_embedder()
    for query in ("a", "b", "a", "c", "a", "b"):  # b is the least recent when c comes in
        embedder.embed_query(query)
    assert [request.inputs[0] for request in openai_server.requests] == ["a", "b", "c", "b"]


def test_embedder_is_cached_per_model_and_dimension(make_embedder):
    first = make_embedder()
    assert make_embedder() is first
    assert make_embedder(dimension=512) is not first


def test_store_defaults_come_from_settings(openai_settings):
    openai_settings.EMBEDDING_OPENAI_MODEL = "nomic-embed-text"
    openai_settings.EMBEDDING_OPENAI_DIMENSION = 768
    assert resolve_embedding_config(provider="openai", model=None, dimension=None) == ("nomic-embed-text", 768)


# --- Retries ----------------------------------------------------------------------------------------


def test_rate_limit_is_retried_then_succeeds(make_embedder, openai_server):
    openai_server.script(Reply.rate_limited(retry_after="0"))

    vectors = make_embedder().embed(["Alice lives in Paris"])

    assert vectors == [fake_vector("Alice lives in Paris", DIMENSION)]
    first, second = openai_server.requests
    assert first.body == second.body


def test_server_errors_are_retried_then_succeed(make_embedder, openai_server):
    openai_server.script(Reply.server_error(), Reply.status(503))

    vectors = make_embedder().embed(["a", "b"])

    assert len(openai_server.requests) == 3
    assert vectors == [fake_vector("a", DIMENSION), fake_vector("b", DIMENSION)]


def test_retry_after_sets_the_wait(make_embedder, openai_server, recorded_sleeps):
    openai_server.script(Reply.rate_limited(retry_after="7"), Reply.rate_limited(retry_after="0"))

    make_embedder().embed(["x"])

    assert len(recorded_sleeps) == 2
    assert recorded_sleeps[0] == 7.0
    assert recorded_sleeps[1] < 0.01  # "0" leaves the (tiny) backoff in charge


def test_retry_after_is_capped_and_unparseable_values_fall_back_to_backoff(
    make_embedder, openai_server, recorded_sleeps
):
    openai_server.script(Reply.rate_limited(retry_after="86400"), Reply.rate_limited(retry_after="soon"))

    make_embedder().embed(["x"])

    assert recorded_sleeps[0] == 30.0
    assert 0 < recorded_sleeps[1] < 0.01


def test_backoff_grows_between_attempts(make_embedder, openai_settings, openai_server, recorded_sleeps):
    openai_settings.EMBEDDING_MAX_RETRIES = 3
    openai_server.script(Reply.server_error(), Reply.server_error(), Reply.server_error())
    embedder = make_embedder()
    embedder.backoff_seconds = 1.0

    embedder.embed(["x"])

    # base * 2**attempt * jitter in [0.5, 1.5)
    assert [0.5 <= recorded_sleeps[0] < 1.5, 1.0 <= recorded_sleeps[1] < 3.0, 2.0 <= recorded_sleeps[2] < 6.0] == [
        True,
        True,
        True,
    ]


def test_gives_up_after_max_retries(make_embedder, openai_server):
    openai_server.default = Reply.server_error()

    with pytest.raises(EmbeddingError) as caught:
        make_embedder().embed(["x"])

    assert len(openai_server.requests) == 3  # the first try and EMBEDDING_MAX_RETRIES=2 retries
    assert caught.value.status_code == 502
    assert caught.value.code == "embedding_failed"
    assert "HTTP 500" in caught.value.message


def test_persistent_rate_limit_gives_up_too(make_embedder, openai_settings, openai_server):
    openai_settings.EMBEDDING_MAX_RETRIES = 1
    openai_server.default = Reply.rate_limited(retry_after="0")

    with pytest.raises(EmbeddingError, match="HTTP 429"):
        make_embedder().embed(["x"])
    assert len(openai_server.requests) == 2


def test_zero_retries_means_one_attempt(make_embedder, openai_settings, openai_server):
    openai_settings.EMBEDDING_MAX_RETRIES = 0
    openai_server.script(Reply.server_error())

    with pytest.raises(EmbeddingError):
        make_embedder().embed(["x"])
    assert len(openai_server.requests) == 1


@pytest.mark.parametrize("status_code", [400, 401, 404])
def test_client_errors_are_not_retried(make_embedder, openai_server, status_code):
    openai_server.default = Reply.status(status_code, body='{"error": {"message": "Invalid API key"}}')

    with pytest.raises(EmbeddingError, match=f"HTTP {status_code}.*Invalid API key"):
        make_embedder().embed(["x"])
    assert len(openai_server.requests) == 1


def test_a_failing_batch_stops_the_remaining_batches(make_embedder, openai_settings, openai_server):
    openai_settings.EMBEDDING_MAX_RETRIES = 0
    openai_server.script(Reply.ok(), Reply.server_error())

    with pytest.raises(EmbeddingError):
        make_embedder().embed(["a", "b", "c", "d", "e"])
    assert [request.inputs for request in openai_server.requests] == [["a", "b"], ["c", "d"]]


# --- Timeouts and unreachable servers ---------------------------------------------------------------


def test_timeout_ends_in_embedding_error(make_embedder, openai_settings, openai_server):
    openai_settings.EMBEDDING_TIMEOUT_SECONDS = 0.3
    openai_settings.EMBEDDING_MAX_RETRIES = 1
    openai_server.default = Reply.slow(1.0)

    started = time.monotonic()
    with pytest.raises(EmbeddingError, match="unreachable.*Timeout"):
        make_embedder().embed(["x"])
    elapsed = time.monotonic() - started

    assert len(openai_server.requests) == 2
    assert elapsed < 1.5  # two 0.3 s timeouts, not two 1 s waits


def test_a_timeout_is_retried_then_succeeds(make_embedder, openai_settings, openai_server):
    openai_settings.EMBEDDING_TIMEOUT_SECONDS = 0.3
    openai_server.script(Reply.slow(1.0))

    assert make_embedder().embed(["x"]) == [fake_vector("x", DIMENSION)]
    assert len(openai_server.requests) == 2


def test_unreachable_server_ends_in_embedding_error(make_embedder, openai_settings):
    openai_settings.EMBEDDING_OPENAI_BASE_URL = f"http://127.0.0.1:{free_port()}/v1"

    with pytest.raises(EmbeddingError, match="unreachable") as caught:
        make_embedder().embed(["x"])
    assert caught.value.status_code == 502


# --- Bad answers ------------------------------------------------------------------------------------


def test_malformed_json_fails_at_once(make_embedder, openai_settings, openai_server):
    openai_settings.EMBEDDING_MAX_RETRIES = 3
    openai_server.default = Reply.malformed()

    with pytest.raises(EmbeddingError, match="malformed"):
        make_embedder().embed(["x"])
    assert len(openai_server.requests) == 1  # a broken answer is not worth a retry storm


@pytest.mark.parametrize(
    "body",
    ['{"data": "nope"}', '{"object": "list"}', "[1, 2, 3]", '{"data": [{"index": 0, "embedding": ["a"]}]}'],
)
def test_json_without_usable_vectors_is_malformed(make_embedder, openai_server, body):
    openai_server.default = Reply.raw(body)

    with pytest.raises(EmbeddingError, match="malformed"):
        make_embedder().embed(["x"])
    assert len(openai_server.requests) == 1


def test_wrong_dimension_is_refused(make_embedder, openai_server):
    openai_server.default = Reply.wrong_dimension(128)

    with pytest.raises(EmbeddingError, match="128-dimensional.*expects 256"):
        make_embedder().embed(["x", "y"])
    assert len(openai_server.requests) == 1


def test_fewer_vectors_than_inputs_is_refused(make_embedder, openai_server):
    openai_server.default = Reply.short()

    with pytest.raises(EmbeddingError, match="1 vectors for 2 inputs"):
        make_embedder().embed(["x", "y"])


def _data(*items: tuple[int, list[float]]) -> str:
    return json.dumps({"data": [{"index": index, "embedding": vector} for index, vector in items]})


@pytest.mark.parametrize("indexes", [(0, 0), (1, 2), (0, 2)])
def test_repeated_or_missing_indexes_are_refused(make_embedder, openai_server, indexes):
    # Otherwise a vector would be stored against the wrong text without anyone noticing.
    openai_server.default = Reply.raw(_data(*((index, [0.5] * DIMENSION) for index in indexes)))

    with pytest.raises(EmbeddingError, match="indexes"):
        make_embedder().embed(["x", "y"])


@pytest.mark.parametrize("bad_value", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_values_are_refused(make_embedder, openai_server, bad_value):
    values = ", ".join([bad_value] + ["0.1"] * (DIMENSION - 1))
    openai_server.default = Reply.raw(f'{{"data": [{{"index": 0, "embedding": [{values}]}}]}}')

    with pytest.raises(EmbeddingError, match="NaN, infinite"):
        make_embedder().embed(["x"])


def test_zero_vector_is_refused(make_embedder, openai_server):
    # A zero vector has no cosine distance: the memory could never be found by vector search.
    openai_server.default = Reply.raw(_data((0, [0.0] * DIMENSION)))

    with pytest.raises(EmbeddingError, match="only zero"):
        make_embedder().embed(["x"])


# --- Through the API --------------------------------------------------------------------------------


@pytest.fixture
def openai_store(tenant_a, make_embedder):
    response = tenant_a.client("admin").post(
        "/api/v1/stores",
        {"name": "remote", "embedding_provider": "openai", "embedding_dimension": DIMENSION},
        format="json",
    )
    assert response.status_code == 201, response.json()
    make_embedder().backoff_seconds = 0.001  # the instance the API will use
    return response.json()


def test_store_created_through_the_api_uses_the_openai_embedder(openai_store):
    assert openai_store["embedding_provider"] == "openai"
    assert openai_store["embedding_model"] == MODEL
    assert openai_store["embedding_dimension"] == DIMENSION


def test_memory_added_through_the_api_is_embedded_remotely_and_found(tenant_a, openai_store, openai_server):
    client = tenant_a.client("admin")
    created = client.post(
        "/api/v1/stores/remote/memories",
        {"user_id": "alice", "content": "Alice is allergic to peanuts"},
        format="json",
    )
    other = client.post(
        "/api/v1/stores/remote/memories", {"user_id": "alice", "content": "Alice lives in Paris"}, format="json"
    )
    assert created.status_code == 201, created.json()
    assert other.status_code == 201, other.json()
    assert [request.inputs for request in openai_server.requests] == [
        ["Alice is allergic to peanuts"],
        ["Alice lives in Paris"],
    ]
    assert openai_server.requests[0].headers["authorization"] == f"Bearer {API_KEY}"
    memory = Memory.objects.get(pk=created.json()["memory"]["id"])
    assert list(memory.embedding) == pytest.approx(fake_vector("Alice is allergic to peanuts", DIMENSION))

    openai_server.reset()
    found = client.post(
        "/api/v1/stores/remote/search",
        {"query": "is alice allergic to anything", "user_id": "alice", "mode": "vector"},
        format="json",
    )

    assert found.status_code == 200, found.json()
    assert [request.inputs for request in openai_server.requests] == [["is alice allergic to anything"]]
    results = found.json()["results"]
    assert results[0]["memory"]["id"] == created.json()["memory"]["id"]
    assert results[0]["similarity"] > results[1]["similarity"]


def test_hybrid_search_with_the_openai_embedder(tenant_a, openai_store, openai_server):
    client = tenant_a.client("admin")
    for content in ["Alice works as a nurse", "Alice prefers dark mode", "Alice owns a cat"]:
        assert client.post(
            "/api/v1/stores/remote/memories", {"user_id": "alice", "content": content}, format="json"
        ).status_code == 201

    found = client.post("/api/v1/stores/remote/search", {"query": "dark mode"}, format="json")

    assert found.status_code == 200
    assert found.json()["mode"] == "hybrid"
    top = found.json()["results"][0]
    assert top["memory"]["content"] == "Alice prefers dark mode"
    assert top["vector_rank"] == 1 and top["keyword_rank"] == 1


def test_bulk_add_batches_requests_in_input_order(tenant_a, openai_store, openai_server):
    openai_server.default = Reply.ok(shuffle=True)
    contents = [f"memory number {word}" for word in ("one", "two", "three", "four", "five")]

    response = tenant_a.client("admin").post(
        "/api/v1/stores/remote/memories/bulk",
        {"memories": [{"user_id": "alice", "content": content} for content in contents]},
        format="json",
    )

    assert response.status_code == 201, response.json()
    assert [request.inputs for request in openai_server.requests] == [contents[0:2], contents[2:4], contents[4:5]]
    for content in contents:
        stored = Memory.objects.get(store__name="remote", content=content)
        assert list(stored.embedding) == pytest.approx(fake_vector(content, DIMENSION))


def test_upstream_failure_returns_502_and_writes_nothing(tenant_a, openai_store, openai_server):
    openai_server.default = Reply.server_error()

    response = tenant_a.client("admin").post(
        "/api/v1/stores/remote/memories",
        {"user_id": "alice", "content": "Alice is allergic to peanuts"},
        format="json",
    )

    assert response.status_code == 502
    body = response.json()
    assert set(body) == {"error"}
    assert body["error"]["code"] == "embedding_failed"
    assert "HTTP 500" in body["error"]["message"]
    assert len(openai_server.requests) == 3
    store = MemoryStore.objects.get(tenant=tenant_a.tenant, name="remote")
    assert not Memory.objects.filter(store=store).exists()
    assert not MemoryRevision.objects.filter(store=store).exists()


def test_nan_from_upstream_is_a_502_not_the_clients_fault(tenant_a, openai_store, openai_server):
    values = ", ".join(["NaN"] * DIMENSION)
    openai_server.default = Reply.raw(f'{{"data": [{{"index": 0, "embedding": [{values}]}}]}}')

    response = tenant_a.client("admin").post(
        "/api/v1/stores/remote/memories", {"user_id": "alice", "content": "x"}, format="json"
    )

    assert response.status_code == 502
    assert response.json()["error"]["code"] == "embedding_failed"
    assert not Memory.objects.filter(store__name="remote").exists()


def test_upstream_failure_during_search_returns_502(tenant_a, openai_store, openai_server):
    openai_server.default = Reply.malformed()

    response = tenant_a.client("read").post(
        "/api/v1/stores/remote/search", {"query": "anything", "mode": "vector"}, format="json"
    )

    assert response.status_code == 502
    assert response.json()["error"]["code"] == "embedding_failed"


def test_keyword_search_does_not_call_the_embedding_service(tenant_a, openai_store, openai_server):
    client = tenant_a.client("admin")
    client.post("/api/v1/stores/remote/memories", {"user_id": "alice", "content": "Alice owns a cat"}, format="json")
    openai_server.reset()
    openai_server.default = Reply.server_error()

    response = client.post("/api/v1/stores/remote/search", {"query": "cat", "mode": "keyword"}, format="json")

    assert response.status_code == 200
    assert [hit["memory"]["content"] for hit in response.json()["results"]] == ["Alice owns a cat"]
    assert openai_server.requests == []
