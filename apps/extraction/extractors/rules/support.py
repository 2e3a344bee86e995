"""Customer-support facts: identifiers (orders, tickets, transactions), contact details, and outcomes such as
refunds, replacements and opened tickets, from any role."""

import re

from apps.extraction.extractors.base import Candidate
from apps.extraction.extractors.rules.context import RuleContext
from apps.extraction.extractors.rules.dates import find_dates
from apps.extraction.extractors.rules.person import rewrite_first_person, rewrite_second_person
from apps.extraction.extractors.rules.text import Clause

# --- Identifiers ---------------------------------------------------------------------------------------
_KINDS = {
    "order": "order", "purchase": "order", "invoice": "invoice", "ticket": "ticket", "case": "case",
    "transaction": "transaction", "txn": "transaction", "account": "account", "acct": "account",
    "booking": "booking", "reservation": "booking", "confirmation": "confirmation", "tracking": "tracking",
    "reference": "reference", "ref": "reference", "customer": "customer", "subscription": "subscription",
    "claim": "claim", "policy": "policy", "receipt": "receipt", "rma": "rma", "membership": "membership",
    "member": "membership", "shipment": "shipment", "refund": "refund", "payment": "payment",
    "contract": "contract", "serial": "serial", "incident": "incident", "request": "request", "pnr": "booking",
}
_LABELS = {
    "transaction": "transaction ID", "tracking": "tracking number", "customer": "customer ID",
    "confirmation": "confirmation number", "membership": "membership number", "serial": "serial number",
    "rma": "RMA", "reference": "reference", "account": "account number",
}
_PREFIXES = {
    "TXN": "transaction", "TX": "transaction", "INV": "invoice", "ORD": "order", "ORDER": "order", "TKT": "ticket",
    "TCK": "ticket", "TICKET": "ticket", "CASE": "case", "REF": "reference", "ACC": "account", "ACCT": "account",
    "BKG": "booking", "RMA": "rma", "CUST": "customer", "SUB": "subscription", "INC": "incident", "REQ": "request",
    "CLM": "claim", "RCPT": "receipt",
}
_KIND_WORDS = "|".join(sorted(_KINDS, key=len, reverse=True))
_ID = rf"(?!(?:{_KIND_WORDS})s?\b)#?[A-Za-z0-9][A-Za-z0-9_-]*"
_IDENTIFIER = re.compile(
    rf"\b(?P<kind>{_KIND_WORDS})s?\b(?P<qual>(?:\s*(?:numbers?|num|nr|nos\.?|no\.?|ids?|codes?|references?|refs?))*)"
    rf"\s*(?:(?:is|was|are|were)\s+|[:=]\s*|-\s+)?(?P<ids>{_ID}(?:(?:\s*,\s*(?:and\s+|&\s+)?|\s+(?:and|&|or)\s+"
    rf"|\s*/\s*){_ID})*)",
    re.I,
)
_PREFIXED = re.compile(rf"\b(?P<prefix>{'|'.join(sorted(_PREFIXES, key=len, reverse=True))})[-_#]?\d[\w-]*\b")
_ID_SEPARATOR = re.compile(r"\s*(?:,\s*(?:and\s+|&\s+)?|\s(?:and|&|or)\s|/)\s*", re.I)
_EXAMPLE = re.compile(r"\b(?:example|e\.g\.|for\s+instance|such\s+as|format|looks\s+like|like\s+this)\b", re.I)
_DATE_LIKE = re.compile(r"\d{4}-\d{2}-\d{2}|\d{1,2}(?:am|pm)|\d+(?:st|nd|rd|th|s|min|mins|h|hrs?|days?|k)", re.I)


def identifier_kind(words: str) -> str | None:
    """The identifier kind a word names ("loyalty" -> None unless it is a kind, "booking" -> "booking")."""
    return _KINDS.get(" ".join(words.lower().split()))


