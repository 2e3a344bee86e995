"""bench/extraction_corpus.py: the quality corpus is checked on load (a bad file is named with its conversation),
messages get the times the format gives them, and the scores follow bench/data/extraction/README.md."""

import importlib.util
import json
import math
import sys
from datetime import UTC, datetime

import pytest

from tests.processes import ROOT

_spec = importlib.util.spec_from_file_location("bench_extraction_corpus", ROOT / "bench" / "extraction_corpus.py")
corpus = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = corpus  # dataclasses look their module up while the class is built
_spec.loader.exec_module(corpus)


def _conversation(**changes) -> dict:
    conversation = {
        "id": "retail-01",
        "user": "cust-01",
        "started_at": "2026-03-14T09:30:00Z",
        "messages": [
            {"role": "user", "text": "I'm Ines Moreau. My phone is +33 6 12 34 56 78."},
            {"role": "assistant", "text": "Thanks Ines."},
            {"role": "user", "text": "We moved from Leeds to York.", "session": 2, "at": "2026-04-02T10:00:00Z"},
            {"role": "user", "text": "Please forget my phone.", "session": 2},
        ],
        "expect": ["Ines Moreau", ["moved", "York"]],
        "forbid": ["phone is 5520"],
        "superseded": ["Leeds"],
        "forgotten": ["+33 6 12 34 56 78"],
        "allow": ["Thanks"],
    }
    conversation.update(changes)
    return conversation


def _write(root, part: str, domain: str, conversations: list[dict], **extra) -> None:
    (root / part).mkdir(parents=True, exist_ok=True)
    body = {"domain": domain, "conversations": conversations, **extra}
    (root / part / f"{domain}.json").write_text(json.dumps(body), encoding="utf-8")


def test_messages_are_timed_and_grouped_into_sessions(tmp_path):
    _write(tmp_path, "dev", "retail", [_conversation()])
    [conversation] = corpus.load_corpus(tmp_path)
    assert (conversation.part, conversation.domain) == ("dev", "retail")
    times = [message.at for message in conversation.messages]
    assert times == [datetime(2026, 3, 14, 9, 30, tzinfo=UTC), datetime(2026, 3, 14, 9, 31, tzinfo=UTC),
                     datetime(2026, 4, 2, 10, 0, tzinfo=UTC), datetime(2026, 4, 2, 10, 1, tzinfo=UTC)]
    assert [(number, len(messages)) for number, messages in conversation.sessions()] == [(1, 2), (2, 2)]
    assert conversation.expect[1].parts == ("moved", "York")


@pytest.mark.parametrize(("change", "complaint"), [
    ({"expected": ["x"]}, "unknown keys ['expected']"),
    ({"messages": [{"role": "bot", "text": "hi"}]}, "messages[0].role must be one of user, assistant"),
    ({"messages": [{"role": "user", "text": "a", "session": 2}, {"role": "user", "text": "b"}]},
     "messages[1].session is 1 after a message of session 2"),
    ({"started_at": "14 March"}, "started_at is not an ISO 8601 time"),
    ({"expect": [["York", 3]]}, "expect[0] must be a string or a non-empty list of strings"),
    ({"allow": ["..."]}, "allow[0] has no letters or digits"),
    ({"forgotten": ["my email"]}, "forgotten item 'my email' is never said"),
])
def test_a_bad_conversation_is_refused_naming_the_file_and_the_conversation(tmp_path, change, complaint):
    _write(tmp_path, "dev", "retail", [_conversation(), _conversation(id="retail-02", user="cust-02", **change)])
    with pytest.raises(corpus.CorpusError) as error:
        corpus.load_corpus(tmp_path)
    message = str(error.value)
    assert str(tmp_path / "dev" / "retail.json") in message and "conversation 'retail-02'" in message
    assert complaint in message


def test_bad_files_and_repeated_ids_are_refused(tmp_path):
    _write(tmp_path, "dev", "retail", [_conversation()], domain_note="x")
    with pytest.raises(corpus.CorpusError, match="exactly the keys 'domain' and 'conversations'"):
        corpus.load_corpus(tmp_path)
    _write(tmp_path, "dev", "retail", [_conversation()])
    (tmp_path / "dev" / "banking.json").write_text('{"domain": "retail", "conversations": []}')
    with pytest.raises(corpus.CorpusError, match=r"banking\.json: domain is 'retail'"):
        corpus.load_corpus(tmp_path)
    (tmp_path / "dev" / "banking.json").write_text("{not json")
    with pytest.raises(corpus.CorpusError, match=r"banking\.json: not readable JSON"):
        corpus.load_corpus(tmp_path)
    (tmp_path / "dev" / "banking.json").unlink()
    _write(tmp_path, "held_out", "telecom", [_conversation(id="telecom-01")])
    with pytest.raises(corpus.CorpusError, match="user 'cust-01' is also the user of conversation 'retail-01'"):
        corpus.load_corpus(tmp_path)
    assert [c.id for c in corpus.load_corpus(tmp_path, parts=("held_out",))] == ["telecom-01"]


