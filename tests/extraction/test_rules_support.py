"""RulesExtractor on support conversations: typed identifiers, the user's own phones and emails, contact channel and
time, addresses, the user's contacts, agent actions, and resolved dates in content.

Pure Python: no database, no network. Messages are dated Saturday 2026-03-14 unless a test says otherwise.
"""

from datetime import UTC, datetime

import pytest

from apps.extraction.extractors.base import Candidate, ConversationMessage, ExistingMemory
from apps.extraction.extractors.rules import RulesExtractor
from apps.extraction.extractors.rules.dates import find_dates, leading_date, with_resolved_date
from apps.extraction.extractors.rules.identifiers import MAX_DIGIT_GROUPS
from apps.extraction.extractors.rules.person import Person, rewrite_first_person, rewrite_second_person
from apps.extraction.extractors.rules.statements import chosen_after_turned_down
from apps.extraction.extractors.rules.subjects import CONTACT_CHANNEL, CONTACT_TIME
from apps.extraction.extractors.rules.text import split_clauses
from apps.extraction.redaction import detail_values, without_employer, without_value

SENT_AT = datetime(2026, 3, 14, 10, 0, tzinfo=UTC)
extractor = RulesExtractor()


def extract(*texts: str, role: str = "user", created_at=SENT_AT, user_name=None) -> list[Candidate]:
    messages = [ConversationMessage(seq=index + 1, role=role, text=text, created_at=created_at)
                for index, text in enumerate(texts)]
    return extractor.extract(messages=messages, existing=[], user_name=user_name)


def subjects(candidates: list[Candidate]) -> list[str | None]:
    return [candidate.subject for candidate in candidates]


def one(candidates: list[Candidate], subject: str) -> Candidate:
    matching = [candidate for candidate in candidates if candidate.subject == subject]
    assert len(matching) == 1, [(c.subject, c.content) for c in candidates]
    return matching[0]


def phones(candidates: list[Candidate]) -> list[Candidate]:
    return [candidate for candidate in candidates if (candidate.subject or "").split(":")[0] == "phone"]


def own_emails(candidates: list[Candidate]) -> list[Candidate]:
    return [candidate for candidate in candidates if (candidate.subject or "").split(":")[0] == "email"
            or candidate.metadata["rule"].startswith("contact.email")]


# --- 1. Typed identifiers; a number is a phone number only when it is said to be one ----------------------

def test_a_loyalty_number_is_an_identifier_and_never_a_phone_number():
    candidates = extract("My loyalty number is LX-5520-1188.")

    assert phones(candidates) == []
    loyalty = one(candidates, "identifier:loyalty")
    assert loyalty.content == "The user's loyalty number is LX-5520-1188"
    assert loyalty.metadata["identifier"] == "LX-5520-1188" and loyalty.metadata["pii"] is True


@pytest.mark.parametrize(("text", "subject", "value"), [
    ("My account number is 55201188", "identifier:account:55201188", "55201188"),
    ("My policy number is 5520 1188 77", "identifier:policy:5520 1188 77", "5520 1188 77"),
    ("my membership number: 0045 7781 22", "identifier:membership", "0045 7781 22"),
    ("My customer number is 5520118", "identifier:customer", "5520118"),
    ("Our PO number is 4500012345", "identifier:po:4500012345", "4500012345"),
    ("The tracking number is 5520118833", "identifier:tracking:5520118833", "5520118833"),
    ("My booking reference is 5520118", "identifier:booking:5520118", "5520118"),
    ("My IMEI is 356938035643809", "identifier:imei:356938035643809", "356938035643809"),
    ("My SIM number is 8944 1234 5678 9012 345", "identifier:sim:8944 1234 5678 9012 345", "8944 1234 5678 9012 345"),
    ("My sort code is 90-00-17 and the invoice number is 55201188", "identifier:invoice:55201188", "55201188"),
    ("I called about ticket 55201188 from my phone", "identifier:ticket:55201188", "55201188"),
    ("My number for the loyalty scheme is 5520 1188", "identifier:loyalty", "5520 1188"),
    ("My phone account number is 8812 3456", "identifier:account:8812 3456", "8812 3456"),
    # shaped like a phone number, but said to be a number of another kind no list names
    ("my locker number 07700 900 123", "identifier:locker", "07700 900 123"),
])
def test_a_number_named_as_another_kind_of_identifier_is_that_identifier_and_never_a_phone_number(
        text, subject, value):
    candidates = extract(text)

    assert phones(candidates) == []
    identifier = one(candidates, subject)
    assert identifier.metadata["identifier"] == value and identifier.content.endswith(value)


def test_digit_groups_are_one_identifier_only_up_to_a_bound():
    [policy] = extract("My policy number is 5520 " + " ".join(["12"] * 40))

    assert policy.metadata["identifier"] == "5520" + " 12" * MAX_DIGIT_GROUPS


@pytest.mark.parametrize(("text", "subject", "content"), [
    ("My mobile is +33 6 12 34 56 78.", "phone", "The user's mobile number is +33 6 12 34 56 78"),
    ("My phone number is +1 (555) 123-4567", "phone", "The user's phone number is +1 (555) 123-4567"),
    ("Call me on 087 123 4567", "phone", "The user's phone number is 087 123 4567"),
    ("You can reach me at +44 7700 900123", "phone", "The user's phone number is +44 7700 900123"),
    ("The best number to reach me on is 087 123 4567", "phone", "The user's phone number is 087 123 4567"),
    ("I'm on 07700 900123", "phone", "The user's phone number is 07700 900123"),
    ("My work number is 01 234 5678", "phone:work", "The user's work phone number is 01 234 5678"),
    ("My office phone: 01 234 5678", "phone:work", "The user's office phone number is 01 234 5678"),
    ("My home phone is 01 234 5678", "phone:home", "The user's home phone number is 01 234 5678"),
    ("My landline is 01 234 5678", "phone:home", "The user's landline number is 01 234 5678"),
    ("My WhatsApp is +34 600 123 456", "phone:whatsapp", "The user's WhatsApp number is +34 600 123 456"),
    ("My number changed, it's now 085 444 5566", "phone", "The user's phone number is 085 444 5566"),
    ("Can you call me back on 087 123 4567?", "phone", "The user's phone number is 087 123 4567"),
    ("Call me at home on 01 222 3333", "phone:home", "The user's home phone number is 01 222 3333"),
    ("Reach me at work on 01 444 5555 ext 12", "phone:work", "The user's work phone number is 01 444 5555"),
    ("Mobile is still 07700 900 318.", "phone", "The user's mobile number is 07700 900 318"),
    ("Ring me instead on 07825 441 360.", "phone", "The user's phone number is 07825 441 360"),
    ("You can reach us on 07554 301 226.", "phone", "The user's phone number is 07554 301 226"),
    ("The best phone number to get me on is 07723 509 118.", "phone", "The user's phone number is 07723 509 118"),
    ("The engineer should ring me when they're outside: 07412 889 350.", "phone",
     "The user's phone number is 07412 889 350"),
    ("My direct line is 01 234 5678", "phone:work", "The user's direct line is 01 234 5678"),
    ("Please call, the number is 087 123 4567", "phone", "The user's phone number is 087 123 4567"),
])
def test_a_phone_word_governing_the_number_makes_it_the_users_phone_of_that_kind(text, subject, content):
    [phone] = phones(extract(text))

    assert (phone.subject, phone.content) == (subject, content)
    assert phone.metadata["pii"] is True and "pii" in phone.tags


def test_details_sent_to_a_contact_named_in_the_sentence_are_not_the_users():
    candidates = extract("My wife Beatriz does all the paperwork, so documents should go to her: b.nogueira@outlook.pt, "
                         "mobile +44 7700 900 551.")

    assert phones(candidates) == [] and own_emails(candidates) == []


def test_work_number_and_mobile_in_one_message_are_two_subjects():
    candidates = extract("My work number is 01 234 5678 and my mobile is 087 123 4567.")

    assert one(candidates, "phone:work").content.endswith("01 234 5678")
    assert one(candidates, "phone").content.endswith("087 123 4567")


def test_a_new_mobile_has_the_mobiles_subject():
    [old] = phones(extract("My mobile is 087 123 4567"))
    [new] = phones(extract("My new mobile is 087 765 4321"))

    assert old.subject == new.subject == "phone"
    assert new.content == "The user's mobile number is 087 765 4321"


@pytest.mark.parametrize(("text", "expected"), [
    ("if the courier has to call, my cell is 416-555-0199, or home 416-555-0142",
     [("phone", "The user's mobile number is 416-555-0199"),
      ("phone:home", "The user's home phone number is 416-555-0142")]),
    ("if anything goes wrong you can call me, office 0161 496 0233 or my mobile 07700 900 610",
     [("phone:work", "The user's office phone number is 0161 496 0233"),
      ("phone", "The user's mobile number is 07700 900 610")]),
    ("Call me on 07700 900 318, or at the office on 0113 496 0721",
     [("phone", "The user's phone number is 07700 900 318"),
      ("phone:work", "The user's office phone number is 0113 496 0721")]),
])
def test_each_number_in_a_list_of_the_users_numbers_is_theirs_under_its_kind(text, expected):
    assert [(phone.subject, phone.content) for phone in phones(extract(text))] == expected


@pytest.mark.parametrize("text", [
    "If I move, my number might be 0123 456 789",
    "Maybe my mobile is 087 123 4567, I'm not sure",
    "The courier's office 0161 496 0233 never answers",
    "Order 4471 was shipped, home 2 days later",
])
def test_a_number_said_hypothetically_or_labelled_outside_a_list_of_the_users_numbers_is_not_theirs(text):
    assert phones(extract(text)) == []


@pytest.mark.parametrize("text", [
    "My wife's mobile is 087 999 8888",
    "his number is 087 999 8888",
    "Their phone number is 01 555 1234",
    "My old number was 087 000 1111",
    "Call 0800 123 4567 for help, they said",
    "Please call, the reference number is 7731 0042",
    "The product line is 2024 5567 8899",
])
def test_someone_elses_or_a_past_number_is_not_the_users_phone(text):
    assert phones(extract(text)) == []


@pytest.mark.parametrize(("text", "subject", "content"), [
    ("My work email is a.b@corp.example", "email:work", "The user's work email address is a.b@corp.example"),
    ("My personal email is me@home.example", "email", "The user's email address is me@home.example"),
    ("my email is me@home.example", "email", "The user's email address is me@home.example"),
])
def test_work_and_personal_emails_have_their_own_subjects(text, subject, content):
    [email] = own_emails(extract(text))

    assert (email.subject, email.content) == (subject, content)


def test_an_address_named_after_the_user_is_theirs_wherever_they_send_things_to_it():
    candidates = extract("Hi, I'm Charlotte Evans.", "Send the confirmation to charlotte.evans88@outlook.com please.",
                         "Please send the receipt to finance@acme.com")

    assert one(candidates, "email").content == "The user's email address is charlotte.evans88@outlook.com"
    assert [c.metadata["rule"] for c in candidates if "finance@acme.com" in c.content] == ["contact.email_mentioned"]


def test_the_kind_said_just_before_an_address_is_its_kind():
    candidates = extract("for emails you can write me at joao.almeida@gmail.com or in the work j.almeida@lusacargo.pt")

    assert one(candidates, "email").content.endswith("joao.almeida@gmail.com")
    assert one(candidates, "email:work").content.endswith("j.almeida@lusacargo.pt")


def test_work_and_personal_email_in_one_clause_are_told_apart():
    candidates = extract("My work email is a.b@corp.example, personal is me@home.example")

    assert one(candidates, "email:work").metadata["value"] == "a.b@corp.example"
    assert one(candidates, "email").metadata["value"] == "me@home.example"


@pytest.mark.parametrize(("text", "subject", "content"), [
    ("My frequent flyer number is BA 12345678", "identifier:frequent-flyer",
     "The user's frequent-flyer number is BA 12345678"),
    ("my frequent-flier no. is FF-0099123", "identifier:frequent-flyer",
     "The user's frequent-flyer number is FF-0099123"),
    ("My member number is 0045 7781 and I joined in 2019", "identifier:membership",
     "The user's membership number is 0045 7781"),
    ("My customer ID is C-99812", "identifier:customer", "The user's customer ID is C-99812"),
    ("My patient number is 884-221", "identifier:patient", "The user's patient number is 884-221"),
    ("Our VAT number is IE1234567T", "identifier:vat", "The user's VAT number is IE1234567T"),
    ("My policy number is POL-88-1234", "identifier:policy:POL-88-1234", "The user has policy number POL-88-1234"),
    ("My IBAN is IE29 AIBK 9311 5212 3456 78", "identifier:iban:IE29 AIBK 9311 5212 3456 78",
     "The user has IBAN IE29 AIBK 9311 5212 3456 78"),
    ("my sort code is 90-00-17", "identifier:sort-code:90-00-17", "The user has sort code 90-00-17"),
    ("My MPRN is 10012345678", "identifier:meter:10012345678", "The user has meter number 10012345678"),
    ("My claim reference is CLM-20394", "identifier:claim:CLM-20394", "The user has claim reference CLM-20394"),
])
def test_each_identifier_kind_has_its_own_subject_and_a_readable_sentence(text, subject, content):
    candidate = one(extract(text), subject)

    assert candidate.content == content
    assert candidate.metadata["rule"].startswith("identifier.")


def test_a_new_loyalty_number_takes_the_old_ones_subject_but_orders_never_do():
    [first] = extract("My loyalty number is LX-1111")
    [second] = extract("My new loyalty number is LX-2222")
    orders = extract("I have two orders: order 12345 and order 67890")

    assert first.subject == second.subject == "identifier:loyalty"
    assert sorted(subjects(orders)) == ["identifier:order:12345", "identifier:order:67890"]


@pytest.mark.parametrize("text", [
    "My card ending 4821 was charged twice",
    "The charge went on my Visa ending in 4821",
    "The last four digits of my card are 4821",
    "It was the card number ending with 4821",
])
def test_a_card_is_kept_by_the_last_four_digits_the_customer_gives(text):
    card = one(extract(text), "identifier:card:4821")

    assert card.content == "The user's card ends in 4821"
    assert card.metadata["pii"] is True


@pytest.mark.parametrize("text", [
    "My card number is 4111 1111 1111 1111",
    "card 4111111111111111 was declined",
    "The last four digits are 4821",
])
def test_a_full_card_number_or_an_unnamed_last_four_is_never_stored(text):
    candidates = extract(text)

    assert not any("4111" in candidate.content for candidate in candidates)
    assert not any((candidate.subject or "").startswith("identifier:card") for candidate in candidates)


def test_someone_elses_personal_identifier_is_not_the_users():
    candidates = extract("My wife Sara's passport number is P1234567")

    assert not any((candidate.subject or "").startswith("identifier:") for candidate in candidates)
    assert one(candidates, "contact:wife:passport number").metadata["relation"] == "wife"


# --- 2. Contact channel and time ----------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "content"), [
    ("Please contact me by email, not phone", "The user prefers to be contacted by email, not phone"),
    ("I'd prefer email", "The user prefers to be contacted by email"),
    ("I prefer to be contacted via WhatsApp", "The user prefers to be contacted by WhatsApp"),
    ("Don't call me, email instead", "The user prefers to be contacted by email, not phone"),
    ("Please text me instead of calling", "The user prefers to be contacted by text message, not phone"),
    ("I'd rather you emailed me", "The user prefers to be contacted by email"),
    ("The best way to reach me is email", "The user prefers to be contacted by email"),
    ("Please don't call me", "The user does not want to be contacted by phone"),
    ("I can't take calls", "The user does not want to be contacted by phone"),
    ("Reply by email please", "The user prefers to be contacted by email"),
    ("So please email rather than call", "The user prefers to be contacted by email, not phone"),
    ("Please send me notifications by push in the app, not SMS",
     "The user prefers to be contacted by push notification, not text message"),
    ("Send me updates by text please", "The user prefers to be contacted by text message"),
])
def test_contact_channel_is_one_preference_subject(text, content):
    [candidate] = [c for c in extract(text) if c.subject == CONTACT_CHANNEL]

    assert candidate.content == content
    assert candidate.memory_type == "preference"


@pytest.mark.parametrize(("text", "content"), [
    ("Best to call after 6pm", "The user prefers to be called after 6pm"),
    ("Please only call me between 9 and 5", "The user prefers to be called between 9 and 5"),
    ("Never call me before 9am please", "The user does not want to be called before 9am"),
    ("I'm only available in the mornings", "The user is only available in the mornings"),
    ("The best time to reach me is after work", "The user prefers to be contacted after work"),
    ("Mornings are best for me", "The user prefers to be contacted in the mornings"),
    ("So calling in the mornings before 10 is better than evenings", "The user prefers to be called in the mornings before 10"),
    ("Weekday evenings are best", "The user prefers to be contacted on weekday evenings"),
    ("Call me after 6pm if I don't answer during the day", "The user prefers to be called after 6pm"),
    ("You can also reach me on my landline, 01 555 7788, in the evenings",
     "The user prefers to be contacted in the evenings"),
])
def test_contact_time_is_one_preference_subject(text, content):
    [candidate] = [c for c in extract(text) if c.subject == CONTACT_TIME]

    assert candidate.content == content
    assert candidate.memory_type == "preference"


def test_text_me_because_no_calls_at_work_gives_the_channel_and_the_time():
    candidates = extract("Text me, I can't take calls at work")

    assert one(candidates, CONTACT_CHANNEL).content == "The user prefers to be contacted by text message"
    assert one(candidates, CONTACT_TIME).content == "The user can't take calls at work"


def test_a_number_with_a_channel_gives_the_phone_and_the_preference():
    candidates = extract("Text me on 087 123 4567 instead")

    assert one(candidates, "phone").content == "The user's phone number is 087 123 4567"
    assert one(candidates, CONTACT_CHANNEL).metadata["value"] == "text message"


@pytest.mark.parametrize("text", [
    "Email me the receipt please", "Please call me", "Can you call me?", "Don't email me the receipt yet",
    "Do you call customers before 9am?", "I prefer phone cases with a grip", "I'm available next Tuesday",
    "Maybe email would be better", "Maybe call me after 6pm", "Reach me at work on 01 444 5555", "Please email the team about it",
])
def test_requests_questions_and_other_preferences_are_not_contact_preferences(text):
    assert not {CONTACT_CHANNEL, CONTACT_TIME} & set(subjects(extract(text)))


