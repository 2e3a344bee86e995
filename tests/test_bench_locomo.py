"""bench/locomo.py: a LoCoMo file is checked on load (a bad one is named with its sample), malformed evidence is split
and normalised, turns become "[date] speaker: text" memories, and recall@k / hit@k follow /work/shared/data/README.md."""

import importlib.util
import json
import math
import sys

import pytest

from tests.processes import ROOT

_spec = importlib.util.spec_from_file_location("bench_locomo", ROOT / "bench" / "locomo.py")
locomo = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = locomo  # dataclasses look their module up while the class is built
_spec.loader.exec_module(locomo)

MINI = ROOT / "tests" / "fixtures" / "retrieval" / "locomo-mini.json"


@pytest.mark.parametrize(
    ("written", "ids"),
    [("D1:3", ["D1:3"]), ("D8:6; D9:17", ["D8:6", "D9:17"]), ("D:11:26", ["D11:26"]), ("D30:05", ["D30:5"]),
     (" D2:1 ", ["D2:1"]), ("D1:2,D1:3", ["D1:2", "D1:3"])],
)
def test_evidence_is_split_and_normalised(written, ids):
    assert locomo.split_evidence(written) == ids


def test_session_dates_are_shortened_and_other_forms_kept():
    assert locomo.session_date("1:56 pm on 8 May, 2023") == "8 May 2023"
    assert locomo.session_date("10:04 am on 19 June, 2023") == "19 June 2023"
    assert locomo.session_date("sometime in spring") == "sometime in spring"


def test_the_fixture_loads_with_its_quirks_counted():
    data = locomo.load(MINI)

    assert [c.sample_id for c in data.conversations] == ["mini-1", "mini-2"]
    assert data.turns == 18
    assert data.rewritten == ["D1:3; D2:2", "D2:02", "D:2:3"]
    assert data.unknown == ["mini-1 D9:9"]
    assert data.left_out == {"no evidence": 1, "category 5": 1}
    by_question = {q.question: q for q in data.questions}
    assert by_question["Who joined Ada at the pottery class?"].evidence == ("D1:3", "D2:2")
    assert by_question["What race is Ben training for?"].evidence == ("D1:4",)  # D9:9 names no turn
    assert by_question["When did Dara defend her thesis?"].answer == "2023"
    turn = data.conversations[0].turns[3]
    assert turn.content() == "[3 March 2024] Ben: I've been training for the harbour half marathon in May."
    assert turn.content(captions=True).endswith(" [shares a photo of a man running along a harbour wall]")


def test_narrowing_leaves_out_questions_whose_evidence_is_not_kept():
    data = locomo.load(MINI, conversations=1, sessions=1)

    assert data.turns == 5
    assert [q.question for q in data.questions] == ["What race is Ben training for?"]
    assert data.left_out["evidence beyond --sessions"] == 3
    assert len(locomo.load(MINI, questions=5).questions) == 5


@pytest.mark.parametrize(
    ("sample", "message"),
    [
        ({"conversation": {}, "qa": []}, "a sample without a sample_id"),
        ({"sample_id": "s1", "conversation": {"speaker_a": "A"}, "qa": []}, "sample s1: no session_<n>"),
        ({"sample_id": "s1", "conversation": {"session_1": [{"speaker": "A", "text": "hi"}]}, "qa": []},
         "sample s1: turn 0 of session_1 needs dia_id, speaker and text"),
        ({"sample_id": "s1", "conversation": {"session_1": []}, "qa": [{"question": "q?", "category": "4"}]},
         "sample s1: qa 0 needs an integer category"),
    ],
)
def test_a_bad_file_names_the_sample_and_the_problem(tmp_path, sample, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([sample]))

    with pytest.raises(locomo.DataError, match=message):
        locomo.load(path)


def test_recall_and_hit_at_k():
    retrieved = [("D1:1",), ("D2:2",), ("D5:5", "D1:3"), ("D9:9",)]

    score = locomo.score(("D1:3", "D2:2"), retrieved, ks=(1, 2, 3))

    assert score.recall == {1: 0.0, 2: 0.5, 3: 1.0}
    assert score.hit == {1: False, 2: True, 3: True}
    assert locomo.score(("D1:1",), [], ks=(1,)).recall == {1: 0.0}
    assert math.isnan(locomo.mean([]))
