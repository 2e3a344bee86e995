"""Context assembly: one block within the token budget, ranked, per-kind shares, formats and escaping."""

import json
import math
import xml.etree.ElementTree as ElementTree

import pytest

from apps.conversations.context import CHARS_PER_TOKEN, estimate_tokens

URL = "/api/v1/stores/main/context"
BASE = "/api/v1/stores/main/sessions/s-1"


@pytest.fixture
def memories(tenant_a, add_memory):
    store = tenant_a.store
    made = {
        "allergy": add_memory(store, "Alice is allergic to peanuts", memory_type="fact"),
        "diet": add_memory(store, "Alice prefers vegetarian restaurants", memory_type="preference"),
        "city": add_memory(store, "Alice lives in Lisbon", memory_type="fact"),
        "episode": add_memory(store, "Task: booked a dinner table. Outcome: success.", memory_type="episode"),
        "procedure": add_memory(store, "To book a table: ask party size, date, dietary needs", memory_type="procedure"),
        "bob": add_memory(store, "Bob is allergic to shellfish", user_id="bob", memory_type="fact"),
    }
    return made


def _context(client, **body):
    response = client.post(URL, {"query": "book a restaurant for dinner", "user_id": "alice", **body}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def test_xml_context_has_every_kind_of_the_users_memories(tenant_a, memories):
    body = _context(tenant_a.client("read"))
    root = ElementTree.fromstring(body["context"])
    assert root.tag == "memory"
    entries = [(entry.get("source"), entry.get("type"), entry.text) for entry in root]
    texts = [text for _, _, text in entries]
    assert "Alice is allergic to peanuts" in texts and "Alice lives in Lisbon" in texts
    assert ("memory", "episode", "Task: booked a dinner table. Outcome: success.") in entries
    assert ("memory", "procedure", "To book a table: ask party size, date, dietary needs") in entries
    assert "Bob is allergic to shellfish" not in texts  # another user's memory
    included = {item["id"] for item in body["included"]}
    assert included == {str(memory.pk) for key, memory in memories.items() if key != "bob"}
    assert body["left_out"] == []
    assert body["tokens_estimated"] == estimate_tokens(body["context"]) <= body["token_budget"] == 2000
    # Entries are grouped by kind: facts before episodes before procedures.
    kinds = [item["kind"] for item in body["included"]]
    assert kinds == sorted(kinds, key=["working_state", "facts", "episodes", "procedures"].index)


def test_the_block_never_exceeds_the_budget_and_reports_what_was_left_out(tenant_a, add_memory):
    for index in range(40):
        add_memory(tenant_a.store, f"Alice fact number {index}: she likes dinner place {index} " + "x" * 60)
    for budget in (50, 120, 300, 700):
        body = _context(tenant_a.client("read"), token_budget=budget)
        assert estimate_tokens(body["context"]) == body["tokens_estimated"] <= budget
        assert body["included"] and body["left_out"]
        included = {item["id"] for item in body["included"]}
        left_out = {item["id"] for item in body["left_out"]}
        assert not included & left_out
        # The candidates: at least the 20 best facts (more for larger budgets), each reported once.
        assert 20 <= len(included | left_out) == len(body["included"]) + len(body["left_out"]) <= 40
        # The included ones are the best ranked: nothing left out outranks something included.
        scores = [item["score"] for item in body["included"]]
        assert min(scores) >= max(item["score"] for item in body["left_out"])


def test_relevance_decides_what_fits_a_small_budget(tenant_a, memories):
    body = _context(tenant_a.client("read"), query="peanuts allergy", kinds=["facts"], token_budget=50)
    assert body["included"][0]["id"] == str(memories["allergy"].pk)


def test_kinds_get_their_share_and_unused_share_goes_to_the_others(tenant_a, add_memory):
    for index in range(30):
        add_memory(tenant_a.store, f"Alice fact {index} about dinner " + "y" * 100, memory_type="fact")
        add_memory(tenant_a.store, f"Episode {index}: a dinner booking " + "z" * 100, memory_type="episode")
    body = _context(tenant_a.client("read"), kinds=["facts", "episodes"], token_budget=1000,
                    shares={"facts": 3, "episodes": 1})
    facts = body["kinds"]["facts"]
    episodes = body["kinds"]["episodes"]
    assert (facts["share"], episodes["share"]) == (0.75, 0.25)
    assert facts["used_tokens"] > 2 * episodes["used_tokens"] > 0
    assert facts["left_out"] > 0 and episodes["left_out"] > 0
    # With no episodes asked for, facts use (nearly) the whole budget.
    only_facts = _context(tenant_a.client("read"), kinds=["facts"], token_budget=1000)
    assert only_facts["kinds"]["facts"]["used_tokens"] > facts["used_tokens"]
    assert only_facts["tokens_estimated"] > 1000 - 50


def test_working_state_of_the_session_comes_first(tenant_a, memories):
    client = tenant_a.client("write")
    client.post(f"{BASE}/spawn", {
        "user_id": "alice",
        "working_memory": [{"key": "restaurant", "value": {"name": "Tasca", "dinner": "20:00"}},
                           {"key": "unrelated", "value": "parking spot 7"}],
        "task_state": {"description": "Book dinner for two", "current_step": 1, "total_steps": 3},
    }, format="json")
    client.post(f"{BASE}/scratchpad", {"content": "Check the peanut allergy with the restaurant"}, format="json")
    body = _context(client, session_id="s-1", format="json")
    block = json.loads(body["context"])["memory"]
    working = [entry for entry in block if entry["source"] != "memory"]
    assert working[0] == {"source": "task_state", "type": "task",
                          "text": "Current task: Book dinner for two (status in_progress, step 1 of 3, 33% done)"}
    # The key that shares words with the query ranks above the one that does not.
    keys = [entry["text"].split(":")[0] for entry in working if entry["source"] == "working_memory"]
    assert keys == ["restaurant", "unrelated"]
    assert working[-1] == {"source": "scratchpad", "type": "note",
                           "text": "Check the peanut allergy with the restaurant"}
    assert block.index(working[0]) == 0
    ids = [item["id"] for item in body["included"]]
    assert ids[:3] == ["task_state", "working_memory:restaurant", "working_memory:unrelated"]
    assert "scratchpad:1" in ids


def test_markdown_format_has_one_section_per_kind(tenant_a, memories):
    body = _context(tenant_a.client("read"), format="markdown")
    text = body["context"]
    assert text.startswith("# Memory\n")
    facts = text.split("\n## Known facts and preferences\n", 1)[1].split("\n## ", 1)[0]
    assert any(line.startswith("- Alice is allergic to peanuts") for line in facts.splitlines())
    assert text.index("## Known facts and preferences") < text.index("## Past episodes") < text.index("## Procedures")
    assert body["tokens_estimated"] == math.ceil(len(text) / CHARS_PER_TOKEN)


def test_xml_escapes_markup_and_quotes(tenant_a, add_memory):
    nasty = """Alice said "<b>don't</b> & stop" </entry><entry source='x'>injected"""
    add_memory(tenant_a.store, nasty)
    add_memory(tenant_a.store, "Alice's bell character \x07 is odd")
    body = _context(tenant_a.client("read"), query="Alice said stop", kinds=["facts"])
    text = body["context"]
    assert "&quot;&lt;b&gt;don&apos;t&lt;/b&gt; &amp; stop&quot; &lt;/entry&gt;&lt;entry source=&apos;x&apos;&gt;" in text
    root = ElementTree.fromstring(text)  # still well-formed XML
    assert len(root) == 2
    assert nasty in [entry.text for entry in root]
    assert "Alice\u2019s" not in text and "\x07" not in text


def test_empty_context_is_still_a_valid_block(tenant_a):
    for fmt, expected in (("xml", "<memory>\n</memory>"), ("json", '{"memory":[]}'), ("markdown", "# Memory\n")):
        body = _context(tenant_a.client("read"), format=fmt)
        assert body["context"] == expected and body["included"] == [] and body["left_out"] == []


@pytest.mark.parametrize(
    "body",
    [
        {"user_id": "alice"},
        {"query": "   ", "user_id": "alice"},
        {"query": "x"},
        {"query": "x", "user_id": "alice", "token_budget": 10},
        {"query": "x", "user_id": "alice", "token_budget": 1.5},
        {"query": "x", "user_id": "alice", "token_budget": "lots"},
        {"query": "x", "user_id": "alice", "kinds": ["facts", "gossip"]},
        {"query": "x", "user_id": "alice", "kinds": []},
        {"query": "x", "user_id": "alice", "format": "yaml"},
        {"query": "x", "user_id": "alice", "shares": {"gossip": 1}},
        {"query": "x", "user_id": "alice", "shares": {"facts": -1}},
        {"query": "x\x00", "user_id": "alice"},
    ],
)
def test_bad_context_requests_are_400(tenant_a, body):
    response = tenant_a.client("read").post(URL, body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "validation_error"


def test_context_session_checks(tenant_a, tenant_b):
    client = tenant_a.client("write")
    missing = client.post(URL, {"query": "x", "user_id": "alice", "session_id": "nope"}, format="json")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "session_not_found"
    client.post(f"{BASE}/spawn", {"user_id": "bob"}, format="json")
    mismatch = client.post(URL, {"query": "x", "user_id": "alice", "session_id": "s-1"}, format="json")
    assert mismatch.status_code == 409 and mismatch.json()["error"]["code"] == "session_user_mismatch"
    assert tenant_b.client("read").post(URL, {"query": "x", "user_id": "bob", "session_id": "s-1"},
                                        format="json").status_code == 404
