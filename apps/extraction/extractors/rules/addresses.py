"""Postal addresses: "ship it to 4 Harbour Road, Cork", "my billing address is ...", "our office is at ...".

An address is kept whole (street, town, postcode) up to the first word that starts something else ("... Cork
before Friday", "... Cork, and please hurry"), and only when it looks like one: a house number or a street word
with capitalised names, or a PO box. Its subject says which address it is (subjects.address_subject), so a new
home address replaces the old one and never the billing or shipping address.
"""

import re

from apps.extraction.extractors.base import Candidate
from apps.extraction.extractors.rules import lexicon
from apps.extraction.extractors.rules.context import RuleContext
from apps.extraction.extractors.rules.subjects import address_subject

_ASK = r"^(?:(?:please|kindly|just|also|now|can\s+you|could\s+you|would\s+you|will\s+you)\s+)*"
# "please update my delivery address to ..."
_ASK_CHANGE = (r"(?:(?:please|kindly|can\s+you|could\s+you|would\s+you)\s+)*(?P<change>update|change|set|correct|amend"
               r"|switch)")
_SHIP = re.compile(
    rf"{_ASK}(?:ship|send|deliver|post|mail|courier|dispatch|redirect|forward)(?:\s+(?P<object>it|them|this|that"
    r"|everything|(?:the|my|our|any|all|future)\s+(?:[\w-]+\s+){0,2}?[\w-]+))?\s+(?:over\s+|instead\s+)?to\s+"
    r"(?:(?:my|our|the)\s+(?:home|house|office|work|flat|apartment|place)(?:\s+at|\s*,)?\s+)?(?P<address>.+)$",
    re.I,
)
_WANT_SENT = re.compile(
    r"^(?:I(?:'d|\s+would)\s+like|I\s+(?:want|need)|please\s+have|can\s+you\s+have|could\s+you\s+have|can|could)"
    r"\s+(?P<object>it|them|this|that|(?:the|my|our)\s+(?:[\w-]+\s+){0,2}?[\w-]+)\s+(?:be\s+)?(?:shipped|sent"
    r"|delivered|posted|mailed|forwarded|couriered)\s+(?:over\s+|instead\s+)?to\s+(?P<address>.+)$",
    re.I,
)
_GOES_TO = re.compile(
    r"^(?:(?:from|starting(?:\s+from)?|as\s+of)\s+(?:\w+\s+){0,2}?\w+,?\s+(?=\w+\s+(?:should|can|must|needs?|will|has|have"
    r"|go|goes)\b))?(?:please\s+)?(?:all\s+)?(?P<object>deliveries|parcels|packages|orders|post|mail|shipments|invoices"
    r"|bills|everything|it\s+all|the\s+(?:parcel|package|order|delivery|replacement|invoice|bill))\s+(?:should|can"
    r"|must|needs?\s+to|will|ha(?:s|ve)\s+to)?\s*(?:go|goes|be\s+sent|be\s+delivered|be\s+addressed|come)\s+to\s+"
    r"(?P<address>.+)$",
    re.I,
)
_ADDRESS_QUALIFIERS = (r"new|current|correct|updated|right|full|home|billing|shipping|delivery|postal|mailing|office"
                       r"|work|business|company|correspondence|registered|permanent|residential|invoice|invoicing")
_LABELLED = re.compile(
    rf"^(?:{_ASK_CHANGE}\s+|(?:please\s+|kindly\s+)?use\s+)?(?:(?P<owner>my|our|the)\s+)?(?P<quals>(?:(?:{_ADDRESS_QUALIFIERS})(?:\s+(?:and|&)\s+"
    r"|\s*/\s*|\s+)){0,4})address(?:es)?(?:\s+for\s+(?P<purpose>deliveries|delivery|billing|invoices|shipping|post"
    r"|correspondence))?(?:(?:\s+has\s+|'s\s+|\s+is\s+|\s+)(?:changed|moved)\s+to"
    r"|\s+(?:is|are|'s)(?:\s+(?:now|both|actually|still|the\s+same))*\s*[:=]?|\s*[:=]"
    r"|(?(change)\s+to))\s*(?:now\s+)?(?P<address>.+)$",
    re.I,
)
# "the new place is 4 Harbour View Crescent", "our new house is at ...": where the customer now lives.
_NEW_HOME = re.compile(r"(?:^|(?<=,\s))(?:the|my|our)\s+new\s+(?:place|home|house|flat|apartment|flat\s+address)\s+is\s+(?:at\s+|in\s+)?"
                       r"(?P<address>.+)$", re.I)