def _luhn(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char) * (2 if index % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def _valid_id(raw: str) -> bool:
    core = raw.lstrip("#")
    if not core or not any(char.isdigit() for char in core) or _DATE_LIKE.fullmatch(core):
        return False
    if core.isdigit() and 13 <= len(core) <= 19 and _luhn(core):
        return False  # looks like a payment card number: never stored
    return len(core) >= 3 or raw.startswith("#")


def identifiers(text: str, ctx: RuleContext, confidence: float = 0.9) -> list[Candidate]:
    """One candidate per identifier, kept verbatim: "TXN001, TXN002" are two facts that never supersede each other."""
    if _EXAMPLE.search(text):
        return []  # "an order number looks like ORD-1234"
    found: dict[tuple[str, str], str] = {}
    for match in _IDENTIFIER.finditer(text):
        kind = _KINDS[match.group("kind").lower()]
        for raw in _ID_SEPARATOR.split(match.group("ids")):
            raw = raw.strip()
            if not _valid_id(raw):
                break
            found.setdefault((kind, raw.lstrip("#")), raw)
    prefixed = []
    for match in _PREFIXED.finditer(text):
        raw = match.group(0)
        if not any(core == raw for _, core in found) and _valid_id(raw):
            prefixed.append((_PREFIXES[match.group("prefix")], raw))
    candidates = [_identifier(ctx, kind, core, raw, confidence) for (kind, core), raw in found.items()]
    return candidates + [_identifier(ctx, kind, raw, raw, confidence - 0.15) for kind, raw in prefixed]


def _identifier(ctx: RuleContext, kind: str, core: str, raw: str, confidence: float) -> Candidate:
    metadata = {"kind": kind, "identifier": core}
    tags = ["identifier"]
    if kind in ("account", "customer", "membership"):
        metadata["pii"] = True
        tags.append("pii")
    label = _LABELS.get(kind, kind)
    return ctx.candidate(ctx.person.sentence(f"has {label} {raw}"), confidence=confidence, rule=f"identifier.{kind}",
                         subject=f"identifier:{kind}:{core}", tags=tuple(tags), metadata=metadata)


# --- Contact details (the user's own) ------------------------------------------------------------------
EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9][A-Za-z0-9._%+-]*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
PHONE = re.compile(r"(?<![\w+(])(?:\+|\()?\d[\d\s().-]{5,18}\d(?!\w)")
_OWN_EMAIL = re.compile(r"\bmy\s+(?:\w+\s+)?e-?mail\b|\be-?mail\s+me\b|\b(?:reach|contact)\s+me\b|\bit's\b|^e-?mail\b",
                        re.I)
_THIRD_PARTY = re.compile(r"\b(?:his|her|their|its)\s+(?:\w+\s+)?(?:e-?mail|phone|number|mobile|cell)\b"
                          r"|\b\w+'s\s+(?:\w+\s+)?(?:e-?mail|phone|number|mobile|cell)\b"
                          r"|\b(?:cc|forward|send\s+it\s+to)\b", re.I)
_REQUEST = re.compile(r"^(?:(?:can|could|would|will)\s+you|please)\b", re.I)
_PHONE_CONTEXT = re.compile(r"\b(?:phone|mobile|cell|cellphone|telephone|tel|whatsapp|call\s+me|text\s+me|reach\s+me"
                            r"|ring\s+me|my\s+number|number\s+is|contact\s+number)\b", re.I)


def contacts(clause: Clause, ctx: RuleContext) -> list[Candidate]:
    text = clause.text
    if _THIRD_PARTY.search(text) or clause.uncertain:
        return []
    found = []
    person = ctx.person
    if clause.question and not _REQUEST.match(text):
        return []  # "Is my email alice@example.com?" asks, it does not tell
    for match in EMAIL.finditer(text):
        email = match.group(0)
        if _OWN_EMAIL.search(text) or text.strip(" .") == email:
            found.append(ctx.candidate(f"{person.possessive} email address is {email}", confidence=0.95,
                                       rule="contact.email", subject="email", tags=("pii", "contact"),
                                       metadata={"pii": True}))
        else:  # "send the receipt to finance@acme.com": maybe not theirs, so it must not replace their address
            found.append(ctx.candidate(person.sentence(f"gave the email address {email}"), confidence=0.6,
                                       rule="contact.email_mentioned", tags=("pii", "contact"),
                                       metadata={"pii": True}))
    if _PHONE_CONTEXT.search(text):
        for match in PHONE.finditer(text):
            number = match.group(0).strip()
            digits = sum(char.isdigit() for char in number)
            if 7 <= digits <= 15 and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", number):
                found.append(ctx.candidate(f"{person.possessive} phone number is {number}", confidence=0.9,
                                           rule="contact.phone", subject="phone", tags=("pii", "contact"),
                                           metadata={"pii": True}))
    return found


# --- Outcomes: what support did ------------------------------------------------------------------------
_AMOUNT = re.compile(r"[$€£¥₹]\s?\d[\d,]*(?:\.\d+)?|\b\d[\d,]*(?:\.\d+)?\s?(?:USD|EUR|GBP|CAD|AUD|dollars?|euros?"
                     r"|pounds?|bucks)\b|\b(?:USD|EUR|GBP|CAD|AUD)\s?\d[\d,]*(?:\.\d+)?")
