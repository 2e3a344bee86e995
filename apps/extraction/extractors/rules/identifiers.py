"""Identifiers, typed by the word that names them: "order 5512", "my loyalty number is LX-5520-1188", "IBAN ...",
"card ending 4821".

The kind word decides the subject: "identifier:<kind>:<value>" for kinds a customer holds many of (orders, tickets),
"identifier:<kind>" for kinds they hold one of (loyalty, membership, frequent-flyer, customer, patient number), so
a new one replaces the old. A payment card is kept only by the last four digits the customer gives as such; a full
card number is never stored.
"""

import re
from dataclasses import dataclass

from apps.extraction.extractors.base import Candidate
from apps.extraction.extractors.rules.context import RuleContext
from apps.extraction.extractors.rules.subjects import identifier_subject
from apps.extraction.extractors.rules.text import normalise_key


@dataclass(frozen=True)
class Kind:
    name: str  # how the content names it: "loyalty", "frequent-flyer", "IBAN"
    noun: str = ""  # "number" / "ID" / "code" when the content reads "<name> <noun>"; "" for "order 5512"
    single: bool = False  # a customer holds one at a time: a new one replaces the old
    pii: bool = False
    spaced: bool = False  # the value may be written in digit groups: "policy number 123 456 789"
    qualified: bool = False  # the word alone is too common: only "<word> number/ID/..." names an identifier
    check_digit: bool = False  # long numbers with a check digit (IMEI, SIM): not mistaken for a payment card


KINDS = {
    "order": Kind("order"), "invoice": Kind("invoice"), "ticket": Kind("ticket"), "case": Kind("case"),
    "transaction": Kind("transaction", "ID"), "account": Kind("account", "number", pii=True, spaced=True),
    "booking": Kind("booking"), "confirmation": Kind("confirmation", "number"),
    "tracking": Kind("tracking", "number"), "reference": Kind("reference"),
    "customer": Kind("customer", "number", single=True, pii=True, spaced=True),
    "subscription": Kind("subscription"), "claim": Kind("claim", "number"),
    "policy": Kind("policy", "number", pii=True, spaced=True), "receipt": Kind("receipt"), "rma": Kind("RMA"),
    "membership": Kind("membership", "number", single=True, pii=True, spaced=True),
    "loyalty": Kind("loyalty", "number", single=True, pii=True, spaced=True),
    "frequent-flyer": Kind("frequent-flyer", "number", single=True, pii=True, spaced=True),
    "patient": Kind("patient", "number", single=True, pii=True, spaced=True, qualified=True),
    "meter": Kind("meter", "number", spaced=True, qualified=True),
    "sort-code": Kind("sort code", pii=True), "iban": Kind("IBAN", pii=True),
    "sim": Kind("SIM", "number", pii=True, spaced=True, check_digit=True),
    "imei": Kind("IMEI", pii=True, spaced=True, check_digit=True),
    "serial": Kind("serial", "number", spaced=True), "po": Kind("purchase order"),
    "vat": Kind("VAT", "number", single=True, spaced=True), "shipment": Kind("shipment"), "refund": Kind("refund"),
    "payment": Kind("payment"), "contract": Kind("contract"), "incident": Kind("incident"),
    "quote": Kind("quote", qualified=True),  # "to quote 586204" is a verb: only "quote number/ref" or a QT- code
    "request": Kind("request"), "voucher": Kind("voucher", "code"), "warranty": Kind("warranty"),
    "registration": Kind("registration", "number", qualified=True),
    "passport": Kind("passport", "number", single=True, pii=True, qualified=True),
    "licence": Kind("driving licence", "number", single=True, pii=True, qualified=True),
    "file": Kind("file", qualified=True), "matter": Kind("matter"), "engagement": Kind("engagement"), "agreement": Kind("agreement"),
    "application": Kind("application"),
}
# The words (lowercase, single-spaced) that name each kind; the longest wins ("purchase order" over "order").
KIND_WORDS = {
    "order": "order", "purchase": "order", "invoice": "invoice", "ticket": "ticket", "case": "case",
    "transaction": "transaction", "txn": "transaction", "account": "account", "acct": "account",
    "booking": "booking", "reservation": "booking", "pnr": "booking", "confirmation": "confirmation",
    "tracking": "tracking", "reference": "reference", "ref": "reference", "customer": "customer",
    "client": "customer", "subscription": "subscription", "claim": "claim", "policy": "policy", "receipt": "receipt",
    "rma": "rma", "membership": "membership", "member": "membership", "loyalty": "loyalty", "rewards": "loyalty",
    "frequent flyer": "frequent-flyer", "frequent flier": "frequent-flyer", "patient": "patient", "meter": "meter",
    "mprn": "meter", "mpan": "meter", "sort code": "sort-code", "iban": "iban", "sim": "sim", "iccid": "sim",
    "imei": "imei", "serial": "serial", "sn": "serial", "s/n": "serial", "purchase order": "po", "po": "po", "vat": "vat", "shipment": "shipment",
    "refund": "refund", "payment": "payment", "contract": "contract", "incident": "incident", "request": "request",
    "quote": "quote", "quotation": "quote", "estimate": "quote",
    "voucher": "voucher", "coupon": "voucher", "gift card": "voucher", "promo code": "voucher",
    "discount code": "voucher", "warranty": "warranty", "registration": "registration", "passport": "passport",
    "driving licence": "licence", "driving license": "licence", "driver's licence": "licence",
    "driver's license": "licence", "drivers licence": "licence", "drivers license": "licence",
    "file": "file", "matter": "matter", "engagement": "engagement", "agreement": "agreement",
    "finance agreement": "agreement", "loan agreement": "agreement", "application": "application",
}
# Kinds named by words that mostly mean something else: their identifier must look like one.
_NAMED_BY_COMMON_WORDS = frozenset("file matter engagement agreement application".split())
_NUMBER_WORDS = frozenset("mprn mpan iccid pnr imei iban".split())  # kind words that already mean "number"
_QUALIFIER_NOUNS = {"number": "number", "numbers": "number", "num": "number", "nr": "number", "no": "number",
                    "nos": "number", "#": "number", "id": "ID", "ids": "ID", "code": "code", "codes": "code",
                    "reference": "reference", "references": "reference", "ref": "reference", "refs": "reference"}