_OFFICE_AT = re.compile(
    r"^(?:my|our)\s+(?:(?:head|main|new|registered)\s+)?(?:office|offices|company|business|shop|store|workplace"
    r"|practice|clinic|warehouse|premises|studio)\s+(?:(?:is|are)\s+(?:now\s+)?(?:located\s+|based\s+)?(?:at|on|in)"
    r"|(?:has|have)\s+(?:now\s+|just\s+)?(?:moved|relocated)\s+to|(?:is|are)\s+moving\s+to|moved\s+to)\s+"
    r"(?P<address>.+)$",
    re.I,
)
_LAST_WE_ARE = re.compile(r",\s*(?=(?:we're|we\s+are|I'm|I\s+am)\s+(?:now\s+)?(?:at|in)\s+\d)", re.I)
# "I own a flat at ... that I rent out", "bought a house at ... for my mum", "a holiday cottage at ...": another property.
_NOT_THEIR_HOME = re.compile(r"\b(?:rent(?:ing)?\s+(?:it\s+)?out|let(?:ting)?\s+(?:it\s+)?out|for\s+(?:my|our|his|her|their)\s+\w+"
                             r"|holiday|second\s+home|investment|buy[- ]to[- ]let|as\s+a\s+gift)\b", re.I)
_OWN_CHANGE = frozenset("new current updated correct".split())
_LIVE_AT = re.compile(
    r"^(?:I|we)(?:'ve|\s+have|'re|\s+are|'m|\s+am)?(?:\s+(?:now|just|recently|currently|since))*\s+(?:live|living"
    r"|reside|residing|based|moved|relocated)\s+(?:back\s+)?(?:at|to)\s+(?P<address>.+)$"
    r"|^(?:I(?:'m|\s+am)|we(?:'re|\s+are))\s+(?:now\s+)?(?:located\s+)?(?:at|in)\s+(?P<at>(?:flat|apartment|apt\.?|unit|suite"
    r"|house|no\.?)?\s*\d.+?)(?:\s+now)?$"
    # "I rent a flat at 52 Albion Road", "we're renting a house on 9 Park Row": where a tenant lives
    # "I have just bought a house at 7 Wagtail Close": where an owner lives
    r"|^(?:I|we)(?:'re|\s+are|'m|\s+am|'ve|\s+have)?(?:\s+(?:now|just|currently|still|recently))*\s+(?:rent|renting|lease"
    r"|leasing|share|sharing|live\s+in|living\s+in|bought|purchased|moved\s+into)\s+(?:a|an|the|our|my)"
    r"\s+(?:[\w-]+\s+)?(?:flat|apartment|house|home|room|place"
    r"|cottage|bungalow|studio|condo|maisonette|unit)\s+(?:at|on)\s+(?P<rented>\d.+)$",
    re.I,
)
_BILL_TO = re.compile(rf"{_ASK}(?:bill|invoice)\s+(?:it\s+|me\s+|us\s+|them\s+)?to\s+(?P<address>.+)$", re.I)

_QUALIFIER_KINDS = {
    "home": "home", "postal": "home", "mailing": "home", "correspondence": "home", "permanent": "home",
    "residential": "home", "billing": "billing", "invoice": "billing", "invoicing": "billing", "shipping": "shipping",
    "delivery": "shipping", "office": "office", "work": "office", "business": "office", "company": "office",
    "registered": "office",
}


def address_kind(word: str) -> str | None:
    """The kind of address a qualifier names ("delivery" -> "shipping", "postal" -> "home"), or None."""
    return _QUALIFIER_KINDS.get(word.lower())


_PURPOSE_KINDS = {"deliveries": "shipping", "delivery": "shipping", "shipping": "shipping", "billing": "billing",
                  "invoices": "billing", "post": "home", "correspondence": "home"}
_POSTAL_OBJECTS = re.compile(r"\b(?:correspondence|post|mail|letters?)\b", re.I)
_BILLING_OBJECTS = re.compile(r"\b(?:invoices?|bills?|statements?|receipts?)\b", re.I)
_TEMPLATES = {"home": "{possessive} home address is {address}",
              "shipping": "{possessive} shipping address is {address}",
              "billing": "{possessive} billing address is {address}", "office": "{possessive} office is at {address}"}
# Lowercase words that end an address: "... Cork before Friday", "... Cork and please hurry".
_STOPS = frozenset(
    "and but so or because since as before after by please thanks thank when until till if which where who instead "
    "not rather than from for asap today tomorrow tonight next this on with via then though although otherwise ok "
    "okay cheers thx i i'm i'll i've we we're we'll is are was were will would should can could now".split()
)
_OWNER = re.compile(r"^(?:my|our|the\s+user's)\s+", re.I)
_HOUSE_NUMBER = re.compile(r"\d{1,5}[A-Za-z]?(?:[-/]\d{1,5}[A-Za-z]?)?")
_PO_BOX = re.compile(r"\b(?:p\.?\s?o\.?\s+box|post\s+office\s+box|postbox)\s+\d+", re.I)
_REQUEST = re.compile(r"^(?:(?:can|could|would|will)\s+(?:you|it|they|that)|please)\b", re.I)
MAX_ADDRESS_WORDS = 20


