"""Support details through the whole path (messages -> rules extractor -> consolidation): typed subjects decide what
replaces what. A loyalty number never replaces the mobile; a new mobile does; a work number sits beside it.
"""

import pytest

from apps.memories.models import Memory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("inline_extraction")]

MESSAGES = "/api/v1/stores/main/sessions/chat-1/messages"


def _say(client, *texts, start=0, role="user"):
    messages = [{"role": role, "content": text, "seq": start + index} for index, text in enumerate(texts)]
    response = client.post(MESSAGES, {"user_id": "ines", "messages": messages}, format="json")
    assert response.status_code == 202, response.content


def _holding(text: str, status: str = "active") -> list[Memory]:
    return list(Memory.objects.filter(content__contains=text, status=status))


def test_a_loyalty_number_does_not_supersede_the_mobile(tenant_a):
    client = tenant_a.client("write")
    _say(client, "Hi, I'm Ines. My mobile is +33 6 12 34 56 78.")
    _say(client, "My loyalty number is LX-5520-1188.", start=1)

    [mobile] = _holding("+33 6 12 34 56 78")
    assert mobile.metadata["subject"] == "phone" and mobile.superseded_by_id is None
    [loyalty] = _holding("LX-5520-1188")
    assert loyalty.content == "The user's loyalty number is LX-5520-1188"
    assert loyalty.metadata["subject"] == "identifier:loyalty"
    assert not Memory.objects.filter(content__contains="phone number is 5520").exists()
    assert not Memory.objects.exclude(status="active").exists()


def test_a_new_mobile_supersedes_the_old_one_and_a_work_number_sits_beside_it(tenant_a):
    client = tenant_a.client("write")
    _say(client, "My mobile is +33 6 12 34 56 78.")
    _say(client, "My work number is +33 1 40 00 00 00.", start=1)

    assert len(_holding("+33 6 12 34 56 78")) == 1  # the work number replaced nothing
    [work] = _holding("+33 1 40 00 00 00")
    assert work.metadata["subject"] == "phone:work"

    _say(client, "My new mobile is +33 7 11 22 33 44.", start=2)

    [old] = _holding("+33 6 12 34 56 78", status="superseded")
    [new] = _holding("+33 7 11 22 33 44")
    assert old.superseded_by_id == new.pk
    assert _holding("+33 1 40 00 00 00") == [work]


def test_a_later_contact_channel_replaces_the_earlier_one_and_addresses_replace_by_kind(tenant_a):
    client = tenant_a.client("write")
    _say(client, "Please contact me by email, not phone.", "My address is 12 Elm Street, Leeds LS1 4AB.",
         "My billing address is 1 Bank Place, Leeds LS2 8JS.")
    _say(client, "Actually, text me instead.", "My new address is 40 Park Avenue, York YO1 7HH.", start=3)

    [email_channel] = _holding("contacted by email", status="superseded")
    [text_channel] = _holding("contacted by text message")
    assert email_channel.superseded_by_id == text_channel.pk
    [old_home] = _holding("12 Elm Street", status="superseded")
    [new_home] = _holding("40 Park Avenue")
    assert old_home.superseded_by_id == new_home.pk
    assert len(_holding("1 Bank Place")) == 1  # the billing address is another subject


def test_a_contacts_email_never_becomes_the_users_email(tenant_a):
    client = tenant_a.client("write")
    _say(client, "My email is ines@example.com.")
    _say(client, "Please cc my accountant, Priya Shah (priya@example.com).", start=1)

    [own] = _holding("ines@example.com")
    assert own.metadata["subject"] == "email"
    [accountant] = _holding("priya@example.com")
    assert accountant.metadata["subject"] == "contact:accountant"
    assert not Memory.objects.exclude(status="active").exists()


@pytest.mark.parametrize("request_text", ["My new mobile is 07700 900 222, please delete my old number.",
                                          "My new mobile is 07700 900 222 so you can delete the old one.",
                                          "Please delete my old number, my new one is 07700 900 222."])
def test_a_new_number_with_the_old_one_asked_to_be_deleted_keeps_the_new_one(tenant_a, request_text):
    client = tenant_a.client("write")
    _say(client, "My mobile is 07700 900 111.")
    _say(client, request_text, start=1)

    assert not _holding("07700 900 111")
    assert _holding("07700 900 111", status="deleted")
    [new] = _holding("07700 900 222")
    assert new.metadata["subject"] == "phone"


def test_a_request_to_forget_does_not_take_a_number_given_in_the_next_clause(tenant_a):
    client = tenant_a.client("write")
    _say(client, "My emergency contact is my aunt, Rosa Diaz, 07700 900 333.")
    _say(client, "You can delete my aunt's address from my file, my uncle is my emergency contact now, Leo Diaz, "
                 "07700 900 745", start=1)

    [uncle] = _holding("07700 900 745")
    assert "Leo Diaz" in uncle.content
    assert _holding("07700 900 333")  # only her address was asked to go, and none was on file


@pytest.mark.parametrize("leaving", ["I've left Northlight, I'm freelance now.", "I left Northlight in August."])
def test_leaving_an_employer_keeps_the_job_title_without_it(tenant_a, leaving):
    client = tenant_a.client("write")
    _say(client, "I'm a video editor at Northlight Studios.")
    _say(client, leaving, start=1)

    [title] = _holding("video editor")
    assert (title.content, title.metadata["subject"]) == ("The user is a video editor", "job_title")
    [old] = _holding("video editor at Northlight Studios", status="superseded")
    assert old.superseded_by_id == title.pk
    assert not _holding("Northlight")