_KIND_ALTERNATION = "|".join(re.escape(word).replace(r"\ ", r"[\s-]+")
                             for word in sorted(KIND_WORDS, key=len, reverse=True))
_QUALIFIER = r"(?:card|numbers?|num|nr|nos?|ids?|codes?|references?|refs?)\b\.?"
# A value, with the digit groups that follow it after single spaces ("5520 1188 77"), a bounded number of them.
MAX_DIGIT_GROUPS = 6
# A last group of one digit (a check digit: "RX 5502 9917 3") only where the value ends.
_ID = (rf"(?!(?:{_KIND_ALTERNATION})s?\b)#?[A-Za-z0-9][A-Za-z0-9_-]*(?:[ ]\d{{2,10}}(?![\w-])){{0,{MAX_DIGIT_GROUPS}}}"
       r"(?:[ ]\d(?=\s*(?:[.,;!?)]|$)))?")
_IDS = rf"(?P<ids>{_ID}(?:(?:\s*,\s*(?:and\s+|&\s+)?|\s+(?:and|&|or)\s+|\s*/\s*){_ID})*)"
_VALUE_FOLLOWS = r"\s*(?:(?:is|was|are|were)(?:\s+now)?\s+|[:=]\s*|-\s+)?"
_IDENTIFIER = re.compile(
    rf"\b(?P<kind>{_KIND_ALTERNATION})s?\b(?P<qual>(?:,?\s*{_QUALIFIER})*){_VALUE_FOLLOWS}{_IDS}",
    re.I,
)
# "60318877 is my customer number": the value first, then what it is.
_VALUE_FIRST = re.compile(
    rf"(?:^|(?<=[\s,(]))(?P<ids>#?[A-Z0-9][A-Z0-9-]*\d[A-Z0-9-]*)\s+(?:is|'s)\s+(?:my|our|the)\s+(?P<kind>{_KIND_ALTERNATION})"
    rf"(?P<qual>(?:\s*{_QUALIFIER})+)",
    re.I,
)
# "my number for the loyalty scheme is 5520 1188": the number named first, then what it is for.
_NUMBER_FOR = re.compile(
    rf"\b(?P<qual>{_QUALIFIER})\s+(?:for|on|with)\s+(?:the|my|our)\s+(?P<kind>{_KIND_ALTERNATION})"
    rf"(?:\s+(?:scheme|programme|program|club|card|account|plan))?{_VALUE_FOLLOWS}{_IDS}",
    re.I,
)
_IBAN = re.compile(r"\b(?i:iban)\b(?:\s*(?i:number|no\.?|is|:|#))*\s*(?P<value>[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]{4}){2,7}"
                   r"(?:[ ]?[A-Z0-9]{1,3})?)\b")