def address_value(raw: str) -> str | None:
    """The address at the start of `raw`, up to the word that starts something else; None when it is not one."""
    words: list[str] = []
    for token in raw.split()[:MAX_ADDRESS_WORDS + 1]:
        bare = token.strip(",.;:!?\"'")
        if token.startswith(("(", "[")) or bare in _STOPS or not bare:
            break
        words.append(token)
        if token.endswith((";", "!", "?")) or len(words) >= MAX_ADDRESS_WORDS:
            break
    value = _OWNER.sub("", " ".join(words)).strip(" ,.;:!?-")
    value = _PLACE_AT.sub("", value)  # "warehouse at Unit 4, Riverside Park": the address is after "at"
    return value if _looks_like_address(value) else None


_PLACE_AT = re.compile(r"^(?:(?:our|my|the)\s+)?(?:warehouse|office|shop|store|depot|site|premises|restaurant|caf[eé]"
                       r"|studio|factory|yard|branch|kitchen|clinic|salon|practice)\s+(?:at|on)\s+(?=\S)", re.I)


def _looks_like_address(value: str) -> bool:
    words = [word.strip(",.") for word in value.split()]
    if len(words) < 2 or "@" in value:
        return False
    if _PO_BOX.search(value):
        return True
    capitalised = [word for word in words if word[:1].isupper()]
    numbered = any(_HOUSE_NUMBER.fullmatch(word) for word in words)
    # "Dr Patel's practice", "St Mary's": an abbreviation that opens the phrase is a title, not "Drive" or "Street"
    street = any(word[:1].isupper() and word.lower() in lexicon.STREET_WORDS and not (index == 0 and len(word) <= 2)
                 for index, word in enumerate(words))
    return (street and (numbered or len(capitalised) >= 2)) or (numbered and len(capitalised) >= 2)


# "my postcode is BS1 4DX", "our zip code is 97209": a postcode given on its own, a part of the address kept apart.
_POSTCODE = re.compile(r"^(?:(?:and|also|oh|so|btw)[\s,]+)*(?:my|our)\s+(?:post\s?code|postal\s+code|zip(?:\s+code)?|eircode)"
                       r"\s*(?:is|'s|:)\s*(?:now\s+)?(?P<code>(?=[A-Z0-9 -]*\d)[A-Z0-9](?:[A-Z0-9]|[ -](?=[A-Z0-9])){3,9})$",
                       re.I)


def addresses(text: str, ctx: RuleContext, *, question: bool = False) -> list[Candidate]:
    """The address a user clause gives, with its kind (home, shipping, billing, office)."""
    if question and not _REQUEST.match(text):
        return []  # "Do you ship to 4 Harbour Road?" asks
    if match := _POSTCODE.match(text.rstrip(" .!")):
        code = match.group("code").upper()
        return [ctx.candidate(f"{ctx.person.possessive} postcode is {code}", confidence=0.85, rule="contact.address.postcode",
                              subject=address_subject("postcode"), tags=("pii", "contact", "address"),
                              metadata={"pii": True, "value": code, "kind": "postcode"})]
    kind, also = None, []
    if match := _LABELLED.match(text):
        quals = match.group("quals").lower().replace("/", " ").split()
        kinds = list(dict.fromkeys(_QUALIFIER_KINDS[word] for word in quals if word in _QUALIFIER_KINDS))
        if purpose := _PURPOSE_KINDS.get((match.group("purpose") or "").lower()):
            kinds = [purpose]
        if not kinds and (match.group("owner") or "").lower() not in ("my", "our") and not _OWN_CHANGE.intersection(quals) and not (
                re.match(r"(?i)address(?:\s+is|\s*:)", text)):
            return []  # "the address is ..." may be anyone's; "New address: ...", "Address is ..." in a user message is theirs
        kind, also = (kinds or ["home"])[0], kinds[1:]  # "my billing and shipping address are the same: ..."
    elif match := _SHIP.match(text) or _WANT_SENT.match(text) or _GOES_TO.match(text):
        sent = match.group("object") or ""
        kind = "billing" if _BILLING_OBJECTS.search(sent) else "home" if _POSTAL_OBJECTS.search(sent) else "shipping"
    elif match := _BILL_TO.match(text):
        kind = "billing"
    elif match := _OFFICE_AT.match(text):
        kind = "office"
    elif match := _NEW_HOME.search(text):
        kind = "home"
    elif (match := _LIVE_AT.match(text) or _LIVE_AT.match(_LAST_WE_ARE.split(text)[-1])) and not (
            match.group("rented") and _NOT_THEIR_HOME.search(text)):
        kind = "home"  # "we moved house last week, we're at 9 Quay Street now"
    if kind is None or not (address := address_value(match.group("address") or match.groupdict().get("at") or match.groupdict().get("rented") or "")):
        return []
    person = ctx.person
    return [ctx.candidate(_TEMPLATES[kind].format(possessive=person.possessive, address=address), confidence=0.85,
                          rule=f"contact.address.{kind}", subject=address_subject(kind),
                          tags=("pii", "contact", "address"), metadata={"pii": True, "value": address, "kind": kind})
            for kind in [kind, *also]]