# --- 3. Addresses -----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "subject", "address"), [
    ("Ship it to 4 Harbour Road, Cork.", "address:shipping", "4 Harbour Road, Cork"),
    ("My address is 12 Elm Street, Leeds LS1 4AB, and please hurry", "address:home", "12 Elm Street, Leeds LS1 4AB"),
    ("Deliver to 221B Baker Street, London NW1 6XE before Friday", "address:shipping",
     "221B Baker Street, London NW1 6XE"),
    ("Our office is at 5 King Street, Manchester M2 4LQ", "address:office", "5 King Street, Manchester M2 4LQ"),
    ("The billing address is Unit 3, Riverside Park, Dublin 8", "address:billing", "Unit 3, Riverside Park, Dublin 8"),
    ("I'd like it delivered to 7 Orchard Lane, Bath BA1 2XY please", "address:shipping",
     "7 Orchard Lane, Bath BA1 2XY"),
    ("Could you send the invoice to 10 Quay Street, Galway H91 X2Y3?", "address:billing",
     "10 Quay Street, Galway H91 X2Y3"),
    ("I live at 33 Rue de Rivoli, 75001 Paris", "address:home", "33 Rue de Rivoli, 75001 Paris"),
    ("My new address is Flat 2, 8 Mill Lane, York YO1 7HH", "address:home", "Flat 2, 8 Mill Lane, York YO1 7HH"),
    ("Please update my delivery address to 15 Main Street, Ennis, Co. Clare V95 X1Y2", "address:shipping",
     "15 Main Street, Ennis, Co. Clare V95 X1Y2"),
    ("Please send all correspondence to my PO Box 4411, Galway", "address:home", "PO Box 4411, Galway"),
    ("I'm in apartment 4B, 27 Harbour View, Dun Laoghaire", "address:home",
     "apartment 4B, 27 Harbour View, Dun Laoghaire"),
    # where everything goes from a time on is where deliveries go
    ("From next month, everything should go to 4 Harbour Road, Cork.", "address:shipping", "4 Harbour Road, Cork"),
    ("Starting Monday, parcels need to go to 12 Mill Lane, Leeds LS2 7EW.", "address:shipping",
     "12 Mill Lane, Leeds LS2 7EW"),
])
def test_an_address_is_kept_whole_with_a_subject_for_its_kind(text, subject, address):
    candidate = one(extract(text), subject)

    assert candidate.metadata["value"] == address
    assert address in candidate.content
    assert candidate.metadata["pii"] is True


@pytest.mark.parametrize("text", [
    "Send it to my office", "Ship to 5 different countries", "Our office is on the 3rd floor",
    "Do you ship to 4 Harbour Road?", "Send it to my email please", "The address is wrong",
    "If you could ship it to 4 Harbour Road that would be great", "If I moved, would you ship it to 4 Harbour Road?",
])
def test_things_that_are_not_a_stated_address_give_none(text):
    assert not any((subject or "").startswith("address:") for subject in subjects(extract(text)))


def test_one_address_for_two_kinds_gives_both():
    candidates = extract("My billing and shipping address are the same: 3 The Green, Malahide")

    assert sorted(subjects(candidates)) == ["address:billing", "address:shipping"]
    assert {candidate.metadata["value"] for candidate in candidates} == {"3 The Green, Malahide"}


def test_home_billing_and_shipping_addresses_are_separate_subjects():
    home = extract("My address is 12 Elm Street, Leeds")
    moved = extract("My new address is 40 Park Avenue, York")
    billing = extract("My billing address is 1 Bank Place, Leeds")

    assert subjects(home) == subjects(moved) == ["address:home"]
    assert subjects(billing) == ["address:billing"]


# --- 4. The user's contacts --------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "subject", "content", "details"), [
    ("My assistant Tom books my travel, tom@example.com", "contact:assistant",
     "The user's assistant Tom books their travel, tom@example.com", {"name": "Tom", "email": "tom@example.com"}),
    ("My wife Sara is the account holder", "contact:wife", "The user's wife Sara is the account holder",
     {"name": "Sara"}),
    ("Please cc my accountant, Priya Shah (priya@example.com)", "contact:accountant",
     "The user wants their accountant Priya Shah (priya@example.com) copied on emails",
     {"name": "Priya Shah", "email": "priya@example.com"}),
    ("My colleague Dev handles billing", "contact:colleague:dev", "The user's colleague Dev handles billing",
     {"name": "Dev"}),
    ("You can speak to my husband Mark on 087 555 1212 if I'm not available", "contact:husband",
     "The assistant can speak to the user's husband Mark on 087 555 1212", {"phone": "087 555 1212"}),
    ("My PA, Jo Bloggs (jo@example.com, 087 222 3344), manages my diary", "contact:assistant",
     "The user's PA, Jo Bloggs (jo@example.com, 087 222 3344), manages their diary",
     {"name": "Jo Bloggs", "email": "jo@example.com", "phone": "087 222 3344"}),
    ("My wife's email is sara@example.com", "contact:wife:email", "The user's wife's email is sara@example.com",
     {"email": "sara@example.com"}),
    ("Please also send updates to my wife Sara at sara@example.com", "contact:wife",
     "The user wants their wife Sara (sara@example.com) to receive updates", {"email": "sara@example.com"}),
])
def test_a_contact_of_the_user_is_one_memory_and_their_details_never_the_users(text, subject, content, details):
    candidates = extract(text)

    contact = one(candidates, subject)
    assert contact.content.startswith(content)
    assert details.items() <= contact.metadata.items()
    assert own_emails(candidates) == [] and phones(candidates) == []


@pytest.mark.parametrize(("text", "subject", "content"), [
    ("My son Richard looks after things for me. His number is 07831 664 920.", "contact:son:richard:phone",
     "The user's son Richard's number is 07831 664 920"),
    ("my wife Neha will be there, I'm at the office that day. her mobile is 07723 118 640", "contact:wife:phone",
     "The user's wife Neha's mobile is 07723 118 640"),
    ("I'm calling for my father. His email is des@example.com", "contact:father:email",
     "The user's father's email is des@example.com"),
])
def test_his_or_her_detail_after_naming_a_contact_is_that_contacts(text, subject, content):
    candidates = extract(text)

    assert one(candidates, subject).content == content
    assert own_emails(candidates) == [] and phones(candidates) == []


@pytest.mark.parametrize("text", [
    "My husband handles the bills. Her number is 087 999 8888.",  # "her" is not the husband
    "His number is 087 999 8888.",  # nobody named before it
])
def test_a_pronoun_that_fits_no_contact_named_before_it_is_left_alone(text):
    candidates = extract(text)

    assert not [candidate for candidate in candidates if "087 999 8888" in candidate.content]


def test_a_pronoun_reads_only_the_contact_named_in_its_own_message():
    candidates = extract("My son Richard looks after things for me.", "His number is 087 999 8888.")

    assert not [candidate for candidate in candidates if "087 999 8888" in candidate.content]


@pytest.mark.parametrize(("text", "subject", "content"), [
    ("Are braces covered for my son Mateo?", "contact:son:mateo", "The user's son is Mateo"),
    ("I need the beneficiary changed to my sister, Josephine Adeyinka.", "contact:sister:josephine adeyinka",
     "The user's sister is Josephine Adeyinka"),
    ("Please send the receipts also to our accountant, Ms. Sato, sato@kumo-tax.jp", "contact:accountant",
     "The user's accountant is Sato (sato@kumo-tax.jp)"),
    ("hi, can you tell me if my husband budi is on the account?", "contact:husband", "The user's husband is Budi"),
    ("Our head chef Ana Lopes will place orders when I'm away, her mobile is 087 555 1234.",
     "contact:head chef:ana lopes", "The user's head chef is Ana Lopes (087 555 1234)"),
])
def test_a_contact_named_in_passing_is_remembered_with_the_details_given_with_the_name(text, subject, content):
    candidates = extract(text)

    assert one(candidates, subject).content == content
    assert own_emails(candidates) == []


@pytest.mark.parametrize("text", [
    "I spoke with my manager Yesterday about it.",
    "my boss saw the charge on the statement",
    "I need the beneficiary changed to my sister, Josephine Adeyinka-Oduya...",  # trails off: a correction may follow
    "My wife's name is Sara.",  # a family fact (facts.py), not a second memory
])
def test_no_contact_is_named_in_passing_by_a_word_that_is_not_a_name(text):
    assert [c for c in extract(text) if c.metadata.get("rule") == "contact.named_in_passing"] == []


def test_a_contact_a_rule_already_states_is_not_named_twice():
    candidates = extract("My son Richard looks after things for me.")

    assert [c.metadata["rule"] for c in candidates] == ["contact.role"]


def test_a_new_assistant_takes_the_old_ones_subject_while_colleagues_are_told_apart_by_name():
    assert subjects(extract("My assistant Tom books my travel")) == subjects(
        extract("My assistant Jane handles my bookings now")) == ["contact:assistant"]
    assert subjects(extract("My colleague Dev handles billing")) != subjects(
        extract("My colleague Ana handles billing"))


def test_a_family_name_stays_a_family_fact():
    [candidate] = extract("My wife's name is Sara")

    assert (candidate.subject, candidate.content) == (None, "The user's wife's name is Sara")
    assert (candidate.metadata["rule"], candidate.metadata["relation"], candidate.metadata["value"]) == (
        "family.name", "wife", "Sara")


def test_a_contact_named_in_lowercase_by_a_lowercase_typist_is_named_in_its_stored_form():
    [contact] = extract("hi, my wife sara is the account holder")

    assert (contact.subject, contact.content) == ("contact:wife", "The user's wife Sara is the account holder")
    assert contact.metadata["name"] == "Sara"


def test_a_lowercase_adverb_after_the_relation_is_not_a_name():
    [contact] = extract("hi, my assistant usually books my travel")

    assert contact.subject == "contact:assistant" and "name" not in contact.metadata


# --- 5. What the agent did ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "kept"), [
    ("I've cancelled order 5512 for you.", ["cancelled order 5512"]),
    ("Refund of €40 issued.", ["Refund of €40 issued"]),
    ("I've booked you in for Tuesday 14 May at 10:30.",
     ["booked the user in for Tuesday 14 May (2026-05-14) at 10:30"]),
    ("A replacement has been dispatched.", ["A replacement has been dispatched"]),
    ("I've escalated this to our billing team, case 88123.", ["escalated this to the billing team, case 88123"]),
    ("Credit of $15 applied to your account.", ["Credit of $15 applied to the user's account"]),
    ("Engineer visit scheduled for next Monday.", ["Engineer visit scheduled for next Monday (2026-03-16)"]),
    ("An engineer will visit next Monday between 8am and 12pm.", ["will visit next Monday (2026-03-16)"]),
    ("I'll call you back tomorrow at 3pm.", ["will call the user back tomorrow (2026-03-15) at 3pm"]),
    ("Your new SIM has been posted to 15 Main Street, Ennis.", ["new SIM has been posted to 15 Main Street, Ennis"]),
    ("I have logged a complaint on your behalf, reference CMP-7781.", ["logged a complaint", "CMP-7781"]),
    ("Your contract has been renewed until 31 March 2027.", ["renewed until 31 March 2027"]),
    ("Done, you're booked with Dr Hughes on Wednesday 18 March at 17:45.",
     ["The user has an appointment booked with Dr Hughes on Wednesday 18 March (2026-03-18) at 17:45"]),
    ("You're booked on the 09:40 flight to Oslo on Friday 20 March.",
     ["The user is booked on the 09:40 flight to Oslo on Friday 20 March (2026-03-20)"]),
    ("Booked: check-up on Wednesday 25 March at 17:45.",
     ["Booked for the user: check-up on Wednesday 25 March (2026-03-25) at 17:45"]),
    ("Survey booked for Thursday 7 May, 9am to 12pm.", ["Booked for the user: Survey for Thursday 7 May (2026-05-07)"]),
    ("Booked at the Harbour Hotel, 21 to 24 September.",
     ["Booked for the user: at the Harbour Hotel, 21 to 24 September (2026-09-21 to 2026-09-24)"]),
    ("Your policy actually renews on Thursday 9 April.", ["The user's policy renews on Thursday 9 April (2026-04-09)"]),
    ("The cruise departs from Lyon on Saturday 3 October.",
     ["The user's cruise departs from Lyon on Saturday 3 October (2026-10-03)"]),
])
def test_agent_actions_that_matter_later_are_episodes_keeping_amounts_ids_and_dates(text, kept):
    episodes = [c for c in extract(text, role="assistant") if c.memory_type == "episode"]

    assert len(episodes) == 1, [c.content for c in episodes]
    assert all(part in episodes[0].content for part in kept), episodes[0].content
    assert episodes[0].metadata["rule"].startswith("support.outcome")


@pytest.mark.parametrize(("text", "subject", "content"), [
    ("Done: upgraded to Fibre 500 from today on a new 18-month contract.", "plan",
     "The user is on Fibre 500 from today (2026-03-14) on a new 18-month contract"),
    ("I've upgraded you to Unlimited Plus.", "plan", "The user is on Unlimited Plus"),
    ("Done: you'll move to Fibre 500 on Friday 3 July.", "plan",
     "The user moves to Fibre 500 on Friday 3 July (2026-07-03)"),
    ("Let me see... you're on Business Unlimited at £22 per line.", "plan",
     "The user is on Business Unlimited at £22 per line"),
    ("Done, World 100 is active from today.", "product:world 100", "The user has World 100 active from today"),
    ("Sure, I've switched your receipts to PDF attachments.", "setting:receipts",
     "The user's receipts are now PDF attachments"),
])
def test_a_change_the_agent_confirms_is_the_customers_plan_or_setting(text, subject, content):
    assert one(extract(text, role="assistant"), subject).content.startswith(content)


@pytest.mark.parametrize("text", [
    "I've moved you to the next step.",  # not a named plan
    "I've changed your contact preference to mornings.",  # the customer's own words say that, read by their rules
    "Would you like me to upgrade you to Fibre 500?",
    "If you want, I can switch you to Unlimited Plus.",
])
def test_what_is_not_a_confirmed_change_gives_no_plan_or_setting(text):
    assert [c for c in extract(text, role="assistant") if c.metadata["rule"].startswith("support.change")] == []


def test_the_customers_correction_corrects_their_own_words_before_the_agents():
    candidates = conversation(
        ("user", "I need new SIMs for the team, 4 lines on the same tariff as mine"),
        ("assistant", "You're on Business Unlimited at £22 per line. Four more lines on that tariff, correct?"),
        ("user", "Actually make it 3, one of them is leaving."),
    )

    assert one(candidates, "plan").content == "The user is on Business Unlimited at £22 per line"
    assert any("3 lines" in c.content for c in candidates) and not any("4 lines" in c.content for c in candidates)


@pytest.mark.parametrize("text", [
    "Let me check that for you.", "I'll look into it.", "You could try restarting the router.",
    "I can issue a refund if the item is returned.", "Would you like me to book an engineer visit for Monday?",
    "We can send a replacement once the old one is back.", "I'll get back to you.",
    "If it doesn't arrive by Friday, I'll open a ticket.",
    "You're booked in for today at 3pm.",  # over by the time it could matter
    "Booked for Friday 20 March at 11:00.",  # booked, but what?
    "Your Fixed Saver ends on 28 March.",  # a product's own name: the plan rules keep it current
    "Your policy renewed on 2 March.",
])
def test_procedure_talk_offers_and_conditionals_are_not_agent_actions(text):
    assert [c for c in extract(text, role="assistant") if c.memory_type == "episode"] == []


# --- 6. Resolved dates in content --------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "content"), [
    ("My lease ends on 30 June", "The user's lease ends on 30 June (2026-06-30)"),
    ("I'm flying to Lisbon next Friday", "The user is flying to Lisbon next Friday (2026-03-20)"),
    ("I'll be away from 1 to 15 August", "The user will be away from 1 to 15 August (2026-08-01 to 2026-08-15)"),
    ("I'm moving house next month", "The user is moving house next month (2026-04)"),
    ("My lease ends on 30 June 2027", "The user's lease ends on 30 June 2027 (2027-06-30)"),
    ("My lease ends on 2027-06-30", "The user's lease ends on 2027-06-30"),
])
def test_a_kept_date_phrase_is_followed_by_the_date_it_resolves_to(text, content):
    [candidate] = extract(text)

    assert candidate.content == content


def test_without_a_message_time_the_phrase_stays_alone():
    [candidate] = extract("My lease ends on 30 June", created_at=None)

    assert candidate.content == "The user's lease ends on 30 June"


def test_with_resolved_date_is_idempotent_and_leaves_contents_without_the_phrase():
    metadata = find_dates("next Friday", SENT_AT.date())[0].metadata()

    once = with_resolved_date("Visit next Friday", metadata)
    assert once == "Visit next Friday (2026-03-20)"
    assert with_resolved_date(once, metadata) == once
    assert with_resolved_date("A visit is planned", metadata) == "A visit is planned"
    assert with_resolved_date("Visit next Friday", {"date_text": "next Friday"}) == "Visit next Friday"


def conversation(*turns: tuple[str, str], existing=()) -> list[Candidate]:
    messages = [ConversationMessage(seq=index + 1, role=role, text=text, created_at=SENT_AT)
                for index, (role, text) in enumerate(turns)]
    return extractor.extract(messages=messages, existing=list(existing))


@pytest.mark.parametrize(("first", "correction", "content", "dates"), [
    ("I'm flying to Lisbon in April", "Sorry, I meant June, not April", "The user is flying to Lisbon in June (2026-06)",
     {"date_text": "in June", "date": "2026-06-01", "date_precision": "month"}),
    ("I'll be away from 1 to 15 August", "Sorry, I meant September, not August",
     "The user will be away from 1 to 15 September (2026-09-01 to 2026-09-15)",
     {"date_text": "from 1 to 15 September", "date": "2026-09-01", "date_end": "2026-09-15"}),
    ("I'll be away from 1 to 15 August", "Sorry, I meant 20 August, not 1 to 15 August",
     "The user will be away from 20 August (2026-08-20)", {"date_text": "20 August", "date": "2026-08-20"}),
])
def test_a_corrected_date_reads_and_resolves_as_the_new_date_alone(first, correction, content, dates):
    [candidate] = extract(first, correction)

    assert candidate.content == content
    assert {key: value for key, value in candidate.metadata.items() if key.startswith("date")} == dates


@pytest.mark.parametrize(("first", "correction", "subject", "kept", "dropped"), [
    ("My son's mobile is 07911 402 776.",
     "Oh dear, I have given you the wrong number, it is 07911 402 767, the last two digits the other way round.",
     "contact:son:phone", "07911 402 767", "07911 402 776"),
    ("My mobile is 087 123 4567.", "Sorry, that's the wrong number, it's 087 123 4576.", "phone", "087 123 4576",
     "087 123 4567"),
])
def test_a_wrong_number_owned_up_to_is_replaced_by_the_one_given_after_it(first, correction, subject, kept, dropped):
    candidates = extract(first, correction)

    assert kept in one(candidates, subject).content
    assert not [candidate for candidate in candidates if dropped in candidate.content]


@pytest.mark.parametrize("text", [
    "Next Friday I'm flying to Tokyo", "From Monday to Friday I'm away", "from 1 to 15 August I'm away",
    "Thursday, March 6 I'm at the clinic", "Monday to Friday I'm away", "Between 3 and 5 June I'm off",
    "From Thursday, 5 March to Friday, 6 March I'm off", "I'm flying next Friday", "may I ask", "from home I work",
])
def test_leading_date_is_find_dates_first_mention_when_that_opens_the_text(text):
    mentions = find_dates(text, None)
    expected = mentions[0] if mentions and mentions[0].start == 0 else None

    assert leading_date(text) == expected


