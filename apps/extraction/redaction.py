"""What a forget request takes out of a memory that says more than the forgotten value.

"Please delete my mobile number" must not leave the number in a note that also holds an email address
("documents should go to b@x.pt, mobile +44 7700 900 551"), nor take the email address with it: the number and
its label are cut out of such a note, and a memory with nothing left to say goes as a whole. A person the user
asks to have forgotten is found by name, and by an email address named after them ("gareth.pryce@...").
"""

import re

from apps.extraction.extractors.rules.contacts import EMAIL, PHONE
from apps.extraction.extractors.rules.lexicon import STREET_WORDS
from apps.extraction.extractors.rules.text import names_topic

_LABEL = (r"(?:(?:(?:new|old|current|main|personal|private|own|work|office|home|business|direct|mobile|cell|landline"
          r"|whatsapp)\s+)*(?:mobile|cell(?:\s*phone)?|phone|telephone|tel|landline|line|number|e-?mail|address)"
          r"(?:\s+(?:number|no\.?|address))?\s*(?:is\s+|[:=-]\s*)?)")
# What a memory says around a detail once the detail is gone: nothing worth keeping on its own.
_TEMPLATE_WORDS = frozenset(
    "the a an user user's users their his her gave given has have is are was as at on of to for and or with s "
    "email e-mail address phone number mobile cell landline line contact details detail asked remember note that "
    "new old current work home office personal".split()
)
# A postal address in a note: a house number, a street's capitalised words, and up to three parts after commas.
_POSTAL = re.compile(r"\b\d{1,5}[A-Za-z]?\s+(?:[A-Z][\w'.-]*\s*){0,3}(?:" + "|".join(
    word.title() for word in sorted(STREET_WORDS, key=len, reverse=True) if word.isalpha()) + r")\b"
    r"(?:,\s*[A-Z0-9][\w'.-]*(?:\s+[A-Z0-9][\w'.-]*){0,3}){0,3}")
# Or one whose street has no street word, with a postcode: "14 Model Colony, Pune 411016".
_POSTAL_WITH_CODE = re.compile(r"\b\d{1,5}[A-Za-z]?\s+(?:[A-Z][\w'.-]*\s*){1,4}(?:,\s*[A-Z0-9][\w'.-]*(?:\s+[A-Z0-9][\w'.-]*){0,3})"
                               r"{0,2},\s*(?:[A-Z][\w'.-]*\s+)*(?:\d{4,6}|[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2})\b")
_DETAILS = {"phone": PHONE, "email": EMAIL, "address": _POSTAL}
# Words a cut cannot end on: a possessive, a verb or a preposition waiting for the value that was cut.
_DANGLING = re.compile(r"(?:'s|\u2019s|\b(?:their|his|her|my|our|is|are|was|be|to|at|on|via|of|for|and|or))\s*$", re.I)


def without_value(content: str, value: str) -> str | None:
    """`content` with `value` and the label before it cut out, or None when what is left says nothing more (the
    memory was about the value) or `value` is not in it."""
    pattern = re.compile(rf"(?:\s*[,;]\s*|\s+(?:and|or)\s+|\s+)?(?:{_LABEL}?(?:on\s+|at\s+)?)?{re.escape(value)}", re.I)
    match = pattern.search(content)
    if match is None:
        return None
    if _DANGLING.search(content[:match.start()]):
        return None  # "The user's mobile is X and ...": what is left would not read; the memory goes whole
    left = (content[:match.start()] + content[match.end():]).strip()
    left = re.sub(r"\s+([,.;:!?])", r"\1", re.sub(r"\s{2,}", " ", left)).strip(" ,;:-")
    left = re.sub(r"[,;:]\s*$", "", left)
    return left if _says_something(left) else None


def _says_something(text: str) -> bool:
    """Whether what is left of a memory says more than a template's words; names and possessives ("Alice's email") only
    say whose the detail was."""
    words = [word.casefold() for word in re.findall(r"[\w'-]+", text) if not word[:1].isupper()
             and not word.endswith(("'s", "\u2019s"))]
    return any(word not in _TEMPLATE_WORDS for word in words)


def without_topic(content: str, topic: list[str]) -> str | None:
    """`content` without its comma-separated parts that name every word of `topic` ("There's a gate, the code is 8093,
    boxes can go by the door" without "code": "There's a gate, boxes can go by the door"), or None when no part is
    left that says something, or none names it."""
    parts = re.split(r"\s*[,;]\s+", content)
    kept = [part for part in parts if not names_topic(part, topic, least=1)]
    if len(kept) == len(parts) or not kept:
        return None
    left = ", ".join(kept)
    return left if _says_something(left) else None


