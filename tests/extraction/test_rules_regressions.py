"""What the rules extractor once got wrong, through the whole path (messages -> rules -> consolidation -> store).

Each sentence is an example of a pattern (issue 10); tests/extraction/test_rules_extractor.py holds the many
phrasings at the extractor level.
"""

from datetime import UTC, date, datetime

import pytest

from apps.extraction.extractors.base import ConversationMessage, ExistingMemory
from apps.extraction.extractors.rules import RulesExtractor
from apps.extraction.extractors.rules.corrections import may_correct
from apps.extraction.extractors.rules.dates import find_dates
from apps.memories.models import Memory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("inline_extraction")]

MESSAGES = "/api/v1/stores/main/sessions/{session}/messages"


class Conversation:
    def __init__(self, client, user="ines", session="chat-1"):
        self.client, self.user, self.session, self.seq = client, user, session, 0

    def say(self, *texts, role="user", session=None):
        if session:
            self.session = session
        messages = []
        for text in texts:
            messages.append({"role": role, "content": text, "seq": self.seq})
            self.seq += 1
        response = self.client.post(MESSAGES.format(session=self.session), {"user_id": self.user, "messages": messages},
                                    format="json")
        assert response.status_code == 202, response.content


SENT_AT = datetime(2026, 3, 14, 9, 30, tzinfo=UTC)


def extract_one(text: str, *, role: str = "user", user_name: str | None = None, created_at: datetime | None = None):
    """The rules extractor's candidates for one message, in process (no database); dates resolve against
    `created_at`."""
    return RulesExtractor().extract(messages=[ConversationMessage(seq=1, role=role, text=text, created_at=created_at)],
                                    existing=[], user_name=user_name)


def active(text: str) -> list[str]:
    return list(Memory.objects.filter(content__icontains=text, status="active").values_list("content", flat=True))


def with_status(text: str, status: str) -> list[str]:
    return list(Memory.objects.filter(content__icontains=text, status=status).values_list("content", flat=True))


@pytest.mark.parametrize("request_text", [
    "Please delete my email address, I don't want you keeping it.",
    "I'd like you to remove my email from your records please",
    "Please don't keep my email address on file anymore.",
    "please remove ines@example.com from my account, it's my old work one",
])
def test_a_forget_request_is_honoured_whatever_follows_it(tenant_a, request_text):
    chat = Conversation(tenant_a.client("write"))
    chat.say("My email is ines@example.com.")
    assert active("ines@example.com")

    chat.say(request_text)

    assert not active("ines@example.com")
    assert with_status("ines@example.com", "deleted")