def test_adversarial_support_input_finishes_quickly():
    import time

    texts = [
        "my mobile is " + "1 " * 5000, "Ship it to " + "4 Harbour " * 3000, "my wife " + "Sara " * 3000 + "is here",
        "please contact me by email " + "not " * 4000, "best to call after " + "6pm " * 4000,
        "my loyalty number is " + "12345 " * 3000, "my card ending " + "4821 " * 3000, "IBAN " + "IE29 " * 3000,
        "call me on " + "+1 (2) " * 3000, "my " + "work " * 4000 + "number is 0871234567",
        ("a-" * 2000 + " number 12345678 ") * 8,  # a label looked for before each of many numbers
    ]
    for role in ("user", "assistant"):
        for text in texts:
            started = time.perf_counter()
            extract(text, role=role)
            assert time.perf_counter() - started < 2.0, text[:40]


def test_crm_lines_give_typed_phone_email_and_address_records():
    candidates = extract("Work phone: +353 1 234 5678\nWork email: ines@corp.example\n"
                         "Shipping address: 4 Harbour Road, Cork T12 AB34", role="system")

    assert one(candidates, "phone:work").content == "The user's work phone number is +353 1 234 5678"
    assert one(candidates, "email:work").content == "The user's work email address is ines@corp.example"
    assert one(candidates, "address:shipping").content == "The user's shipping address is 4 Harbour Road, Cork T12 AB34"


def test_a_word_before_the_digits_is_not_part_of_an_identifier():
    # "ending 1234" is no account number, and without the word "card" the last four are no card's either.
    assert extract("Account ending 1234 is the one I use") == []
    [account] = extract("Account 55201234 is the one I use")
    assert (account.subject, account.metadata["identifier"]) == ("identifier:account:55201234", "55201234")


# --- 7. A bare answer to the agent's question ---------------------------------------------------------------

@pytest.mark.parametrize(("question", "answer", "subject", "value"), [
    ("What's the best number to reach you on?", "07700 900123", "phone", "07700 900123"),
    ("Could you confirm your mobile number, please?", "Sure, 087 123 4567", "phone", "087 123 4567"),
    ("What's your email address?", "ines.b@corp.example", "email", "ines.b@corp.example"),
])
def test_a_bare_phone_number_or_email_answering_the_agent_is_the_users(question, answer, subject, value):
    detail = one(conversation(("assistant", question), ("user", answer)), subject)

    assert detail.metadata["value"] == value


@pytest.mark.parametrize(("question", "answer"), [
    ("What's your order number?", "55201188"),
    ("What's the best number to reach you on?", "Order 55201188 first please"),
    ("What's your email address?", "the usual one"),
])
def test_an_answer_that_is_not_the_asked_detail_gives_no_phone_or_email(question, answer):
    candidates = conversation(("assistant", question), ("user", answer))

    assert phones(candidates) == [] and own_emails(candidates) == []


def test_an_email_answering_the_agent_is_the_users_own_and_not_also_a_mention():
    candidates = conversation(("assistant", "Can I take your name and email?"),
                              ("user", "Fatima Zahra El Amrani, fz.elamrani@ziggo.nl"))

    assert [(candidate.subject, candidate.content) for candidate in candidates] == [
        ("name", "The user's name is Fatima Zahra El Amrani"),
        ("email", "The user's email address is fz.elamrani@ziggo.nl"),
    ]


@pytest.mark.parametrize(("question", "answer", "subject", "content"), [
    ("We'll text the engineer's arrival time to your mobile, is that still 07700 900 207?", "Yes that's right.",
     "phone", "The user's phone number is 07700 900 207"),
    ("Is your email still ann@example.com?", "Yep, same as before.", "email",
     "The user's email address is ann@example.com"),
])
def test_a_yes_to_the_agents_is_that_still_confirms_the_value(question, answer, subject, content):
    candidates = conversation(("assistant", question), ("user", answer))

    assert one(candidates, subject).content == content


def test_a_yes_to_two_values_asked_together_confirms_each_under_its_own_kind():
    candidates = conversation(
        ("assistant", "You're all set. Is your work number 0161 496 0300 still correct? And your mobile 07700 900 412?"),
        ("user", "yes both still correct"),
    )

    assert one(candidates, "phone:work").content == "The user's work phone number is 0161 496 0300"
    assert one(candidates, "phone").content == "The user's mobile number is 07700 900 412"


@pytest.mark.parametrize("answer", ["No, it's ann@newmail.com now.", "Hmm, let me check."])
def test_anything_but_a_yes_confirms_nothing(answer):
    candidates = conversation(("assistant", "Is your email still ann@example.com?"), ("user", answer))

    assert not [c for c in candidates if "ann@example.com" in c.content]


def test_a_yes_to_is_that_right_after_the_agent_names_an_address_confirms_it():
    candidates = conversation(
        ("assistant", "The 7.5 is in stock. I'll ship it to 12 Jacaranda Avenue, Parkhurst, Johannesburg. Is that right?"),
        ("user", "Yes that's home."),
    )

    assert "12 Jacaranda Avenue, Parkhurst, Johannesburg" in one(candidates, "address:home").content


@pytest.mark.parametrize(("text", "address"), [
    ("I rent a flat at 52 Albion Road, Leeds LS6 1AB.", "52 Albion Road, Leeds LS6 1AB"),
    ("We're renting a small house on 9 Park Row, Bristol.", "9 Park Row, Bristol"),
])
def test_where_a_tenant_rents_is_their_home_address(text, address):
    assert one(extract(text), "address:home").metadata["value"] == address


@pytest.mark.parametrize(("text", "removed"), [
    ("Tom Reyes is now your authorised contact and Priyanka Shah has been removed.", [("Priyanka Shah", True)]),
    ("Of course, I've removed 416-555-0127 from your account.", [("416-555-0127", False)]),
    ("I've removed Gareth Pryce and g.pryce@corran.example from the notes.",
     [("Gareth Pryce", True), ("g.pryce@corran.example", False)]),
])
def test_what_the_agent_removed_is_retracted(text, removed):
    deletes = [candidate for candidate in extract(text, role="assistant") if candidate.action == "delete"]

    assert [(c.metadata["value"], "person" in c.metadata) for c in deletes] == removed
    assert all(candidate.subject is None for candidate in deletes)


@pytest.mark.parametrize("text", ["The late fee has been removed from your bill.",
                                  "I've removed the Premium add-on from your plan."])
def test_a_removal_that_names_no_person_or_detail_retracts_nothing(text):
    assert [c for c in extract(text, role="assistant") if c.action == "delete"] == []


@pytest.mark.parametrize(("text", "value"), [
    ("The Amex ending 2006 has been removed. The Visa ending 8815 stays for your work trips.", "Amex"),
    ("The Premium add-on has been removed from your plan.", "Premium add-on"),
])
def test_a_thing_of_the_customers_the_agent_removed_by_name_is_retracted_by_that_name(text, value):
    [delete] = [c for c in extract(text, role="assistant") if c.action == "delete"]

    assert (delete.subject, delete.metadata["value"]) == (None, value)


@pytest.mark.parametrize(("text", "value"), [
    ("And remove the Amex from my profile please, I've cancelled it.", "Amex"),
    ("Can you delete my Netflix add-on from the account?", "Netflix add-on"),
    ("please delete the Galaxy Tab S9", "Galaxy Tab S9"),
])
def test_a_thing_the_customer_asks_to_forget_by_name_is_forgotten_by_that_name(text, value):
    [delete] = [c for c in extract(text) if c.action == "delete"]

    assert (delete.subject, delete.metadata["value"]) == (None, value)


@pytest.mark.parametrize("text", ["Please remove the Monday booking.", "Remove the Tuesday slot please."])
def test_a_day_is_no_name_of_a_thing_to_forget(text):
    assert [c for c in extract(text) if c.action == "delete" and c.metadata.get("value")] == []


def test_an_answer_to_when_to_call_is_the_contact_time():
    candidates = conversation(("assistant", "An engineer will call you. What's the best time to reach you?"),
                              ("user", "weekdays after 6pm please, before that I'm at work."))

    assert one(candidates, CONTACT_TIME).metadata["value"] == "weekdays after 6pm"


def test_an_answer_to_another_question_is_not_a_contact_time():
    candidates = conversation(("assistant", "When did the fault start?"), ("user", "after 6pm yesterday"))

    assert [c for c in candidates if c.subject == CONTACT_TIME] == []


@pytest.mark.parametrize(("text", "subject", "value"), [
    ("I've updated your mobile to 07700 900 222.", "phone", "07700 900 222"),
    ("Done, I've updated your address to 14 Kestrel Way, Frome, BA11 2TD.", "address:home",
     "14 Kestrel Way, Frome, BA11 2TD"),
])
def test_the_agents_update_of_a_detail_is_the_customers_new_value_and_no_episode(text, subject, value):
    candidates = extract(text, role="assistant")

    assert [(c.subject, c.metadata["value"]) for c in candidates] == [(subject, value)]


def test_a_serial_in_groups_is_kept_whole():
    [candidate] = [c for c in extract("The water meter's serial is 09M 554187, I checked.") if c.subject]

    assert candidate.metadata["identifier"] == "09M 554187"


def test_the_agent_removing_someone_named_only_before_stores_nothing():
    assert extract("Understood, I've removed him from your account.", role="assistant") == []


@pytest.mark.parametrize("text", [
    "I've emailed you a returns label.",
    "I've sent you a password reset link.",
    "I've opened RMA-552901 for the two mugs.",
])
def test_paperwork_sent_and_tickets_opened_are_no_episodes(text):
    assert [c for c in extract(text, role="assistant") if c.memory_type == "episode"] == []


def test_a_replacement_sent_is_an_episode():
    [episode] = [c for c in extract("I've sent a replacement Galaxy S24 to your billing address.", role="assistant")
                 if c.memory_type == "episode"]

    assert episode.content == "The assistant sent a replacement Galaxy S24 to the user's billing address"


def test_a_staff_member_named_with_is_is_a_contact_holding_their_email():
    candidates = extract("Our buyer is Sam Okafor, sam.okafor@brewhaus.example.")

    assert [(c.subject, c.content) for c in candidates] == [
        ("contact:buyer:sam okafor", "The user's buyer is Sam Okafor (sam.okafor@brewhaus.example)")]


def test_the_place_before_an_address_is_not_part_of_it():
    assert one(extract("Please deliver to our warehouse at Unit 4, Riverside Park, Leeds LS10 1AB."),
               "address:shipping").metadata["value"] == "Unit 4, Riverside Park, Leeds LS10 1AB"


@pytest.mark.parametrize(("text", "content"), [
    ("The lease ends on 30 June.", "The user's lease ends on 30 June (2026-06-30)"),
    ("The contract renews on 1 April.", "The user's contract renews on 1 April (2026-04-01)"),
])
def test_the_customers_own_dated_thing_said_with_the_is_theirs(text, content):
    assert [c.content for c in extract(text)] == [content]


def test_a_dated_thing_that_is_not_an_account_thing_is_not_theirs():
    assert extract("The meeting ends on Friday.") == []


@pytest.mark.parametrize(("text", "content"), [
    ("Deliveries must arrive before 7am, the loading bay closes at 9.", "The user takes deliveries before 7am"),
    ("Please only deliver on weekdays.", "The user takes deliveries on weekdays"),
    ("Deliveries can't come before 8am.", "The user cannot take deliveries before 8am"),
])
def test_when_deliveries_can_come_is_one_preference(text, content):
    assert one(extract(text), "preference:delivery_time").content == content


@pytest.mark.parametrize("text", ["The order must be paid before shipping.", "Can deliveries come before 7am?"])
def test_other_musts_about_orders_are_no_delivery_time(text):
    assert [c for c in extract(text) if c.subject == "preference:delivery_time"] == []


@pytest.mark.parametrize(("text", "subject", "value"), [
    ("I've set your language preference to Welsh.", "preference:language", "Welsh"),
    ("I've set your home airport to Bristol.", "setting:home airport", "Bristol"),
    ("Home airport set to Manchester (MAN). Any destinations you'd like to watch?", "setting:home airport", "Manchester"),
    ("Your default courier has been changed to DPD from Monday.", "setting:courier", "DPD"),
    ("I've updated your home airport to Bristol (BRS) and your email to p@example.com.", "setting:home airport",
     "Bristol"),
    ("Home airport set to Leeds Bradford (LBA) as you asked by email.", "setting:home airport", "Leeds Bradford"),
])
def test_a_setting_the_agent_set_is_the_customers(text, subject, value):
    assert one(extract(text, role="assistant"), subject).metadata["value"] == value


@pytest.mark.parametrize("text", ["That's set to expire next week.", "Everything is set to go.",
                                  "It has been changed to the new format?"])
def test_no_setting_is_named_by_a_pronoun_or_a_question(text):
    assert not [c for c in extract(text, role="assistant") if (c.subject or "").startswith("setting:")]


@pytest.mark.parametrize(("text", "subject", "value"), [
    ("My home airport is Manchester.", "setting:home airport", "Manchester"),
    ("Our default service is Next Day Tracked.", "setting:service", "Next Day Tracked"),
    ("my budget is £400 a month", "setting:budget", "£400 a month"),
    ("My preferred branch is Bedford, it's closer.", "setting:branch", "Bedford"),
])
def test_a_named_value_of_a_setting_the_customer_states_is_replaceable(text, subject, value):
    assert one(extract(text), subject).metadata["value"] == value


def test_the_customer_and_the_agent_name_one_setting_alike():
    [said] = [c for c in extract("My preferred home airport is Manchester.") if c.subject]
    [changed] = [c for c in extract("I've set your home airport to Leeds.", role="assistant") if c.subject]

    assert said.subject == changed.subject == "setting:home airport"


@pytest.mark.parametrize("text", ["My service is terrible.", "My seat is broken.", "My branch is closing, I heard"])
def test_a_setting_described_not_named_is_no_setting(text):
    assert not [c for c in extract(text) if (c.subject or "").startswith("setting:")]


@pytest.mark.parametrize(("text", "subject", "value"), [
    ("We run 8 vans, all Mercedes Sprinter.", "quantity:vans", "8"),
    ("We have 40 laptops across the office.", "quantity:laptops", "40"),
])
def test_a_count_of_any_kind_of_thing_the_customer_has_is_replaceable(text, subject, value):
    assert one(extract(text), subject).metadata["value"] == value


@pytest.mark.parametrize("text", ["We have 3 days to sort it.", "We have 2 questions about the bill."])
def test_time_left_or_questions_are_no_count_of_things(text):
    assert not [c for c in extract(text) if (c.subject or "").startswith("quantity:")]


def test_a_first_language_said_beside_a_wish_is_kept_too():
    candidates = extract("and if possible write me in simple English, Korean is my first language")

    assert one(candidates, "preference:language").metadata["value"] == "English"
    assert one(candidates, "native_language").metadata["value"] == "Korean"


@pytest.mark.parametrize(("text", "subject", "identifier"), [
    ("60318877 is my customer number if you need it for anything", "identifier:customer", "60318877"),
    ("ORD-5512 is my order number", "identifier:order:ORD-5512", "ORD-5512"),
])
def test_an_identifier_said_before_what_it_is_is_that_identifier(text, subject, identifier):
    assert one(extract(text), subject).metadata["identifier"] == identifier


def test_the_best_way_to_reach_the_user_with_its_number_is_that_phone():
    [phone] = phones(extract("best is whatsapp on +353 87 214 5590."))

    assert (phone.subject, phone.content) == ("phone:whatsapp", "The user's WhatsApp number is +353 87 214 5590")


@pytest.mark.parametrize(("readback", "subject", "value"), [
    ("Thanks, one moment. I have you at 9 Orchard Rise, Chester.", "address", "9 Orchard Rise, Chester"),
    ("We've got your mobile as 07700 900 318.", "phone", "07700 900 318"),
    ("Our records show your email as t.ngata@example.org.", "email", "t.ngata@example.org"),
])
def test_the_agents_reading_of_a_detail_on_file_is_the_customers_value(readback, subject, value):
    candidates = conversation(("user", "I need to update my details."), ("assistant", readback))

    read = [candidate for candidate in candidates if value in candidate.content]
    assert len(read) == 1 and read[0].subject.split(":")[0] == subject
    assert read[0].metadata.get("restated_by_agent") and read[0].confidence < 0.9


@pytest.mark.parametrize("answer", ["it's 41 Wharf Street, Chester CH1 2AB", "New place is 41 Wharf Street, Chester.",
                                    "the new flat's at 41 Wharf Street"])
def test_a_new_address_after_the_agents_reading_replaces_the_one_read(answer):
    candidates = conversation(
        ("user", "hi, we're moving house next month"),
        ("assistant", "Congratulations! I have you at 9 Orchard Rise, Chester. What's the new address?"),
        ("user", answer),
    )

    addresses = [candidate for candidate in candidates if (candidate.subject or "").startswith("address")]
    assert ["9 Orchard Rise" in addresses[0].content, "41 Wharf Street" in addresses[-1].content] == [True, True]
    assert addresses[0].subject == addresses[-1].subject  # one subject: the new one supersedes the old


@pytest.mark.parametrize("sentence", [
    "I have you down for the 3pm slot on Friday.",
    "I have you at the top of the waiting list.",
    "I see your order as shipped.",
    "We have your mobile as the main contact.",
])
def test_what_is_not_a_detail_on_file_is_not_read_as_one(sentence):
    candidates = conversation(("user", "hello"), ("assistant", sentence))

    assert not [candidate for candidate in candidates if (candidate.subject or "").startswith(("address", "phone", "email"))]


@pytest.mark.parametrize(("said", "asked", "subject"), [
    ("oh and I have asthma, in case the trainer needs to know", "can you take the asthma thing off my profile?",
     "health:asthma"),
    ("I have a Pixel 8 at the moment", "please delete the Pixel 8 details", "device:phone"),
])
def test_a_fact_named_by_one_word_and_thing_can_be_forgotten(said, asked, subject):
    candidates = conversation(("user", said), ("user", asked))

    assert [(candidate.action, candidate.subject) for candidate in candidates] == [("delete", subject)]


def test_a_word_no_statement_gives_a_subject_forgets_nothing():
    candidates = conversation(("user", "I live in Leeds"), ("user", "please delete the weather thing."))

    assert [candidate.action for candidate in candidates] == ["add"]


@pytest.mark.parametrize("sentence", [
    "I've changed provider, please use mo.new@example.net from now on, the old one is closing.",
    "Going forward, please use mo.new@example.net.",
    "switch it to mo.new@example.net from now on",
])
def test_an_address_to_use_from_now_on_is_the_users_own(sentence):
    candidates = conversation(("user", "my email is mo@old.example.org"), ("user", sentence))

    emails = [candidate for candidate in candidates if candidate.subject == "email"]
    assert [email.metadata["value"] for email in emails] == ["mo@old.example.org", "mo.new@example.net"]