_CARD_LAST_FOUR = re.compile(
    r"\b(?P<noun>card|(?-i:[A-Z][A-Za-z]+))(?:\s+(?:number|no\.?))?,?\s+(?:that\s+|which\s+)?(?:is\s+)?"
    r"(?:ending|ends)(?:\s+(?:in|with|on))?\s*(?::\s*)?(?:[*x\u2022]+[\s-]*)?(?P<last>\d{4})\b"
    r"|\blast\s+(?:four|4)(?:\s+digits)?(?:\s+(?:of|on)\s+(?:my|the|your|our)\s+(?:[\w-]+\s+)?card)?"
    r"\s*(?:is|are|:)?\s*(?P<last2>\d{4})\b"
    r"|\bcard(?:\s+(?:number|no\.?))?\s*(?::\s*)?(?:[*x\u2022]{4,}|(?:[*x\u2022]{4}[\s-]){3})(?P<last3>\d{4})\b",
    re.I,
)
_CARD_WORD = re.compile(r"\bcard\b", re.I)
# "my <Network> ending 4821" names a card by its network; without the word "card" it must be about paying.
_PAYMENT = re.compile(r"\b(?:pay|paid|paying|payment|charged?|charging|billed|billing|debited|refund(?:ed)?|declined|expired?)\b",
                      re.I)
_NOT_CARD_NAMES = frozenset("phone mobile number line sim it one that this which mine".split())
_PREFIXES = {
    "TXN": "transaction", "TX": "transaction", "INV": "invoice", "ORD": "order", "ORDER": "order", "TKT": "ticket",
    "TCK": "ticket", "TICKET": "ticket", "CASE": "case", "REF": "reference", "ACC": "account", "ACCT": "account",
    "BKG": "booking", "RMA": "rma", "CUST": "customer", "SUB": "subscription", "INC": "incident", "REQ": "request",
    "CLM": "claim", "RCPT": "receipt", "PO": "po", "QT": "quote", "QUO": "quote", "QTE": "quote", "EST": "quote",
}
_PREFIXED = re.compile(rf"\b(?P<prefix>{'|'.join(sorted(_PREFIXES, key=len, reverse=True))})[-_#]?\d[\w-]*\b")
_ID_SEPARATOR = re.compile(r"\s*(?:,\s*(?:and\s+|&\s+)?|\s(?:and|&|or)\s|/)\s*", re.I)
_EXAMPLE = re.compile(r"\b(?:example|e\.g\.|for\s+instance|such\s+as|format|looks\s+like|like\s+this)\b", re.I)
_DATE_LIKE = re.compile(r"\d{4}-\d{2}-\d{2}|\d{1,2}(?:am|pm)|\d+(?:st|nd|rd|th|s|min|mins|h|hrs?|days?|k)", re.I)
# "her membership number", "my wife's passport number": someone else's personal identifier, not the user's.
_SOMEONE_ELSES = re.compile(r"(?:\b(?:his|her)|\b(?!(?:it|that|this|what|here|there|who|name|one|he|she|let)'s)"
                            r"[A-Za-z]+'s)\s+(?:[\w-]+\s+){0,2}$", re.I)
_GROUPS = re.compile(r"[\s-]+")
_LETTER_CODE = re.compile(r"[A-Z]{1,3}")


# "my old account number", "the previous policy number": a value that was; "the new one is ..." may follow.
_OLD_BEFORE = re.compile(r"\b(?:old|previous|former|expired|cancell?ed|closed)\s+(?:[\w-]+\s+){0,2}$", re.I)
_OLD_WORD = re.compile(r"\b(?:old|previous|former|expired|cancell?ed|closed)\b", re.I)
_NEW_ONE = re.compile(r"\b(?:the\s+|my\s+|our\s+)?new\s+(?:one|number)\s*(?:is|'s|:)\s*(?P<value>#?[A-Z0-9][A-Z0-9-]*\d"
                      r"[A-Z0-9-]*(?:[ ]\d{2,10}(?![\w-])){0,4})", re.I)


def renewed_identifiers(sentence: str, ctx: RuleContext) -> list[Candidate]:
    """"Our old account number was 5520 1186; the new one is 5520 1199": the new value, of the old one's kind (the
    clauses, read one by one, keep neither)."""
    found = []
    if not _OLD_WORD.search(sentence):
        return found  # every sentence of every message comes here: the costly pattern only where it may match
    for match in _IDENTIFIER.finditer(sentence):
        if not _OLD_BEFORE.search(sentence[max(0, match.start() - 30):match.start()]):
            continue
        key = identifier_kind(match.group("kind"))
        new_one = _NEW_ONE.search(sentence, match.end())
        if key and new_one and _valid_id(new_one.group("value"), KINDS[key]):
            value = new_one.group("value")
            found.append(_identifier(ctx, key, value, value, _qualifier_noun(match.group("qual")), 0.85))
    return found