def is_contact_detail(value: str) -> bool:
    """Whether `value` is a phone number or an email address (cut out of a note rather than taking it whole)."""
    return bool(EMAIL.fullmatch(value) or PHONE.fullmatch(value) and 7 <= sum(char.isdigit() for char in value) <= 15)


def detail_values(content: str, detail: str) -> list[str]:
    """The phone numbers, email addresses or postal addresses in `content` (`detail` is "phone", "email" or
    "address")."""
    pattern = _DETAILS.get(detail)
    if pattern is None:
        return []
    values = [match.group(0).strip() for match in pattern.finditer(content)]
    if detail == "address" and not values:
        values = [match.group(0).strip() for match in _POSTAL_WITH_CODE.finditer(content)]
    if detail == "phone":
        values = [value for value in values if 7 <= sum(char.isdigit() for char in value) <= 15]
    return values


def mentions_person(content: str, person: str) -> bool:
    """Whether `content` names `person` ("Beatriz" in "... go to Beatriz" or in "beatriz.nogueira@...")."""
    names = [part for part in re.split(r"\s+", person.strip()) if len(part) >= 3]
    if not names:
        return False
    full = re.search(rf"(?<!\w){re.escape(person.strip())}(?!\w)", content, re.I)
    first = re.search(rf"(?<![\w.@-]){re.escape(names[0])}(?:s)?(?![a-z])", content, re.I)  # "parent": "parents"
    return bool(full or first)


def names_person(content: str, person: str) -> bool:
    """Whether `content` names `person` in full, as whole words and capitalised as a name ("Alex" in "Alex Moreau",
    never in "Alexandra"; "Bill" the person, never "the bill"). A full name of two words or more is the person however
    it was typed ("lewis fenwick")."""
    flags = re.I if len(person.split()) >= 2 else 0
    return re.search(rf"(?<!\w){re.escape(person.strip())}(?!\w)", content, flags) is not None


def names_contact(content: str, subject: str | None, person: str) -> bool:
    """Whether a memory is about `person`: one named by name as names_person reads it; one known by their relation
    to the user alone ("assistant", "wife"), where the memory is that contact's or says whose they are ("the user's
    assistant", "their personal assistant"). A relation word on its own is not enough: "the assistant" is the agent
    in what memories say, and "my assistant's details" must not take the memories that mention it."""
    if person[:1].isupper() or len(person.split()) > 1:
        return names_person(content, person)
    relation = re.escape(person.strip())
    return (subject or "").startswith(f"contact:{person.strip()}") or re.search(
        rf"\b(?:user's|their|his|her|my|our)\s+(?:[\w-]+\s+)?{relation}s?(?!\w)", content, re.I) is not None


def emails_named_after(content: str, person: str) -> list[str]:
    """The email addresses in `content` whose local part names `person`: their first name or initial together with
    their surname ("gareth.pryce@", "gpryce@" for Gareth Pryce)."""
    parts = [part.casefold() for part in re.split(r"[\s'-]+", person.strip()) if part]
    if len(parts) < 2 or len(parts[-1]) < 3:
        return []
    first, surname = parts[0], parts[-1]
    found = []
    for match in EMAIL.finditer(content):
        local = match.group(0).split("@")[0].casefold()
        pieces = [piece for piece in re.split(r"[._+\-\d]+", local) if piece]
        if surname in pieces and (first in pieces or first[0] in pieces) or local in (first[0] + surname,
                                                                                       first + surname):
            found.append(match.group(0))
    return found


_BEFORE_ORG = re.compile(r"\s+(?:at|for|with|of|in)\s+(?:the\s+)?$", re.I)
_REST_OF_ORG = re.compile(r"(?:\s+(?:[A-Z&][\w&.-]*(?<!'s)|of|&))*")


def without_employer(content: str, organisation: str) -> str | None:
    """A job title without the employer the user has left: "The user is a practice manager at Oberon Dental Group"
    without "Oberon" is "The user is a practice manager"; None when the content does not say it that way."""
    found = re.search(rf"(?<!\w){re.escape(organisation)}(?![\w'])", content, re.I)
    before = _BEFORE_ORG.search(content[:found.start()]) if found else None
    if before is None:
        return None
    end = _REST_OF_ORG.match(content, found.end()).end()
    left = (content[:before.start()] + content[end:]).strip(" ,;")
    return left if left != content and len(left.split()) >= 4 else None