def test_an_address_for_one_purpose_is_not_the_users_own():
    candidates = conversation(("user", "please use billing@firm.example for the invoices."))

    assert not [candidate for candidate in candidates if candidate.subject == "email"]


def test_a_name_mentioned_beside_the_agents_question_is_not_asked_for():
    candidates = conversation(
        ("user", "My name is Ana Ruiz. Can my employer pay for the annual plan?"),
        ("assistant", "Yes, I can issue an invoice in the company's name. Where should it go?"),
        ("user", "Send it to ap@employer.example please, attention Tomas Berg."),
    )

    assert [candidate.content for candidate in candidates if candidate.subject == "name"] == [
        "The user's name is Ana Ruiz"]


@pytest.mark.parametrize(("asked", "reply", "plan"), [
    ("I'd like to move from Monthly Basic to the Annual Plus plan.", "Done! I've switched you to Annual Plus.",
     "Annual Plus"),
    ("can I change to the Evening membership?", "Welcome back! I've upgraded you to Evening from today.", "Evening"),
])
def test_a_plan_change_asked_for_and_made_is_the_customers_plan(asked, reply, plan):
    candidates = conversation(("user", asked), ("assistant", reply))

    assert any(candidate.subject == "plan" and plan in candidate.content and candidate.action == "add"
               for candidate in candidates)


@pytest.mark.parametrize("reply", [
    "Unfortunately I can't move you to Annual Plus while the trial runs.",
    "Annual Plus is $240 a year. Shall I go ahead?",
])
def test_a_plan_change_asked_for_but_not_made_is_no_plan(reply):
    candidates = conversation(("user", "I'd like to move to the Annual Plus plan."), ("assistant", reply))

    assert not [candidate for candidate in candidates if candidate.subject == "plan"]


@pytest.mark.parametrize(("text", "subject", "number"), [
    ("There is also a landline in the house, 0118 496 0722, but I prefer the mobile.", "phone:home", "0118 496 0722"),
    ("We have a landline too, 0118 496 0722.", "phone:home", "0118 496 0722"),
    ("I've got a work phone as well: 020 7946 0011", "phone:work", "020 7946 0011"),
])
def test_a_phone_the_user_says_they_have_is_theirs(text, subject, number):
    assert one(extract(text), subject).metadata["value"] == number


@pytest.mark.parametrize(("said", "disposed"), [
    ("My car is a 2019 Skoda Octavia.", "I sold the Octavia last month."),
    ("We drive a Ford Transit van for the business.", "We scrapped the Ford Transit."),
])
def test_a_vehicle_is_kept_and_given_up_like_a_device(said, disposed):
    candidates = conversation(("user", said), ("user", disposed))

    assert [(candidate.action, candidate.subject) for candidate in candidates] == [
        ("add", "device:vehicle"), ("delete", "device")]


def test_a_pricing_scheme_is_a_plan():
    assert one(extract("We're on Economy Seven pricing at the moment."), "plan").metadata["value"] == "Economy Seven"


def test_a_whole_number_correcting_its_last_digits_replaces_the_number_not_the_digits():
    candidates = conversation(("user", "My son Tariq helps me, his mobile is 07700 900 426."),
                              ("user", "Sorry, it is 07700 900 462, not 426."))

    assert len(candidates) == 1 and candidates[0].content.endswith("07700 900 462)")
    assert "426" not in candidates[0].content and candidates[0].metadata["corrected"]


def test_a_correction_whose_apology_is_in_the_sentence_before_applies():
    candidates = conversation(("user", "My son Tariq helps me, his mobile is 07700 900 426."),
                              ("user", "I copied his number wrongly. It is 07700 900 462, not 426. Friday is fine."))

    assert "07700 900 462" in candidates[0].content and "426" not in candidates[0].content


def test_a_booking_the_agent_moves_takes_the_subject_of_the_booking_it_moves():
    candidates = conversation(
        ("user", "Can you book the boiler service for me?"),
        ("assistant", "Booked: boiler service for Wednesday 13 May, 8am to 12pm."),
        ("user", "Oh no, I can't do Wednesday. Could it be Friday instead?"),
        ("assistant", "No problem, I've moved the boiler service to Friday 15 May, 8am to 12pm."),
    )

    booked = [candidate for candidate in candidates if (candidate.subject or "").startswith("booking:")]
    assert [candidate.subject for candidate in booked] == ["booking:boiler service:2026-05-13"] * 2
    assert "15 May" in booked[1].content


def test_two_bookings_of_one_kind_on_different_days_stand_side_by_side():
    candidates = conversation(
        ("assistant", "Booked: physio session for Monday 11 May at 9am."),
        ("assistant", "Booked: physio session for Monday 18 May at 9am."),
    )

    assert sorted(candidate.subject for candidate in candidates) == [
        "booking:physio session:2026-05-11", "booking:physio session:2026-05-18"]


@pytest.mark.parametrize(("first", "then", "content"), [
    ("We run 8 vans, all electric.", "so please make the contract for 9 vans, not 8.", "The user runs 9 vans, all electric"),
    ("We have 3 kids.", "I need 2 tickets, not 3.", "The user has 3 kids"),
])
def test_a_count_corrected_in_passing_applies_only_to_the_same_thing(first, then, content):
    candidates = conversation(("user", first), ("user", then))

    assert [candidate.content for candidate in candidates] == [content]


def test_a_home_bought_is_the_home_address():
    text = "I have just bought a house at 7 Heron Close, Newbury RG14 1QD."
    assert one(extract(text), "address:home").metadata["value"] == "7 Heron Close, Newbury RG14 1QD"


@pytest.mark.parametrize("text", [
    "We're moving to 22 Mill Gate, Thatcham RG19 4LS on the 28th, so keep sending post here until then.",
    "We own a holiday cottage at 3 Beach Road, Whitby.",
    "I own a flat at 52 Albion Road, Leeds that I rent out.",
    "We have just bought a house at 7 Heron Close for my mum.",
    "Our company is growing and we are relocating to Unit 5, Dock Street, Hull.",
])
def test_a_move_to_come_or_another_property_is_not_the_home_address(text):
    assert not [c for c in extract(text) if (c.subject or "").startswith("address")]


def test_moving_to_a_town_is_no_address():
    assert not [c for c in extract("I'm moving to Portland for work next month.") if (c.subject or "").startswith("address")]


@pytest.mark.parametrize("text", [
    "my broadband has been down since Saturday night, the light on the router just flashes red",
    "My parcel was due on Monday 4 May.",
])
def test_a_state_since_a_day_gone_or_a_day_gone_is_no_plan(text):
    assert not [c for c in extract(text, created_at=datetime(2026, 5, 6, 10, tzinfo=UTC)) if "plan" in c.tags]


def test_a_date_answering_date_of_birth_and_address_is_the_birthday_not_the_address():
    candidates = conversation(
        ("assistant", "For security, can you confirm your date of birth and the address on the account?"),
        ("user", "14 March 1989, 36 Rimu Street, Hamilton 3204"),
    )

    assert one(candidates, "birthday").content == "The user's date of birth is 14 March 1989"
    assert one(candidates, "address:home").metadata["value"] == "36 Rimu Street, Hamilton 3204"


def test_what_the_user_asks_not_to_be_kept_is_forgotten():
    candidates = conversation(("user", "My date of birth is 14 March 1989."),
                              ("user", "I only gave my birthday for the ID check, can you not keep that on file please"))

    assert [(c.action, c.subject) for c in candidates] == [("delete", "birthday")]


@pytest.mark.parametrize(("sentence", "expected"), [
    ("I have also removed your date of birth from our records.", [("delete", "birthday")]),
    ("I've removed your office phone number.", [("delete", "phone:work")]),
    ("I've removed your late fee.", [("add", None)]),
])
def test_a_detail_the_agent_removed_is_retracted(sentence, expected):
    candidates = conversation(("assistant", sentence))

    assert [(c.action, c.subject) for c in candidates] == expected


@pytest.mark.parametrize(("text", "plate"), [
    ("It's a 2019 Skoda Octavia estate, reg LM19 XRT, about 61,000 miles on it.", "LM19 XRT"),
    ("The registration is KV68 PNZ.", "KV68 PNZ"),
    ("its a volvo, plate YB21 KDF", "YB21 KDF"),
])
def test_a_number_plate_is_an_identifier_of_its_own(text, plate):
    assert one(extract(text), f"identifier:plate:{plate}").content == f"The user's vehicle registration is {plate}"


@pytest.mark.parametrize("text", ["I need to register for the course.", "please register me at 10 AM",
                                  "my reg number is 4471"])
def test_what_has_no_plate_shape_is_no_plate(text):
    assert not [c for c in extract(text) if (c.subject or "").startswith("identifier:plate")]


def test_the_car_a_user_drives_is_their_vehicle():
    assert one(extract("I drive a 2022 Peugeot 3008 for work."), "device:vehicle").metadata["value"] == "2022 Peugeot 3008"


def test_a_forget_in_the_second_clause_of_a_sentence_is_read():
    candidates = conversation(("user", "My son Arman, arman.k@mail.example, is on the family plan."),
                              ("user", "Remove him from the family plan, and you can forget his email as well."))

    assert [(c.action, c.metadata.get("person"), c.metadata.get("detail")) for c in candidates][-1] == (
        "delete", "Arman", "email")
    assert not [c for c in candidates if "Arman's" in c.content and c.action == "add"]


def test_her_number_in_a_later_message_reaches_the_contact_named_before():
    candidates = conversation(("user", "My assistant Zodwa Dlamini books the pickups, her mobile is 072 555 0111."),
                              ("assistant", "Is Zodwa still booking your pickups?"),
                              ("user", "No, please remove her number, she is gone."))

    assert candidates[-1].action == "delete" and candidates[-1].metadata["person"] == "Zodwa Dlamini"


def test_her_number_in_a_later_session_reaches_the_known_contact_the_message_names():
    messages = [ConversationMessage(seq=1, role="user", text="Mum and I fell out, please delete her number",
                                    created_at=SENT_AT)]
    known = [ExistingMemory(id="m1", content="The user's mum Ada's number is 07700 900 214", memory_type="fact",
                            subject="contact:mother")]

    [forget] = extractor.extract(messages=messages, existing=known)

    assert forget.action == "delete" and forget.metadata["person"] == "mother"


def test_a_mistake_admitted_in_the_same_sentence_corrects_the_stored_number():
    messages = [ConversationMessage(seq=1, role="user", created_at=SENT_AT,
                                    text="I made a mistake with my phone number last time, it is +7 701 555 2814, "
                                         "not 2841. The codes went to a stranger!")]
    known = [ExistingMemory(id="m1", content="The user's phone number is +7 701 555 2841", memory_type="fact",
                            subject="phone")]

    [fix] = extractor.extract(messages=messages, existing=known)

    assert (fix.action, fix.target_memory_id, fix.content) == (
        "update", "m1", "The user's phone number is +7 701 555 2814")


@pytest.mark.parametrize(("text", "expected"), [
    ("I'd like the weekend edition. Aoife Ni Bhriain, 58 Sallow Road, Galway H91 X2C4.",
     [("name", "Aoife Ni Bhriain"), ("address:home", "58 Sallow Road, Galway H91 X2C4")]),
    ("Dear Support Team, 3 Elm Street is my address.", [("address:home", "3 Elm Street")]),  # no name, an address
])
def test_a_line_of_name_and_address_is_both(text, expected):
    candidates = extract(text)

    assert [(c.subject, c.content.rsplit(" is ", 1)[-1]) for c in candidates
            if c.subject in ("name", "address:home")] == expected


def test_my_number_here_is_a_phone():
    assert one(extract("My number here is +254 722 555 318."), "phone").metadata["value"] == "+254 722 555 318"


def test_a_line_of_another_name_and_address_is_not_the_users_once_their_name_is_known():
    candidates = extract("It's a gift for my father. Hendrik Berg, 17 Dijk Street, Utrecht.", user_name="Ilse Berg")

    assert not [c for c in candidates if c.subject in ("name", "address:home")]


# --- What a review of the rules above found they could damage (each reproduced first) ----------------------------


def _known(content, subject):
    return ExistingMemory(id="e1", content=content, memory_type="fact", subject=subject)


@pytest.mark.parametrize(("turns", "known"), [
    ([("user", "The letter had my name spelt wrong. It said Jonson, not Johnson.")],
     [_known("The user's name is Sam Johnson", "name")]),
    ([("user", "The courier went to the wrong house. They went to number 14, not 41.")],
     [_known("The user's home address is 41 Elm Road, Leeds", "address:home")]),
    ([("user", "Your invoice charges us for 9 vans, not 8.")], [_known("The user runs 8 vans", "quantity:vans")]),
    ([("assistant", "Our records show your email as old@aol.example. Is that right?"),
      ("user", "No, that's years out of date")], [_known("The user's email address is me@new.example", "email")]),
    ([("assistant", "I have you at 3 Old Road, Hull. Is that still correct?"), ("user", "No, we moved last year.")],
     [_known("The user's home address is 9 New Street, York", "address:home")]),
    ([("assistant", "Can you confirm the date of birth of the policy holder?"), ("user", "12/09/1958, it's my dad's.")],
     []),
    ([("assistant", "What date did you place the order? I'll also need your date of birth."), ("user", "2 April 2026")],
     []),
    ([("user", "Our cleaner Maria has left us. Please delete her number.")],
     [_known("The user's mum's number is 07700 900 214", "contact:mother")]),
    ([("assistant", "I've removed your email from our mailing list.")], []),
    ([("user", "For invoices, please use accounts@bakerco.example from now on.")], []),
    ([("user", "There is a phone number on your website, 0345 300 0099, but nobody ever picks up.")], []),
    ([("user", "Can you move me to the Annual Pro plan?"), ("assistant", "Done! I've sent you a quote for Annual Pro.")],
     []),
    ([("user", "Can you please not keep ringing my mobile during work hours?")],
     [_known("The user's mobile number is 07700 900 426", "phone")]),
    ([("user", "Forget the Outlook thing, it's working now.")], [_known("The user uses Outlook", "tool:outlook")]),
    ([("user", "I've got a hire car while mine is in the garage.")], []),
    ([("user", "My company registration number is SC12 3456")], []),
])
def test_what_must_not_change_a_fact_changes_none(turns, known):
    candidates = conversation(*turns, existing=known)

    touched = {"name", "address:home", "email", "phone", "birthday", "plan", "device:vehicle", "tool:outlook",
               "quantity:vans"}
    assert not [c for c in candidates if c.subject in touched or c.subject and c.subject.startswith(
        ("identifier:plate", "contact:mother")) or c.action in ("update", "delete")]


def test_a_move_between_two_bookings_of_one_kind_moves_neither():
    known = [ExistingMemory(id="a", content="Booked for the user: table at Luigi's for 8 May", memory_type="episode",
                            subject="booking:table at luigi's:2026-05-08"),
             ExistingMemory(id="b", content="Booked for the user: table at The Crown for 16 May", memory_type="episode",
                            subject="booking:table at the crown:2026-05-16")]
    messages = [ConversationMessage(seq=1, role="assistant", text="I've moved your table at Luigi's to Saturday 9 May.",
                                    created_at=SENT_AT)]

    [moved] = extractor.extract(messages=messages, existing=known)

    assert moved.subject == "booking:table at luigi's:2026-05-08"


def test_a_wrong_weekday_keeps_the_date_as_read():
    from datetime import date

    from apps.extraction.extractors.rules.dates import find_dates

    assert [m.day for m in find_dates("My appointment is on Friday 21 May.", date(2026, 5, 4))] == [date(2026, 5, 21)]


# --- Names the agent's reply confirms ------------------------------------------------------------------------------


@pytest.mark.parametrize(("said", "reply", "name"), [
    ("Hello, rewards member 55 0192. Oskar Lindqvist. I'd like to change my room preferences.",
     "Good afternoon Oskar, of course.", "Oskar Lindqvist"),
    ("Hi, Nadia El Amrani, booking ref QZ9981, calling about my stay.", "Thanks, Nadia. What can I do?",
     "Nadia El Amrani"),
    ("I need to move my delivery. Tadeusz Wójcik-Nowak.", "Hello Mr Wójcik-Nowak, let me look.", "Tadeusz Wójcik-Nowak"),
    ("I'm cancelling, the gym is too far now. Keira Mbeki, I go to the riverside branch.", "Sorry to see you go, Keira.",
     "Keira Mbeki"),
])
def test_a_name_given_on_its_own_is_the_users_when_the_agent_calls_them_by_it(said, reply, name):
    candidates = conversation(("user", said), ("assistant", reply))

    assert one(candidates, "name").metadata["value"] == name


@pytest.mark.parametrize(("said", "reply"), [
    ("Another admin can confirm: Lena Fischer, our office manager, she has access.", "Sent to Lena."),
    ("Another admin can confirm: Lena Fischer, our office manager, she has access.", "Hi Lena, welcome."),
    ("We're moving to Port Talbot. Can you update the account?", "Hello, Port Talbot is in our area."),
    ("Please send it to Lena Fischer.", "Hi Lena."),
    ("Please forward the invoice. Oskar Lindqvist.", "Sent to Oskar Lindqvist's inbox."),
])
def test_a_name_the_agent_does_not_call_the_user_by_is_not_theirs(said, reply):
    assert not [c for c in conversation(("user", said), ("assistant", reply)) if c.subject == "name"]


def test_part_of_the_known_name_does_not_replace_it():
    known = _known("The user's name is Tadeusz Wójcik-Nowak", "name")

    candidates = conversation(("user", "Hi, Tadeusz Nowak here, about my delivery."), existing=[known])

    assert not [c for c in candidates if c.subject == "name"]


# --- Contacts who work with the user, and forgetting their details ------------------------------------------------


@pytest.mark.parametrize(("text", "relation", "name"), [
    ("Statements go to our payroll contact, Wilhelmina Achterberg, w.achterberg@example.nl.", "payroll contact",
     "Wilhelmina Achterberg"),
    ("Copy in my main person there, Joaquín Beltrán.", None, None),
    ("My tax person is Aiko Tanaka, aiko@example.jp.", "tax person", "Aiko Tanaka"),
])
def test_a_contact_named_by_what_they_do_for_the_user(text, relation, name):
    contacts = [c for c in extract(text) if (c.subject or "").startswith("contact:")]

    assert [(c.metadata["relation"], c.metadata["name"]) for c in contacts] == ([(relation, name)] if name else [])


def test_his_email_can_come_off_the_system_forgets_the_contact_named_before():
    candidates = conversation(
        ("user", "Statements go to our payroll contact, Dmitri Sokolov, d.sokolov@example.com."),
        ("assistant", "Saved."),
        ("user", "Dmitri retired last month. His email can come off your system."))

    [forget] = [c for c in candidates if c.action == "delete"]
    assert (forget.metadata["person"], forget.metadata["detail"]) == ("Dmitri Sokolov", "email")