def _luhn(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char) * (2 if index % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def looks_like_card_number(raw: str) -> bool:
    """13 to 19 digits (grouped or not) passing the Luhn check: a payment card number, never stored."""
    digits = _GROUPS.sub("", raw)
    return digits.isdigit() and 13 <= len(digits) <= 19 and _luhn(digits)


def _valid_id(raw: str, kind: Kind) -> bool:
    core = raw.lstrip("#")
    if not core or not any(char.isdigit() for char in core) or _DATE_LIKE.fullmatch(core):
        return False
    first = core.split()[0]
    if first != core and not (any(char.isdigit() for char in first) or _LETTER_CODE.fullmatch(first)):
        return False  # "account ending 1234": a word, not the first group of a value ("BA 12345678", "0045 7781")
    if not kind.check_digit and looks_like_card_number(core):
        return False
    return len(core) >= 3 or raw.startswith("#")


# After a value's digit groups, a group of capitals and digits ("AA1") and the groups after it: the value goes on.
_MORE_GROUPS = re.compile(r"[ ](?=[A-Z]*\d)(?=\d*[A-Z])[A-Z0-9]{2,6}(?:[ ][A-Z0-9]{1,6})*(?=[ .,;!?)]|$)")


def identifier_kind(words: str) -> str | None:
    """The identifier kind some words name ("loyalty" -> "loyalty", "frequent flyer" -> "frequent-flyer"), or None."""
    return KIND_WORDS.get(_GROUPS.sub(" ", words.lower().strip()))


def _qualifier_noun(qual: str) -> str | None:
    words = qual.lower().replace(".", "").split()
    return _QUALIFIER_NOUNS.get(words[-1]) if words else None


def _labelled_code(text: str, match: re.Match) -> bool:
    """"Passport AK0938127": the word alone names the identifier where it labels a code of letters and digits at the
    start of a clause."""
    value = match.group("ids").split()[0] if match.group("ids").split() else ""
    return bool(re.fullmatch(r"(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9-]{6,}", value)) and bool(
        re.search(r"(?:^|[,.;:]\s*)$", text[:match.start()]))


def identifiers(text: str, ctx: RuleContext, confidence: float = 0.9) -> list[Candidate]:
    """One candidate per identifier, kept verbatim: "TXN001, TXN002" are two facts that never supersede each other."""
    if _EXAMPLE.search(text):
        return []  # "an order number looks like ORD-1234"
    found: dict[tuple[str, str], tuple[str, str | None]] = {}
    for match in _IBAN.finditer(text):
        found.setdefault(("iban", match.group("value")), (match.group("value"), None))
    for match in [*_IDENTIFIER.finditer(text), *_NUMBER_FOR.finditer(text), *_VALUE_FIRST.finditer(text)]:
        key = identifier_kind(match.group("kind"))
        kind = KINDS[key]
        qualifier = _qualifier_noun(match.group("qual"))
        if key == "iban" or (kind.qualified and not qualifier and match.group("kind").lower() not in _NUMBER_WORDS
                             and not _labelled_code(text, match)):
            continue
        if kind.pii and _SOMEONE_ELSES.search(text[max(0, match.start() - 40):match.start()]):
            continue
        if _OLD_BEFORE.search(text[max(0, match.start() - 30):match.start()]):
            continue  # "our old account number was X": renewed_identifiers reads the new one after it
        ids = match.group("ids")
        if rest := _MORE_GROUPS.match(text, match.end("ids")):
            ids += rest.group(0)  # "1Z 999 AA1 01 2345 6784": not cut at its first group of letters
        if key in _NAMED_BY_COMMON_WORDS and re.fullmatch(r"(?:19|20)\d{2}", ids.strip()):
            continue  # "the matter 2024 tax return", "engagement 2019": a year, not an identifier
        for raw in _ID_SEPARATOR.split(ids):
            parts = raw.split()
            # "09M 554187": a head too short to be the whole identifier takes the digit group after it
            short_head = len(parts) > 1 and len(parts[0]) < 4 and parts[1].isdigit()
            # "claim no. 4410 2983 776": digit groups of three or more go on one number, never cut to its first group
            grouped = len(parts) > 1 and (all(part.isdigit() for part in parts) and all(len(part) >= 3 for part in parts[1:])
                                          or rest is not None)
            raw = raw.strip() if kind.spaced or short_head or grouped else parts[0] if parts else ""
            if not _valid_id(raw, kind):
                break
            found.setdefault((key, raw.lstrip("#")), (raw, qualifier))
    candidates = [_identifier(ctx, key, core, raw, qualifier, confidence)
                  for (key, core), (raw, qualifier) in found.items()]
    for match in _PREFIXED.finditer(text):
        raw = match.group(0)
        key = _PREFIXES[match.group("prefix")]
        if not any(core == raw or raw in core for _, core in found) and _valid_id(raw, KINDS[key]):
            candidates.append(_identifier(ctx, key, raw, raw, None, confidence - 0.15))
    candidates += _other_identifiers(text, ctx, confidence, taken=[core for _, core in found])
    return candidates + _card_endings(text, ctx, confidence) + _plates(text, ctx, confidence)


# "student ID S-2290-4471", "my hospital number is H7730215", "EORI number GB 318 4470 2209 00": an identifier of a
# kind no list names, where a number or ID word labels a value of capitals and digits. Never a code or a PIN, which
# may open something, and never a number a rule of its own reads (a phone, a flat, a seat).
_OTHER_ID = re.compile(
    r"\b(?P<kind>(?:(?i:[a-z][a-z'-]+)\s+)?(?i:[a-z][a-z-]+))\s+(?P<qual>(?i:number|no\.?|ID|reference|ref))\.?\s*"
    r"(?i:is\s+|was\s+|:\s*|-\s+)?(?P<value>(?=[A-Z0-9 -]*\d)[A-Z0-9][A-Z0-9-]{1,}(?:[ ][A-Z0-9]{2,6}){0,4})(?![\w-])")
_NOT_IDENTIFIER_KINDS = frozenset(
    "phone mobile cell telephone landline fax whatsapp contact home work office house flat apartment unit room table seat "
    "gate platform bus route page step item line extension ext postcode zip post pin password passcode security "
    "verification otp one-time model version size door alarm key access lock safe bank sort card my our your his her "
    "their the a an this that new old last previous first second same other any best main preferred direct daytime "
    "evening emergency own personal private business usual normal regular real full correct right".split())


# "My railcard is DPR 6612 0087", "Disabled Persons Railcard DPR 6612 0087": a thing of theirs named with a code that
# could be nothing else (capital letters, then three digits or more), though no "number" or "ID" says so.
_NAMED_CODE = re.compile(
    r"(?:\b(?i:my|our)\s+(?P<kind>(?i:[a-z][a-z-]+)(?:\s+(?!(?i:is|was|are)\b)(?i:[a-z][a-z-]+))?)|(?<![\w-])(?P<name>[A-Z][a-z]+(?:\s+[A-Z][a-z]+){0,2}))"
    r"\s+(?i:is\s+|:\s*)?(?P<value>[A-Z]{2,5}[ -]?\d{3,}(?:[ -][A-Z0-9]{2,6}){0,4})(?![\w-])")


# "EIN 87-3310295", "our UTR is 1234567890": a tax or registry number named by its acronym alone.
_ACRONYM_ID = re.compile(r"(?:^|(?<=[\s,(]))(?:(?i:my|our|the)\s+)?(?P<acronym>[A-Z]{2,5})(?:\s+(?i:is|was)\s+|\s*:\s*|\s+)"
                         r"(?P<value>(?=[\d -]*\d{5})\d[\d -]{3,18}\d)(?![\w-])")


def _other_identifiers(text: str, ctx: RuleContext, confidence: float, *, taken: list[str]) -> list[Candidate]:
    found = []
    for match in _ACRONYM_ID.finditer(text) if ctx.role == "user" else ():
        acronym, value = match.group("acronym"), match.group("value")
        if acronym in _ACRONYMS and not any(value in core or core in value for core in taken) and not (
                _SOMEONE_ELSES.search(text[max(0, match.start() - 40):match.start()])):
            found.append(ctx.candidate(f"{ctx.person.possessive} {acronym} is {value}", confidence=confidence - 0.1,
                                       rule="identifier.other", subject=identifier_subject(acronym.lower(), value, single=True),
                                       tags=("identifier",), metadata={"kind": acronym.lower(), "identifier": value,
                                                                       "label": acronym}))
    for match in [*_OTHER_ID.finditer(text), *(_NAMED_CODE.finditer(text) if ctx.role == "user" else ())]:
        if match.re is _NAMED_CODE:
            found += _named_code(match, ctx, confidence, taken=[*taken, *(c.metadata["identifier"] for c in found)])
            continue
        words = [word for word in match.group("kind").lower().split() if word not in ("my", "our", "the", "your")]
        value = match.group("value").strip()
        if not words or _NOT_IDENTIFIER_KINDS.intersection(words) or identifier_kind(" ".join(words)) or any(
                identifier_kind(word) for word in words) or any(value in core or core in value for core in taken):
            continue
        if sum(char.isdigit() for char in value) < 3 or len(value.replace(" ", "")) < 5 or _SOMEONE_ELSES.search(
                text[max(0, match.start() - 40):match.start()]):
            continue
        if ctx.role != "user" and not re.search(r"\byour\s", text[max(0, match.start() - 12):match.end("kind")], re.I):
            continue  # the agent's "our company number is ...": its own, unless it says "your"
        qualifier = {"no": "number", "no.": "number", "ref": "reference", "id": "ID"}.get(
            match.group("qual").lower(), match.group("qual").lower())
        label = f"{' '.join(words)} {qualifier}"
        label = re.sub(r"^([a-z]{2,5})\b", lambda head: head.group(1).upper() if head.group(1).upper() in _ACRONYMS
                       else head.group(1), label)
        key = normalise_key(" ".join(words)).replace(" ", "-")
        found.append(ctx.candidate(f"{ctx.person.possessive} {label} is {value}", confidence=confidence - 0.1,
                                   rule="identifier.other", subject=identifier_subject(key, value, single=True),
                                   tags=("identifier",), metadata={"kind": key, "identifier": value, "label": label}))
    return found


def _named_code(match: re.Match, ctx: RuleContext, confidence: float, *, taken: list[str]) -> list[Candidate]:
    value = match.group("value").strip()
    said = match.group("kind") or match.group("name")
    words = said.lower().split()
    if _NOT_IDENTIFIER_KINDS.intersection(words) or any(identifier_kind(word) for word in words) or any(
            value in core or core in value for core in taken) or words[-1] in ("number", "id", "code", "reference"):
        return []  # the typed rules and _OTHER_ID read those
    if sum(char.isdigit() for char in value) < 6:
        return []  # "Sydney NSW 2000", "Portland OR 97209": a state and a postcode
    key = normalise_key(said).replace(" ", "-")
    return [ctx.candidate(f"{ctx.person.possessive} {said} is {value}", confidence=confidence - 0.15,
                          rule="identifier.other", subject=identifier_subject(key, value, single=True),
                          tags=("identifier",), metadata={"kind": key, "identifier": value, "label": said})]


_ACRONYMS = frozenset("NHS EORI UTR NI NIN SSN EIN TIN ABN ACN GST HMRC DVLA NHI".split())


# "reg LM19 XRT", "plate number SX4 82T", "the registration is KV68 PNZ": a vehicle's number plate, letters and digits
# in one or two groups; a customer may have several vehicles, so each plate is its own fact.
_PLATE = re.compile(
    r"\b(?i:reg(?:istration)?(?:\s+(?:number|no\.?|plate|mark))?|(?:number|licen[cs]e|registration)\s+plate"
    r"|plates?(?:\s+number)?)\s*(?i:is\s+|was\s+|:\s*|-\s+)?"
    r"(?P<value>(?=[A-Z0-9 -]{0,9}\d)(?=[A-Z0-9 -]{0,9}[A-Z])[A-Z0-9]{2,4}[ -][A-Z0-9]{2,4})(?![\w-])"
)
# "company registration number SC12 3456", "our VAT reg GB12 3456": registrations that are no number plate.
_NOT_A_VEHICLE = re.compile(r"\b(?:company|companies|vat|business|charity|tax|course|class|event|school|domain|trade"
                            r"|student)\W+(?:\w+\W+)?$", re.I)


def _plates(text: str, ctx: RuleContext, confidence: float) -> list[Candidate]:
    found = []
    for match in _PLATE.finditer(text):
        plate = match.group("value")
        if _NOT_A_VEHICLE.search(text[max(0, match.start() - 30):match.start()]):
            continue
        found.append(ctx.candidate(f"{ctx.person.possessive} vehicle registration is {plate}", confidence=confidence,
                                   rule="identifier.plate", subject=identifier_subject("plate", plate),
                                   tags=("identifier", "vehicle"), metadata={"kind": "plate", "identifier": plate}))
    return found


def _identifier(ctx: RuleContext, key: str, core: str, raw: str, qualifier: str | None,
                confidence: float) -> Candidate:
    kind = KINDS[key]
    metadata = {"kind": key, "identifier": core}
    tags = ["identifier"]
    if kind.pii:
        metadata["pii"] = True
        tags.append("pii")
    label = f"{kind.name} {qualifier or kind.noun}" if kind.noun else kind.name
    metadata["label"] = label
    person = ctx.person
    content = (f"{person.possessive} {label} is {raw}" if kind.single
               else person.sentence(f"has {label} {raw}"))
    return ctx.candidate(content, confidence=confidence, rule=f"identifier.{key}",
                         subject=identifier_subject(key, core, single=kind.single), tags=tuple(tags),
                         metadata=metadata)


_CARD_GONE = re.compile(r"^\W*(?:has\s+|had\s+|was\s+|is\s+|got\s+)?(?:just\s+)?(?:expired|cancell?ed|stolen|lost|blocked"
                        r"|replaced|no\s+longer\s+(?:works|valid|in\s+use))\b", re.I)
_CARD_GONE_BEFORE = re.compile(r"\b(?:old|previous|expired|lost|stolen|cancell?ed)\s+(?:[\w-]+\s+){0,3}$", re.I)


def _card_endings(text: str, ctx: RuleContext, confidence: float) -> list[Candidate]:
    found = []
    for match in _CARD_LAST_FOUR.finditer(text):
        last = match.group("last") or match.group("last3") or match.group("last2")
        if match.group("last2") and not _CARD_WORD.search(text):
            continue  # "the last four digits are 1234" of what? Only a card's are kept
        noun = (match.group("noun") or "card").lower()
        about = f"{ctx.sentence} {text}"  # "Billing is on the Mastercard ending 1184, and a backup Visa ending 5521"
        if noun != "card" and (noun in KIND_WORDS or noun in _NOT_CARD_NAMES or not _CARD_WORD.search(about)
                               and not _PAYMENT.search(about)):
            continue  # "Account ending 1234", "Phone ending 5678": not a card; "the one ending 4821" needs a card
        if last in found:
            continue
        found.append(last)
    sentence = ctx.sentence if ctx.sentence and text in ctx.sentence else text  # the old card may be a clause away
    named = list(dict.fromkeys(match.group("last") or match.group("last3") or match.group("last2")
                               for match in _CARD_LAST_FOUR.finditer(sentence)))
    old = [last for last in named if _CARD_GONE.search(sentence[sentence.find(last) + 4:sentence.find(last) + 40])
           or _CARD_GONE_BEFORE.search(sentence[max(0, sentence.find(last) - 40):sentence.find(last)])]
    replaced = old[0] if len(old) == 1 and len(named) == 2 else None
    # "My Visa ending 3390 expired, the new card ends in 7712": the new card takes the old one's subject, so
    # consolidation supersedes exactly it; the old one is not stored again.
    return [ctx.candidate(f"{ctx.person.possessive} card ends in {last}", confidence=confidence,
                          rule="identifier.card", subject=identifier_subject("card", replaced or last, single=False),
                          tags=("identifier", "pii"),
                          metadata={"kind": "card", "identifier": last, "label": "card ending", "pii": True,
                                    **({"replaces": replaced} if replaced else {})})
            for last in found if last != replaced]


# A code no rule read, in a customer's sentence: capitals and digits, three digits at least ("here, H7730215", "a
# resident permit, number RP-3318-W", "plan PP-66120"), or capitals then digit groups ("ELE 4409 1128").
_CODE = re.compile(
    r"(?<![\w@./:#£$€-])(?:(?=[A-Z0-9-]*\d[A-Z0-9-]*\d[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9]+(?:-[A-Z0-9]+)+"
    r"|(?=[A-Z0-9]*\d[A-Z0-9]*\d[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{5,}"
    r"|[A-Z]{2,4}(?=(?:[ ]?\d){6})(?:[ ]\d{2,6}){2,5})(?![\w@£$€%-]|\.\w)")
# What the words just before a code call it: "resident permit, number", ", plan", "my membership number is"; lowercase
# words (not a name) after the sentence's start, a comma or an article.
_LABEL_BEFORE = re.compile(
    r"(?:^|[,;:(]\s*|\b(?i:my|our|the|a|an|your)\s+)(?P<label>(?:[a-z][a-z-]+\s+){0,2}?[a-z][a-z-]+)"
    r"(?:\s*,?\s*(?P<qual>(?i:number|no\.?|ID|ref|reference)))?\s*(?:is|was|:|-|,)?\s*$")
# "the reference on the letter is", "the letter": words after a preposition say where the code is, not what it is.
_PLACE_BEFORE = re.compile(r"\b(?:on|in|from|at|of|for|with|by|to|under|inside)\s+(?:my|our|the|a|an|your|this|that)\s+"
                           r"(?:\S+\s+)?\S+\s*(?:is|was|:|,)?\s*$", re.I)
# A label earlier in the sentence: "My account number is on the bill somewhere, ELE 4409 1128".
_OWN_LABELLED = re.compile(r"\b(?:my|our|the)\s+(?P<label>(?:[a-z-]+\s+){0,2}?(?:number|no|ID|reference|ref))\b", re.I)
_ASKED_LABEL = re.compile(r"\b(?:your|the|[A-Z][a-z]+'s)\s+(?P<label>(?:[a-z-]+\s+){0,2}?(?:number|reference|ID))\b")
# Words before a code that say it is no identifier of the customer's (a flight, a model, something that opens a door),
# or are no label at all.
_NOT_CODE_LABELS = frozenset(
    "flight train bus route seat gate platform room model version firmware size pin password passcode code key safe "
    "alarm lock door access security verification otp wifi wi-fi postcode zip phone mobile tel fax".split())
_CORRECTING = re.compile(r"\b(?:sorry|wrong|wrongly|I\s+mean|I\s+meant|mistake|typo|misread|misheard)\b", re.I)
_NOT_CURRENT = re.compile(r"\b(?:old|previous|former|formerly|used\s+to|instead|not|no\s+longer|expired|cancell?ed)\b", re.I)
_NOT_LABEL_WORDS = frozenset(
    "is was are were it's its it here there yes no ok okay so and or but then also just now it this that these those "
    "somewhere on in at of for to from with by as is: me mine i i'm hi hello thanks please".split())


def unclaimed_identifiers(sentence: str, ctx: RuleContext, said: list, *, asked: str = "", message: str = ""
                          ) -> list[Candidate]:
    """Codes in a customer's sentence that no rule read, kept as what the words before call them ("The user's resident
    permit number is RP-3318-W"), else as the agent's question just before asked for them ("Do you have Leo's hospital
    number?": "The user gave the hospital number H7730215"), else as a reference they gave. Never one the batch already
    holds, nor a flight, a model or a code that opens something, nor in a message that corrects something ("It is
    N3K0LP0912345. Sorry, I read it wrong": the rules that read corrections decide)."""
    if not any(char.isdigit() for char in sentence) or _CORRECTING.search(message or sentence) or _NOT_CURRENT.search(
            sentence):
        return []
    read = " ".join(getattr(item, "content", "") or "" for item in said)
    found = []
    for match in _CODE.finditer(sentence):
        value = match.group(0)
        if value in read or value.replace(" ", "") in read.replace(" ", "") or looks_like_card_number(value):
            continue
        before = sentence[max(0, match.start() - 60):match.start()]
        words = set(re.findall(r"[a-z][a-z-]*", before.lower())[-3:])
        if words & _NOT_CODE_LABELS or _SOMEONE_ELSES.search(before):
            continue
        found.append(_unclaimed(value, before, sentence[:match.start()], ctx, asked))
    return found


def _unclaimed(value: str, before: str, sentence_before: str, ctx: RuleContext, asked: str) -> Candidate:
    person = ctx.person
    labelled = None if _PLACE_BEFORE.search(before) else _LABEL_BEFORE.search(before)
    # "my new loyalty card, LX-2222": the kind under its qualifiers and the card that carries it
    words = [word for word in labelled.group("label").lower().split()
             if word not in ("my", "our", "the", "new", "replacement", "current")] if labelled else []
    if len(words) > 1 and words[-1] == "card" and identifier_kind(" ".join(words[:-1])):
        words = words[:-1]
    if words and words[-1] in _QUALIFIER_NOUNS:
        words = []  # "our VAT number, FR 61 ...": the label is further back
    if words and not _NOT_LABEL_WORDS.intersection(words):
        label, qualifier = " ".join(words), _qualifier_noun(labelled.group("qual") or "")
    elif own := _OWN_LABELLED.search(sentence_before):
        label, _, qualifier = re.sub(r"^(?:my|our|the)\s+", "", own.group("label").lower()).rpartition(" ")
        label, qualifier = (label, _qualifier_noun(qualifier)) if label else (qualifier, None)
    else:
        label, qualifier = "", None
    if label and (key := identifier_kind(label)):
        return _identifier(ctx, key, value, value, qualifier, 0.7)
    if label:
        label = f"{label} {qualifier or 'reference'}"
        content = f"{person.possessive} {label} is {value}"
    elif asked_label := _ASKED_LABEL.search(asked or ""):
        label = asked_label.group("label").lower()
        content = person.sentence(f"gave the {label} {value}")
    else:
        label = "reference"
        content = person.sentence(f"gave the reference {value}")
    return ctx.candidate(content, confidence=0.6, rule="identifier.unclaimed", tags=("identifier",),
                         subject=identifier_subject(normalise_key(label).replace(" ", "-"), value, single=False),
                         metadata={"kind": "reference", "identifier": value, "label": label})
