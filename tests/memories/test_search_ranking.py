"""Ranking: BM25 keyword scores, tunable fusion, a pool that does not depend on the page size, `explain`, and
time-aware search (valid_at, created_after/before, current facts above superseded ones)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.core.actors import Actor
from apps.memories.models import Memory
from apps.memories.search import SearchQuery, memory_search
from apps.memories.services import MemoryInput, memory_bulk_create, memory_supersede

SEARCH = "/api/v1/stores/main/search"
STORE = "/api/v1/stores/main"


def _search(client, **body):
    response = client.post(SEARCH, body, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def _ids(results):
    return [hit["memory"]["id"] for hit in results]


def _diary(store, user_id="alice", count=30):
    """A user whose every memory names her and the month (common words), and a few say something rarer."""
    items = [MemoryInput(user_id=user_id, content=f"Alice wrote in May about day {index} of her garden diary")
             for index in range(count)]
    items += [
        MemoryInput(user_id=user_id, content="Alice adopted a greyhound called Pepper in May"),
        MemoryInput(user_id=user_id, content="Alice booked a pottery class"),
    ]
    return memory_bulk_create(store=store, items=items, actor=Actor.system("test"))


def test_a_rare_word_outweighs_words_every_memory_shares(tenant_a):
    _diary(tenant_a.store)
    results = _search(tenant_a.client("read"), query="What did Alice do about a greyhound in May?", mode="keyword",
                      user_id="alice")["results"]
    assert results[0]["memory"]["content"] == "Alice adopted a greyhound called Pepper in May"
    # The memory holding the rare word scores more than any holding only the shared ones, by far.
    assert results[0]["keyword_score"] > 2 * results[1]["keyword_score"]


def test_term_statistics_come_from_the_searched_scope(tenant_a):
    """'greyhound' is everywhere in Bob's memories and rare in Alice's: it weighs in her search, not in his."""
    store = tenant_a.store
    _diary(store)
    memory_bulk_create(store=store, actor=Actor.system("test"), items=[
        MemoryInput(user_id="bob", content=f"Bob walks the greyhound number {index}") for index in range(20)
    ] + [MemoryInput(user_id="bob", content="Bob keeps a pottery wheel in the greyhound shed")])
    body = {"query": "greyhound pottery", "mode": "keyword", "explain": True}
    alice = _search(tenant_a.client("read"), user_id="alice", **body)
    bob = _search(tenant_a.client("read"), user_id="bob", **body)
    idf = lambda response: {term["term"]: term["idf"] for term in response["explain"]["keyword"]["terms"]}  # noqa: E731
    assert idf(alice)["greyhound"] == pytest.approx(idf(alice)["potteri"])  # one memory each of 32
    assert idf(bob)["greyhound"] < idf(bob)["potteri"]
    assert alice["explain"]["keyword"]["documents"] == 32 and bob["explain"]["keyword"]["documents"] == 21
    assert bob["results"][0]["memory"]["content"] == "Bob keeps a pottery wheel in the greyhound shed"


def test_a_memory_holding_every_query_word_once_scores_about_one_in_keyword_mode(tenant_a):
    _diary(tenant_a.store)
    results = _search(tenant_a.client("read"), query="pottery class", mode="keyword", user_id="alice")["results"]
    assert results[0]["memory"]["content"] == "Alice booked a pottery class"
    assert results[0]["score"] == pytest.approx(1.0, abs=0.25)


def test_ties_are_broken_by_recency_then_content_never_by_a_random_id(tenant_a):
    store = tenant_a.store
    older = [MemoryInput(user_id="alice", content=f"note {word}") for word in ("pear", "apple", "plum")]
    memory_bulk_create(store=store, items=older, actor=Actor.system("test"))
    newest = memory_bulk_create(store=store, items=[MemoryInput(user_id="alice", content="note fig")],
                                actor=Actor.system("test"))[0].memory
    first = memory_search(store=store, search=SearchQuery(query="note", mode="keyword", user_id="alice"))
    assert len({hit.keyword_score for hit in first}) == 1  # all tied
    contents = [hit.memory.content for hit in first]
    assert contents[0] == newest.content
    # Newest first, then by content hash for memories written at the same instant: never by a random id.
    assert contents == ["note fig", "note plum", "note apple", "note pear"]
    for _ in range(3):
        again = memory_search(store=store, search=SearchQuery(query="note", mode="keyword", user_id="alice"))
        assert [hit.memory.content for hit in again] == contents
    assert [hit.keyword_rank for hit in first] == [1, 2, 3, 4]


@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
def test_the_first_results_do_not_depend_on_the_page_size(tenant_a, mode):
    store = tenant_a.store
    items = [MemoryInput(user_id="alice", content=f"Alice {verb} the {thing} on day {day}")
             for day, (verb, thing) in enumerate(
                 (verb, thing) for verb in ("painted", "sold", "fixed", "moved", "cleaned", "bought")
                 for thing in ("fence", "boat", "garden shed", "kitchen", "bicycle", "piano", "roof"))]
    memory_bulk_create(store=store, items=items, actor=Actor.system("test"))
    query = "Alice painted the garden shed and fixed the boat"
    pages = {limit: memory_search(store=store, search=SearchQuery(query=query, mode=mode, user_id="alice",
                                                                   limit=limit))
             for limit in (3, 10, 20)}
    ten = [(hit.memory.pk, hit.vector_rank, hit.keyword_rank, hit.score) for hit in pages[10]]
    assert [(hit.memory.pk, hit.vector_rank, hit.keyword_rank, hit.score) for hit in pages[20][:10]] == ten
    assert [hit.memory.pk for hit in pages[3]] == [pk for pk, *_ in ten[:3]]


def test_store_search_defaults_tune_the_fusion(tenant_a, configure_store):
    _diary(tenant_a.store)
    client = tenant_a.client("read")
    body = {"query": "greyhound diary", "user_id": "alice", "explain": True}
    default = _search(client, **body)
    assert default["explain"]["fusion_k"] == 5 and default["explain"]["candidate_depth"] == 100
    configure_store(tenant_a.store, search_defaults={"fusion_k": 60, "vector_weight": 0.0, "keyword_weight": 2.0,
                                                      "candidate_depth": 20})
    keyword_only = _search(client, **body)
    explain = keyword_only["explain"]
    assert (explain["fusion_k"], explain["vector_weight"], explain["keyword_weight"], explain["candidate_depth"]) == (
        60, 0.0, 2.0, 20)
    # With the vector signal weighted 0 the fused order is the keyword order.
    keyword = _search(client, query="greyhound diary", user_id="alice", mode="keyword", limit=10)
    assert _ids(keyword_only["results"]) == _ids(keyword["results"])
    # Only the keyword signal counts: its first memory scores 1, as one first in both lists would otherwise.
    assert keyword_only["results"][0]["score"] == pytest.approx(1.0)
    assert "vector" not in keyword_only["results"][0]["explain"] or (
        keyword_only["results"][0]["explain"]["vector"]["contribution"] == 0)
    assert all(hit["keyword_rank"] <= 20 for hit in keyword_only["results"] if hit["keyword_rank"])


@pytest.mark.parametrize(("defaults", "field"), [
    ({"fusion_k": 0}, "fusion_k"),
    ({"vector_weight": -1}, "vector_weight"),
    ({"keyword_weight": "high"}, "keyword_weight"),
    ({"candidate_depth": 5000}, "candidate_depth"),
    ({"vector_weight": 0, "keyword_weight": 0}, "vector_weight"),
    ({"fusion": "rrf"}, "fusion"),
])
def test_bad_fusion_settings_are_refused_by_name(tenant_a, defaults, field):
    response = tenant_a.client("admin").patch(STORE, {"search_defaults": defaults}, format="json")
    assert response.status_code == 400, response.content
    assert field in str(response.json())
    assert tenant_a.client("admin").get(STORE).json()["search_defaults"] == {}


def test_explain_gives_each_signals_rank_score_and_share(tenant_a):
    _diary(tenant_a.store)
    response = _search(tenant_a.client("read"), query="Pepper the greyhound", user_id="alice", explain=True)
    assert response["explain"]["keyword"]["scoring"] == "bm25"
    assert {term["term"] for term in response["explain"]["keyword"]["terms"]} == {"pepper", "greyhound"}
    top = response["results"][0]
    assert top["memory"]["content"] == "Alice adopted a greyhound called Pepper in May"
    for hit in response["results"]:
        explain = hit["explain"]
        shares = sum(explain[signal]["contribution"] for signal in ("vector", "keyword") if signal in explain)
        assert shares == pytest.approx(hit["score"])
        if "vector" in explain:
            assert explain["vector"]["rank"] == hit["vector_rank"]
            assert explain["vector"]["similarity"] == pytest.approx(hit["similarity"])
        if "keyword" in explain:
            assert explain["keyword"]["rank"] == hit["keyword_rank"]
            assert explain["keyword"]["score"] == pytest.approx(hit["keyword_score"])
    assert "explain" not in _search(tenant_a.client("read"), query="Pepper", user_id="alice")


def _supersede(store, old_text, new_text):
    old = memory_bulk_create(store=store, items=[MemoryInput(user_id="alice", content=old_text)],
                             actor=Actor.system("test"))[0].memory
    new = memory_bulk_create(store=store, items=[MemoryInput(user_id="alice", content=new_text)],
                             actor=Actor.system("test"))[0].memory
    memory_supersede(old=old, new=new, actor=Actor.system("test"))
    old.refresh_from_db()
    return old, new


def test_superseded_values_come_when_asked_and_rank_below_the_current_one(tenant_a):
    old, new = _supersede(tenant_a.store, "Alice lives in Lisbon, in an apartment by the river",
                          "Alice lives in Porto")
    client = tenant_a.client("read")
    query = "Where does Alice live? Lisbon, the river apartment?"
    assert _ids(_search(client, query=query, user_id="alice")["results"]) == [str(new.pk)]
    both = _search(client, query=query, user_id="alice", include_superseded=True, explain=True)["results"]
    assert _ids(both) == [str(new.pk), str(old.pk)]
    assert both[1]["memory"]["status"] == "superseded"
    assert both[1]["explain"]["superseded_factor"] == 0.5
    for hit in both:
        shares = sum(hit["explain"][signal]["contribution"] for signal in ("vector", "keyword")
                     if signal in hit["explain"])
        assert shares == pytest.approx(hit["score"])
    # Without the factor the old value, which shares more words with the question, would come first.
    assert both[1]["explain"]["keyword"]["rank"] == 1


def test_valid_at_finds_what_held_then(tenant_a):
    old, new = _supersede(tenant_a.store, "Alice works at Halden Bank", "Alice works at Mirrow Labs")
    assert old.valid_to == new.valid_from  # the old value held until the new one began
    before_change = old.valid_to - timedelta(microseconds=1)
    client = tenant_a.client("read")
    then = _search(client, query="Where does Alice work?", user_id="alice", valid_at=before_change.isoformat())
    assert _ids(then["results"]) == [str(old.pk)]
    now = _search(client, query="Where does Alice work?", user_id="alice", valid_at=timezone.now().isoformat())
    assert _ids(now["results"]) == [str(new.pk)]
    long_ago = _search(client, query="Where does Alice work?", user_id="alice",
                       valid_at=(old.valid_from - timedelta(days=1)).isoformat())
    assert long_ago["results"] == []


def test_created_after_and_before_filter_by_when_a_memory_was_written(tenant_a, add_memory):
    store = tenant_a.store
    first = add_memory(store, "Alice likes tea")
    second = add_memory(store, "Alice likes green tea")
    Memory.objects.filter(pk=first.pk).update(created_at=timezone.now() - timedelta(days=10))
    middle = (timezone.now() - timedelta(days=5)).isoformat()
    client = tenant_a.client("read")
    for mode in ("hybrid", "vector", "keyword"):
        assert _ids(_search(client, query="tea", mode=mode, created_after=middle)["results"]) == [str(second.pk)]
        assert _ids(_search(client, query="tea", mode=mode, created_before=middle)["results"]) == [str(first.pk)]


@pytest.mark.parametrize(("body", "field"), [
    ({"created_after": "2026-05-02T00:00:00Z", "created_before": "2026-05-01T00:00:00Z"}, "created_before"),
    ({"valid_at": "last tuesday"}, "valid_at"),
    ({"explain": "very"}, "explain"),
    ({"include_superseded": "maybe"}, "include_superseded"),
])
def test_bad_time_filters_are_refused_by_name(tenant_a, body, field):
    response = tenant_a.client("read").post(SEARCH, {"query": "tea", **body}, format="json")
    assert response.status_code == 400, response.content
    assert field in str(response.json())


def test_a_scope_beyond_the_sample_estimates_its_size_from_the_share_that_matches(tenant_a, settings):
    settings.SEARCH_KEYWORD_STATS_MAX_ROWS = 10
    items = [MemoryInput(user_id="alice", content=f"{'apple' if index % 2 else 'pear'} note number {index}")
             for index in range(40)]
    memory_bulk_create(store=tenant_a.store, items=items, actor=Actor.system("test"))
    response = _search(tenant_a.client("read"), query="apple", mode="keyword", user_id="alice", explain=True,
                       limit=30)
    keyword = response["explain"]["keyword"]
    # 10 memories read, about half of them matching, 20 matches in all: about 40, not the 10 read.
    assert 20 <= keyword["documents"] <= 80
    [term] = keyword["terms"]
    assert (term["term"], term["documents"]) == ("appl", 20) and term["idf"] > 0
    assert len(response["results"]) == 20
    assert all("apple" in hit["memory"]["content"] for hit in response["results"])