def test_his_email_in_a_later_session_reaches_the_known_contact_named_by_first_name():
    known = _known("The user's payroll contact is Dmitri Sokolov (d.sokolov@example.com)",
                   "contact:payroll contact:dmitri sokolov")

    candidates = conversation(("user", "Dmitri retired. His email should be deleted."), existing=[known])

    [forget] = [c for c in candidates if c.action == "delete"]
    assert (forget.metadata["person"], forget.metadata["detail"]) == ("Dmitri Sokolov", "email")


def test_taking_someone_off_the_account_forgets_them_email_and_all():
    candidates = conversation(
        ("user", "Invoices go to our billing contact, Ingrid Halvorsen, ingrid.h@example.no."),
        ("assistant", "Noted."),
        ("user", "Please take Ingrid off my account, her email too, she has left."))

    # all that names her goes (consolidation: every memory naming "Ingrid" as a name), her email with it
    assert [(c.metadata.get("person"), c.metadata.get("detail")) for c in candidates if c.action == "delete"] == [
        ("Ingrid", None)]


def test_a_pronoun_with_no_removal_asked_forgets_nothing():
    candidates = conversation(
        ("user", "Invoices go to our billing contact, Ingrid Halvorsen, ingrid.h@example.no."),
        ("assistant", "Noted."),
        ("user", "Her email can be found on the invoice too."))

    assert not [c for c in candidates if c.action == "delete"]


def test_someone_the_agent_assigns_to_the_user_is_their_contact():
    candidates = conversation(("user", "Any news on my case?"),
                           ("assistant", "Yes: your caseworker will be Priyanka Nair, p.nair@example.org."))

    contact = one(candidates, "contact:caseworker:priyanka nair")
    assert contact.metadata["email"] == "p.nair@example.org" and contact.metadata["restated_by_agent"] is True


def test_a_new_holder_of_a_role_replaces_the_one_before_and_no_other():
    known = [_known("The user's account manager is Olu Bello (olu@example.com)", "contact:account manager:olu bello"),
             _known("The user's accountant is Mia Roth", "contact:accountant")]

    candidates = conversation(("assistant", "Olu has moved on, so your manager is now Hana Kim, hana@example.com."),
                           existing=known)

    assert one_named(candidates, "Hana Kim").subject == "contact:account manager:olu bello"


def test_a_second_holder_of_a_role_replaces_no_one():
    known = [_known("The user's finance officer is Olu Bello", "contact:finance officer:olu bello")]

    candidates = conversation(("user", "Invoices can also go to our payroll officer, Hana Kim."), existing=known)

    assert one_named(candidates, "Hana Kim").subject == "contact:payroll officer:hana kim"


def one_named(candidates, name):
    [candidate] = [c for c in candidates if c.metadata.get("name") == name]
    return candidate


# --- A phone number given on its own -------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "number"), [
    ("Could you text instead of calling? 07981 223 456.", "07981 223 456"),
    ("Signal is easiest, +61 412 555 019.", "+61 412 555 019"),
    ("Yes, to 312-555-0142.", "312-555-0142"),
    ("Please add my cell for alerts. (503) 555-0199", "(503) 555-0199"),
])
def test_a_phone_shaped_number_given_on_its_own_is_the_users_and_replaces_none(text, number):
    assert one(extract(text), "phone").metadata["value"] == number

    on_file = _known("The user's mobile number is 07700 900 100", "phone")
    beside = one(conversation(("user", text), existing=[on_file]), "phone:other")
    assert beside.metadata["value"] == number


@pytest.mark.parametrize("text", [
    "I rang 01632 960 111 four times this morning.",
    "The front desk is 0121 496 0777 if I'm out.",
    "jo is 0412 555 700, put the cap on that one.",
    "Book me a cab from Metro Cars: 020 7946 0333",
    "My husband is on 07700 900 811.",
    "Her number is 07700 900 812.",
    "My old one was 07700 900 813.",
    "The order number is 0123 456 789.",
    "If it helps, 07700 900 814 might work.",
    "Is 07700 900 815 the right one?",
    "Call your head office on 0300 123 4567, they said.",
])
def test_a_number_that_is_someone_elses_or_not_current_is_not_the_users(text):
    assert phones(extract(text)) == []


# --- An address given on its own -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "address"), [
    ("Apartment 6, Linden Court, 14 Mill Street, Galway H91 X2C4. The buzzer is broken.",
     "Apartment 6, Linden Court, 14 Mill Street, Galway H91 X2C4"),
    ("Sure, name Ada Park, address 77 Kestrel Avenue, Apt 2B, Denver CO 80203.", "77 Kestrel Avenue, Apt 2B, Denver CO 80203"),
    ("i moved in last week, its 5 Brook Terrace, Derby DE1 1AA", "5 Brook Terrace, Derby DE1 1AA"),
])
def test_an_address_given_on_its_own_is_the_users(text, address):
    assert one(extract(text), "address:home").metadata["value"] == address


@pytest.mark.parametrize("text", [
    "He lives at 3 Mill Lane, Frome, BA11 1QE.",
    "Returns go to 16 Quay Street, Inverness IV1 1SU.",
    "Collection from 4 Depot Road, Hull HU1 2AA please.",
    "We're moving to 9 Elm Grove, York next month.",
    "The old address was 12 Ash Road, Leeds.",
    "Could it go to 8 Bell Lane, Bath?",
    "See you on 12 May at 10 Downing Street.",
])
def test_an_address_that_is_not_where_the_user_is_now_is_not_theirs(text):
    assert not [c for c in extract(text) if (c.subject or "").startswith("address")]


def test_an_address_given_on_its_own_never_replaces_the_one_on_file():
    on_file = _known("The user's home address is 2 Old Road, Hull", "address:home")
    candidates = conversation(("user", "Flat 3, 27 Mercer Street, Leeds LS2 7HY. Thanks!"), existing=[on_file])

    assert not [c for c in candidates if (c.subject or "").startswith("address")]


def test_a_correction_of_a_flat_number_corrects_the_address():
    candidates = extract("My address is flat 14 Linden Court, 2 Mill Street, Galway.",
                         "oh sorry, is flat 4 not 14, I typed it wrong.")

    assert one(candidates, "address:home").metadata["value"].startswith("flat 4 Linden Court")


@pytest.mark.parametrize(("text", "sentences"), [
    ("Please use ola@online.no. I work nights.", ["Please use ola@online.no.", "I work nights."]),
    ("Write to sales@acme.co. We reply fast.", ["Write to sales@acme.co.", "We reply fast."]),
    ("Ask for Dr. Ahmed. She knows.", ["Ask for Dr. Ahmed.", "She knows."]),
    ("It is order no. 55 from last week.", ["It is order no. 55 from last week."]),
])
def test_an_address_ending_like_an_abbreviation_still_ends_its_sentence(text, sentences):
    from apps.extraction.extractors.rules.text import split_sentences

    assert split_sentences(text) == sentences


@pytest.mark.parametrize("text", ["I would prefer support in Portuguese.", "I would rather have support in Portuguese."])
def test_i_would_prefer_is_a_preference_like_id_prefer(text):
    assert one(extract(text), "preference:language").content.endswith("support in Portuguese")


@pytest.mark.parametrize(("text", "subject", "device"), [
    ("The kitchen TV is a Sony X90L and it works.", "device:tv", "Sony X90L"),
    ("Yes, my tablet is a Lenovo P12.", "device:tablet", "Lenovo P12"),
    ("It drops out a lot, the router is a FRITZ!Box 7530.", "device:router", "FRITZ!Box 7530"),
])
def test_a_device_said_to_be_a_named_product_is_the_users(text, subject, device):
    assert one(extract(text), subject).metadata["value"] == device


@pytest.mark.parametrize("text", ["Your router is a Huawei B535, isn't it?", "The engineer's van is a Ford Transit.",
                                  "Their phone is a Pixel 8."])
def test_someone_elses_named_device_is_not_the_users(text):
    assert not [c for c in extract(text) if (c.subject or "").startswith("device")]


@pytest.mark.parametrize(("text", "content"), [
    ("Window please, always window, I like to sleep on flights.", "The user always wants window"),
    ("Always a quiet table at the back, I have tinnitus.", "The user always wants a quiet table at the back"),
    ("yes, always Italian please", "The user always wants Italian"),
])
def test_always_and_a_thing_is_what_the_user_wants_every_time(text, content):
    assert content in [c.content for c in extract(text)]


@pytest.mark.parametrize("text", ["Always late, your couriers.", "always the same problem with you lot",
                                  "Always happy to help.", "The chef must always know about it.",
                                  "Always something with this app."])
def test_always_without_a_thing_wanted_is_no_preference(text):
    assert not [c for c in extract(text) if c.metadata["rule"] == "preference.always"]


# --- People removed from the records ---------------------------------------------------------------------------


def test_someone_the_agent_removes_from_the_records_by_first_name_is_forgotten_with_what_the_batch_said():
    candidates = conversation(
        ("user", "My Idris passed away in June, so please take him off the account and off your records altogether."),
        ("assistant", "I'm so sorry. I've removed Idris from your account and from our records."))

    assert [(c.action, c.metadata.get("person")) for c in candidates] == [("delete", "Idris")]


def test_a_single_name_removed_from_something_else_is_not_forgotten():
    candidates = conversation(("assistant", "I've removed Premium from your basket."))

    assert not [c for c in candidates if c.action == "delete"]


def test_her_details_reach_the_known_contact_this_message_names_over_one_named_before():
    known = _known("The user's wife is Folasade", "contact:wife")

    candidates = conversation(("user", "I gave my old laptop to my nephew."), ("assistant", "Noted."),
                           ("user", "And take Folasade's phone off the plan. You don't need to keep her details either."),
                           existing=[known])

    [forget] = [c for c in candidates if c.action == "delete"]
    assert forget.metadata["person"] == "Folasade"


@pytest.mark.parametrize(("text", "month"), [
    ("My father passed away in August and I'm sorting his things.", "2025-08"),
    ("We're moving in August.", "2026-08"),
    ("My daughter gets married on 12 August and we fly out the day after.", "2026-08"),
])
def test_a_month_in_the_past_tense_is_last_years_when_it_is_still_ahead(text, month):
    from datetime import date

    [mention, *_] = find_dates(text, date(2026, 3, 14))
    assert mention.day.isoformat()[:7] == month


def test_a_code_of_letters_and_digits_labelled_by_a_word_alone_is_that_identifier():
    assert one(extract("No thanks. Passport XK4417290. Destination is Lisbon."), "identifier:passport").metadata[
        "identifier"] == "XK4417290"
    assert not [c for c in extract("The passport office was slow.") if c.subject == "identifier:passport"]


def test_delete_it_after_a_clause_that_names_a_thing_forgets_that_thing_not_the_last_fact():
    candidates = conversation(("user", "Reach me on 0412 555 019 from now on. There's no need to keep my passport number "
                                    "on file, please delete it."))

    assert [c.subject for c in candidates if c.action == "delete"] == ["identifier:passport"]
    assert one(candidates, "phone").metadata["value"] == "0412 555 019"


@pytest.mark.parametrize(("text", "subject", "content"), [
    ("Reach me on 07700 900 100. And my sister, Ilinca, is helping too, her number is 07700 900 101.",
     "contact:sister:ilinca", "The user's sister is Ilinca (07700 900 101)"),
    ("My partner Teodor Vasile picks the car up most days, so let him sign off work too, his number is 0412 555 883.",
     "contact:partner", "The user's partner is Teodor Vasile (0412 555 883)"),
    ("I'd like to add my brother as a named driver while I'm away. Ravi Menon, 07700 900 102.",
     "contact:brother:ravi menon", "The user's brother is Ravi Menon (07700 900 102)"),
    ("can you add a recovery email? use my son's, dev.menon@example.com", "contact:son:email",
     "The user's son's email address is dev.menon@example.com"),
])
def test_a_contacts_details_given_around_their_name_are_kept_with_them(text, subject, content):
    assert one(extract(text), subject).content == content


def test_a_second_card_named_in_a_sentence_about_billing_is_kept_too():
    candidates = extract("Billing is on the Amex ending 3005, and there's a spare Visa ending 7781 if that fails.")

    assert {c.subject for c in candidates} >= {"identifier:card:3005", "identifier:card:7781"}


@pytest.mark.parametrize(("offer", "answer", "content"), [
    ("For broadband we have Fibre 150 at £30, or Fibre 900, a faster package at £45.", "fibre 900 pls, we stream a lot",
     "The user is on the Fibre 900 package"),
    ("Which plan would you like? We have Starter at $9, Team at $29, and Team Plus at $49.", "Team Plus, thanks.",
     "The user is on the Team Plus plan"),
])
def test_the_option_the_user_picks_from_the_agents_offer_is_their_plan(offer, answer, content):
    assert one(conversation(("assistant", offer), ("user", answer)), "plan").content == content


@pytest.mark.parametrize(("offer", "answer"), [
    ("Which plan would you like? We have Starter and Team.", "Team sounds expensive, what does it include?"),
    ("Which plan would you like? We have Starter and Team.", "Neither, thanks."),
    ("Thanks, Oskar. Anything else?", "Team Plus, thanks."),
])
def test_an_answer_that_picks_nothing_offered_is_no_plan(offer, answer):
    assert not [c for c in conversation(("assistant", offer), ("user", answer)) if c.subject == "plan"]


@pytest.mark.parametrize(("turns", "status"), [
    ([("user", "Hello, I'm a Harbour Club Silver member, number HC-2210-77.")], "Silver"),
    ([("assistant", "I've updated your profile. Your status is Diamond until June 2027.")], "Diamond"),
])
def test_a_membership_level_with_its_programme_or_an_end_date_is_the_users(turns, status):
    assert one(conversation(*turns), "membership").metadata["value"] == status


def test_a_member_number_after_a_comma_is_the_membership_number():
    assert one(extract("I'm a Gold member, number HC-2210-77."), "identifier:membership").metadata[
        "identifier"] == "HC-2210-77"


@pytest.mark.parametrize(("offer", "answer", "booked"), [
    ("The first boiler service slot is Thursday 26 March, 8am to 12pm. Shall I book it?", "Yes please.",
     "Booked for the user: The first boiler service slot is Thursday 26 March (2026-03-26), 8am to 12pm"),
    ("Dr Ahmed can see you on Monday 23 March at 10:40. Would you like me to book that?", "Perfect, thanks.",
     "Booked for the user: Dr Ahmed can see the user on Monday 23 March (2026-03-23) at 10:40"),
])
def test_a_dated_slot_the_agent_offers_and_the_user_accepts_is_booked(offer, answer, booked):
    assert [c.content for c in conversation(("assistant", offer), ("user", answer))
            if c.metadata["rule"] == "support.outcome.accepted"] == [booked]


@pytest.mark.parametrize(("offer", "answer"), [
    ("The first slot is Thursday 26 March, 8am to 12pm. Shall I book it?", "No, I'm away then."),
    ("The first slot is Thursday 26 March, 8am to 12pm. Shall I book it?", "Yes, but is there anything later?"),
    ("We have Monday 23 March or Tuesday 24 March. Shall I book one?", "Yes."),
    ("The first slot is Thursday 26 March. Anything else?", "Yes, my address changed."),
])
def test_an_offer_declined_unclear_or_not_made_books_nothing(offer, answer):
    assert not [c for c in conversation(("assistant", offer), ("user", answer))
                if c.metadata["rule"] == "support.outcome.accepted"]


@pytest.mark.parametrize(("said", "content"), [
    ("Done: a direct debit of £42 to Northwell Water on the 3rd of each month.",
     "Support update for the user: a direct debit of £42 to Northwell Water on the 3rd of each month"),
    ("Done, paper statements are now off for your account.", "Paper statements are now off for the user's account"),
    ("All set: you have a standing booking for the 7am swim on Mondays.",
     "The user has a standing booking for the 7am swim on Mondays"),
])
def test_what_the_agent_reports_done_is_kept(said, content):
    assert content in [c.content for c in conversation(("assistant", said))]


@pytest.mark.parametrize("said", ["Done! Anything else I can help with?", "Done, thanks for your patience.",
                                  "Sorted: is there anything else?", "Done: I can't cancel the order though."])
def test_a_done_that_reports_nothing_is_not_kept(said):
    assert not [c for c in conversation(("assistant", said)) if c.metadata["rule"] == "support.outcome.done"]


@pytest.mark.parametrize(("said", "content"), [
    ("I've placed a hold on the parcel until Friday 20 March.",
     "The assistant placed a hold on the parcel until Friday 20 March (2026-03-20)"),
    ("I've blocked the card ending 7781 so nothing more can go through.",
     "The assistant blocked the card ending 7781 so nothing more can go through"),
])
def test_more_agent_actions_are_episodes(said, content):
    assert content in [c.content for c in conversation(("assistant", said))]


@pytest.mark.parametrize("said", ["Booked, reference CW-88142.", "Done, that's the address on your profile."])
def test_a_done_that_only_repeats_a_reference_or_points_at_something_is_not_kept(said):
    assert not [c for c in conversation(("assistant", said)) if c.metadata["rule"] == "support.outcome.done"]


def test_a_new_card_for_one_that_expired_replaces_it_and_the_old_one_is_not_stored_again():
    [new] = extract("My Mastercard ending 4410 expired, the new card ends in 9023.")

    assert (new.subject, new.metadata["identifier"], new.metadata["replaces"]) == ("identifier:card:4410", "9023", "4410")


@pytest.mark.parametrize("text", ["I only gave my date of birth for that age check, please don't keep it.",
                                  "I only gave my date of birth for the age check, please delete it."])
def test_it_after_the_users_own_thing_and_another_is_the_users_own_thing(text):
    assert [c.subject for c in extract(text) if c.action == "delete"] == ["birthday"]


def test_a_relations_email_beside_the_users_own_keeps_both():
    candidates = extract("My email is mira@example.com, and for school letters use my son's, dev.menon@example.com.")

    assert one(candidates, "email").metadata["value"] == "mira@example.com"
    assert one(candidates, "contact:son:email").metadata["email"] == "dev.menon@example.com"


@pytest.mark.parametrize(("text", "reference", "day"), [
    ("Your slot on Thursday 12 March is confirmed.", (2026, 3, 20), (2026, 3, 12)),  # this year's, gone by
    ("Your slot on Friday 12 March 2027 is confirmed.", (2026, 3, 20), (2027, 3, 12)),  # a year said stays
    ("Your slot on Monday 12 March is confirmed.", (2026, 3, 20), (2027, 3, 12)),  # fits neither: as read
])
def test_a_stated_weekday_takes_a_date_read_as_next_years_back_to_this_years(text, reference, day):
    from datetime import date

    assert [m.day for m in find_dates(text, date(*reference))] == [date(*day)]