def test_a_conversation_sent_after_now_is_set_aside_not_refused(tmp_path):
    later = {"role": "user", "text": "hi", "session": 2, "at": "2026-12-01T10:00:00Z"}
    _write(tmp_path, "dev", "retail", [_conversation(), _conversation(id="retail-02", user="cust-02",
                                                                      messages=[*_conversation()["messages"], later])])
    conversations = corpus.load_corpus(tmp_path)
    assert corpus.not_yet_sendable(conversations, now=datetime(2026, 11, 23, tzinfo=UTC)) == [conversations[1]]
    assert corpus.not_yet_sendable(conversations, now=datetime(2026, 12, 1, 9, 56, tzinfo=UTC)) == []


def _memory(content: str, status: str = "active", date: str = "", source: str = "extraction"):
    return corpus.StoredMemory(id=content, content=content, status=status, source=source, date=date)


def _scored(memories, **changes):
    conversation = corpus._conversation(_conversation(**changes), part="dev", domain="retail",
                                        path=ROOT / "retail.json", index=0)
    return corpus.score(conversation, memories)


def test_matching_ignores_case_spaces_and_punctuation_and_reads_the_resolved_date():
    result = _scored([
        _memory("ines MOREAU moved to York"),
        _memory("The user is flying to Lisbon next Friday", date="2026-05-29"),
    ], expect=["Ines-Moreau", ["moved", "york"], ["Lisbon", "2026-05-29"], ["York", "Lisbon"]])
    assert result.expect_found == 3
    assert result.missed == [corpus.Item(("York", "Lisbon"))]  # the parts of an item must share one memory


def test_forbidden_values_supersedes_and_forgets_are_judged_on_active_memories():
    result = _scored([
        _memory("The user's name is Ines Moreau"),
        _memory("Ines Moreau's phone is 5520 118"),
        _memory("Ines Moreau lives in Leeds"),
        _memory("Ines Moreau's phone number is +33612345678", status="deleted"),
    ], expect=["Ines Moreau", "York"])
    assert [(str(item), memory.content) for item, memory in result.forbidden_hits] == [
        ("'phone is 5520'", "Ines Moreau's phone is 5520 118")
    ]
    assert result.supersede_failures == [(corpus.Item(("Leeds",)),
                                          "still in an active memory: 'Ines Moreau lives in Leeds'")]
    assert (result.forgotten_ok, result.forget_failures) == (1, [])
    assert result.missed == [corpus.Item(("York",))] and result.wrongly_superseded == []


@pytest.mark.parametrize(("status", "honoured", "why"), [
    ("deleted", True, None),
    ("superseded", True, None),
    ("active", False, "still in an active memory: 'Phone number +33612345678'"),
    ("pending_review", False, "in no deleted or superseded memory (only pending_review: 'Phone number +33612345678')"),
    (None, False, "never stored"),  # said in session 1, asked away in session 2: the statement was missed
])
def test_a_forget_is_honoured_only_when_a_stored_value_was_retired(status, honoured, why):
    memories = [_memory("Phone number +33612345678", status=status)] if status else []

    result = _scored([_memory("The user's name is Ines Moreau"), *memories])

    assert result.forgotten_ok == int(honoured)
    assert result.forget_failures == ([] if honoured else [(corpus.Item(("+33 6 12 34 56 78",)), why)])


def test_a_forget_is_honoured_by_an_edit_that_cut_the_value_out_of_a_note_that_stays():
    note = corpus.StoredMemory(id="n", content="Deliveries go to the back gate", status="active", source="extraction",
                               edited=True, earlier=("Deliveries go to the back gate, call +33 6 12 34 56 78",))
    never_held = corpus.StoredMemory(id="m", content="Deliveries go to the back gate", status="active",
                                     source="extraction", edited=True, earlier=("Deliveries go to the gate",))

    assert _scored([note]).forgotten_ok == 1
    assert _scored([never_held]).forget_failures == [(corpus.Item(("+33 6 12 34 56 78",)), "never stored")]


