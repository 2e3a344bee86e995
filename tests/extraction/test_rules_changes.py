"""Changes that name the value they replace (apps/extraction/extractors/rules/changes.py) and how the rules
extractor hands them to the new facts said with them."""

from datetime import UTC, datetime

import pytest

from apps.extraction.extractors.base import ConversationMessage
from apps.extraction.extractors.rules import RulesExtractor
from apps.extraction.extractors.rules.changes import Retired, names_old_value, restated_without, retired_values

SENT_AT = datetime(2026, 3, 14, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize(("sentence", "retired"), [
    ("Could she do Tuesdays instead of Wednesdays?", [Retired("Wednesdays", "Tuesdays")]),
    ("The number is now 120 people, not 80.", [Retired("80 people", "120 people")]),
    ("Can we go from 6 desks down to 4 desks from 1 April?", [Retired("6 desks", "4 desks")]),
    ("I'd like to move from Monthly Pro to the Annual Pro plan.", [Retired("Monthly Pro", None)]),
    ("Can the plan be $90 a fortnight instead of $45 weekly?", [Retired("$45 weekly", None)]),
    ("We're stopping the Friday pickups, Tuesday only from now on.", [Retired("Friday", None)]),
    ("Your booking is now Mondays and Thursdays, and the Tuesday one is cancelled.", [Retired("Tuesday", None)]),
    ("A table near the entrance instead of table 7.", [Retired("table 7", None)]),
    ("The test centre cancelled the 14 May session.", [Retired("14 May", None)]),
    ("I'm moving from Leeds to York next month.", [Retired("Leeds", None)]),
])
def test_a_change_names_the_old_value_and_what_takes_its_place(sentence, retired):
    assert retired_values(sentence) == retired


@pytest.mark.parametrize("sentence", [
    "Can you text me instead of emailing?",  # a way of being served, not a value replaced
    "Thursday, not sure yet.", "Not now, thanks.", "I'd rather have email than calls.",
    "We went down to 4 from 1 April.",  # a start date, not an old count
    "It's 12, not 18.",  # a bare number names nothing without a unit
])
def test_no_old_value_where_none_is_named(sentence):
    assert retired_values(sentence) == []


@pytest.mark.parametrize(("content", "value", "named"), [
    ("The user would like Mondays, Wednesdays and Thursdays", "Wednesday", True),
    ("The user would like Mondays and Thursdays", "Wednesdays", False),
    ("Hire of the hall for around 80 people", "80 people", True),
    ("80 delegates and 1,800 people", "80 people", False),  # the number is there, not as that many people
    ("Unit 18, 3 pallets", "18 pallets", False),
    ("The plan is NZ$45 a week", "$45 weekly", True),
    ("The user is sitting the test on 14 May (2026-05-14)", "14 May", True),
    ("The user flies on 114 May", "14 May", False),
    # the change itself, said earlier, names the old value as the one given up
    ("The user has decided on the 5 year fix rather than the 2 year", "2 year", False),
])
def test_a_note_names_an_old_value_only_as_that_value(content, value, named):
    assert names_old_value(content, value) is named


@pytest.mark.parametrize(("content", "retired", "restated"), [
    ("The user would like Mondays, Wednesdays and Thursdays, full days", Retired("Wednesdays", "Tuesdays"),
     "The user would like Mondays, Tuesdays and Thursdays, full days"),
    ("Lessons with Mr Okoye on Tuesday at 7pm", Retired("Tuesdays", "Thursdays"), "Lessons with Mr Okoye on Thursday at 7pm"),
    ("Noted: collections every Tuesday and Friday, with fragile handling", Retired("Friday", None),
     "Noted: collections every Tuesday, with fragile handling"),
    ("Pickups on Mondays, Tuesdays and Fridays", Retired("Fridays", None), "Pickups on Mondays and Tuesdays"),
    ("Pickups on Fridays and Tuesdays", Retired("Friday", None), "Pickups on Tuesdays"),
    ("Pickups on Tuesday and Friday", Retired("Friday", "Tuesday"), "Pickups on Tuesday"),  # the new one is there
    ("The hall is booked for around 80 people", Retired("80 people", "120 people"),
     "The hall is booked for around 120 people"),
])
def test_a_note_is_said_again_as_things_now_stand(content, retired, restated):
    assert restated_without(content, retired) == restated


@pytest.mark.parametrize(("content", "retired"), [
    ("Lessons with Mr Okoye on Tuesdays at 7pm", Retired("Tuesdays", None)),  # alone: the note goes as a whole
    ("The user is on Monthly Pro", Retired("Monthly Pro", "Annual Pro")),  # a name may tell history: never swapped
])
def test_a_note_that_cannot_be_said_again_goes_as_a_whole(content, retired):
    assert restated_without(content, retired) is None


def _extract(*turns):
    messages = [ConversationMessage(seq=index + 1, role=role, text=text, created_at=SENT_AT)
                for index, (role, text) in enumerate(turns)]
    return RulesExtractor().extract(messages=messages, existing=[])


def test_the_agent_confirming_a_change_the_customer_asked_for_carries_the_old_value():
    candidates = _extract(("user", "Could Zara do Tuesdays instead of Wednesdays? So Mon, Tue, Thu."),
                          ("assistant", "No problem - Zara's pattern is now Monday, Tuesday and Thursday."))
    [confirmed] = [c for c in candidates if c.metadata["rule"] == "support.change.now"]
    assert confirmed.content == "Zara's pattern is now Monday, Tuesday and Thursday"
    assert confirmed.metadata["retires"] == [["Wednesdays", "Tuesdays"]]


def test_the_old_value_goes_with_the_fact_said_beside_it_and_no_other_message():
    candidates = _extract(("assistant", "No problem: your recurring 6:30am Spin booking is now Mondays and Thursdays, "
                                        "and the Tuesday one is cancelled."),
                          ("user", "My mobile is 07700 900 591."))
    carried = {c.content: c.metadata.get("retires") for c in candidates}
    assert carried == {"The user's recurring 6:30am Spin booking is now Mondays and Thursdays": [["Tuesday", None]],
                       "The user's mobile number is 07700 900 591": None}


@pytest.mark.parametrize("text", ["Your refund is now being processed.", "Your balance is now £0.",
                                  "Your order is now on its way.", "Your plan is now Premium."])
def test_the_state_of_one_piece_of_work_is_not_a_setting_that_changed(text):
    assert [c for c in _extract(("assistant", text)) if c.metadata["rule"] == "support.change.now"] == []
