"""The LangGraph store's pure parts: how an item becomes a memory, and filters and namespace conditions judged
as LangGraph's own InMemoryStore judges them."""

import pytest
from langgraph.store.base import MatchCondition
from langgraph.store.memory import InMemoryStore

from memoryhub_client._langgraph_items import item_metadata, matches_filter, namespace_matches, render_content

VALUES = [
    {"kind": "habit", "weight": 3, "tags": ["tea", "morning"], "place": {"city": "Lisbon", "floor": 2}},
    {"kind": "fact", "weight": 5.5, "tags": ["cat"], "place": {"city": "Porto"}},
    {"kind": "habit", "weight": 1, "tags": [], "note": None},
]
FILTERS = [
    {"kind": "habit"},
    {"kind": "habit", "weight": 3},
    {"weight": {"$gt": 3}},
    {"weight": {"$gte": 3, "$lt": 5.5}},
    {"weight": {"$lte": 5.5}},
    {"kind": {"$ne": "habit"}},
    {"kind": {"$eq": "fact"}},
    {"tags": ["tea", "morning"]},
    {"tags": ["tea"]},
    {"place": {"city": "Lisbon"}},
    {"place": {"city": "Porto", "floor": 2}},
    {"note": None},
    {"missing": "x"},
]


@pytest.mark.parametrize("conditions", FILTERS)
def test_filters_match_what_in_memory_store_matches(conditions):
    reference = InMemoryStore()
    for index, value in enumerate(VALUES):
        reference.put(("ns",), str(index), value)
    expected = {item.key for item in reference.search(("ns",), filter=conditions, limit=100)}
    assert {str(index) for index, value in enumerate(VALUES) if matches_filter(value, conditions)} == expected


def test_a_comparison_with_a_missing_or_non_numeric_field_matches_nothing():
    # InMemoryStore raises TypeError here; PostgreSQL (LangGraph's PostgresStore) compares with NULL: no match.
    assert not matches_filter({"kind": "habit"}, {"weight": {"$gt": 1}})
    assert not matches_filter({"weight": "heavy"}, {"weight": {"$lt": 1}})
    with pytest.raises(ValueError, match="Unsupported operator"):
        matches_filter({"weight": 1}, {"weight": {"$in": [1]}})


NAMESPACES = [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "c", "f"), ("x", "b"), ("a",)]
CONDITIONS = [
    MatchCondition("prefix", ("a",)),
    MatchCondition("prefix", ("a", "b")),
    MatchCondition("prefix", ("*", "b")),
    MatchCondition("suffix", ("f",)),
    MatchCondition("suffix", ("b", "*")),
    MatchCondition("prefix", ("a", "b", "c", "d")),
]


@pytest.mark.parametrize("condition", CONDITIONS)
def test_namespace_conditions_match_what_in_memory_store_matches(condition):
    reference = InMemoryStore()
    for namespace in NAMESPACES:
        reference.put(namespace, "k", {"v": 1})
    kind = {"prefix": "prefix", "suffix": "suffix"}[condition.match_type]
    expected = set(reference.list_namespaces(**{kind: condition.path}))
    assert {namespace for namespace in NAMESPACES if namespace_matches(condition, namespace)} == expected


def test_the_content_is_the_values_text_or_its_json():
    assert render_content({"content": "Alice drinks tea", "n": 1}, None) == "Alice drinks tea"
    assert render_content({"text": "  a note  "}, None) == "a note"
    assert render_content({"memory": "m", "content": ""}, None) == "m"
    assert render_content({"kind": "Memory", "content": {"content": "LangMem's shape"}}, None) == "LangMem's shape"
    assert render_content({"b": 2, "a": "x"}, None) == '{"a":"x","b":2}'
    assert render_content({"title": "T", "sections": [{"text": "one"}, {"text": "two"}]},
                          ["title", "sections[*].text"]) == "T\none\ntwo"
    assert render_content({"content": "x" * 10_000}, None, 100) == "x" * 100
    assert render_content({"content": "nul\x00byte"}, None) == "nulbyte"


def test_the_metadata_carries_namespace_key_value_and_every_prefix():
    assert item_metadata(("alice", "work", "notes"), "k", {"content": "c"}, 30) == {
        "langgraph_namespace": "alice.work.notes",
        "langgraph_key": "k",
        "langgraph_value": {"content": "c"},
        "langgraph_prefix_1": "alice",
        "langgraph_prefix_2": "alice.work",
        "langgraph_prefix_3": "alice.work.notes",
        "langgraph_ttl": 30,
    }