def test_a_superseded_value_must_be_in_a_superseded_memory_and_good_facts_must_stay():
    result = _scored([
        _memory("Ines Moreau lives in Leeds", status="deleted"),
        _memory("Ines Moreau moved to York", status="superseded"),
    ])
    assert result.supersede_failures == [(corpus.Item(("Leeds",)),
                                          "in no superseded memory (only deleted: 'Ines Moreau lives in Leeds')")]
    assert [(str(item), memory.status) for item, memory in result.wrongly_superseded] == [
        ("'Ines Moreau'", "deleted"), ("'moved' + 'York'", "superseded"),
    ]
    assert _scored([]).supersede_failures == [(corpus.Item(("Leeds",)), "never stored")]


def test_junk_is_what_no_item_explains_and_the_users_name_explains_one_memory():
    memories = [
        _memory("Ines Moreau works as a nurse"),
        _memory("The user's name is Ines Moreau"),
        _memory("Ines Moreau's phone number is 5520118"),  # mangled: only the name matches
        _memory("Ines Moreau moved to York"),
        _memory("Ines Moreau moved to York last week"),  # a duplicate
        _memory("Thanks for calling", source="api"),  # not made by extraction
    ]
    result = _scored(memories, expect=["Ines Moreau", ["moved", "York"], "nurse"], forgotten=[], superseded=[])
    assert result.created == 5
    assert [memory.content for memory in result.junk] == [
        "Ines Moreau's phone number is 5520118", "Ines Moreau moved to York last week",
    ]
    assert result.junk_by_any_match == 0  # the README's looser rule: the name explains them all
    total = corpus.tally([result, result])
    assert (total.conversations, total.created, total.junk, total.expect, total.expect_found) == (2, 10, 4, 6, 6)


def test_tally_rates_are_over_items_of_every_conversation_and_nan_with_nothing_to_count():
    memories = [
        _memory("The user's name is Ines Moreau"),
        _memory("Ines Moreau lives in Leeds", status="superseded"),
        _memory("Ines Moreau's phone is 5520 118"),  # junk (the name explains another memory)
        _memory("Ines Moreau's phone number is +33612345678", status="deleted"),
    ]
    full = _scored(memories, expect=["Ines Moreau", "York", "nurse"])  # 1 of 3 found
    empty = _scored([], expect=["Ines Moreau"], forbid=[], superseded=[], forgotten=[])  # 0 of 1, nothing created

    total = corpus.tally([full, empty])

    assert (total.expect_found, total.expect, total.junk, total.junk_by_any_match, total.created) == (1, 4, 1, 0, 4)
    assert total.recall == 1 / 4
    assert (total.junk_share, total.junk_share_by_any_match) == (1 / 4, 0.0)
    assert total.supersede_correctness == 1.0 and total.forgets_honoured == 1.0
    nothing = corpus.tally([empty])
    assert all(math.isnan(rate) for rate in (nothing.junk_share, nothing.junk_share_by_any_match,
                                             nothing.supersede_correctness, nothing.forgets_honoured))
    assert nothing.recall == 0.0


def test_the_committed_corpus_follows_the_format_and_has_the_size_and_split_asked_for():
    conversations = corpus.load_corpus(ROOT / "bench" / "data" / "extraction")
    # Counts only: nothing of the held-out part may be shown, not even by a failing assertion.
    total = len(conversations)
    held_out = sum(conversation.part == "held_out" for conversation in conversations)
    domains = len({conversation.domain for conversation in conversations})
    parts = sorted({conversation.part for conversation in conversations})

    assert total >= 80
    assert domains >= 8
    assert parts == sorted(corpus.PARTS)
    assert 0.20 <= held_out / total <= 0.35, (held_out, total)


def test_a_value_said_and_forgotten_in_one_session_is_honoured_by_storing_nothing():
    messages = [
        {"role": "user", "text": "We moved from Leeds to York."},
        {"role": "user", "text": "My phone is +33 6 12 34 56 78, but please take it off my file.", "session": 2,
         "at": "2026-04-02T10:00:00Z"},
    ]

    nothing_stored = _scored([], messages=messages)
    still_there = _scored([_memory("Phone number +33612345678")], messages=messages)

    assert (nothing_stored.forgotten_ok, nothing_stored.forget_failures) == (1, [])
    assert still_there.forgotten_ok == 0