def test_a_plan_change_asked_confirmed_over_three_turns_is_the_plan():
    candidates = conversation(("user", "Can you drop me down to Lite HD? We never watch in 4K."),
                           ("assistant", "Lite HD is £8 a month. Shall I switch you from 11 April?"),
                           ("user", "Yes please."),
                           ("assistant", "All done: you'll be on Lite HD from 11 April."))

    assert one(candidates, "plan").metadata["value"] == "Lite HD"


@pytest.mark.parametrize("turns", [
    [("user", "Can you move me to Lite HD?"), ("assistant", "Lite HD is £8. Shall I switch you?"),
     ("user", "Yes, but not until May."), ("assistant", "OK, you'll be on Lite HD from May.")],
    [("user", "Can you drop me down to Lite HD?"), ("assistant", "Sorry, I can't switch you to Lite HD mid-contract.")],
    [("user", "Can you move me to Lite HD?"), ("assistant", "Lite HD is £8. Shall I switch you?"), ("user", "No thanks."),
     ("assistant", "OK, you'll stay on Premium.")],
])
def test_a_plan_change_not_agreed_or_not_made_is_no_plan(turns):
    assert not [c for c in conversation(*turns) if c.subject == "plan" and "Lite HD" in c.content]


@pytest.mark.parametrize(("text", "content"), [
    ("And please take me off the promotional emails, there are too many.", "The user does not want promotional emails"),
    ("Please stop sending me the weekly newsletter.", "The user does not want weekly newsletter"),
    ("Unsubscribe me from marketing texts please.", "The user does not want marketing texts"),
])
def test_what_the_user_asks_not_to_be_sent_is_a_preference(text, content):
    assert content in [c.content for c in extract(text)]


def test_the_business_a_user_holds_the_account_for_is_their_business():
    assert one(extract("I have the business account for Ola's Kitchen, account number 31250999."), "employer").content \
        == "The user's business is Ola's Kitchen"


@pytest.mark.parametrize(("text", "identifier"), [
    ("My membership number is RX 5502 9917 3.", "RX 5502 9917 3"),
    ("My membership number is RX 5502 9917 for 3 years now.", "RX 5502 9917"),
])
def test_a_last_single_digit_group_belongs_to_an_identifier_only_where_it_ends(text, identifier):
    assert one(extract(text), "identifier:membership").metadata["identifier"] == identifier


def test_a_name_followed_by_whose_customer_they_are_is_both():
    candidates = extract("Good evening. Adaeze Obi, Harbourline Premium customer. I'd like to check my devices.")

    assert one(candidates, "name").metadata["value"] == "Adaeze Obi"
    assert "The user is a Harbourline Premium customer" in [c.content for c in candidates]


@pytest.mark.parametrize(("text", "subject", "content"), [
    ("My vet is Hollybrook Vets in Leeds.", "provider:vet", "The user's vet is Hollybrook Vets"),
    ("Our bank, Northway Bank, blocked the payment.", "provider:bank", "The user's bank is Northway Bank"),
])
def test_a_business_the_user_uses_is_their_provider_of_that_kind(text, subject, content):
    assert one(extract(text), subject).content == content


@pytest.mark.parametrize("text", ["my dentist is great", "Our school is closed today.", "Your garage, sadly, is shut."])
def test_a_provider_word_without_a_business_named_is_no_provider(text):
    assert not [c for c in extract(text) if (c.subject or "").startswith("provider:")]


@pytest.mark.parametrize(("said", "content"), [
    ("Chat is fine, and I've noted that you'd like text messages rather than phone calls.",
     "The user would like text messages rather than phone calls"),
    ("I've added to your record: an interpreter for all appointments, and ground floor rooms only.",
     "Noted on the user's record: an interpreter for all appointments, and ground floor rooms only"),
    ("Noted: Signal on +44 7700 900 111 is your preferred channel.",
     "Noted on the user's record: Signal on +44 7700 900 111 is the user's preferred channel"),
    ("I've put a note on your account saying do not phone before noon, email instead.",
     "The user does not want to be called before noon"),
    ("Thanks. I've noted on your profile: low-impact only, no jumping.",
     "Noted on the user's record: low-impact only, no jumping"),
])
def test_what_the_agent_notes_on_the_customers_record_is_kept(said, content):
    assert content in [c.content for c in conversation(("user", "Hello."), ("assistant", said))]


def test_a_note_the_rules_can_read_in_the_customers_words_is_that_fact():
    [note] = conversation(("assistant", "I've noted that your mobile is now 07700 900 432."))

    assert (note.subject, note.metadata["restated_by_agent"]) == ("phone", True)


def test_two_notes_in_a_sentence_are_two_and_an_agent_action_after_a_note_is_not_part_of_it():
    contents = [c.content for c in conversation(("assistant", "I've recorded the severe nut allergy, and noted that you"
                                                              " carry an EpiPen, and I've emailed the school nurse."))]

    assert "Noted on the user's record: the severe nut allergy" in contents
    assert "The user carry an EpiPen" not in contents and "The user carries an EpiPen" in contents


@pytest.mark.parametrize("said", ["Noted, thanks!", "I've noted your new address.", "I've noted that down.",
                                  "I've noted your WhatsApp number.", "Noted: is there anything else?",
                                  "I've added the late fee to your bill."])
def test_a_note_that_only_points_at_something_is_not_kept(said):
    assert not [c for c in conversation(("assistant", said)) if c.metadata["rule"] == "support.noted"]


def test_a_note_repeating_what_the_customer_said_is_not_kept_beside_it():
    candidates = conversation(("user", "Please only ring me after 3pm, I work mornings."),
                              ("assistant", "Of course. I've noted on your account: calls after 3pm only."))

    assert not [c for c in candidates if c.metadata["rule"] == "support.noted"]
    assert [c for c in candidates if "3pm" in c.content]


@pytest.mark.parametrize(("said", "content"), [
    ("Updated: Mr Novak at number 12 is your signature neighbour now.",
     "Mr Novak at number 12 is the user's signature neighbour now"),
    ("Done: undeliverable parcels will go to the locker at the station.",
     "Support update for the user: undeliverable parcels will go to the locker at the station"),
    ("Nice one! Switched to decaf from your next bag.", "Switched to decaf from the user's next bag"),
])
def test_a_report_of_a_standing_change_is_kept(said, content):
    assert content in [c.content for c in conversation(("assistant", said))]


def test_an_email_or_web_address_is_not_rewritten_as_a_pronoun():
    person = Person()

    assert rewrite_second_person("Your bills go to dina@proton.me, see you.example/me", person) == \
        "The user's bills go to dina@proton.me, see you.example/me"
    assert rewrite_first_person("Send it to me at dina@proton.me", person) == \
        "Send it to the user at dina@proton.me"


@pytest.mark.parametrize("text", ["My new number is 07700 900 111, please delete the old one.",
                                  "My new number is 07700 900 111, please delete my old number.",
                                  "Please delete my old number, my new one is 07700 900 111."])
def test_a_forget_of_the_old_number_never_takes_the_new_one(text):
    candidates = extract(text)

    [forget] = [c for c in candidates if c.action == "delete"]
    assert (forget.subject, forget.metadata.get("old"), forget.metadata.get("value")) == ("phone", True, None)
    [new] = [c for c in candidates if c.action == "add"]
    assert new.metadata["value"] == "07700 900 111"
    assert candidates.index(forget) < candidates.index(new)  # so that it takes what was on file, not the new one


@pytest.mark.parametrize("text", ["delete my old email, the new one is a@example.com",
                                  "My new email is a@example.com so you can delete the old one",
                                  "please remove my sister's email from my file, my email is a@example.com"])
def test_the_value_said_beside_a_forget_request_is_stored_not_forgotten(text):
    candidates = extract(text)

    assert [c.metadata["value"] for c in candidates if c.action == "add"] == ["a@example.com"]
    assert not [c for c in candidates if c.action == "delete" and c.metadata.get("value") == "a@example.com"]


def test_a_forget_request_does_not_reach_a_number_in_the_statement_after_it():
    candidates = extract("you can delete my parents' address from my file, my uncle in Leeds is my emergency contact "
                         "now, Suresh Iyer, 07700 900 745")

    [forget] = [c for c in candidates if c.action == "delete"]
    assert (forget.metadata["person"], forget.metadata["detail"]) == ("parent", "address")
    assert any("07700 900 745" in c.content for c in candidates if c.action == "add")


def test_an_earlier_value_pointed_back_at_is_still_forgotten():
    [forget] = extract("that old Hotmail address amy@hotmail.com, bin it please")

    assert (forget.action, forget.metadata["value"]) == ("delete", "amy@hotmail.com")


@pytest.mark.parametrize(("text", "content"), [
    ("My emergency contact is my uncle, Suresh Iyer, 07700 900 745.",
     "The user's uncle Suresh Iyer is their emergency contact (07700 900 745)"),
    ("Please put my sister Ana Lopes as emergency contact, 07700 900 111.",
     "The user's sister Ana Lopes is their emergency contact (07700 900 111)"),
    ("my emergency contact is Suresh Iyer, 07700 900 745", "The user's emergency contact is Suresh Iyer (07700 900 745)"),
    ("My son Tom, 07700 900 222, can call you.", "The user's son is Tom (07700 900 222)"),
])
def test_a_contact_keeps_their_role_and_the_number_given_right_after_them(text, content):
    assert content in [c.content for c in extract(text)]


def test_a_number_that_is_not_phone_shaped_after_a_contact_is_not_their_phone():
    [son] = [c for c in extract("My son Tom Reyes, 1234 5678, is on the account.")
             if (c.subject or "").startswith("contact:")]

    assert "phone" not in son.metadata


def test_a_relations_address_is_cut_out_of_a_note_that_says_more():
    content = "The user's parents are Lakshmi and Prakash Raghavendra, 14 Model Colony, Pune 411016"

    assert detail_values(content, "address") == ["14 Model Colony, Pune 411016"]
    assert without_value(content, "14 Model Colony, Pune 411016") == "The user's parents are Lakshmi and Prakash Raghavendra"


def test_a_name_with_a_role_at_an_organisation_introduces_the_user_further_on_in_a_message():
    candidates = extract("Good day. I need a booking. Bogdan Petrović, logistics coordinator at Drina Foods. 18 pallets.")

    assert one(candidates, "name").metadata["value"] == "Bogdan Petrović"
    assert one(candidates, "employer").metadata["value"] == "Drina Foods"


def test_a_name_with_a_role_further_on_is_not_the_users_once_another_name_is_known():
    candidates = extract("Hello. Please copy our buyer. Sam Ito, head of purchasing at Acme Foods.", user_name="Dana Kerr")

    assert not [c for c in candidates if c.subject == "name"]


@pytest.mark.parametrize(("text", "subject"), [("I'm freelance now.", "employer"), ("I'm self-employed.", "employer"),
                                               ("I'm retired now.", "job_title")])
def test_working_for_themselves_is_who_the_user_works_for_not_what_they_do(text, subject):
    assert one(extract(text), subject).metadata["rule"] == "identity.job_state"


@pytest.mark.parametrize(("content", "organisation", "left"), [
    ("The user is a practice manager at Oberon Dental Group", "Oberon", "The user is a practice manager"),
    ("The user is a video editor at Northlight Studios, working from home", "Northlight Studios",
     "The user is a video editor, working from home"),
    ("The user works at Oberon", "Oberon", None),
])
def test_a_job_title_is_read_without_the_employer_left(content, organisation, left):
    assert without_employer(content, organisation) == left


@pytest.mark.parametrize(("text", "subject", "value"), [
    ("my number's changed to 07700 348 815", "phone", "07700 348 815"),
    ("and my number's changed to 07700 348 815, the old one was my work phone", "phone", "07700 348 815"),
    ("my address has changed to 4 Elm Road, Leeds LS1 2AB", "address:home", "4 Elm Road, Leeds LS1 2AB"),
    ("my address's changed to 4 Elm Road, Leeds", "address:home", "4 Elm Road, Leeds"),
])
def test_a_detail_that_has_changed_to_a_new_value_is_that_value(text, subject, value):
    assert one(extract(text), subject).metadata["value"] == value


@pytest.mark.parametrize(("sentence", "clauses"), [
    ("Our cat, Pixel, has kidney disease and is on a renal diet.", ["Our cat, Pixel, has kidney disease and is on a renal diet"]),
    ("Our dog Rolo, a 3 year old spaniel, has epilepsy.", ["Our dog Rolo, a 3 year old spaniel, has epilepsy"]),
    ("My address, is that still right?", ["My address", "is that still right"]),
    ("I'm partially sighted, please send large print.", ["I'm partially sighted", "please send large print"]),
])
def test_a_subject_set_off_by_commas_keeps_its_verb(sentence, clauses):
    assert [clause.text for clause in split_clauses(sentence)] == clauses


@pytest.mark.parametrize(("turns", "content"), [
    ((("user", "My son Thiago starts Year 3 in September."), ("assistant", "Lovely."),
      ("user", "First the medical part: Thiago has a severe peanut allergy.")),
     "The user's son Thiago has a severe peanut allergy"),
    ((("user", "I want to sign up my daughter Dana. She is 13 and a total beginner."),),
     "The user's daughter Dana is 13 and a total beginner"),
    ((("user", "My dog Max is a 7 year old labrador. He needs a grain-free diet."),),
     "The user's dog Max needs a grain-free diet"),
])
def test_what_the_user_says_of_their_people_by_name_or_pronoun_is_kept(turns, content):
    assert content in [c.content for c in conversation(*turns)]


@pytest.mark.parametrize(("text", "said"), [
    ("My wife Sara called yesterday about the bill. Sara thinks it is wrong.", "wrong"),
    ("My son Leo is off school today. He said the app is broken.", "broken"),
    ("My daughter Dana is away. He was rude to her, the driver.", "rude"),
])
def test_what_happened_to_them_today_or_what_they_said_or_someone_else_is_not_a_fact_about_them(text, said):
    assert not [c for c in extract(text) if said in c.content]


def test_the_users_people_from_earlier_sessions_are_known_by_name():
    existing = [ExistingMemory(id="m1", content="The user's dog is Rolo", memory_type="fact",
                               subject="contact:dog:rolo")]

    assert "The user's dog Rolo has epilepsy and takes phenobarbital twice a day" in [
        c.content for c in conversation(("user", "Rolo has epilepsy and takes phenobarbital twice a day."), existing=existing)]


@pytest.mark.parametrize("text", ["We're also thinking we might add a couples massage but haven't decided.",
                                  "We may move the office to Leeds next year.", "I haven't decided on the colour yet."])
def test_what_the_user_has_not_decided_is_not_a_fact(text):
    assert not [c for c in extract(text) if c.metadata["rule"] == "statement"]


@pytest.mark.parametrize(("text", "subject", "content"), [
    ("Invoices go to accounts@oliveandvine.co.uk.", "routing:billing",
     "The user's invoices go to accounts@oliveandvine.co.uk"),
    ("Please send all statements to money@example.com from now on.", "routing:statements",
     "The user's statements go to money@example.com"),
])
def test_where_a_kind_of_post_goes_is_kept_and_replaceable(text, subject, content):
    assert one(extract(text), subject).content == content


@pytest.mark.parametrize("text", ["Send the receipt to finance@acme.com", "Please send the invoice to my accountant at k@x.com"])
def test_a_one_off_or_someone_elses_address_is_no_standing_route(text):
    assert not [c for c in extract(text) if (c.subject or "").startswith("routing:")]


@pytest.mark.parametrize(("text", "content"), [
    ("The hearing is on 3 March at Leeds County Court.", "The user's hearing is on 3 March (2027-03-03) at Leeds County Court"),
    ("The completion date is 14 August.", "The user's completion date is 14 August (2026-08-14)"),
])
def test_a_dated_event_of_the_users_said_with_the_is_theirs(text, content):
    assert content in [c.content for c in extract(text)]


def test_a_subject_set_off_by_commas_keeps_a_modal_verb():
    assert [c.text for c in split_clauses("Our new head chef, Pierre Blanc, will place orders from now on.")] == [
        "Our new head chef, Pierre Blanc, will place orders from now on"]


@pytest.mark.parametrize(("text", "subject", "content"), [
    ("My ex-husband must not be given any information about the case.", "contact:ex-husband",
     "The user's ex-husband must not be given any information about the case"),
    ("My son is not allowed to order on my account.", "contact:son",
     "The user's son is not allowed to order on their account"),
])
def test_what_a_contact_may_not_do_or_be_told_is_kept(text, subject, content):
    assert one(extract(text), subject).content == content


def test_a_number_given_right_after_someone_else_is_introduced_is_theirs_not_the_users():
    candidates = extract("They can only receive before 10am, and the manager there is Ravi Menon, 07700 900 812.")

    assert not [c for c in candidates if c.subject == "phone"]
    assert one(candidates, "contact:site manager:ravi menon").metadata["phone"] == "07700 900 812"


@pytest.mark.parametrize("text", ["The engineer is Bob, he was great.", "The driver is Tom Jones and he was late."])
def test_the_providers_staff_are_not_the_users_contacts(text):
    assert not [c for c in extract(text) if (c.subject or "").startswith("contact:")]


def test_an_address_given_when_another_of_the_users_places_is_talked_about_is_not_their_home():
    candidates = conversation(("assistant", "Should the second site get its own deliveries?"),
                              ("user", "Yes, Unit 4, Chapel Street, Salford M3 5DW."))

    assert not [c for c in candidates if (c.subject or "").startswith("address")]


@pytest.mark.parametrize(("turns", "content"), [
    ((("user", "My boiler's stopped working since last night. It's a Worcester Bosch Greenstar 30i."),),
     "The user's boiler is a Worcester Bosch Greenstar 30i"),
    ((("assistant", "What car is it?"), ("user", "It's a grey Volvo XC40, registration YB21 KDF.")),
     "The user's car is a grey Volvo XC40, registration YB21 KDF"),
    ((("user", "I'll be using my own router, an Asus RT-AX86U, so no need to send me yours."),),
     "The user's router is an Asus RT-AX86U"),
    ((("user", "I lease a Peugeot 3008 through you, contract LS-4471-082."),),
     "The user leases a Peugeot 3008 through the assistant, contract LS-4471-082"),
    ((("user", "jamal al-khatib, honda civic, reg KV68 PNZ"),), "The user's vehicle is a honda civic"),
])
def test_a_named_product_is_the_device_it_is_said_to_be(turns, content):
    assert content in [c.content for c in conversation(*turns)]


@pytest.mark.parametrize("text", ["My phone keeps dropping calls. It's an old one, I should replace it.",
                                  "I've got a hire car while the Ford is being fixed."])
def test_no_named_product_or_someone_elses_vehicle_is_no_device(text):
    assert not [c for c in extract(text) if (c.subject or "").startswith("device:")]


def test_a_word_that_starts_with_a_digit_is_not_rewritten():
    assert rewrite_first_person("My boiler is a Greenstar 30i, I think", Person()) == \
        "The user's boiler is a Greenstar 30i, they think"