_DONE = ("opened|created|filed|raised|logged|submitted|escalated|issued|processed|initiated|refunded|credited"
         "|applied|sent|shipped|dispatched|arranged|ordered|scheduled|booked|cancell?ed|canceled|reset|updated"
         "|changed|reactivated|unlocked|upgraded|downgraded|waived|reversed|removed|added|approved|replaced"
         "|resolved|closed|confirmed|requested|generated|emailed|mailed|posted|reissued|restored|extended")
_ACTOR_DID = re.compile(
    rf"^(?P<actor>I|we)(?:'ve|\s+have|'d|\s+had)?(?P<adv>(?:\s+(?:just|already|now|also|successfully|gone\s+ahead\s+and"
    rf"|went\s+ahead\s+and))*)\s+(?P<verb>{_DONE})\b(?P<rest>.*)$",
    re.I,
)
_PASSIVE = re.compile(
    rf"^(?P<subj>.{{0,80}}?)\b(?:has|have|had|was|were|is|are)\s+(?:been\s+)?(?:(?:successfully|now|already|just|being"
    rf"|fully)\s+)*(?P<verb>{_DONE})\b(?P<rest>.*)$",
    re.I,
)
_HEADLINE = re.compile(rf"^(?:a\s+|the\s+|your\s+)?(?:full\s+|partial\s+)?(?P<noun>refund|replacement|credit|ticket"
                       rf"|case|voucher|return\s+label|exchange)\b(?P<mid>.{{0,60}}?)\s(?P<verb>{_DONE})\b"
                       rf"(?P<rest>.*)$", re.I)
_SUPPORT_NOUNS = re.compile(
    r"\b(?:ticket|case|refund|replacement|order|subscription|account|credit|voucher|coupon|discount|password|charge"
    r"|payment|invoice|shipment|package|parcel|exchange|return|label|technician|appointment|fee|booking|reservation"
    r"|claim|request|plan|device|item|card|address|warranty|RMA|escalat\w*)\b",
    re.I,
)
_NOT_DONE = re.compile(r"n't\b|\b(?:not|never|no\s+longer|unable|cannot|yet\s+to|will|would|should|may|might"
                       r"|going\s+to|once|if|when|unless)\b", re.I)
_KIND_OF_ACTION = (
    ("refund", re.compile(r"\brefund", re.I)),
    ("replacement", re.compile(r"\breplace", re.I)),
    ("escalation", re.compile(r"\bescalat", re.I)),
    ("cancellation", re.compile(r"\bcancel", re.I)),
    ("ticket", re.compile(r"\b(?:ticket|case)\b", re.I)),
    ("credit", re.compile(r"\b(?:credit|voucher|coupon|discount|waived)", re.I)),
    ("account", re.compile(r"\b(?:reset|unlocked|reactivated|password)", re.I)),
    ("shipment", re.compile(r"\b(?:shipped|dispatched|sent|shipment|tracking)", re.I)),
    ("resolution", re.compile(r"\b(?:resolved|closed)", re.I)),
)


def _action_kind(text: str) -> str:
    return next((kind for kind, pattern in _KIND_OF_ACTION if pattern.search(text)), "action")


def _outcome(ctx: RuleContext, content: str, text: str, rule: str, confidence: float) -> Candidate:
    metadata = {"kind": _action_kind(text)}
    amounts = [amount.rstrip(",") for amount in _AMOUNT.findall(text)]
    if amounts:
        metadata["amounts"] = amounts
    dates = find_dates(text, ctx.reference)
    if dates:
        metadata |= dates[0].metadata()
    return ctx.candidate(content, memory_type="episode", confidence=confidence, rule=rule, tags=("support",),
                         metadata=metadata)


