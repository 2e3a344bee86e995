"""What a forget request cuts out of a memory that says more than the forgotten detail (pure functions)."""

import pytest

from apps.extraction.redaction import (
    emails_named_after,
    is_contact_detail,
    mentions_person,
    names_person,
    without_value,
)


@pytest.mark.parametrize(("content", "value", "left"), [
    ("The user asked to remember that documents should go to her: b.nogueira@outlook.example, mobile +44 7700 900 551",
     "+44 7700 900 551", "The user asked to remember that documents should go to her: b.nogueira@outlook.example"),
    ("The driver should call the yard on 0161 496 0233 when he arrives", "0161 496 0233",
     "The driver should call the yard when he arrives"),
    ("The user's wife Ana does the paperwork, email ana@x.example and phone 07700 900 551", "07700 900 551",
     "The user's wife Ana does the paperwork, email ana@x.example"),
])
def test_the_value_and_its_label_are_cut_and_the_rest_is_kept(content, value, left):
    assert without_value(content, value) == left


@pytest.mark.parametrize(("content", "value"), [
    ("The user gave the email address gareth.pryce@corran.example", "gareth.pryce@corran.example"),
    ("Alice's email is alice@example.com", "alice@example.com"),
    ("The user's home phone number is 020 7946 0185", "020 7946 0185"),
    ("The user's home phone number is 020 7946 0185", "020 7946 0999"),  # not in it
    # what is left would not read: the memory goes whole rather than garbled
    ("The user's mobile is 07700 900318 and their email is ann@x.com", "07700 900318"),
    ("The user's mobile is 07700 900318 and their email is ann@x.com", "ann@x.com"),
    ("Invoices go to accounts@acme.com, not to the CEO", "accounts@acme.com"),
])
def test_a_memory_about_the_value_alone_has_nothing_left(content, value):
    assert without_value(content, value) is None


def test_an_address_named_after_the_person_is_theirs_and_a_colleagues_is_not():
    content = "Invoices to gareth.pryce@corran.example or gpryce@corran.example, copy ravi.s@corran.example"

    assert emails_named_after(content, "Gareth Pryce") == ["gareth.pryce@corran.example", "gpryce@corran.example"]
    assert emails_named_after(content, "Gareth") == []  # a first name alone is too common to erase by


@pytest.mark.parametrize(("content", "person", "mentioned"), [
    ("Documents go to beatriz.nogueira@outlook.example", "Beatriz", True),
    ("The user's wife Beatriz Nogueira does the paperwork", "Beatriz Nogueira", True),
    ("Beatrizia Costa is the landlord", "Beatriz", False),
])
def test_a_person_is_mentioned_by_name_or_in_their_address(content, person, mentioned):
    assert mentions_person(content, person) is mentioned


@pytest.mark.parametrize(("value", "detail"), [
    ("+44 7700 900 551", True), ("ana@x.example", True), ("ORD-5512", False), ("Gareth Pryce", False), ("1234", False),
])
def test_only_phone_numbers_and_email_addresses_are_cut_out_of_notes(value, detail):
    assert is_contact_detail(value) is detail


@pytest.mark.parametrize(("content", "named"), [
    ("Bill Evans can also call about the account", True),
    ("The user wants the bill emailed to them each month", False),
])
def test_a_person_is_named_only_by_their_name_as_a_name(content, named):
    assert names_person(content, "Bill") is named


@pytest.mark.parametrize(("content", "named"), [
    ("The user's boyfriend lewis fenwick will drive too", True),
    ("The user's boyfriend Lewis Fenwick will drive too", True),
    ("The user lives on Lewis Street near Fenwick", False),
])
def test_a_full_name_is_the_person_however_it_was_typed(content, named):
    assert names_person(content, "Lewis Fenwick") is named