@pytest.mark.parametrize(("text", "subject", "content"), [
    ("I am enrolled in the course, student ID S-2290-4471.", "identifier:student", "The user's student ID is S-2290-4471"),
    ("our EORI number is GB 318 4470 2209 00", "identifier:eori", "The user's EORI number is GB 318 4470 2209 00"),
    ("My hospital number is H7730215.", "identifier:hospital", "The user's hospital number is H7730215"),
])
def test_an_identifier_of_a_kind_no_list_names_is_kept(text, subject, content):
    assert one(extract(text), subject).content == content


@pytest.mark.parametrize("text", ["The door code is 4471B.", "my flat number is 12B", "Table number 14 please",
                                  "The gate PIN number is 88231.", "His NHS number is 943 476 5919."])
def test_a_code_a_pin_a_place_or_someone_elses_number_is_no_identifier_of_the_users(text):
    assert not [c for c in extract(text) if c.metadata["rule"] == "identifier.other"]


@pytest.mark.parametrize(("turns", "subject", "value"), [
    ((("assistant", "I have your EORI as GB 318 4470 2290 00, is that right?"),
      ("user", "Ah, two digits are swapped, it's GB 318 4470 2209 00. Sorry!")), "identifier:eori", "GB 318 4470 2209 00"),
    ((("assistant", "Can I take the registration of the new van?"), ("user", "It's MA26 KCS. The others are on file.")),
     "identifier:plate:MA26 KCS", "MA26 KCS"),
    ((("assistant", "Could you give me the serial number from the sticker underneath?"),
      ("user", "It is N3K0LP0912345. Sorry, I read it wrong, the last digits are 54, so N3K0LP0912354")),
     "identifier:serial:N3K0LP0912354", "N3K0LP0912354"),
    # the answer names what it gives; "we'll need" asks as "could you give me" does
    ((("assistant", "Could you give me the serial number from the sticker?"), ("user", "The serial's WB30-558812.")),
     "identifier:serial:WB30-558812", "WB30-558812"),
    ((("assistant", "We'll need the EORI number to release it."), ("user", "EORI is GB 318 4470 2209 00")),
     "identifier:eori", "GB 318 4470 2209 00"),
])
def test_a_bare_identifier_answering_the_agents_question_is_kept_as_settled(turns, subject, value):
    candidates = conversation(*turns)

    assert one(candidates, subject).metadata["identifier"] == value
    assert len([c for c in candidates if c.action == "add"]) == 1


@pytest.mark.parametrize(("said", "content"), [
    ("As a goodwill gesture I've refunded €23.40 to your account.", "The assistant refunded €23.40 to the user's account"),
    ("We've also given you a temporary credit of £169.99.", "Support also gave the user a temporary credit of £169.99"),
    ("Once the warehouse receives the desk, we'll refund £349 to your original payment method.",
     "Support will refund £349 to the user's original payment method"),
    ("I'll apply a credit of €80 to your next invoice.", "The assistant will apply a credit of €80 to the user's next invoice"),
])
def test_money_the_agent_gives_or_promises_is_an_episode(said, content):
    assert content in [c.content for c in conversation(("assistant", said))]


@pytest.mark.parametrize("said", ["If the claim is approved, we'll refund £349.", "I'll check whether we can refund it.",
                                  "We'll refund you if it arrives damaged."])
def test_money_only_maybe_given_is_no_episode(said):
    assert not [c for c in conversation(("assistant", said)) if c.metadata["rule"].startswith("support.outcome")]


@pytest.mark.parametrize(("said", "content"), [
    ("Of course. I've added Richard as your nominated contact on 07831 664 920.",
     "The user's nominated contact is Richard (07831 664 920)"),
    ("I've ordered those, and David is now set up as a trusted contact.", "The user's trusted contact is David"),
    ("Rosa Huamán is now authorised to collect Thiago, with 07700 900 638 on file.",
     "Rosa Huamán is authorised to collect Thiago for the user (07700 900 638)"),
])
def test_a_contact_the_agent_sets_up_for_the_customer_is_kept(said, content):
    assert content in [c.content for c in conversation(("user", "Hello."), ("assistant", said))]


def test_the_contact_the_agent_sets_up_is_the_person_the_customer_named_not_a_second_memory():
    candidates = conversation(("user", "My son Imran Siddiqui deals with most things for me, 07700 900 462."),
                              ("assistant", "I've added Imran as your nominated contact on 07700 900 462."))

    [imran] = [c for c in candidates if "Imran" in c.content]
    assert imran.content == "The user's son Imran Siddiqui deals with most things for them, 07700 900 462, their nominated contact"
    assert imran.source_seqs == [1, 2]


def test_a_contact_from_an_earlier_session_is_known_by_the_name_in_their_memory():
    existing = [ExistingMemory(id="m1", content="The user's assistant Lerato Mokoena does dispatch", memory_type="fact",
                               subject="contact:assistant")]

    [forget] = conversation(("user", "Lerato has left, please delete her number."), existing=existing)

    assert (forget.action, forget.metadata["person"], forget.metadata["detail"]) == ("delete", "Lerato Mokoena", "phone")


def test_a_note_ends_where_the_agent_reports_another_action_and_a_one_off_of_the_customers_is_no_note():
    contents = [c.content for c in conversation(
        ("assistant", "I've noted calls between 12 and 1, and added Daichi (604-555-0133) as authorised to approve work."),
        ("assistant", "I've recorded the nut allergy, and noted that you'll bring a spare EpiPen on Friday 4 September."))]

    assert "Noted on the user's record: calls between 12 and 1" in contents
    assert "Noted on the user's record: the nut allergy" in contents
    assert not [content for content in contents if "spare" in content or "Daichi" in content and "Noted" in content]


def test_an_agent_action_saying_what_the_batch_says_already_is_not_kept_beside_it():
    candidates = conversation(("user", "I'd like to join the Friends scheme."),
                              ("assistant", "I've set up your membership, number FF-118206."))

    assert [c.content for c in candidates] == ["The user's membership number is FF-118206"]


@pytest.mark.parametrize("said", ["I've moved your gas safety check to Friday 24 April.",
                                  "I've issued a refund of £40 for order 5512."])
def test_an_agent_action_that_changes_something_or_holds_more_is_kept(said):
    candidates = conversation(("user", "My gas safety check is booked for 20 April, order 5512."), ("assistant", said))

    assert [c for c in candidates if c.metadata["rule"] == "support.outcome.action"]


@pytest.mark.parametrize(("turns", "absent"), [
    ((("user", "The other car clipped my mirror. It's a BMW X5."),), "device:vehicle"),
    ((("user", "My wife drives a Toyota Yaris, reg AB12 CDE."),), "device:vehicle"),
    ((("user", "Please send all invoices to her at ana@x.com"),), "routing:billing"),
    ((("user", "Hello."), ("assistant", "Our company number is 01234567.")), "identifier:company"),
])
def test_someone_elses_thing_is_not_the_users(turns, absent):
    assert not [c for c in conversation(*turns) if c.subject == absent]


def test_a_pronoun_the_agent_says_is_allowed_to_do_something_is_no_contact():
    said = conversation(("user", "Hello."), ("assistant", "She is allowed to collect the parcel on Friday."))

    assert not [c for c in said if c.metadata["rule"] == "contact.assigned_by_agent"]


@pytest.mark.parametrize(("content", "addresses"), [
    ("The user's wife Sara's birthday is 12 March, pickup at 3 PM", []),
    ("The user's parents are Lakshmi, 14 Model Colony, Pune 411016", ["14 Model Colony, Pune 411016"]),
    ("The user's sister lives at 4 Elm Road, Leeds", ["4 Elm Road, Leeds"]),
])
def test_only_an_address_is_an_address_to_cut_out(content, addresses):
    assert detail_values(content, "address") == addresses


def test_a_possessive_employer_is_not_cut_out_of_a_job_title():
    assert without_employer("The user is a practice manager at Acme's London office", "Acme") is None


@pytest.mark.parametrize(("text", "subject", "value"), [
    ("If it can't be fixed please take it to our garage, Whitmore Motors in Stoke, we use them for everything.",
     "provider:garage", "Whitmore Motors"),
    ("If my bank, Northway Bank, asks, tell them it's fine.", "provider:bank", "Northway Bank"),
])
def test_a_business_the_user_calls_theirs_is_theirs_whatever_the_condition(text, subject, value):
    assert one(extract(text), subject).metadata["value"] == value


def test_a_business_only_imagined_in_a_condition_is_none():
    assert not [c for c in extract("If we switched to another garage, would it matter?") if c.subject]


@pytest.mark.parametrize(("text", "subject", "content"), [
    ("also going forward can you text me instead of emailing, i never check my email",
     CONTACT_CHANNEL, "The user prefers to be contacted by text message, not email"),
    ("Could the reminders come by text rather than email?", "preference:format:reminder",
     "The user wants reminders by text"),
    ("The reminders should come by text rather than email.", "preference:format:reminder",
     "The user wants reminders by text"),
])
def test_a_way_of_being_served_from_now_on_is_a_preference_even_when_asked(text, subject, content):
    assert content in [c.content for c in extract(text) if c.subject == subject]


@pytest.mark.parametrize("text", ["Can you send it by text instead this time?", "Could you email me the receipt?",
                                  "Can you check my order instead of the refund?  Just for today."])
def test_a_one_off_request_is_no_standing_preference(text):
    assert not [c for c in extract(text) if (c.subject or "").startswith(("preference:", CONTACT_CHANNEL))]


@pytest.mark.parametrize(("text", "subject", "content"), [
    ("no pork in anything please", "preference:pork", "The user wants no pork in anything"),
    ("Please, no champagne in the welcome basket.", "preference:champagne",
     "The user wants no champagne in the welcome basket"),
    ("no nuts please", "preference:nuts", "The user wants no nuts"),
])
def test_what_the_customer_never_wants_said_as_no_x_is_a_preference(text, subject, content):
    assert one(extract(text), subject).content == content


@pytest.mark.parametrize("text", ["No problem at all, thanks", "no thanks", "No, that's fine", "No worries, please.",
                                  "no running for now please", "The jars are glass, so no double stacking."])
def test_no_said_as_an_answer_or_for_now_is_no_preference(text):
    assert not [c for c in extract(text) if c.metadata["rule"] == "preference.none"]


@pytest.mark.parametrize(("said", "subject", "content"), [
    ("Thank you for understanding. Your booking is now Sunday 20 September at 7pm, still reference ET-9914.",
     "booking:booking:2026-09-20",
     "Support moved the user's booking to Sunday 20 September (2026-09-20) at 7pm, still reference ET-9914"),
    ("HK-40917 is now 21 to 24 November, three nights.", "booking:booking hk-40917:2026-11-21",
     "Support moved the user's booking HK-40917 to 21 to 24 November (2026-11-21 to 2026-11-24), three nights"),
    ("Saturday 30 May at 9am at Kingsway is booked for the alignment.", "booking:alignment:2026-05-30",
     "Booked for the user: the alignment on Saturday 30 May (2026-05-30) at 9am at Kingsway"),
])
def test_a_dated_booking_the_agent_states_or_moves_is_kept_with_its_date(said, subject, content):
    assert one(conversation(("assistant", said)), subject).content == content


@pytest.mark.parametrize("said", ["Your booking is now confirmed.", "Your table is now ready.",
                                  "Your appointment is now free to change.", "Your booking was on 2 March."])
def test_a_booking_now_in_some_state_or_in_the_past_is_no_move(said):
    assert not [c for c in conversation(("assistant", said)) if c.metadata["rule"] == "support.outcome.moved"]


def test_a_moved_booking_replaces_the_one_booked_before():
    existing = [ExistingMemory(id="m1", content="Booked for the user: the appointment on 2 April (2026-04-02)",
                               memory_type="episode", subject="booking:appointment:2026-04-02")]

    [moved] = conversation(("assistant", "Your appointment is now on 14 April at 10am."), existing=existing)

    assert moved.subject == "booking:appointment:2026-04-02"


@pytest.mark.parametrize(("turns", "name"), [
    ((("user", "yo, just bought the tutoring pack, can u check it went through? kwabena owusu-ansah"),
      ("assistant", "Hey Kwabena! Yes, I can see it.")), "Kwabena Owusu-Ansah"),
    ((("assistant", "Can I take your name and number?"), ("user", "tanvir chowdhury 07700 900 374")), "Tanvir Chowdhury"),
    ((("user", "hi, im dewi anggraini, account holder for the family plan"),), "Dewi Anggraini"),
    ((("user", "Flights for our honeymoon, two adults, me, Sofia Marchetti, and my fiancé Luca Bianchi."),),
     "Sofia Marchetti"),
])
def test_a_name_typed_in_lowercase_given_with_a_number_or_beside_me_is_the_customers(turns, name):
    assert one(conversation(*turns), "name").metadata["value"] == name


@pytest.mark.parametrize("turns", [
    (("user", "my order hasnt come, can you check please"), ("assistant", "Hi! Sure, can I check the order number?")),
    (("assistant", "Can I take your name and number?"), ("user", "mobile 07700 900 547")),
    (("assistant", "What's your name and the EORI?"), ("user", "EORI is GB 318 4470 2290 00")),
    (("user", "Tickets for me, Paris and my sister."),),
])
def test_words_before_a_number_or_a_greeting_are_no_name(turns):
    assert not [c for c in conversation(*turns) if c.subject == "name"]


@pytest.mark.parametrize(("text", "children"), [
    ("Hi, I'm Ayşe Yıldız, mum of Elif Yıldız in Year 9 and Kerem Yıldız in Year 7.",
     ["The user's child is Elif Yıldız (in Year 9)", "The user's child is Kerem Yıldız (in Year 7)"]),
    ("I'm the dad of Tom, 7, and Lily, 4.", ["The user's child is Tom (aged 7)", "The user's child is Lily (aged 4)"]),
])
def test_the_children_a_parent_names_are_their_contacts(text, children):
    assert [c.content for c in extract(text) if c.metadata["rule"] == "contact.child_of"] == children


@pytest.mark.parametrize("text", ["I'm a mother of two and I work full time.",
                                  "As the parent of a child with autism, I need quiet rooms."])
def test_a_parent_naming_no_child_names_no_contact(text):
    assert not [c for c in extract(text) if c.metadata["rule"] == "contact.child_of"]


def test_a_dash_between_words_ends_a_clause():
    candidates = extract("Amara Nwosu here, founder of Loop Analytics \u2014 we're on the Team plan at your Shoreditch site.")

    assert one(candidates, "employer").metadata["value"] == "Loop Analytics"
    assert one(candidates, "plan").content.startswith("The user is on the Team plan")


@pytest.mark.parametrize("text", ["Our IT lead Priyanka Shah will handle it \u2014 she's on 07723 604 118 for anything technical.",
                                  "He's on 07700 900 111 most days."])
def test_a_number_someone_else_is_on_is_never_the_customers_phone(text):
    assert phones(extract(text)) == []


@pytest.mark.parametrize(("text", "subject", "number"), [
    ("The landline at home is 0161 496 0733 if it's urgent.", "phone:home", "0161 496 0733"),
    ("btw my number changed, its 07912 775 340 now.", "phone", "07912 775 340"),
])
def test_a_phone_number_said_the_way_people_type_it_is_the_customers(text, subject, number):
    assert one(extract(text), subject).metadata["value"] == number


@pytest.mark.parametrize("text", ["DOB is 3 May 1981.", "Date of birth 3 May 1981.", "my dob: 3 May 1981"])
def test_a_date_of_birth_given_as_on_a_form_is_the_customers(text):
    assert one(extract(text), "birthday").content == "The user's date of birth is 3 May 1981"


def test_a_name_of_an_address_gives_both():
    candidates = extract("Good morning. My name is Rajinder Singh Bhogal, of 27 Elmfield Road, Walthamstow E17 7HJ.")

    assert one(candidates, "name").metadata["value"] == "Rajinder Singh Bhogal"
    assert one(candidates, "address:home").metadata["value"] == "27 Elmfield Road, Walthamstow E17 7HJ"


def test_what_the_customer_asks_to_flag_is_kept():
    assert one(extract("Also please flag I'm allergic to penicillin."), "allergy:penicillin")


def test_a_note_the_customer_asks_to_have_removed_is_forgotten_by_what_it_is_about():
    [delete] = [c for c in extract("And please remove the note about he lost his job, it's ok now.") if c.action == "delete"]

    assert (delete.subject, delete.metadata["topic"]) == (None, ["lost", "job"])


def test_someone_the_agent_removed_with_their_details_is_forgotten():
    [delete] = [c for c in conversation(("assistant", "I've removed Dean and his number from your account; we won't share "
                                                      "anything with him.")) if c.action == "delete"]

    assert delete.metadata["person"] == "Dean"


def test_the_customers_own_number_before_another_persons_is_theirs():
    candidates = extract("Contact me on 07824 557 190, or my husband Alasdair on 07824 557 344 if I'm not answering.")

    assert one(candidates, "phone").metadata["value"] == "07824 557 190"
    assert "07824 557 344" in one(candidates, "contact:husband").content


@pytest.mark.parametrize(("text", "subject", "content"), [
    ("From now on my husband might collect for me sometimes, he's Declan Gallagher, number 07722 309 114.",
     "contact:husband", "The user's husband is Declan Gallagher (07722 309 114)"),
    ("My wife usually calls, she's Anna, on 07700 900 333.", "contact:wife", "The user's wife is Anna (07700 900 333)"),
])
def test_a_relation_named_after_what_they_do_is_a_contact(text, subject, content):
    assert one(extract(text), subject).content == content


@pytest.mark.parametrize(("text", "subject", "content"), [
    ("Levothyroxine 75mcg once a day and a Clenil inhaler for asthma.", "medication:levothyroxine",
     "The user takes Levothyroxine 75mcg once a day"),
    ("I'm on ramipril 5 mg every morning.", "medication:ramipril", "The user takes ramipril 5 mg every morning"),
])
def test_a_medicine_the_customer_takes_at_a_dose_is_kept(text, subject, content):
    assert one(extract(text), subject).content == content


@pytest.mark.parametrize("text", ["He takes metformin 500mg twice daily.", "Please add 250 ml of milk.",
                                  "My dog takes Apoquel 16mg daily.", "The bottle is about 500 ml."])
def test_someone_elses_medicine_or_a_measure_is_no_medication_of_the_customers(text):
    assert not [c for c in extract(text) if (c.subject or "").startswith("medication:")]


@pytest.mark.parametrize(("text", "content"), [
    ("Direct debit please, on the 20th of each month if that's possible.",
     "The user pays by direct debit on the 20th of each month"),
    ("By standing order please.", "The user pays by standing order"),
])
def test_how_the_customer_will_pay_as_an_answer_is_their_payment_method(text, content):
    assert one(extract(text), "payment_method").content == content


def test_paying_once_by_card_is_no_payment_method():
    assert not [c for c in extract("By card please.") if c.subject == "payment_method"]