def outcomes(clause: Clause, ctx: RuleContext) -> list[Candidate]:
    """A completed support action in an assistant, system or tool message ("I've opened ticket #4521 for you")."""
    text, person = clause.text, ctx.person
    if clause.question or clause.uncertain:
        return []
    if match := _ACTOR_DID.match(text):
        if _NOT_DONE.search(match.group("adv")) or not (_SUPPORT_NOUNS.search(text) or _AMOUNT.search(text)):
            return []
        actor = "The assistant" if match.group("actor").lower() == "i" else "Support"
        adverbs = re.sub(r"\s+(?:gone|went)\s+ahead\s+and", "", match.group("adv"))
        rest = rewrite_second_person(match.group("rest"), person)
        content = f"{actor}{adverbs} {match.group('verb').lower()}{rest}"
        return [_outcome(ctx, content, text, "support.outcome.action", 0.85)]
    match = _PASSIVE.match(text) or _HEADLINE.match(text)
    if not match:
        return []
    before_verb = text[:match.start("verb")]
    if _NOT_DONE.search(before_verb) or not (_SUPPORT_NOUNS.search(text) or _AMOUNT.search(text)):
        return []
    rewritten = rewrite_second_person(text, person)
    if person.label.casefold() not in rewritten.casefold():
        rewritten = f"Support update for {person.label}: {rewritten}"
    return [_outcome(ctx, rewritten, text, "support.outcome.result", 0.8)]


# --- "Issue: ..." / "Resolution: ..." lines (any role) and CRM-style lines (system/tool) -------------------
_KEY_VALUE = re.compile(
    r"^\s*(?:[-*\u2022]\s*)?(?P<key>issue|problem|complaint|reason\s+for\s+contact|resolution|resolved|outcome"
    r"|actions?\s+taken|next\s+steps?|follow[- ]up|status|summary|root\s+cause|fix|refund|customer\s+name|name|e-?mail"
    r"|phone(?:\s+number)?|mobile)\s*:\s*(?P<value>\S.*)$",
    re.I,
)
_CASE_TEMPLATES = {
    "issue": "Issue reported by {label}: {value}", "problem": "Issue reported by {label}: {value}",
    "complaint": "Issue reported by {label}: {value}", "reason for contact": "Issue reported by {label}: {value}",
    "resolution": "Resolution for {label}: {value}", "resolved": "Resolution for {label}: {value}",
    "outcome": "Resolution for {label}: {value}", "fix": "Resolution for {label}: {value}",
    "action taken": "Resolution for {label}: {value}", "actions taken": "Resolution for {label}: {value}",
    "refund": "Refund for {label}: {value}", "next step": "Follow-up for {label}: {value}",
    "next steps": "Follow-up for {label}: {value}", "follow-up": "Follow-up for {label}: {value}",
    "follow up": "Follow-up for {label}: {value}", "status": "Status of {possessive} case: {value}",
    "root cause": "Root cause of {possessive} issue: {value}", "summary": "Support summary for {label}: {value}",
}
_CASE_KINDS = {"issue": "issue", "problem": "issue", "complaint": "issue", "reason for contact": "issue",
               "status": "status", "root cause": "root_cause", "summary": "summary"}


def key_value_line(line: str, ctx: RuleContext) -> list[Candidate] | None:
    """Candidates for a labelled line, or None when the line is not one (it is then read as sentences)."""
    match = _KEY_VALUE.match(line)
    if not match:
        return None
    key = " ".join(match.group("key").lower().split())
    value = match.group("value").strip().rstrip(".")
    person = ctx.person
    if key in _CASE_TEMPLATES:
        value = rewrite_first_person(value, person, named=True) if ctx.role == "user" else rewrite_second_person(
            value, person)
        content = _CASE_TEMPLATES[key].format(label=person.label, possessive=person.possessive, value=value)
        outcome = _outcome(ctx, person.starting(content), value, f"support.case.{key.replace(' ', '_')}", 0.9)
        if key in _CASE_KINDS:
            outcome.metadata["kind"] = _CASE_KINDS[key]
        return [outcome]
    if ctx.role not in ("system", "tool"):
        return None  # a user writing "Name: ..." is read as an ordinary sentence
    if key in ("customer name", "name"):
        return [ctx.candidate(f"The user's name is {value}", confidence=0.85, rule="record.name", subject="name",
                              tags=("identity",), metadata={"value": value})]
    if key.replace("-", "") == "email" and EMAIL.fullmatch(value):
        return [ctx.candidate(f"{person.possessive} email address is {value}", confidence=0.9, rule="record.email",
                              subject="email", tags=("pii", "contact"), metadata={"pii": True})]
    if PHONE.fullmatch(value):
        return [ctx.candidate(f"{person.possessive} phone number is {value}", confidence=0.9, rule="record.phone",
                              subject="phone", tags=("pii", "contact"), metadata={"pii": True})]
    return []


def record_name(line: str) -> str | None:
    """The customer's name from a system/tool "Customer name: ..." line."""
    match = _KEY_VALUE.match(line)
    if match and " ".join(match.group("key").lower().split()) in ("customer name", "name"):
        return match.group("value").strip().rstrip(".") or None
    return None