def test_forgetting_in_the_same_message_stores_nothing_of_it(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("My home number is 01603 711 402, but actually take it off my file completely, it's being disconnected.")
    chat.say("Done, I've removed 01603 711 402 from your file.", role="assistant")

    assert not active("01603 711 402")


def test_the_same_number_said_without_a_forget_request_is_stored(tenant_a):
    Conversation(tenant_a.client("write")).say("My home number is 01603 711 402.")

    assert active("01603 711 402")


def test_a_forgotten_number_is_cut_out_of_a_note_that_keeps_the_rest(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("Remember that deliveries go to the back gate and the driver should call the yard on 0161 496 0233 "
             "when he arrives.")
    assert active("0161 496 0233")

    chat.say("Please delete the number 0161 496 0233 from your records.", session="chat-2")

    assert not active("0161 496 0233")
    [note] = active("back gate")
    assert note.endswith("the driver should call the yard when he arrives")
    [revision] = Memory.objects.get(content=note).revisions.filter(action="update")
    assert "0161 496 0233" in revision.before["content"] and "forgotten detail removed" in revision.reason


def test_a_contacts_detail_forgotten_on_their_behalf_goes_and_their_other_details_stay(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("Please note that my husband Tomasz Wrona handles the insurance, so letters should go to him: "
             "tomasz.wrona@poczta.example, mobile +48 601 234 567.")
    assert active("+48 601 234 567")

    chat.say("Tomasz asks one more thing: please don't keep his mobile number on file, only his email.")

    assert not active("+48 601 234 567")
    assert active("tomasz.wrona@poczta.example")


def test_forgetting_a_person_takes_their_name_and_the_address_named_after_them(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("The billing contact on our account was Hannah Okoro, hannah.okoro@brightwater.example, "
             "but she has left. Please send invoices to me from now on.")
    chat.say("Also my work email is ines@brightwater.example.")
    assert active("hannah.okoro@brightwater.example")

    chat.say("Please remove all of Hannah Okoro's details from your records, including her email.", session="chat-2")

    assert not active("Hannah Okoro") and not active("hannah.okoro@brightwater.example")
    assert active("ines@brightwater.example")


def test_forgetting_one_kind_of_address_keeps_the_others(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("My home address is 4 Harbour Road, Cork.", "My delivery address is 12 Quay Street, Galway.")
    assert active("Harbour Road") and active("Quay Street")

    chat.say("Please forget my delivery address.", session="chat-2")

    assert active("Harbour Road") and not active("Quay Street")


def test_an_explicit_request_to_remember_keeps_the_statement_whatever_its_verb(tenant_a):
    Conversation(tenant_a.client("write")).say("Remember that invoices must go to the finance team.")

    assert active("invoices must go to the finance team")


def test_a_contradicting_preference_supersedes_the_earlier_one(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("I like the compact view")
    chat.say("I prefer the detailed view", session="chat-2")

    assert active("detailed view") and not active("compact view")
    assert with_status("compact view", "superseded")


def test_the_first_person_rewrite_keeps_a_country(tenant_a):
    Conversation(tenant_a.client("write")).say("I prefer support from the US team because of the time zone.")

    [memory] = active("team")
    assert "US team" in memory and "them team" not in memory


def test_a_new_surname_replaces_the_name(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("Hi, my name is Ada Nwosu.")
    chat.say("My surname is now Okafor, I got married in April.", session="chat-2")

    assert active("Ada Okafor")
    assert with_status("Ada Nwosu", "superseded")
    assert not active("Nwosu")


def test_a_lowercase_three_part_name_is_a_name(tenant_a):
    Conversation(tenant_a.client("write")).say("hi, i'm maria del carmen ruiz")

    [memory] = Memory.objects.filter(status="active", metadata__subject="name")
    assert memory.content == "The user's name is Maria del Carmen Ruiz"


@pytest.mark.parametrize(("text", "kept"), [
    ("I'm diabetic and can't have sugar.", "diabetic"),
    ("I've just become head of procurement at Tallis Foods.", "head of procurement"),
    ("Our firm is Brightwater Legal.", "Brightwater Legal"),
    ("We're on the Team tier.", "Team tier"),
    ("Update: we relocated to Utrecht.", "Utrecht"),
    ("I use Zoom for our meetings.", "Zoom"),
])
def test_statements_that_once_gave_nothing(tenant_a, text, kept):
    Conversation(tenant_a.client("write")).say(text)

    assert active(kept)


def test_a_stopped_tool_is_retracted_and_a_switch_supersedes(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("We use Slack for team chat.", "We use Xero for accounting.")
    chat.say("We switched from Slack to Teams last month.", "We don't use Xero anymore.", session="chat-2")

    assert active("Teams") and not active("Slack") and not active("Xero")
    assert with_status("Slack", "superseded")
    assert with_status("Xero", "deleted")


def test_an_organisation_renamed_is_restated_under_its_new_name_in_the_users_other_memories(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("I'm the finance director at Corvid Analytics Ltd.")
    [job] = active("finance director")
    assert "Corvid Analytics Ltd" in job
    chat.say("Our company has been renamed to Corvid Data Ltd after the merger.", session="chat-2")

    assert not active("Corvid Analytics")
    [restated] = active("finance director")
    assert "Corvid Data Ltd" in restated
    old = Memory.objects.get(content=job)
    assert old.status == "superseded" and old.superseded_by.content == restated
    assert old.superseded_by.metadata["renamed_from"] == "Corvid Analytics Ltd"
    assert [revision.action for revision in old.superseded_by.revisions.order_by("created_at")] == ["create"]


def test_a_new_employer_is_no_rename_of_the_old_one(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("I'm the finance director at Corvid Analytics Ltd.")
    chat.say("My employer is now Pellucid Freight Ltd.", session="chat-2")

    assert active("Pellucid Freight Ltd")
    assert not [content for content in active("finance director") if "Pellucid" in content]


def test_a_correction_applies_to_the_value_it_corrects(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("We need 5 seats on the Team plan.", "Sorry, actually it's 3 seats, not 5.")

    assert active("3 seats") and not active("5 seats")


def test_a_bare_answer_to_the_agents_question_is_read_for_what_was_asked(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("Can I take your full name, please?", role="assistant")
    chat.say("Siobhán Ní Bhriain, card ends 4471.")

    assert active("Siobhán Ní Bhriain")


@pytest.mark.parametrize(("text", "kept", "dropped"), [
    ("My number is 0151 2345 6788, sorry I mean 0151 2345 6789.", "0151 2345 6789", "0151 2345 6788"),
    ("Please send invoices to a@old.example, no sorry, it's b@new.example.", "b@new.example", "a@old.example"),
])
def test_a_value_corrected_mid_sentence_is_stored_corrected(tenant_a, text, kept, dropped):
    Conversation(tenant_a.client("write")).say(text)

    assert active(kept) and not active(dropped)


@pytest.mark.parametrize(("text", "subject", "content"), [
    ("And if possible write me in simple English.", "preference:language",
     "The user prefers to communicate in simple English"),
    ("If possible, someone who speaks Polish.", "preference:language", "The user prefers to communicate in Polish"),
    ("My English is ok but Spanish is better for me.", "preference:language",
     "The user's English is ok but Spanish is better for them"),
    ("I am rather hard of hearing these days.", "health:hard of hearing",
     "The user is rather hard of hearing these days"),
    ("I'm a bit deaf on the telephone.", "health:deaf", "The user is a bit deaf on the telephone"),
])
def test_polite_ifs_and_degree_adverbs_do_not_hide_a_fact(text, subject, content):
    candidates = extract_one(text)

    assert [(c.subject, c.content) for c in candidates if c.subject == subject] == [(subject, content)]


@pytest.mark.parametrize("text", ["If I move to Spain, write to me in Spanish.", "If you can't reach me, I'm deaf."])
def test_a_real_condition_still_states_nothing(text):
    candidates = extract_one(text)

    assert [c for c in candidates if c.subject in ("preference:language", "health:deaf")] == []


def test_it_in_a_forget_request_is_the_thing_named_just_before_it():
    text = "and the work email, please take it out from my file, my boss saw one message"
    [forget] = [c for c in extract_one(text) if c.action == "delete"]

    assert forget.subject == "email:work"


@pytest.mark.parametrize(("text", "content"), [
    ("Farid Haddad, I own Haddad & Sons Plumbing, business account BUS-4471902.",
     "The user owns Haddad & Sons Plumbing"),
    ("I run the kitchen at Bluefin Bistro, it's busy.", "The user runs the kitchen at Bluefin Bistro"),
])
def test_a_named_organisation_the_user_owns_or_works_in_is_their_employer(text, content):
    candidates = extract_one(text)

    assert [c.content for c in candidates if c.subject == "employer"] == [content]


@pytest.mark.parametrize("text", ["I own a Tesla.", "I started Monday.", "I run Windows 11."])
def test_things_owned_or_run_that_are_not_an_organisation_are_no_employer(text):
    candidates = extract_one(text)

    assert [c for c in candidates if c.subject == "employer"] == []


@pytest.mark.parametrize(("role", "text", "user_name", "forbidden"), [
    ("assistant", "It is now active.", None, "product:"),
    ("assistant", "Everything is set up.", None, "product:"),
    ("assistant", "I have transferred you to Billing.", None, "plan"),
    ("assistant", "I've switched you to Sarah in our Billing team.", None, "plan"),
    ("assistant", "You are now on the Priority List.", None, "plan"),
    ("user", "I bought it for my son Tom, text me on 07700 900123", None, "contact:son:tom"),
    ("user", "Please send a copy of the invoice to tom.evans@example.com as well", "Charlotte Evans", "email"),
    ("user", "Can you get me a taxi from Addison Lee: 020 7407 9000", None, "phone"),
    ("user", "Please text me the code: 48213377", None, "phone"),
    ("user", "I own Tesla, Apple and Nvidia", None, "employer"),
    ("user", "I run the London Marathon for Save The Children", None, "employer"),
    ("user", "I head the PTA at St Mary School", None, "employer"),
    ("assistant", "Your room is not booked for Friday 4 July.", None, "episode"),
    ("assistant", "The summer sale ends on Friday 4 July.", None, "episode"),
    ("user", "My son Richard set up the account. The installer called and his number is 07831 664 920", None,
     "contact:son:richard:phone"),
    ("user", "I read the letter in German but I did not understand it", None, "preference:language"),
])
def test_what_only_looks_like_a_plan_a_contact_detail_an_employer_or_a_booking_is_not_stored_as_one(
        role, text, user_name, forbidden):
    candidates = extract_one(text, role=role, user_name=user_name)

    if forbidden == "episode":
        assert [c for c in candidates if c.memory_type == "episode"] == []
    elif forbidden == "contact:son:tom":
        assert [c.content for c in candidates if c.subject == forbidden] == ["The user's son is Tom"]
    else:
        assert [c for c in candidates if (c.subject or "") == forbidden or (
            forbidden.endswith(":") and (c.subject or "").startswith(forbidden))] == []


def test_the_users_own_address_next_to_a_contact_named_before_is_still_kept():
    text = "My wife handles the bills, but send them to me at carl@example.com"
    candidates = extract_one(text)

    assert any("carl@example.com" in c.content for c in candidates)



def test_a_request_to_save_on_the_profile_keeps_the_statement():
    text = "Can you save on my profile that I'm always a 7.5 in Nike but a 7 in Adidas"

    assert [c.content for c in extract_one(text)] == ["The user is always a 7.5 in Nike but a 7 in Adidas"]
    assert extract_one("Save the file please.") == []


def test_a_retracted_tool_takes_only_that_tool_and_the_notes_that_name_it(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("We use Jira for tickets.", "Billing alerts go to our Slack channel #billing.",
             "We don't use Slack anymore.")

    assert active("Jira")
    assert not active("Slack")


def test_leaving_an_employer_retires_the_notes_that_name_it(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("I'm at Halden & Moss during the day, so please call the mobile after six.")
    assert active("Halden & Moss")

    chat.say("I've left Halden & Moss, I'm at Yorkshire Water now as a data analyst.", session="chat-2")

    assert not active("Halden & Moss")
    [old] = Memory.objects.filter(content__contains="Halden & Moss")
    assert old.status == "superseded" and "Yorkshire Water" in old.superseded_by.content


def test_leaving_an_employer_in_the_same_message_retires_the_note_too(tenant_a):
    Conversation(tenant_a.client("write")).say(
        "I'm at Halden & Moss during the day, so please call the mobile after six.",
        "Actually scratch that, I've left Halden & Moss, I'm at Yorkshire Water now.")

    assert not active("Halden & Moss")
    assert active("Yorkshire Water")


def test_a_person_the_agent_removed_is_no_longer_active(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("My assistant Priyanka Shah will handle returns from now on, priyanka.shah@whitcombe.example")
    assert active("Priyanka Shah")

    chat.say("Priyanka has moved on; my new assistant is Tom Reyes, tom.reyes@whitcombe.example.", session="chat-2")
    chat.say("Tom Reyes is now your authorised contact and Priyanka Shah has been removed.", role="assistant")

    assert not active("Priyanka Shah") and not active("priyanka.shah@whitcombe.example")
    assert active("Tom Reyes")


def test_switching_tools_supersedes_the_notes_that_name_the_old_one(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("Remember that billing alerts go to our Slack channel #it-billing.")
    assert active("Slack")

    chat.say("We've dropped Slack company-wide and moved to Microsoft Teams.", session="chat-2")

    assert not active("Slack") and active("Microsoft Teams")
    assert with_status("Slack channel", "superseded")


def test_membership_levels_replace_each_other(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("Can I still return a jacket after 40 days?")
    chat.say("You're actually a Gold member, so you get 60 days for returns.", role="assistant")
    chat.say("Great, thanks.")
    assert active("Gold")

    chat.say("Are returns still free for me?", session="chat-2")
    chat.say("Good news: you reached Platinum status last month.", role="assistant")
    chat.say("Nice!")

    assert active("Platinum") and not active("Gold")


def test_a_device_thrown_away_takes_the_notes_that_name_it(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("I'm using my own router, a FRITZ!Box 7590, with a cable direct to the pc.")
    assert active("FRITZ!Box")

    chat.say("The technician brought a new router and I threw the FRITZ!Box away.", session="chat-2")

    assert not active("FRITZ!Box 7590")


def test_a_contact_taken_off_the_account_goes_and_a_similar_name_stays(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("My partner Alex Moreau can also call about the account.",
             "Remember that my colleague Alexandra Petit handles the invoices.")
    assert active("Alex Moreau") and active("Alexandra Petit")

    chat.say("Please take Alex off as an authorised contact, we've split up.", session="chat-2")

    assert not active("Alex Moreau")
    assert active("Alexandra Petit")


@pytest.mark.parametrize(("on_file", "later", "kept", "retired"), [
    # a number or an address given in passing is another one of the user's, not a replacement ...
    ("My mobile is 07700 900 318.", "I'm at the office all day, call me on 0113 496 0721.",
     ["07700 900 318", "0113 496 0721"], []),
    ("My email is ines@example.com.", "It's finance@acme.example for the invoices.",
     ["ines@example.com", "finance@acme.example"], []),
    # ... unless the user says it changed
    ("My mobile is 07700 900 318.", "I have a new number now, call me on 07700 900 999.", ["07700 900 999"],
     ["07700 900 318"]),
    ("My email is ines@example.com.", "My email is ines.r@newmail.example now.", ["ines.r@newmail.example"],
     ["ines@example.com"]),
])
def test_a_contact_detail_on_file_is_retired_only_by_a_stated_change(tenant_a, on_file, later, kept, retired):
    chat = Conversation(tenant_a.client("write"))
    chat.say(on_file)

    chat.say(later, session="chat-2")

    assert all(active(value) for value in kept)
    assert not any(active(value) for value in retired)


def test_leaving_an_employer_keeps_notes_that_name_another_thing_of_the_brand(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("I work at Amazon.", "Remember that I want parcels left in the Amazon Locker at Tesco Extra.")

    chat.say("I've left Amazon, I work at Tesco now.", session="chat-2")

    assert active("Amazon Locker")
    assert not active("works at Amazon")


@pytest.mark.parametrize("role", ["user", "assistant"])
def test_an_account_code_with_letters_is_not_a_phone_number(role):
    text = ("My new account number is ELX-3302918." if role == "user" else "Your new account number is ELX-3302918.")
    candidates = extract_one(text, role=role)

    assert [candidate.subject for candidate in candidates] == ["identifier:account:ELX-3302918"]


def test_a_weekday_picks_the_year_of_a_date_the_past_tense_would_push_back():
    from datetime import date

    from apps.extraction.extractors.rules.dates import find_dates

    said_on = date(2026, 4, 14)
    assert [m.day for m in find_dates("I've moved the check to Friday 24 April, 8am to 12pm", said_on)] == [
        date(2026, 4, 24)]
    assert [m.day for m in find_dates("I had it on Thursday 24 April", said_on)] == [date(2025, 4, 24)]


@pytest.mark.parametrize(("text", "names"), [
    ("It's MA26 KCS. The others are already on your system.", []),
    ("It's Ana Lopes here, I have a question about my bill.", ["The user's name is Ana Lopes"]),
])
def test_what_opens_with_its_is_a_name_only_when_it_is_made_of_letters(text, names):
    candidates = extract_one(text)

    assert [candidate.content for candidate in candidates if candidate.subject == "name"] == names


def test_a_new_value_said_beside_a_removal_is_not_removed():
    candidates = extract_one("Done: your login is now gus.lima@mailbox.example and the old details have been removed.",
                             role="assistant")

    assert [(c.action, c.subject) for c in candidates] == [("add", "email")]


def test_a_sign_in_address_the_user_gives_is_their_email():
    candidates = extract_one("Gustavo Lima, practice manager. Login is g.lima@clinic.example")

    assert [c.metadata.get("value") for c in candidates if c.subject == "email"] == ["g.lima@clinic.example"]


@pytest.mark.parametrize("text", ["I don't have the receipt anymore.", "I don't have time anymore."])
def test_no_product_named_is_no_tool_given_up(text):
    assert [c.action for c in extract_one(text)] == []


def test_a_booking_the_agent_moves_right_after_making_it_is_replaced(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("I've booked the engineer for Tuesday 12 May.", role="assistant")
    chat.say("Actually Tuesday doesn't work, can we do Thursday 14th instead?")
    chat.say("No problem, I've moved it to Thursday 14 May.", role="assistant")
    assert chat.client.post(f"/api/v1/stores/main/sessions/{chat.session}/flush?wait=10").status_code == 200

    assert active("Thursday 14 May")
    assert not active("Tuesday 12 May") and with_status("Tuesday 12 May", "superseded")


def test_a_new_address_said_as_what_it_is_now_keeps_no_now(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("Is your address still 4 Harbour Road?", role="assistant")
    chat.say("no we moved, it's 17 Quay Street now")

    assert [content for content in active("17 Quay Street") if content.endswith("17 Quay Street")]


@pytest.mark.parametrize(("text", "kept", "wrong"), [
    ("You've got my surname as Fenwick, it's Fenwicke.", "surname is Fenwicke", "Fenwick,"),
    ("I thought my card ended in 3318 but it's 3381.", "ends in 3381", "3318"),
    ("Your colleague said my plan was Bronze but it's actually Platinum.", "plan is Platinum", "Bronze"),
    ("The portal shows my email as rhys@mailbox.example, it should be rhys.o@mailbox.example.",
     "rhys.o@mailbox.example", "rhys@mailbox.example"),
])
def test_a_wrong_record_of_a_detail_then_the_right_value_keeps_only_the_right_one(text, kept, wrong):
    contents = [c.content for c in extract_one(text) if c.action in ("add", "update")]

    assert any(kept in content for content in contents), contents
    assert not any(wrong in content for content in contents), contents


def test_a_wrong_record_corrects_the_memory_that_holds_the_wrong_value(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("My plan is Bronze.")
    chat.say("Actually your colleague said my plan was Bronze but it's Platinum, sorry.", session="chat-2")

    assert active("Platinum") and not active("Bronze")


@pytest.mark.parametrize(("text", "kept"), [
    ("Hi, Ottilie here from Brackenfield Joinery.", ["The user's name is Ottilie", "works at Brackenfield Joinery"]),
    ("I'm in Gdansk now.", ["based in Gdansk"]),
    ("We're now in Lyon.", ["based in Lyon"]),
])
def test_short_introductions_and_where_they_are_now(text, kept):
    contents = [c.content for c in extract_one(text)]

    assert all(any(each in content for content in contents) for each in kept), contents


@pytest.mark.parametrize("text", ["I'm in Gdansk now, back home on Monday.", "I'm in Lyon now for a trade fair.",
                                  "I'm in a queue now."])
def test_a_stay_is_not_where_they_live(text):
    assert not [c for c in extract_one(text) if c.subject == "location"]


def test_a_state_that_ended_is_no_statement_and_the_current_one_is_kept():
    contents = [c.content for c in extract_one("I worked in Swindon until 2021 and I'm in Reading now.")]

    assert not any("Swindon" in content for content in contents), contents
    assert any("based in Reading" in content for content in contents), contents


def test_a_value_ruled_out_beside_a_fact_stays_out_of_it():
    contents = [c.content for c in extract_one("My date of birth is 9 July 1979, not 1997 as your form says.")]

    assert any("9 July 1979" in content for content in contents), contents
    assert not any("1997" in content for content in contents), contents


def test_a_hyphenated_word_keeps_its_you():
    assert [c.content for c in extract_one("I'm on a pay-as-you-go SIM.")] == ["The user is on a pay-as-you-go SIM"]


@pytest.mark.parametrize("text", ["My account is under my maiden name, Kowalczyk.", "My account is locked."])
def test_a_sentence_about_the_account_names_no_plan(text):
    assert not [c for c in extract_one(text) if (c.subject or "").startswith("plan")]


@pytest.mark.parametrize(("text", "content"), [
    ("I don't want any marketing emails.", "The user does not want marketing emails"),
    ("I don't want sales calls, thanks.", "The user does not want sales calls"),
    ("I'd like to opt out of newsletters.", "The user does not want newsletters"),
])
def test_what_the_customer_does_not_want_to_receive(text, content):
    assert content in [c.content for c in extract_one(text)]


@pytest.mark.parametrize("text", ["I don't want the emails to go to my old address.",
                                  "I don't want any more letters about the overdue bill.", "I don't want to post it back."])
def test_not_wanting_one_thing_done_is_no_opt_out(text):
    assert not [c for c in extract_one(text) if c.metadata.get("rule") == "preference.opt_out"]


@pytest.mark.parametrize("text", ["I cancelled my gym membership last year but rejoined in January.",
                                  "We stopped using Xero in 2022 but went back to it this spring."])
def test_something_stopped_and_taken_up_again_is_not_retracted(text):
    assert not [c for c in extract_one(text) if c.action == "delete"]


def test_something_stopped_while_another_is_taken_up_is_still_retracted():
    assert [c.metadata["value"] for c in extract_one("We stopped using Xero and went back to Sage.")
            if c.action == "delete"] == ["Xero"]


@pytest.mark.parametrize(("text", "gone"), [
    ("My old address was 8 Grove Lane; I'm at 31 Mill Road now.", "8 Grove Lane"),
    ("Our previous supplier was Brightgas.", "Brightgas"),
])
def test_what_was_is_no_statement(text, gone):
    assert not [c.content for c in extract_one(text) if gone in c.content]


@pytest.mark.parametrize(("text", "code"), [("My postcode is BS1 4DX.", "BS1 4DX"), ("our zip code is 97209", "97209")])
def test_a_postcode_given_alone_is_kept_as_part_of_the_address(text, code):
    assert [(c.subject, c.metadata["value"]) for c in extract_one(text)] == [("address:postcode", code)]


def test_forgetting_the_address_takes_the_postcode_too(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("My postcode is LS6 2QT.")
    chat.say("Please forget my address.", session="chat-2")

    assert not active("LS6 2QT") and with_status("LS6 2QT", "deleted")


def test_an_address_to_use_for_invoices_is_the_billing_address():
    assert [(c.subject, c.metadata["value"]) for c in extract_one(
        "Please use my business address for invoices: Unit 7, Kiln Park, Ashford TN23 6LY.")] == [
        ("address:billing", "Unit 7, Kiln Park, Ashford TN23 6LY")]


def conversation_candidates(*turns):
    return RulesExtractor().extract(messages=[ConversationMessage(seq=index + 1, role=role, text=text)
                                              for index, (role, text) in enumerate(turns)], existing=[])


@pytest.mark.parametrize(("question", "answer", "name"), [
    ("And who am I speaking with?", "Marguerite, I'm the practice manager", "Marguerite"),
    ("Could I take your name please?", "it's Tomasz, the account is under my wife's name though", "Tomasz"),
])
def test_a_given_name_alone_answers_the_name_question(question, answer, name):
    candidates = conversation_candidates(("assistant", question), ("user", answer))

    assert [c.metadata["value"] for c in candidates if c.subject == "name"] == [name]


def test_an_address_answer_is_kept_whole_and_of_the_kind_asked():
    candidates = conversation_candidates(("assistant", "What's the delivery address?"),
                                         ("user", "same as billing, 22 Alder Close, Exeter EX4 6PQ"))

    assert [(c.subject, c.metadata["value"]) for c in candidates] == [("address:shipping", "22 Alder Close, Exeter EX4 6PQ")]


@pytest.mark.parametrize("turns", [
    [("user", "My number is 0113 496 0211, that's the office though.")],
    [("user", "0113 496 0211 (office)")],
    [("assistant", "Can I take a contact number?"), ("user", "0113 496 0211 (office)")],
    [("assistant", "Can I take a contact number?"), ("user", "sure, 0113 496 0211, that's the office, mobile is 07700 900 664")],
])
def test_a_number_said_to_be_the_office_one_is_the_work_number(turns):
    subjects = {c.metadata["value"]: c.subject for c in conversation_candidates(*turns) if c.subject.startswith("phone")}

    assert subjects["0113 496 0211"] == "phone:work"
    assert subjects.get("07700 900 664", "phone") == "phone"


@pytest.mark.parametrize("text", ["Insurer is Helvetia, claim no. 5521 3094 118.", "My claim number is 5521 3094 118."])
def test_a_number_in_digit_groups_is_kept_whole(text):
    assert [c.metadata["identifier"] for c in extract_one(text) if c.subject.startswith("identifier:")] == ["5521 3094 118"]


@pytest.mark.parametrize(("text", "content"), [("Our EIN is 61-2288104.", "The user's EIN is 61-2288104"),
                                               ("UTR 4410298377", "The user's UTR is 4410298377")])
def test_a_tax_number_named_by_its_acronym(text, content):
    assert content in [c.content for c in extract_one(text)]


def test_a_company_with_its_legal_form_is_no_persons_name():
    candidates = extract_one("yep, Moreno Print Works LLC, EIN 61-2288104, single member.")

    assert not [c for c in candidates if c.subject == "name"]


@pytest.mark.parametrize(("text", "content"), [
    ("pls call me on 07700 900 871", "The user's phone number is 07700 900 871"),
    ("And I'm coeliac myself, so gluten-free breakfast please.", "The user is coeliac"),
    ("I'm vegan too.", "The user is vegan"),
])
def test_texting_shorthand_and_trailing_also_words(text, content):
    assert content in [c.content for c in extract_one(text)]


def test_what_the_agent_notes_against_a_booking_reference_is_kept():
    contents = [c.content for c in extract_one("Noted on TSJ-502977: Min-seo has a sesame allergy.", role="assistant")]

    assert any("Min-seo has a sesame allergy" in content for content in contents), contents


def test_a_correction_naming_part_of_an_email_replaces_the_whole_address(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("Email k.brandt@mailbox.example please.")
    chat.say("Also correction on the email, it's kw.brandt@mailbox.example, not k.brandt. The other one bounces.",
             session="chat-2")

    assert active("kw.brandt@mailbox.example")
    assert not active("k.brandt@mailbox.example")
    assert not [content for content in active("@mailbox.example@") if content]


def test_a_form_style_address_line_is_the_users_address():
    candidates = extract_one("Name's Ilse Maas, 07700 900 640. Address is flat 3R, 21 Leven Street, EH3 9LH.")

    assert [(c.subject, c.metadata["value"]) for c in candidates if c.subject.startswith("address")] == [
        ("address:home", "flat 3R, 21 Leven Street, EH3 9LH")]


def test_a_mobile_that_changed_replaces_the_old_one(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("Name's Ilse Maas, 07700 900 640.")
    chat.say("ground floor, easy. oh and my mobile changed too, new one's 07700 900 711", session="chat-2")

    assert active("07700 900 711") and not active("07700 900 640")


def test_an_email_known_by_its_provider_is_forgotten(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("Email is k.brandt@posteo.example, thanks.")
    chat.say("pls delete the posteo address entirely, I'm closing that account. use k.brandt@uni.example from now on",
             session="chat-2")

    assert not active("posteo") and active("k.brandt@uni.example")


def test_the_agent_removing_one_detail_and_switching_to_another_keeps_the_new_one():
    candidates = conversation_candidates(
        ("user", "pls delete the posteo address, use k.brandt@uni.example from now on"),
        ("assistant", "I've deleted the posteo address and switched you to k.brandt@uni.example, and noted it."))

    assert [c.metadata.get("value") for c in candidates if c.subject == "email" and c.action == "add"] == ["k.brandt@uni.example"]
    assert not [c for c in candidates if c.action == "delete" and "uni.example" in c.content]


def test_my_passport_is_a_passport_number():
    assert [c.content for c in extract_one("Also for check-in you'll want ID, my passport is 21XK55310.")] == [
        "The user's passport number is 21XK55310"]


def test_a_tool_moved_everything_over_to_supersedes_the_old_one():
    candidates = extract_one("we've stopped using Sage and moved everything over to Xero from 1 Feb")

    assert [(c.subject, c.metadata.get("replaces")) for c in candidates] == [("tool:xero", "Sage")]


@pytest.mark.parametrize(("said", "level"), [("I can see you're a Bronze member.", "Bronze"),
                                             ("Your Platinum status is active and applies to this stay.", "Platinum")])
def test_the_membership_level_the_agent_reads_from_the_record(said, level):
    assert [c.metadata["value"] for c in extract_one(said, role="assistant") if c.subject == "membership"] == [level]


@pytest.mark.parametrize(("said", "content"), [
    ("The wheels have arrived, and your fitting slot is Saturday 4 April, 9am to 12pm.",
     "Booked for the user: fitting slot on Saturday 4 April (2026-04-04), 9am to 12pm"),
    ("The parts arrived yesterday and the rebuild is scheduled for Thursday 14 May.",
     "Booked for the user: rebuild for Thursday 14 May (2026-05-14)"),
    ("Thursday 24 September is booked, 8am to 12pm, and we'll call first.",
     "Booked for the user: Thursday 24 September (2026-09-24), 8am to 12pm"),
    ("The contract has been sent, and a 20% deposit is due by 30 April.",
     "The user's 20% deposit is due by 30 April (2026-04-30)"),
    ("I've set a reminder to contact you on April 1.", "The assistant set a reminder to contact the user on April 1 (2026-04-01)"),
])
def test_what_the_agent_arranged_for_a_date_to_come_is_kept(said, content):
    assert content in [c.content for c in extract_one(said, role="assistant", created_at=SENT_AT)]


def test_a_date_with_its_year_is_also_given_in_iso_form():
    candidates = extract_one("Good news: the registration has been approved, effective 1 June 2026.", role="assistant",
                             created_at=SENT_AT)

    assert any("1 June 2026 (2026-06-01)" in c.content for c in candidates), [c.content for c in candidates]


@pytest.mark.parametrize(("text", "gone"), [
    ("My brother thinks I should switch to Lumen Energy, but I'm staying with you.", "Lumen"),
    ("The portal says I'm on the Family plan but I'm on Solo.", "Family"),
    ("Before I moved here I was with Northgas for 10 years.", "Northgas"),
    ("Our old office on Tanner Street closed last year; we're fully remote now.", "Tanner Street"),
    ("We were with Halden Bank until March, then moved to Corvo.", "Halden"),
])
def test_a_suggestion_a_disputed_record_or_a_past_state_is_no_statement(text, gone):
    assert not [c.content for c in extract_one(text) if gone in c.content]


def test_the_users_email_before_someone_elses_in_one_sentence_is_kept():
    candidates = extract_one("Email me at sam@work.example, or my wife at lee@home.example.")

    assert [c.metadata["value"] for c in candidates if c.subject == "email"] == ["sam@work.example"]


@pytest.mark.parametrize(("text", "subject", "value"), [
    ("I left Halden Bank in May and now work for Corvo.", "employer", "Corvo"),
    ("I'm in Cardiff now, moved last month.", "location", "Cardiff"),
    ("I've got a new loyalty card, LX-2222.", "identifier:loyalty", "LX-2222"),
])
def test_a_new_value_said_in_passing_is_keyed_as_the_old_one_was(text, subject, value):
    candidates = extract_one(text)

    assert [(c.metadata.get("value") or c.metadata.get("identifier")) for c in candidates if c.subject == subject] == [value]


def test_a_plan_named_alone_replaces_the_plan_on_file():
    on_file = [ExistingMemory(id="m1", content="The user is on the Starter plan", memory_type="fact", subject="plan")]
    candidates = RulesExtractor().extract(messages=[ConversationMessage(seq=1, role="user", text="We're on Growth now.")],
                                          existing=on_file)

    assert [(c.subject, c.metadata.get("value")) for c in candidates] == [("plan", "Growth")]


def test_without_a_plan_on_file_being_on_something_is_no_plan():
    assert not [c for c in extract_one("We're on Windows now.") if c.subject == "plan"]


@pytest.mark.parametrize(("text", "subject", "value"), [
    ("Email only, please.", "preference:contact_channel", None),
    ("Spanish is easier.", "preference:language", "Spanish"),
    ("Please don't send paper statements any more, I want them online.", "preference:send paper statements", None),
])
def test_short_preferences_and_their_keys(text, subject, value):
    candidates = [c for c in extract_one(text) if c.subject == subject]

    assert candidates and (value is None or candidates[0].metadata["value"] == value)


@pytest.mark.parametrize(("text", "value"), [("The tracking number is 1Z 999 AA1 01 2345 6784.", "1Z 999 AA1 01 2345 6784"),
                                             ("The serial on the back says SN 4471-2290-118.", "4471-2290-118")])
def test_an_identifier_of_mixed_groups_is_kept_whole(text, value):
    assert [c.metadata["identifier"] for c in extract_one(text) if c.subject.startswith("identifier:")] == [value]


@pytest.mark.parametrize(("text", "name"), [("It's Anna again.", "Anna"), ("Hi Tom, it's Anna Berg again, about the boiler.", "Anna Berg"),
                                            ("Hello, Anna Berg here again.", "Anna Berg"),
                                            ("Kind regards,\nLiang Wei\nOperations Manager, Tessera Ltd", "Liang Wei")])
def test_a_returning_customers_name_and_a_signature_on_its_own_lines(text, name):
    assert [c.metadata["value"] for c in extract_one(text) if c.subject == "name"] == [name]


@pytest.mark.parametrize("text", ["Regards, Accounts Payable", "Best wishes, The Harrow Team"])
def test_a_department_signing_off_is_no_name(text):
    assert not [c for c in extract_one(text) if c.subject == "name"]


def test_a_condition_said_either_way_has_one_key_and_forgetting_what_was_said_about_it_reaches_it(tenant_a):
    assert {c.subject for text in ("I'm diabetic.", "I have diabetes.") for c in extract_one(text)} == {"health:diabetes"}
    chat = Conversation(tenant_a.client("write"))
    chat.say("I'm diabetic, so no sugar in anything please.")
    chat.say("Please forget what I said about my diabetes.", session="chat-2")

    assert not active("diabetic")


def test_regret_at_having_given_something_is_no_diet():
    assert not [c for c in extract_one("Delete my date of birth, I shouldn't have given it.") if c.subject.startswith("diet")]


def told_then_asked(tenant, told: tuple[str, ...], asked: str) -> None:
    """`told` in a first session, then the request `asked` in a second one."""
    chat = Conversation(tenant.client("write"))
    chat.say(*told)
    chat.say(asked, session="chat-2")


@pytest.mark.parametrize("request_text", [
    "We split up, so please get rid of his number.",
    "please delete his number",
    "Could you bin his number? We're not together any more.",
])
def test_a_later_request_to_forget_his_number_reaches_the_one_contact_it_can_mean(tenant_a, request_text):
    told_then_asked(tenant_a, ("My partner's number is 07700 900 331 in case you can't reach me.",
                               "Also my email is kim@example.com."),
                    request_text)

    assert not active("07700 900 331") and with_status("07700 900 331", "deleted")
    assert active("kim@example.com")


def test_his_number_means_the_son_and_her_number_the_wife_when_both_are_known(tenant_a):
    told_then_asked(tenant_a, ("My wife's number is 07700 900 111.",
                               "My son's number is 07700 900 222."),
                    "He has his own account now, please get rid of his number.")

    assert not active("07700 900 222") and active("07700 900 111")


def test_a_pronoun_that_could_mean_two_known_contacts_erases_neither(tenant_a):
    told_then_asked(tenant_a, ("My wife's number is 07700 900 111.",
                               "My daughter's number is 07700 900 333."),
                    "Please delete her number.")

    assert active("07700 900 111") and active("07700 900 333")


def test_forgetting_the_users_assistant_leaves_the_memories_that_mention_the_agent(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("My PA, Joanne Tan, handles the paperwork: joanne.tan@example.com.",
             "Please don't call me, WhatsApp is fine on +65 8234 7719.")
    assert active("WhatsApp")  # said as "The user wants the assistant not to call them, ..."
    chat.say("Please delete my assistant's details.", session="chat-2")

    assert not active("joanne.tan@example.com")
    assert active("WhatsApp")


@pytest.mark.parametrize("request_text", [
    "Please remove Tomasz.",
    "My brother Tomasz moved abroad. Please remove him.",
])
def test_one_of_the_users_people_is_forgotten_by_first_name_or_by_him(tenant_a, request_text):
    told_then_asked(tenant_a, ("My brother Tomasz is my emergency contact, his number is 07700 900 990.",
                               "My email is ola@example.com."),
                    request_text)

    assert not active("07700 900 990") and active("ola@example.com")


def test_a_first_name_nobody_has_is_not_read_as_a_contact_to_forget():
    assert not [c for c in extract_one("Please remove Friday.") if c.action == "delete"]


def test_the_note_about_my_surgery_goes_and_no_detail_that_happens_to_share_its_word(tenant_a):
    told_then_asked(tenant_a, ("I had knee surgery in March so I can't do stairs.",
                               "My surgery's number is 01632 960 777.",
                               "My email is kim@example.com."),
                    "Please remove the note about my surgery.")

    assert not active("knee surgery") and with_status("knee surgery", "deleted")
    assert active("kim@example.com")


@pytest.mark.parametrize("request_text", ["That email is dead now, please remove it.",
                                          "The email you have for me bounces, please delete it."])
def test_it_in_a_forget_request_is_the_thing_named_just_before_with_that_or_the(tenant_a, request_text):
    told_then_asked(tenant_a, ("My email is ana@example.com and my mobile is 07700 900 612.",),
                    request_text)

    assert not active("ana@example.com") and active("07700 900 612")


def test_remove_her_never_reaches_a_known_contact_the_message_does_not_name(tenant_a):
    told_then_asked(tenant_a, ("My mother Ada lives in Leeds, her number is 07700 900 214.",),
                    "Our cleaner Maria has left us. Please remove her.")

    assert active("07700 900 214")


@pytest.mark.parametrize("handover", [
    "I'm on leave from 20 April, so please deal with my deputy Joanne Pike from then: joanne.pike@example.com, "
    "0118 496 0590.",
    "While I'm away please deal with my stand-in Joanne Pike, 0118 496 0590.",
])
def test_the_number_of_someone_the_user_hands_over_to_is_never_taken_for_theirs(tenant_a, handover):
    chat = Conversation(tenant_a.client("write"))
    chat.say("My number is 0118 496 0572.")

    chat.say(handover, session="chat-2")

    assert active("0118 496 0572") and not with_status("0118 496 0572", "superseded")
    assert all("Joanne Pike" in content for content in active("0118 496 0590"))  # never "the user's (other) number"


@pytest.mark.parametrize(("text", "content"), [
    ("Our IT lead Priyanka Shah will handle the reconnection, she's on 07723 604 118 for anything technical.",
     "The user's IT lead is Priyanka Shah (07723 604 118)"),
    ("on thursdays our childminder rosa delgado picks finn up, her number is 07388 512 960",
     "The user's childminder is Rosa Delgado (07388 512 960)"),
    ("My flatmate Ross will be in if I'm not, he's on 07700 900 219.", "The user's flatmate is Ross (07700 900 219)"),
])
def test_a_contacts_number_said_after_what_they_do_is_theirs(text, content):
    assert content in [candidate.content for candidate in extract_one(text)]


def test_the_users_own_number_after_a_contacts_in_one_message_is_the_users():
    contents = [candidate.content for candidate in extract_one(
        "Our IT lead Priyanka Shah will handle the reconnection, she's on 07723 604 118. For everything else "
        "contact me at lars@example.com or on 0118 496 0572.")]

    assert "The user's phone number is 0118 496 0572" in contents
    assert not any(content.startswith("The user's phone") and "07723" in content for content in contents)


def test_a_count_corrected_in_a_later_session_replaces_the_note_that_held_it(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("We would like to hire your event hall for our summer party on Friday 22 May, for around 80 people.")
    [note] = active("80 people")

    chat.say("Good news, more staff are joining, so the number is now 120 people, not 80.", session="chat-2")

    assert not active("80 people")
    [corrected] = active("120 people")
    assert corrected == note.replace("80 people", "120 people")
    assert with_status("80 people", "superseded") == [note]


@pytest.mark.parametrize(("text", "content", "value"), [
    ("We're expecting about 110 guests.", "The user is expecting about 110 guests", "110"),
    ("We're cutting from 12 licences down to 9.", "The user is cutting from 12 licences down to 9", "9"),
])
def test_a_count_expected_or_changed_is_a_count_a_later_one_replaces(text, content, value):
    [candidate] = extract_one(text)

    assert (candidate.content, candidate.metadata["value"]) == (content, value)
    assert candidate.subject.startswith("quantity:")


@pytest.mark.parametrize("text", ["We're moving from 3 days to 5 days a week.", "Can we go from 10 seats to 6?"])
def test_a_change_of_days_or_a_question_is_no_count(text):
    assert not [candidate for candidate in extract_one(text) if (candidate.subject or "").startswith("quantity:")]


@pytest.mark.parametrize(("text", "content"), [
    ("I've reserved desk G14 on the ground floor for you.", "The assistant reserved desk G14 on the ground floor for the user"),
    ("I've set you up for Wednesdays at 5:30pm with Dr Thorsen, first session next Wednesday.",
     "The assistant set the user up for Wednesdays at 5:30pm with Dr Thorsen"),
])
def test_what_the_agent_reserved_or_set_up_for_the_user_is_kept(text, content):
    assert any(candidate.content.startswith(content) for candidate in extract_one(text, role="assistant",
                                                                                  created_at=SENT_AT))


@pytest.mark.parametrize("text", ["I've put the kettle on.", "I've signed you up for the newsletter."])
def test_small_talk_about_what_the_agent_did_is_no_outcome(text):
    assert extract_one(text, role="assistant") == []


@pytest.mark.parametrize(("text", "content"), [
    ("I've set that up at £245.83 per month, agreement FN-50718.", "The user has agreement FN-50718"),
    ("Your application number is APP-88123.", "The user has application APP-88123"),
    ("I've opened engagement ALV-2025-118 for your joint return.", "The user has engagement ALV-2025-118"),
])
def test_agreements_applications_and_engagements_are_identifiers(text, content):
    assert content in [candidate.content for candidate in extract_one(text, role="assistant")]


def test_a_file_named_in_passing_is_no_identifier():
    assert extract_one("The file is 2024.pdf") == []


def test_a_channel_preference_after_the_number_it_goes_with_is_read():
    contents = [candidate.content for candidate in extract_one("07512 664 038, whatsapp is better than calls")]

    assert "The user prefers to be contacted by WhatsApp, not phone" in contents
    assert "The user's phone number is 07512 664 038" in contents


@pytest.mark.parametrize(("text", "accepted"), [
    ("my number is 07395 260 481, whatsapp is fine also.", "WhatsApp"),
    ("WhatsApp works too.", "WhatsApp"),
    ("text is also fine", "text message"),
    ("email is fine thanks", None),  # the answer to a question of the moment
])
def test_a_channel_the_user_also_accepts_replaces_no_preferred_one(text, accepted):
    found = [candidate for candidate in extract_one(text) if candidate.content.startswith("The user can also be")]

    assert [(candidate.metadata["value"], candidate.subject) for candidate in found] == (
        [(accepted, None)] if accepted else [])


@pytest.mark.parametrize(("text", "content"), [
    ("phone is an iPhone 15 Pro", "The user's phone is an iPhone 15 Pro"),
    ("And I'd like an eSIM, phone is an iPhone 15 Pro, IMEI 356938035643809", "The user's phone is an iPhone 15 Pro"),
])
def test_a_device_named_beside_a_wish_and_an_identifier_is_read(text, content):
    assert content in [candidate.content for candidate in extract_one(text)]


def test_a_part_of_a_conditional_sentence_stays_unsaid():
    contents = [candidate.content for candidate in extract_one(
        "If I move, my address would be 4 Elm Street, Leeds, policy 12345678")]

    assert not any("Elm Street" in content for content in contents)


@pytest.mark.parametrize(("text", "content"), [
    ("I'm getting married on 5 September and I'd like it all finished before then.",
     "The user is getting married on 5 September (2026-09-05)"),
    ("I'm having knee surgery on 8 May and won't be able to train for a while.",
     "The user is having knee surgery on 8 May (2026-05-08)"),
])
def test_a_life_event_to_come_is_a_plan(text, content):
    assert content in [candidate.content for candidate in extract_one(text, created_at=SENT_AT)]


@pytest.mark.parametrize("text", ["I'm getting an error on Monday.", "I'm having a problem with my order since Monday."])
def test_what_goes_wrong_now_is_no_plan(text):
    assert extract_one(text, created_at=SENT_AT) == []


def test_a_provider_named_without_my_may_be_someone_elses():
    contents = [candidate.subject for candidate in extract_one("I'm calling about my mother's account. Bank is Lloyds.")]

    assert "provider:bank" not in contents


@pytest.mark.parametrize(("text", "said_on", "expected"), [
    # what was done is for a date to come: the present perfect does not put it in the past
    ("I've placed a travel notice on the card for Japan from 14 to 28 March.", (2026, 3, 10), ((2026, 3, 14), (2026, 3, 28))),
    ("I've moved the appointment to 20 March.", (2026, 3, 10), ((2026, 3, 20), None)),
    ("We went away from 1 to 5 March.", (2026, 3, 10), ((2026, 3, 1), (2026, 3, 5))),
    # a range under way is this year's, not next year's
    ("The office is closed from 14 to 28 March.", (2026, 3, 20), ((2026, 3, 14), (2026, 3, 28))),
    # a day of the month alone: this month's, or the next once it has gone by
    ("I'm back on the 28th.", (2026, 3, 10), ((2026, 3, 28), None)),
    ("We'll pay on the 5th.", (2026, 4, 30), ((2026, 5, 5), None)),
])
def test_dates_resolve_against_the_message_time(text, said_on, expected):
    [mention] = find_dates(text, date(*said_on))

    assert (mention.day, mention.end_day) == (date(*expected[0]), date(*expected[1]) if expected[1] else None)


@pytest.mark.parametrize("text", ["The payment goes out on the 1st of each month.", "This is the 3rd time I ask."])
def test_a_day_of_every_month_or_an_ordinal_is_no_date(text):
    assert find_dates(text, date(2026, 3, 10)) == []


@pytest.mark.parametrize(("text", "content"), [
    ("Calls only between 12 and 2, I'm in the lab the rest of the day.", "The user prefers to be called between 12 and 2"),
    ("texts only after 6pm please", "The user prefers to be texted after 6pm"),
])
def test_when_calls_or_texts_may_come_is_a_contact_time(text, content):
    assert content in [candidate.content for candidate in extract_one(text)]


@pytest.mark.parametrize(("text", "content"), [
    ("Please send all invoices to the finance team.", "The user wants the assistant to send all invoices to the finance team"),
    ("Please address all letters to my wife.", "The user wants the assistant to address all letters to their wife"),
])
def test_a_request_for_every_one_of_a_kind_of_paperwork_is_a_standing_instruction(text, content):
    assert content in [candidate.content for candidate in extract_one(text)]


@pytest.mark.parametrize("text", [
    "please check all my orders", "Please send all the documents by Friday.", "please send everything today",
    "Please email all the photos of the damage to me.", "Please add all three items to my order.",
    "Please put all of the boxes in the garage.", "Please email every statement from 2023 to me.",
])
def test_a_request_for_now_is_no_standing_instruction(text):
    assert extract_one(text, created_at=SENT_AT) == []


def test_that_thing_named_before_delete_it_is_cut_out_of_the_note_that_holds_it(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("Flat 22, 9 Treadwell Street, Bristol BS2 0LP. there's a gate, the code is 8093, boxes can go by the "
             "door of 22")
    assert active("8093")

    chat.say("oh and the building took the gate out, so you don't need that code anymore, please delete it",
             session="chat-2")

    assert not active("8093")
    assert active("boxes can go by the door of 22") and active("9 Treadwell Street")


def test_a_detail_named_by_whom_it_was_for_is_forgotten(tenant_a):
    told_then_asked(tenant_a, ("My billing address is 3rd floor, 11 Canalside Walk, Cambridge CB4 0WS.",),
                    "And you can forget the Vireo billing address, none of that applies to me anymore.")

    assert not active("Canalside Walk")


def test_the_agent_deleting_an_id_number_leaves_the_phone_number(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("My number is 082 555 3147.")

    chat.say("I gave your courier my ID number, 8805120345087. I'm not comfortable with you keeping that, please "
             "delete it.", session="chat-2")
    chat.say("I've deleted your ID number; we only need your name at handover.", role="assistant")

    assert active("082 555 3147")


def test_a_contact_named_in_answer_to_whom_to_call_keeps_their_number(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("My own number is 01723 555 480, that's the landline.")
    chat.say("Who should we contact if we can't reach you?", role="assistant", session="chat-2")

    chat.say("My son Bilal, 07700 900 152.")

    assert not [content for content in active("07700 900 152") if "Bilal" not in content]
    assert active("01723 555 480") and not with_status("01723 555 480", "superseded")


def test_my_own_number_is_a_phone_number_not_an_identifier():
    [candidate] = extract_one("My own number is 01723 555 480, that's the landline.")

    assert candidate.subject == "phone:home"


def test_the_name_given_when_asked_for_someone_elses_never_replaces_the_users(tenant_a):
    chat = Conversation(tenant_a.client("write"))
    chat.say("hello. my name is tomasz kowalczyk, i call for my father.")
    chat.say("Could you give me your father's name and the delivery address?", role="assistant")

    chat.say("Zbigniew Kowalczyk. address 14 Harrow Court, Wembley HA9 7QL.")

    assert active("The user's name is Tomasz Kowalczyk")
    assert not active("The user's name is Zbigniew")


def test_a_name_given_when_asked_for_the_users_is_theirs():
    messages = [ConversationMessage(seq=1, role="assistant", text="Could I have your name and the delivery address?"),
                ConversationMessage(seq=2, role="user", text="Zbigniew Kowalczyk. address 14 Harrow Court, Wembley.")]

    contents = [candidate.content for candidate in RulesExtractor().extract(messages=messages, existing=[])]

    assert "The user's name is Zbigniew Kowalczyk" in contents


@pytest.mark.parametrize("request_text", [
    "Please forget my Nan's phone number.", "Can you delete my Grandad's mobile number?",
    "Please remove the Sarah Jones phone number.",
])
def test_forgetting_someone_elses_number_leaves_the_users(tenant_a, request_text):
    told_then_asked(tenant_a, ("My number is 07700 900 123.",), request_text)

    assert active("07700 900 123")


@pytest.mark.parametrize("request_text", [
    "I don't want that booking anymore, please delete it.", "I sent you a photo of my passport this week, please "
    "delete it.",
])
def test_a_pointed_thing_that_is_no_code_cuts_nothing_out_of_the_notes(tenant_a, request_text):
    told_then_asked(tenant_a, ("Remember that the cleaner comes every week and we booked the big room for May.",),
                    request_text)

    assert active("the cleaner comes every week")


@pytest.mark.parametrize("text", [
    "My mum Jean will let the engineer in on Tuesday. I won't be there; 07700 900 444 is the number to call.",
    "My stand-in Joanne Pike will cover while I'm away, 0118 496 0590.",
    "Our locum Dr Sam Reid will cover, 0118 496 0591.",
])
def test_a_number_after_someone_else_is_named_is_not_the_users(text):
    assert not [candidate for candidate in extract_one(text) if (candidate.subject or "").startswith("phone")]


def test_a_name_asked_for_with_a_curly_apostrophe_is_someone_elses():
    messages = [ConversationMessage(seq=1, role="assistant", text="Could you give me your father\u2019s name?"),
                ConversationMessage(seq=2, role="user", text="Zbigniew Kowalczyk.")]

    assert not [candidate for candidate in RulesExtractor().extract(messages=messages, existing=[])
                if candidate.subject == "name"]


def test_a_count_correction_reaches_only_a_note_of_that_count():
    note = ExistingMemory(id="m1", content="The user has 2 dogs", memory_type="fact")

    candidates = RulesExtractor().extract(
        messages=[ConversationMessage(seq=1, role="user", text="Sorry, it's 3 rooms, not 2.")], existing=[note])

    assert not [candidate for candidate in candidates if candidate.target_memory_id == "m1"]


@pytest.mark.parametrize("text", ["We're expecting 2 parcels today.", "We're expecting 400 pounds back.",
                                  "We're going from 2 cars to 3 cars next year."])
def test_a_delivery_a_sum_or_a_change_to_come_is_no_count(text):
    assert not [candidate for candidate in extract_one(text, created_at=SENT_AT)
                if (candidate.subject or "").startswith("quantity:")]


@pytest.mark.parametrize(("text", "expected"), [
    ("I've had no signal from 2 March.", date(2026, 3, 2)),
    ("I've paid rent from 1 January to 31 January.", date(2026, 1, 1)),
    # a call, a phone call or a letter is what the customer did to arrange something: its date is the thing's
    ("I called to book the engineer for 20 March.", date(2026, 3, 20)),
    ("I wrote to confirm the visit on 18 March.", date(2026, 3, 18)),
])
def test_a_date_keeps_its_year_by_what_it_is_the_date_of(text, expected):
    [mention] = find_dates(text, date(2026, 3, 14))

    assert mention.day == expected


@pytest.mark.parametrize("text", ["I'm on the 3rd floor and there's no lift.", "The matter 2024 tax return is done."])
def test_a_floor_or_a_year_is_no_date_or_identifier(text):
    assert not [candidate for candidate in extract_one(text, created_at=SENT_AT)
                if candidate.metadata.get("date") or (candidate.subject or "").startswith("identifier:")]


@pytest.mark.parametrize(("request_text", "subject"), [
    ("Please forget my BT landline.", "phone:home"), ("Please delete my Vodafone mobile.", "phone"),
])
def test_the_users_own_detail_named_by_its_provider_is_forgotten(request_text, subject):
    assert [candidate.subject for candidate in extract_one(request_text) if candidate.action == "delete"] == [subject]


@pytest.mark.parametrize("request_text", ["Please delete the Sarah Jones delivery address.",
                                          "Forget the Sarah Jones work email."])
def test_a_persons_detail_named_by_their_name_is_not_the_users(request_text):
    assert extract_one(request_text) == []


@pytest.mark.parametrize("text", [
    "My wife Anna is the contact. My bad, 07700 900 124 is hers.",
    "My stand-in Joanne Pike covers from Monday. I won't be around; 0118 496 0000 is the line to use.",
    "My GP Dr Patel, 0118 496 0001.",
])
def test_a_number_after_someone_of_the_users_is_named_stays_theirs(text):
    assert not [candidate for candidate in extract_one(text) if (candidate.subject or "").startswith("phone")]


@pytest.mark.parametrize(("subject", "content"), [("quantity:children", "The user has 2 children"),
                                                  ("address:home", "The user's address is Flat 2, 10 High St")])
def test_a_count_correction_never_rewrites_another_kind_of_number(subject, content):
    memory = ExistingMemory(id="m1", content=content, memory_type="fact", subject=subject)

    candidates = RulesExtractor().extract(
        messages=[ConversationMessage(seq=1, role="user", text="Sorry, it's 3 rooms, not 2.")], existing=[memory])

    assert not [candidate for candidate in candidates if candidate.target_memory_id == "m1"]


@pytest.mark.parametrize("text", ["Please send all invoices for order 12345 to my wife.",
                                  "Please email all receipts for the March trip to me."])
def test_paperwork_for_one_order_or_trip_is_no_standing_instruction(text):
    assert not [candidate for candidate in extract_one(text) if candidate.metadata.get("rule") == "preference.instruction"]


def test_a_door_entry_code_is_cut_out_of_the_note_that_holds_it(tenant_a):
    told_then_asked(tenant_a, ("Remember that deliveries go to the side door, the door entry code is 4521, and the porter "
                               "signs.",),
                    "You don't need that door entry code anymore, please delete it.")

    assert not active("4521") and active("the porter signs")


@pytest.mark.parametrize(("text", "may"), [
    ("the number is now 120 people, not 80", True), ("sorry, I meant Thursday", True), ("it should be a@b.com", True),
    ("the parcel has not shipped yet", False), ("no thanks, that's all", False),
])
def test_only_a_batch_that_may_correct_something_reads_the_free_form_memories(text, may):
    assert may_correct(text) is may