@pytest.mark.parametrize(("text", "resolved"), [
    ("Camille's last day will be 31 July", "2026-07-31"),
    ("My last payment is due on 5 June", "2026-06-05"),
    ("I was there on 31 July", "2025-07-31"),
])
def test_last_puts_a_date_in_the_past_only_as_last_week_or_last_monday(text, resolved):
    [mention] = find_dates(text, datetime(2026, 5, 18, tzinfo=UTC).date())

    assert mention.metadata()["date"] == resolved


@pytest.mark.parametrize(("text", "subject", "content"), [
    ("My railcard is DPR 6612 0087", "identifier:railcard", "The user's railcard is DPR 6612 0087"),
    ("Disabled Persons Railcard DPR 6612 0087", "identifier:disabled-persons-railcard",
     "The user's Disabled Persons Railcard is DPR 6612 0087"),
])
def test_a_thing_of_theirs_named_with_a_code_is_an_identifier(text, subject, content):
    assert one(extract(text), subject).content == content


@pytest.mark.parametrize("text", ["Ship it to 5 George Street, Sydney NSW 2000", "Our unit is 1120 NW Hoyt St, Portland OR 97209",
                                  "Your railcard is DPR 6612 0087"])
def test_a_postcode_or_the_agents_words_are_no_code_of_theirs(text):
    assert [c for c in extract(text, role="assistant" if text.startswith("Your") else "user")
            if c.metadata["rule"] == "identifier.other"] == []


def test_a_phone_named_with_what_it_is_for_is_still_theirs():
    assert one(extract("my mobile for flight updates is +44 7700 118 230"), "phone").content == (
        "The user's mobile number is +44 7700 118 230")
    assert phones(extract("my number for my husband is 07700 900 111")) == []


def test_the_phone_number_for_the_account_is_theirs():
    assert one(extract("The phone number for the account is +7 701 555 2841."), "phone").metadata["value"] == (
        "+7 701 555 2841")


@pytest.mark.parametrize(("text", "content"), [
    ("We're completing on Friday, and please note we've a very nervy rescue greyhound, so keep the gate shut.",
     "The user has a very nervy rescue greyhound"),
    ("good, please write in my profile I prefer window seats.", "The user prefers window seats"),
    ("please note my son is diabetic", "The user's son is diabetic"),
])
def test_a_request_to_note_a_statement_of_theirs_is_kept_wherever_it_sits_in_the_sentence(text, content):
    assert content in [candidate.content for candidate in extract(text)]


@pytest.mark.parametrize("text", ["Can you write down my order number?", "Please note the time of the call."])
def test_noting_a_thing_states_nothing(text):
    assert [c for c in extract(text) if c.metadata["rule"].startswith("explicit")] == []


@pytest.mark.parametrize(("text", "subject"), [
    ("I'd like to go ahead with the quote, QT-88451", "identifier:quote:QT-88451"),
    ("Our quote number is 55120", "identifier:quote:55120"),
    ("Please quote against PO-44820", "identifier:po:PO-44820"),
])
def test_quotes_and_purchase_orders_are_identifiers(text, subject):
    assert subject in subjects(extract(text))


def test_to_quote_a_code_is_a_verb_not_a_quote():
    assert not any((c.subject or "").startswith("identifier:quote") for c in extract(
        "your text said to quote 586204 when I contact you"))


ON_FILE = [ExistingMemory(id="m1", content="The user's email address is grace@oldmail.example", memory_type="fact",
                          subject="email"),
           ExistingMemory(id="m2", content="The user's mobile number is 07700 900 111", memory_type="fact",
                          subject="phone")]


@pytest.mark.parametrize(("text", "subject", "value"), [
    ("Send everything to grace.o@mail.example, the old one is closed", "email", "grace.o@mail.example"),
    ("best to email me at grace.o@mail.example these days", "email", "grace.o@mail.example"),
    ("Please update my phone number to 07700 900 333", "phone", "07700 900 333"),
    ("Can you change my mobile to 07700 900 333?", "phone", "07700 900 333"),
    ("My number is 07700 900 333", "phone", "07700 900 333"),
])
def test_a_new_email_or_number_said_as_theirs_replaces_the_one_on_file(text, subject, value):
    said = [c for c in conversation(("user", text), existing=ON_FILE) if c.action == "add"]
    assert one(said, subject).metadata["value"] == value


def test_a_number_to_call_today_stands_beside_the_one_on_file():
    assert subjects(conversation(("user", "Call me on 07700 900 333 today"), existing=ON_FILE)) == ["phone:other"]


def test_we_begin_a_clause_as_i_does():
    assert [clause.text for clause in split_clauses("We've moved house, we're at 5 Oak Road now")] == [
        "We've moved house", "we're at 5 Oak Road now"]


@pytest.mark.parametrize("text", [
    "We've moved house, our new address is 5 Oak Road, Leeds LS2 2AA.",
    "We've moved, new address 5 Oak Road, Leeds LS2 2AA.",
])
def test_a_new_home_said_mid_sentence_is_the_home_address(text):
    assert one(extract(text), "address:home").metadata["value"] == "5 Oak Road, Leeds LS2 2AA"


def test_a_lowercase_name_after_a_relation_with_their_number_is_that_contact():
    [partner] = [c for c in extract("07440 219 873. or my partner dean on 07440 630 502 if i dont pick up")
                 if (c.subject or "").startswith("contact:")]
    assert partner.content == "The user's partner is Dean (07440 630 502)"


@pytest.mark.parametrize("text", ["my wife works nights", "my boss always checks the invoices",
                                  "my daughter loves horses"])
def test_a_verb_after_a_relation_is_no_name(text):
    assert not any((c.subject or "").startswith("contact:") for c in extract(text))


@pytest.mark.parametrize(("text", "forgotten"), [
    ("Your landline has been taken off your account.", ("phone:home", None)),
    ("I've wiped the work email from your profile.", ("email:work", None)),
    ("The card ending 4821 has been deleted.", ("identifier:card:4821", "4821")),
    ("I've removed the old Elm Road address from your account.", (None, "Elm Road")),
    ("I've removed Marta as your emergency contact.", (None, "Marta")),
    ("I've removed Marta from your contacts.", (None, "Marta")),
])
def test_what_the_agent_says_it_removed_is_forgotten_as_the_customer_would_have_named_it(text, forgotten):
    [delete] = [c for c in extract(text, role="assistant") if c.action == "delete"]
    assert (delete.subject, delete.metadata.get("value")) == forgotten


@pytest.mark.parametrize("text", ["I've removed your mobile as the contact number for deliveries.",
                                  "I've removed the phone number from the delivery instructions.",
                                  "The late fee has been removed.", "I've removed you from the mailing list."])
def test_a_removal_from_somewhere_else_forgets_nothing(text):
    assert [c for c in extract(text, role="assistant") if c.action == "delete"] == []


def test_the_agent_removing_a_detail_spares_the_one_the_customer_just_gave():
    candidates = conversation(("user", "Please delete my mobile, use my office number 0113 496 0721 instead."),
                              ("assistant", "Done, I've removed your mobile number."))
    assert [c.metadata["value"] for c in candidates if c.action == "add" and (c.subject or "").startswith("phone")] == [
        "0113 496 0721"]
    assert not any(c.action == "delete" and "0113" in str(c.metadata.get("value")) for c in candidates)
    assert all(c.metadata.get("old") for c in candidates if c.metadata["rule"] == "support.removed")


@pytest.mark.parametrize(("text", "content"), [
    ("Please note we have a very nervous rescue dog, so knock quietly.", "The user asked support to knock quietly"),
    ("Please note: leave parcels with the neighbour at number 12.",
     "The user asked support to leave parcels with the neighbour at number 12"),
    ("Remember that invoices must go to the finance team.",
     "The user asked to remember that invoices must go to the finance team"),
])
def test_an_instruction_to_note_reads_as_what_support_is_to_do(text, content):
    assert content in [candidate.content for candidate in extract(text)]


@pytest.mark.parametrize(("said", "content"), [
    (("Hi it's Ngaire Wiremu, plan PP-66120.",), "The user's plan reference is PP-66120"),
    (("My account number is on the bill somewhere, ELE 4409 1128.",), "The user has account number ELE 4409 1128"),
    (("The reference on the letter is WX-20931.",), "The user has reference WX-20931"),
    (("Do you have Leo's hospital number?", "yes it's on the letter somewhere... here, H7730215."),
     "The user gave the hospital number H7730215"),
    (("Hi, Kwame Asante again, RES-5K92TQ.",), "The user gave the reference RES-5K92TQ"),
])
def test_a_code_no_rule_read_is_kept_as_what_the_words_around_it_call_it(said, content):
    roles = ("assistant", "user") if len(said) == 2 else ("user",)
    candidates = conversation(*zip(roles, said, strict=True))
    assert content in [candidate.content for candidate in candidates]


@pytest.mark.parametrize("text", [
    "My flight is BA2490 on Friday.", "The gate code is AB1234.", "The key safe code is KS-4471.",
    "It is N3K0LP0912345. Sorry, I read it wrong, it's N3K0LP0912354.", "My postcode is RG19 4LS.",
    "My husband's reference is HX-22871.",
])
def test_a_flight_a_code_that_opens_something_or_a_corrected_code_is_no_unclaimed_reference(text):
    assert [c.content for c in extract(text) if c.metadata["rule"] == "identifier.unclaimed"] == []


def test_a_code_already_on_file_is_not_kept_again():
    existing = [ExistingMemory(id="m1", content="The user has reference MV-2207", memory_type="fact",
                               subject="identifier:reference:MV-2207")]
    messages = [ConversationMessage(seq=1, role="user", text="hi, marco here, MV-2207. the move was good mostly.",
                                    created_at=SENT_AT)]
    candidates = extractor.extract(messages=messages, existing=existing)
    assert not [c for c in candidates if "MV-2207" in c.content]


@pytest.mark.parametrize(("text", "content"), [
    ("Sorry, the account number is 5520 1188, not 5520 1186.", "The user has account number 5520 1188"),
    ("Sorry, my mobile is 07700 900 412, not 07700 900 421.", "The user's mobile number is 07700 900 412"),
    ("Sorry, we moved to Utrecht, not Leiden.", "The user moved to Utrecht"),
])
def test_a_correction_of_something_never_read_still_states_the_new_value(text, content):
    candidates = extract(text)
    assert [candidate.content for candidate in candidates] == [content]
    assert all("unless_corrected" not in candidate.metadata for candidate in candidates)


def test_a_correction_of_something_read_corrects_it_and_adds_nothing_more():
    candidates = extract("My account number is 5520 1186.", "Sorry, the account number is 5520 1188, not 5520 1186.")
    assert [candidate.content for candidate in candidates] == ["The user has account number 5520 1188"]


@pytest.mark.parametrize("text", ["I used to have the Premium tier.", "We previously had a combi boiler in the loft.",
                                  "We no longer keep chickens at the farm."])
def test_a_state_that_was_is_no_statement_of_now(text):
    assert [c.content for c in extract(text) if c.metadata["rule"] == "statement"] == []


@pytest.mark.parametrize(("text", "content"), [
    ("My daughter streams on the TV, not on her phone.", "The user's daughter streams on the TV"),
    ("We have the Duo plan rather than Family.", "The user has the Duo plan"),
    ("I listen mostly on my laptop instead of the app.", "The user listens mostly on their laptop"),
])
def test_the_alternative_turned_down_stays_out_of_what_is_kept(text, content):
    assert content in [candidate.content for candidate in extract(text)]


@pytest.mark.parametrize("text", [
    "We looked at the Rose Garden package but went for the Classic one in the end.",
    "We were hoping for 150 guests but the venue only holds 120.",
    "I considered the Platinum tier but it's too dear for us.",
])
def test_what_was_weighed_and_turned_down_is_never_kept(text):
    turned_down = ("Rose Garden", "150", "Platinum")
    assert not [c.content for c in extract(text) if any(value in c.content for value in turned_down)]


@pytest.mark.parametrize(("text", "chosen"), [
    ("We looked at the Rose Garden package but went for the Classic one in the end",
     "We went for the Classic one in the end"),
    ("I'd thought about the marquee but we'd rather have the barn", "we'd rather have the barn"),
    ("We were hoping for 150 guests but the venue only holds 120", ""),
    ("We love the barn but the marquee is cheaper", None),
])
def test_the_choice_after_what_was_turned_down(text, chosen):
    assert chosen_after_turned_down(text) == chosen


@pytest.mark.parametrize(("turns", "number"), [
    ((("assistant", "Who should we call first?"), ("user", "Me, on the shop line 0117 496 0281.")), "0117 496 0281"),
    ((("user", "Me first — 07911 238 450 — then my husband Chidi on 07911 238 771."),), "07911 238 450"),
    ((("assistant", "Is 07448 902 731 still the right number for you?"), ("user", "No, that is old one. New is 07448 615 090.")),
     "07448 615 090"),
])
def test_a_number_the_customer_says_is_theirs_among_others_is_their_phone(turns, number):
    assert number in [c.metadata.get("value") for c in conversation(*turns) if c.subject == "phone"]


def test_sam_is_a_number_is_still_sams():
    assert [c for c in extract("Sam is 0412 555 271.") if c.subject == "phone"] == []


def test_the_right_number_after_an_apology_corrects_the_number_just_given():
    candidates = extract("I'd like my son to speak for me. His name is David Pembury and his mobile is 07911 402 776.",
                         "Oh dear, I have given you the wrong number, it is 07911 402 767, the last two digits the other "
                         "way round.")
    contents = " ".join(candidate.content for candidate in candidates)
    assert "07911 402 767" in contents and "07911 402 776" not in contents


@pytest.mark.parametrize(("text", "content"), [
    ("I need our invoices to show our VAT number, FR 61 832 554 917, it's missing",
     "The user's VAT number is FR 61 832 554 917"),
    ("Hi it's Ngaire Wiremu, plan PP-66120. Can the plan be $90 a fortnight instead of $45 weekly?",
     "The user's plan reference is PP-66120"),
])
def test_a_code_is_kept_though_another_sentence_of_the_message_changes_something(text, content):
    assert content in [candidate.content for candidate in extract(text)]


def test_a_code_in_a_sentence_about_what_was_is_not_kept_as_unclaimed():
    assert [c for c in extract("My old reference was WX-20931.") if c.metadata["rule"] == "identifier.unclaimed"] == []


@pytest.mark.parametrize(("text", "subject", "value"), [
    ("my email is wrong on the booking, it should be amara.o@example.com", "email", "amara.o@example.com"),
    ("My email amara@old.example is wrong, it's amara.o@example.com", "email", "amara.o@example.com"),
    ("The email on my account is old, please change it to maria.g@example.com.", "email", "maria.g@example.com"),
    ("My mobile is wrong, it should be 07700 900 123.", "phone", "07700 900 123"),
    ("The number you have is my old one, use 07700 900 606 please.", "phone", "07700 900 606"),
])
def test_a_detail_said_to_be_wrong_then_the_right_one_is_the_customers_detail(text, subject, value):
    candidates = extract(text)
    assert [c for c in candidates if c.action == "delete"] == []
    assert [candidate.content for candidate in candidates if candidate.subject == subject] == [
        f"The user's {'email address' if subject == 'email' else 'mobile number' if 'mobile' in text else 'phone number'}"
        f" is {value}"]


@pytest.mark.parametrize(("turns", "number"), [
    ((("user", "It's Meera, 07700 900 404, about my booking."),), "07700 900 404"),
    ((("assistant", "Can I take a contact number?"), ("user", "sure its 07911 123456")), "07911 123456"),
])
def test_a_number_given_with_the_reason_for_the_call_is_their_phone(turns, number):
    assert number in [c.metadata.get("value") for c in conversation(*turns) if c.subject == "phone"]


def test_a_number_named_as_a_document_is_no_phone():
    assert [c for c in extract("The booking ref is 07700 900404.") if c.subject == "phone"] == []


def test_the_best_number_is_no_identifier():
    assert [c.metadata["rule"] for c in extract("Best number is 0161 496 0870, that's the landline.")] == [
        "contact.phone"]


@pytest.mark.parametrize(("turns", "name"), [
    ((("user", "Regards, Beatriz Santos"),), "Beatriz Santos"),
    ((("user", "Thanks, Sione Taufa (account holder)"),), "Sione Taufa"),
    ((("user", "hello this is aisha rahman, account holder"),), "Aisha Rahman"),
    ((("user", "I'm Dr. Helen Achterberg, the practice manager."),), "Helen Achterberg"),
    ((("assistant", "Who am I speaking with?"), ("user", "It's Priya, Priya Venkataraman.")), "Priya Venkataraman"),
])
def test_the_customers_name_however_they_give_it(turns, name):
    assert [c.content for c in conversation(*turns) if c.subject == "name"] == [f"The user's name is {name}"]


@pytest.mark.parametrize("text", ["Thank you Customer Services", "Thanks, Great Service", "Best, The Smith Family",
                                  "Thanks, Martin"])
def test_a_sign_off_to_the_team_or_by_a_first_name_alone_names_no_one(text):
    assert [c for c in extract(text) if c.subject == "name"] == []


def test_a_sign_off_with_another_name_than_the_customers_is_not_theirs():
    assert [c for c in extract("Regards, Beatriz Santos", user_name="Maria Lopez") if c.subject == "name"] == []


def test_a_surname_said_to_be_spelt_so_is_the_surname():
    candidates = extract("Sorry, my surname is spelt Nguyen, not Nguyễn.", user_name="Lan Tran")
    assert [c.content for c in candidates if c.subject == "name"] == ["The user's name is Lan Nguyen"]


def test_an_old_identifier_is_not_kept_and_the_new_one_after_it_is():
    candidates = extract("Our old account number was 5520 1186; the new one is 5520 1199.")
    assert [candidate.content for candidate in candidates] == ["The user has account number 5520 1199"]


def test_a_number_not_to_be_called_on_is_no_phone_of_theirs_to_use():
    candidates = extract("Please don't call me on 07700 900 555 any more, that's my work phone.")
    assert [c for c in candidates if (c.subject or "").startswith("phone")] == []


@pytest.mark.parametrize("text", ["We thought about moving to Leeds but we're staying in York.",
                                  "I was going to switch to the Premium tier, but it's too dear."])
def test_what_was_only_weighed_is_not_kept(text):
    assert not [c.content for c in extract(text) if "Leeds" in c.content or "Premium" in c.content]


@pytest.mark.parametrize(("text", "content"), [
    ("Our landlord is Raj Patel.", "The user's landlord is Raj Patel"),
    ("Our accountant is Raj Patel, his number is 0161 496 0456.",
     "The user's accountant is Raj Patel, his number is 0161 496 0456"),
])
def test_our_contact_is_named_as_my_contact_is(text, content):
    assert [c.content for c in extract(text) if (c.subject or "").startswith("contact:")] == [content]


def test_an_elliptical_clause_is_no_statement():
    assert [c.content for c in extract("I'm not vegetarian, my wife is.")] == []


def test_what_was_after_what_is_stays_out_of_a_statement():
    assert [c.content for c in extract("We're a team of 12 now, it was 8 last year.")] == ["The user is a team of 12 now"]