# Where an address the rules above did not read may start: a house number, or a flat or unit, after the start of the
# sentence, a comma or colon, or a word that hands over a place ("to", "is", "it's", "address"; not "at": "meet at").
_ADDRESS_START = re.compile(r"(?:^|(?<=[,:;]\s)|(?<=\bto\s)|(?<=\bis\s)|(?<=\bits\s)|(?<=\bit's\s)|(?<=\baddress\s))"
                            r"(?=(?:(?:flat|unit|apt|apartment"
                            r"|suite|house|level|floor)\s+\d{1,4}[A-Za-z]?\b|\d{1,5}[A-Za-z]?(?:[-/]\d{1,5})?\s+(?!(?:jan|feb|mar|apr"
                            r"|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b)(?-i:[A-Z])))",
                            re.I)
_SOMEONE_ELSES_PLACE = re.compile(r"\b(?:he|she|they|him|them|his|her|their|your|parents'?|mum's|mom's|dad's|company's|office|work|business"
                                  r"|warehouse|workshop|returns?|billing|invoices?|bill|collect(?:ion|ed)?|pick\s*ups?|from"
                                  r"|emergency|venue|hotel|hospital|clinic|school)\b", re.I)


def unclaimed_addresses(sentence: str, clauses: list, ctx: RuleContext, said: list, *, someone_named: bool,
                        around: str = "") -> list[Candidate]:
    """"Flat 22, Ashcombe House, 9 Treadwell Street, Bristol BS2 0LP.": an address with a house number and a street,
    given in a customer's sentence that says no more of whose or what it is, and that no rule has read, is their
    address, kept as the home address but "unqualified" (it does not replace an address on file). Not where the
    message or the agent's turn before it (`around`) is about another of their places ("the second site")."""
    if someone_named or _SOMEONE_ELSES_PLACE.search(sentence) or _not_theirs_now(sentence) or _NOT_THEIR_HOME.search(
            sentence) or _ANOTHER_PLACE.search(sentence) or _OTHER_PREMISES.search(around) or any(
            clause.question or clause.uncertain for clause in clauses):
        return []
    read = " ".join(getattr(item, "content", "") or "" for item in said)
    for start in _ADDRESS_START.finditer(sentence):
        address = address_value(sentence[start.start():])
        if not address or not _HOUSE_NUMBER.search(address) or not any(
                word.strip(",.").lower() in lexicon.STREET_WORDS and word[:1].isupper() for word in address.split()[1:]):
            continue
        if address in read or address.split(",")[0] in read:
            return []
        return [ctx.candidate(f"{ctx.person.possessive} address is {address}",
                              confidence=0.75, rule="contact.address.given", subject=address_subject("home"),
                              tags=("pii", "contact", "address"),
                              metadata={"pii": True, "value": address, "kind": "home", "unqualified": True})]
    return []


_OTHER_PREMISES = re.compile(r"\b(?:site|branch|shop|store|warehouse|depot|premises|restaurant|venue|workshop|factory"
                             r"|office|studio|salon|clinic|surgery|practice|plant|yard)s?\b", re.I)
# A property the customer owns, buys or is moving to, rather than where they are: "a flat at ... that I rent out".
_ANOTHER_PLACE = re.compile(r"\b(?:if|would|could|might|own|owns|bought|buying|buy|rent|renting|relocating|moving|move"
                            r"|will|going\s+to"
                            r"|planning|cottage|property|properties)\b", re.I)


def _not_theirs_now(sentence: str) -> bool:
    """A sentence about an address that is not, or no longer, the customer's: "not my home", "the old one"."""
    return re.search(r"\b(?:not|old|previous|former|was|used\s+to|wrong)\b", sentence, re.I) is not None
