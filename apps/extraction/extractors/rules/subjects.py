"""Subject names for contact details, identifiers, addresses, contact preferences and the user's own contacts.

A subject is what consolidation keys on: a new candidate with the subject of an active memory supersedes it.
So a subject names one slot that holds one value ("the user's work phone"), and anything that holds many values
at once (orders, tickets, a user's colleagues) puts the value into the subject. Every rule builds these names
here, so a retraction or another rule can name the same slot.
"""

from apps.extraction.extractors.rules.text import normalise_key

EMAIL = "email"  # the user's own (personal, unqualified) email address
PHONE = "phone"  # the user's own mobile or unqualified phone number
ADDRESS = "address"  # every address of the user (a retraction): each one has a kind, address_subject
IDENTIFIER = "identifier"
CONTACT_CHANNEL = "preference:contact_channel"  # "contact me by email, not phone"
CONTACT_TIME = "preference:contact_time"  # "best to call after 6pm", "I can't take calls at work"

# Kinds of phone number and email address the user may hold at the same time. The unqualified kind ("my phone",
# "my mobile", "my email") keeps the plain subject, so "forget my phone number" still names it.
PHONE_KINDS = ("work", "home", "whatsapp", "fax", "other")
EMAIL_KINDS = ("work", "school")


def phone_subject(kind: str | None = None) -> str:
    """"phone" for the user's mobile or unqualified number, "phone:work" / "phone:home" / ... for the others."""
    return f"{PHONE}:{kind}" if kind in PHONE_KINDS else PHONE


def email_subject(kind: str | None = None) -> str:
    return f"{EMAIL}:{kind}" if kind in EMAIL_KINDS else EMAIL


def address_subject(kind: str) -> str:
    """"address:home", "address:shipping", "address:billing", "address:office": one of each."""
    return f"{ADDRESS}:{kind}"


# Words that say which value of a setting is meant, not which setting: "my preferred branch" and "your branch" are one.
_SETTING_QUALIFIERS = frozenset("preferred default usual current new main regular chosen normal selected".split())


def setting_subject(what: str) -> str:
    """"setting:home airport" for "my home airport", "your home airport", "Home airport set to ...": one value each."""
    words = [word for word in normalise_key(what).split() if word not in _SETTING_QUALIFIERS]
    return f"setting:{' '.join(words) or normalise_key(what)}"


def identifier_subject(kind: str, value: str | None = None, *, single: bool = False) -> str:
    """"identifier:loyalty" when the user holds one of the kind (a new one replaces it), else
    "identifier:order:5512" (orders, tickets ... never replace each other); without a value, the kind's subject,
    which covers every identifier of the kind (a retraction: "forget my loyalty number")."""
    return f"{IDENTIFIER}:{kind}" if single or value is None else f"{IDENTIFIER}:{kind}:{value}"


def contact_subject(relation: str, name: str | None = None, *, single: bool, aspect: str | None = None) -> str:
    """The user's contact: "contact:assistant" (one at a time), "contact:colleague:dev" (many); an `aspect`
    ("email", "phone", "address") keeps a detail given on its own from replacing who the contact is."""
    subject = f"contact:{relation}"
    if name and not single:
        subject += f":{normalise_key(name)}"
    return f"{subject}:{aspect}" if aspect else subject
