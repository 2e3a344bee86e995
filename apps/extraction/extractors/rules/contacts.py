"""The user's own contact details, and how and when they want to be contacted.

A number is the user's phone number only when a phone word governs it: "my mobile is ...", "my work number: ...",
"call me on ...". A digit run in a clause that merely contains "number" is not one ("my loyalty number is
LX-5520-1188" is an identifier, identifiers.py). Each kind of phone and email has its own subject (subjects.py),
so a work number never replaces the mobile, while "my new mobile is ..." does.
"""

import re

from apps.extraction.extractors.base import Candidate
from apps.extraction.extractors.rules import lexicon
from apps.extraction.extractors.rules.context import RuleContext
from apps.extraction.extractors.rules.person import rewrite_first_person
from apps.extraction.extractors.rules.subjects import CONTACT_CHANNEL, CONTACT_TIME, email_subject, phone_subject
from apps.extraction.extractors.rules.text import Clause, uncertain_in_itself

EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9][A-Za-z0-9._%+-]*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
# Not the digits of a code that starts with letters ("ELX-3302918" is an account number).
_PHONE_VALUE = r"(?<![\w+(])(?<!\w-)(?:\+|\()?\d[\d\s().-]{5,18}\d(?!\w)"
PHONE = re.compile(_PHONE_VALUE)

# --- The user's own email addresses and phone numbers ---------------------------------------------------
_NOT_POSSESSIVES = r"(?!(?:it|that|this|what|here|there|who|name|one|he|she|let)'s)"
# "her email", "my wife's number", "cc my accountant": details of someone else, never the user's own.
_THIRD_PARTY = re.compile(rf"\b(?:his|her|their|its|your)\s+(?:\w+\s+)?(?:e-?mail|phone|number|mobile|cell)\b"
                          rf"|\b{_NOT_POSSESSIVES}\w+'s\s+(?:\w+\s+)?(?:e-?mail|phone|number|mobile|cell)\b"
                          r"|\b(?:cc|forward|send\s+it\s+to)\b", re.I)
_RELATION_WORDS = "|".join(sorted((re.escape(word) for word in lexicon.CONTACT_RELATIONS), key=len, reverse=True))
_RELATION_MODIFIERS = "|".join(sorted(lexicon.CONTACT_RELATION_MODIFIERS))
MY_RELATION = re.compile(rf"\b(?:my|our)\s+(?:(?:{_RELATION_MODIFIERS})\s+)?(?P<relation>{_RELATION_WORDS})\b", re.I)
_SOMEONE_ELSES = re.compile(rf"(?:\b(?:his|her|their|your)|\b{_NOT_POSSESSIVES}[A-Za-z]+'s)\s+(?:[\w-]+\s+){{0,2}}$",
                            re.I)
_OBJECT_PRONOUN = re.compile(r"\b(?:her|him|them)\b", re.I)
_TO_ME = re.compile(r"\b(?:me|my|I)\b")
_REQUEST = re.compile(r"^(?:(?:can|could|would|will)\s+you|please)\b", re.I)

# "Login is g.lima@...", "my username is ...": an account's sign-in address is the user's own.
_OWN_EMAIL = re.compile(r"\bmy\s+(?:[\w-]+\s+){0,2}(?:e-?mail|login|log-in|username|user\s+name|sign-in)\b|\be-?mail\s+me\b"
                        r"|\b(?:reach|contact)\s+me\b|\bit's\b|^(?:e-?mail|login|log-in|username|sign-in)\b"
                        r"|\bwrite\s+(?:to\s+)?me\b", re.I)
_MY_EMAIL = re.compile(r"\bmy\s+(?:[\w-]+\s+){0,2}(?:e-?mail|login|log-in|username|user\s+name|sign-in)\b", re.I)
# "please use jo@new.com from now on", "going forward, use ...": the address to use for them, replacing the one before.
_USE_FROM_NOW = r"(?:from\s+now\s+on|going\s+forward|from\s+today|in\s+(?:the\s+)?future|for\s+everything)"
# "For invoices, please use accounts@bakerco.com from now on", "send it to our solicitor, use k.patel@...": not theirs.
_ROLE_MAILBOX = re.compile(r"(?i)(?:accounts?|finance|billing|invoices?|ap|ar|payables?|info|admin|office|hello|sales"
                           r"|support|team|hr|payroll|legal|orders?|bookings?|reception|enquiries|contact)[._-]?\w{0,3}@")
_SOMEONE_ELSES_ADDRESS = re.compile(r"\b(?:invoices?|billing|solicitor|accountant|lawyer|finance|colleague|assistant|our\s+\w+"
                                    r"|his|her|their|for\s+the\s+\w+)\b", re.I)
_USE_ADDRESS = re.compile(rf"\b(?:use|switch\s+(?:it\s+)?to|change\s+(?:it\s+)?to)\s+(?P<email>\S+@\S+?)[\s,.]+{_USE_FROM_NOW}\b"
                          rf"|\b{_USE_FROM_NOW}[\s,]+(?:please\s+)?use\s+(?P<email2>\S+@\S+?)[\s,.!]*$"
                          # "send everything to grace.o@gmail.com, the old one is closed"
                          rf"|\b(?:send|email|forward)\s+(?:everything|it\s+all|all\s+(?:mail|emails|post|correspondence))\s+"
                          rf"(?:to|at)\s+(?P<email3>{EMAIL.pattern})", re.I)
# "... or in the work j.almeida@lusacargo.pt": the kind said just before an address without the word "email".
_KIND_BEFORE = re.compile(r"\b(?P<kind>work|office|business|company|school|university|uni|personal|private|home)\b"
                          r"[^@,;]{0,12}$", re.I)
_EMAIL_NAMED = re.compile(r"\b(?P<quals>(?:[\w-]+\s+){0,2})e-?mail\b", re.I)
_EMAIL_KINDS = {"work": "work", "office": "work", "business": "work", "company": "work", "corporate": "work",
                "professional": "work", "school": "school", "university": "school", "college": "school",
                "uni": "school", "student": "school"}
_EMAIL_LABELS = {None: "email address", "work": "work email address", "school": "school email address"}

_PHONE_QUALS = ("new|current|main|primary|personal|private|own|mobile|cell|work|office|business|direct|desk|home"
                "|landline|house|whatsapp|fax|contact|daytime|old|previous|former|other|second|alternative|alternate"
                "|backup|usual")
_PHONE_NOUN = r"(?:mobile(?:\s+phone)?|cell(?:\s*phone)?|telephone|phone|tel|landline|whatsapp|fax|number|line)"
_REACH_ME = (r"(?:call|ring|phone|text|sms|message|whatsapp|reach|contact|get\s+hold\s+of|get|catch)\s+(?:me|us)"
             r"(?:\s+back)?(?:\s+(?:instead|directly|first|anytime|any\s+time))?")
_OWN_PHONE = re.compile(
    rf"(?P<owner>\b(?:my|our)\s+)?(?P<quals>(?:\b(?:{_PHONE_QUALS})\s+){{0,3}})\b(?P<noun>{_PHONE_NOUN})\b"
    r"(?:\s+(?:number|no\.?|#))?(?:\s+(?:on\s+file|on\s+(?:the|my)\s+account|for\s+(?:the|my)\s+account|here|now"
    r"|these\s+days|while\s+I'm\s+here|at\s+home|at\s+work|at\s+the\s+office"
    r"|for\s+(?!(?:him|her|them|his|their|my\s+(?:wife|husband|partner|son|daughter|mum|dad|mother|father))\b)(?:[\w-]+\s+){0,2}[\w-]+(?=\s+is\b)))?"  # "my mobile for flight updates is"
    r"\s*(?:is\s+now|(?:has\s+|'s\s+)?changed(?:\s+to|\s*[,:;-]\s*(?:it's|its|it\s+is|the\s+new\s+one\s+is)?)|is|'s|:|=|-)?"
    rf"\s*(?:(?:now|still|also|actually)\s+)?(?P<number>{_PHONE_VALUE})"
    # "please update my phone number to ...", "can you change my mobile to ...": the number it now is
    rf"|\b(?:update|change|switch|set|correct|amend)\s+(?P<owner9>my|our|the)\s+(?P<quals9>(?:\b(?:{_PHONE_QUALS})\s+){{0,3}})"
    rf"(?P<noun9>{_PHONE_NOUN})\b(?:\s+number)?\s+to\s+(?P<number9>{_PHONE_VALUE})"
    rf"|\b{_REACH_ME}(?:\s+at\s+(?P<place>home|work|the\s+office))?\s+(?:on|at|via)"
    rf"\s+(?:my\s+)?(?P<quals2>(?:\b(?:{_PHONE_QUALS})\s+){{0,3}})(?:(?P<noun2>{_PHONE_NOUN})\b(?:\s+number)?)?"
    rf"[\s,:-]*(?P<number2>{_PHONE_VALUE})"
    r"|\bbest\s+(?:number|phone(?:\s+number)?)(?:\s+(?:to\s+(?:call|reach|contact|text|ring|get)\s+(?:me|us)"
    rf"(?:\s+(?:on|at))?|for\s+me))?\s*(?:is|:)\s*(?P<number3>{_PHONE_VALUE})"
    rf"|^I(?:'m|\s+am)\s+(?:reachable\s+|contactable\s+)?on\s+(?P<number4>{_PHONE_VALUE})$"
    # "the engineer should ring me when they're outside: 07412 889 350": a colon hands the number to the verb
    rf"|\b(?:call|ring|phone|reach|contact)\s+(?:me|us)\b[^.:;?!]{{0,40}}:\s*(?P<number5>{_PHONE_VALUE})"
    # "I changed my number, it's 07700 900 222 now", "got a new mobile number: ..."
    rf"|\b(?:changed|got|have|switched\s+to)\s+(?:my|a\s+new|a)\s+(?:new\s+)?(?P<noun6>mobile|cell|phone)?\s*(?:number|mobile"
    rf"|phone)\b[\s,;:-]+(?:(?:it's|its|it\s+is|the\s+new\s+one\s+is|which\s+is)\s+)?(?:now\s+)?(?P<number6>{_PHONE_VALUE})"
    # "best is whatsapp on +353 87 214 5590": the best way to reach the user, and the number for it
    r"|^(?:the\s+)?best\s+(?:is|would\s+be|way\s+is|way\s+to\s+(?:reach|contact)\s+me\s+is)\s+(?:by\s+|on\s+|via\s+)?"
    rf"(?P<noun7>whatsapp|mobile|cell|phone|text|sms|landline)\s*(?:on|at|:)\s*(?P<number7>{_PHONE_VALUE})"
    # "there is also a landline in the house, 0118 496 0253", "we've got a work phone too: ..."
    r"|^(?:(?:and|also|oh)[\s,]+)*(?:there's|there\s+is|we\s+have|I\s+have|I've\s+got|we've\s+got|we\s+also\s+have"
    r"|I\s+also\s+have)\s+(?:also\s+)?(?:a|an)\s+(?P<quals8>(?:(?:work|home|office|house|second|personal)\s+)?)"
    rf"(?P<noun8>landline|mobile|phone|cell|fax|line)\b[^,:;\d]{{0,30}}[,:;-]\s*(?P<number8>{_PHONE_VALUE})",
    re.I,
)
_NUMBERS = ("number", "number2", "number3", "number4", "number5", "number6", "number7", "number8", "number9")
_THEIRS_NOT_OURS = re.compile(r"\b(?:your|their|website|site|company|shop|store|office's)\b", re.I)
_AT_HOME = re.compile(r"\b(?:in|at)\s+(?:my|our|the)\s+(?:house|home|flat|apartment|place)\b|\bat\s+home\b", re.I)
# "number is ..." on its own is a phone number where the clause is about calling ("If you must call, number is ...");
# a word before it names another kind of number ("loyalty number is ...", identifiers.py).
_CALLING = re.compile(r"\b(?:call|ring|phone|text|reach|contact)\b", re.I)
_LABELLED = re.compile(r"(?<!\w)(?!(?:the|my|our|a)\s)[^\W\d_][\w-]*\s+$", re.I)
_PHONE_KINDS = {"work": "work", "office": "work", "business": "work", "direct": "work", "desk": "work",
                "home": "home", "landline": "home", "house": "home", "whatsapp": "whatsapp", "fax": "fax",
                "other": "other", "second": "other", "alternative": "other", "alternate": "other", "backup": "other"}
_FOR_A_SCHEME = re.compile(r"\bfor\s+(?:[\w-]+\s+){0,2}?(?:loyalty|membership|member|customer|policy|scheme"
                           r"|card|rewards?|points|club|order|booking|reference)\b", re.I)
_PHONE_WORDS = frozenset("mobile cell cellphone phone telephone tel landline whatsapp fax contact".split())
_PAST_WORDS = frozenset("old previous former".split())
_PHONE_LABELS = {None: "phone number", "mobile": "mobile number", "work": "work phone number",
                 "home": "home phone number", "whatsapp": "WhatsApp number", "fax": "fax number",
                 "other": "other phone number"}
_CHANGED = re.compile(r"\b(?:new|now|changed|change|updated?|instead|no\s+longer|any\s?more|replaced?|switched|these\s+days"
                      r"|from\s+today|old\s+one|closed|disconnected|stopped\s+working|not\s+working|cancell?ed)\b", re.I)
_OWN_WORD_LABELS = {"office": "office phone number", "landline": "landline number", "direct": "direct line"}
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_CALL_ME = re.compile(rf"\b{_REACH_ME}\b", re.I)
_EMAIL_ME = re.compile(r"\be-?mail\s+(?:me|us)\b|\bwrite\s+to\s+(?:me|us)\b", re.I)
_LISTED_PHONE = re.compile(
    r"(?:^|,|\b(?:or|and|me)\b)[\s,]*(?:(?:or|and)\s+)?(?:(?:my|the|(?:on|at)\s+(?:my|the)|at)\s+)?"
    r"(?P<kind>home|office|work|landline|mobile|cell|desk|direct|business|house)"
    r"(?:\s+(?:phone|number|line|no\.?))?\s*(?:is\s+|(?:on|at)\s+|[:=-]\s*)?(?P<number>" + _PHONE_VALUE + ")",
    re.I,
)
# "if the courier needs to call, ..." / "in future if you need me please ...": a condition on when a detail is used.
_CONDITION = r"^(?:(?:in\s+(?:the\s+)?future|from\s+now\s+on)[\s,]+)?(?:if|when|whenever|in\s+case|should)\b"
_CONDITION_TO_COMMA = re.compile(rf"{_CONDITION}[^,]{{1,60}},\s*", re.I)
# Without a comma, the condition ends where the request or the detail starts.
_CONDITION_THEN = re.compile(
    rf"{_CONDITION}.*?\s+(?=(?:you\s+(?:can|could|may)|feel\s+free|just|please|call|ring|text|phone|reach|contact|try|my"
    r"|our)\b)",
    re.I,
)


def phone_kind(word: str) -> str | None:
    """The kind of phone number a qualifier names ("landline" -> "home", "office" -> "work"); None for the mobile
    and for a word that names no kind."""
    return _PHONE_KINDS.get(word.lower())


def email_kind(word: str) -> str | None:
    """The kind of email address a qualifier names ("office" -> "work", "uni" -> "school"), or None."""
    return _EMAIL_KINDS.get(word.lower())


def contacts(clause: Clause, ctx: RuleContext) -> list[Candidate]:
    """The user's own email addresses and phone numbers stated in `clause`."""
    text = clause.text
    if (relation := MY_RELATION.search(text)) and not _THIRD_PARTY.search(text) and (
            _CALL_ME.search(before := text[:relation.start()]) or _EMAIL_ME.search(before)) and not uncertain_in_itself(
            before) and not clause.question:
        # "Contact me on 07824 557 190, or my husband Alasdair on ... if I'm not answering", "email me at a@x.com, or
        # my wife at ...": the user's own, up to where the other person begins
        return own_phones(before, ctx) + _emails(before, ctx)
    if clause.uncertain:
        # "if the courier needs to call, my cell is ...": the condition says when to use a detail, not whether it
        # holds; a clause hedged in its own words ("maybe my number is ...") still says nothing.
        # The detail may sit in the condition's own clause ("if it breaks you can call me, office ... or my mobile
        # ..."), so the condition ends where the request starts, not at the comma.
        text = _without_leading_condition(text, comma_first=False)
        if uncertain_in_itself(text):
            return []
    if _THIRD_PARTY.search(text) or MY_RELATION.search(text):
        return []  # someone else's details (people.py reads those)
    if _OBJECT_PRONOUN.search(text) and not _TO_ME.search(text) and MY_RELATION.search(ctx.sentence):
        return []  # "my wife Beatriz does the paperwork, so documents should go to her: b@x.pt, mobile ..."
    if clause.question and not _REQUEST.match(text):
        return []  # "Is my email alice@example.com?" asks, it does not tell
    return _emails(text, ctx) + own_phones(text, ctx)


def _emails(text: str, ctx: RuleContext) -> list[Candidate]:
    found = []
    person = ctx.person
    previous_end = 0
    for match in EMAIL.finditer(text):
        email = match.group(0)
        before = text[max(previous_end, match.start() - 60):match.start()]
        previous_end = match.end()
        named = list(_EMAIL_NAMED.finditer(before))
        quals = named[-1].group("quals").lower().split() if named else []
        if not named and (said := _KIND_BEFORE.search(before)):
            quals = [said.group("kind").lower()]
        if _PAST_WORDS.intersection(quals):
            continue  # "my old email was ..."
        kind = next((_EMAIL_KINDS[word] for word in quals if word in _EMAIL_KINDS), None)
        to_use = any(email in (used.group("email") or used.group("email2") or used.group("email3") or "")
                     for used in _USE_ADDRESS.finditer(ctx.sentence or text)) and not (
            _ROLE_MAILBOX.match(email) or _SOMEONE_ELSES_ADDRESS.search(ctx.sentence or text))
        if _OWN_EMAIL.search(text) or text.strip(" .") == email or _named_after(email, person.known) or to_use:
            metadata = {"pii": True, "value": email, "kind": kind or "personal"}
            if not (kind or _MY_EMAIL.search(text) or to_use or _CHANGED.search(ctx.sentence or text)):
                metadata["unqualified"] = True  # "it's jo@x.com for the invoices": theirs, but not said to replace
            found.append(ctx.candidate(f"{person.possessive} {_EMAIL_LABELS[kind]} is {email}", confidence=0.95,
                                       rule="contact.email", subject=email_subject(kind), tags=("pii", "contact"),
                                       metadata=metadata))
        elif (routed := _ROUTED.search(before)) and (routed.group("docs").lower().endswith("s") or _STANDING_ROUTE.search(
                ctx.sentence or text)) and not _SOMEONE_ELSE_ROUTED.search(routed.group(0)[len(routed.group("docs")):]):
            # "invoices go to accounts@acme.com", "please send all statements to ...": where that kind of post goes
            docs = routed.group("docs").lower()
            key = _DOC_KINDS.get(docs.rstrip("s"), docs.rstrip("s"))
            found.append(ctx.candidate(f"{person.possessive} {docs} go to {email}", memory_type="preference",
                                       confidence=0.85, rule="contact.email.routing", subject=f"routing:{key}",
                                       tags=("pii", "contact"), metadata={"pii": True, "value": email, "docs": docs}))
        else:  # "send the receipt to finance@acme.com": maybe not theirs, so it must not replace their address
            found.append(ctx.candidate(person.sentence(f"gave the email address {email}"), confidence=0.6,
                                       rule="contact.email_mentioned", tags=("pii", "contact"),
                                       metadata={"pii": True}))
    return found


# What the user wants sent to an address, said before it: "invoices go to", "send all statements to".
_ROUTED = re.compile(r"\b(?P<docs>invoices?|receipts?|statements?|bills?|confirmations?|letters?|correspondence|reminders?"
                     r"|notifications?|documents?|paperwork|quotes?|payslips?|remittances?|order\s+confirmations?)\b"
                     r"[^@.;?]{0,40}?\b(?:to|at)\s*:?\s*$", re.I)
_STANDING_ROUTE = re.compile(r"\b(?:all|every|any|future|always|from\s+now\s+on|going\s+forward|in\s+future|by\s+default)\b",
                             re.I)
_SOMEONE_ELSE_ROUTED = re.compile(r"\b(?:him|her|them|his|their|my\s+\w+|our\s+\w+)\b", re.I)  # "to my accountant at ..."
_DOC_KINDS = {"invoice": "billing", "bill": "billing", "receipt": "billing", "remittance": "billing",
              "statement": "statements", "letter": "post", "correspondence": "post", "paperwork": "post",
              "document": "post"}


def _named_after(email: str, name: str | None) -> bool:
    """An address whose local part holds the user's first name or surname ("charlotte.evans88@..." for Charlotte
    Evans) is theirs, wherever the user sends things to it."""
    if not name:
        return False
    local = set(re.split(r"[._+\-\d]+", email.split("@")[0].casefold()))
    first = re.split(r"[\s'-]+", name.casefold())[0]  # the first name: a surname is the family's
    return len(first) >= 3 and first in local


_NOT_TO_CALL = re.compile(r"\b(?:don't|do\s+not|never|stop|no\s+longer)\s+(?:\w+\s+){0,2}?(?:call|ring|phone|text|contact)",
                          re.I)


# What a number is said to be right after it: "0161 496 0732 (office)", "..., that's the office though".
_KIND_AFTER = re.compile(r"\s*(?:\(\s*(?P<kind>office|work|home|landline)\s*\)|,?\s*(?:that's|that\s+is|which\s+is|it's)"
                         r"\s+(?:the\s+|my\s+|our\s+)?(?P<kind2>office|work|home|landline)\b)", re.I)


def own_phones(text: str, ctx: RuleContext) -> list[Candidate]:
    """Phone numbers a phone word governs: "my mobile is ...", "call me on ...", "best number to reach me is ..."."""
    found = []
    matches = list(_OWN_PHONE.finditer(text))
    if matches or _CALL_ME.search(text):
        # "my cell is ..., or home 416-555-0127", "call me, office 08-123 456 78 or my mobile ...": in a list of the
        # user's numbers a kind word alone labels the next one.
        taken = [match.span() for match in matches]
        matches += [match for match in _LISTED_PHONE.finditer(text)
                    if not any(start < match.end() and match.start() < end for start, end in taken)]
    for match in sorted(matches, key=lambda match: match.start()):
        if match.re is _LISTED_PHONE:
            found += _listed_phone(match, ctx)
            continue
        if match.group("number8") and (_THEIRS_NOT_OURS.search(match.group(0)) or (
                re.match(r"(?i)^(?:\W*(?:and|also|oh)[\s,]+)*there", match.group(0)) and not _AT_HOME.search(match.group(0)))):
            continue  # "there is a phone number on your website, 0345 ...": not theirs
        number = next(match.group(key) for key in _NUMBERS if match.group(key))
        number = number.strip()
        digits = sum(char.isdigit() for char in number)
        if not 7 <= digits <= 15 or _ISO_DATE.fullmatch(number):
            continue
        quals = (match.group("quals") or match.group("quals2") or match.group("quals8") or match.group("quals9")
                 or "").lower().split()
        noun = " ".join((match.group("noun") or match.group("noun2") or match.group("noun6") or match.group("noun7")
                         or match.group("noun8") or match.group("noun9") or "").lower().split())
        noun = "mobile" if noun in ("text", "sms") else noun
        if _PAST_WORDS.intersection(quals):
            continue  # "my old number was ..."
        if _NOT_TO_CALL.search(text[max(0, match.start() - 30):match.start() + 12]):
            continue  # "please don't call me on 07700 ... any more": the number not to use
        if noun == "line" and not quals:
            continue  # "work line", "direct line": a line is a phone only with what kind it is
        if _FOR_A_SCHEME.search(match.group(0)):
            continue  # "my number for the loyalty scheme is 5520 1188": that scheme's number, not a phone
        if match.group("number") and not match.group("owner"):
            if noun == "number" and not _PHONE_WORDS.intersection(quals) and (
                    _LABELLED.search(text[max(0, match.start() - 40):match.start()])
                    or not _CALLING.search(ctx.sentence or text)):
                continue  # "loyalty number is 5520 1188": a number, but not a phone
            if _SOMEONE_ELSES.search(text[max(0, match.start() - 40):match.start()]):
                continue  # "my wife's mobile is ...", "their number is ..."
        place = (match.group("place") or "").split()[-1:]  # "call me at home on ..."
        kind = next((_PHONE_KINDS[word] for word in [*quals, noun, *place] if word in _PHONE_KINDS), None)
        if not kind and (after := _KIND_AFTER.match(text, match.end())):  # "..., that's the office though"
            said = (after.group("kind") or after.group("kind2")).lower()
            kind, quals = _PHONE_KINDS[said], [*quals, said]
        label = _phone_label(kind or ("mobile" if noun.startswith(("mobile", "cell")) else None), [*quals, noun, *place])
        metadata = {"pii": True, "value": number, "kind": kind or "mobile"}
        if not kind and noun in ("", "number", "line") and not (match.group("owner") and match.group("number")) and not (
                _CHANGED.search(ctx.sentence or text)):  # "my number is ..." says which: theirs, the one to use
            metadata["unqualified"] = True  # "call me on ...": maybe the mobile, maybe just where they are today
        found.append(ctx.candidate(f"{ctx.person.possessive} {label} is {number}", confidence=0.9,
                                   rule="contact.phone", subject=phone_subject(kind), tags=("pii", "contact"),
                                   metadata=metadata))
    return found


def _phone_label(kind: str | None, words: list[str]) -> str:
    """What to call a number: the kind's label, in the user's own word where they used a narrower one ("office
    phone number", "landline number")."""
    said = next((word for word in words if word in _OWN_WORD_LABELS and _PHONE_KINDS.get(word) == kind), None)
    return _OWN_WORD_LABELS[said] if said else _PHONE_LABELS[kind]


def _listed_phone(match: re.Match, ctx: RuleContext) -> list[Candidate]:
    number = match.group("number").strip()
    if not 7 <= sum(char.isdigit() for char in number) <= 15 or _ISO_DATE.fullmatch(number):
        return []
    kind = _PHONE_KINDS.get(match.group("kind").lower())
    label = _phone_label(kind or "mobile", [match.group("kind").lower()])
    return [ctx.candidate(f"{ctx.person.possessive} {label} is {number}", confidence=0.85, rule="contact.phone",
                          subject=phone_subject(kind), tags=("pii", "contact"),
                          metadata={"pii": True, "value": number, "kind": kind or "mobile"})]


# --- How and when the user wants to be contacted ----------------------------------------------------------
_CHANNEL = (r"(?:e-?mails?|phone(?:\s+calls?)?|telephone|calls?|text(?:\s+messages?)?|texts|sms|whatsapp|post"
            r"|letters?|(?:live\s+)?chat|push(?:\s+notifications?)?|(?:in-)?app\s+notifications?)")
_CHANNEL_NAMES = {"email": "email", "emails": "email", "e-mail": "email", "e-mails": "email", "phone": "phone",
                  "phone call": "phone", "phone calls": "phone", "telephone": "phone", "call": "phone",
                  "calls": "phone", "text": "text message", "texts": "text message", "text message": "text message",
                  "text messages": "text message", "sms": "text message", "whatsapp": "WhatsApp", "post": "post",
                  "letter": "post", "letters": "post", "chat": "chat", "live chat": "chat"}
_CHANNEL_NAMES |= {name: "push notification" for name in ("push", "push notification", "push notifications",
                                                           "app notification", "app notifications",
                                                           "in-app notification", "in-app notifications")}
_VERB_CHANNELS = {"email": "email", "e-mail": "email", "emailed": "email", "e-mailed": "email", "emailing": "email",
                  "call": "phone", "called": "phone", "calling": "phone", "phone": "phone", "phoned": "phone",
                  "phoning": "phone", "ring": "phone", "rang": "phone", "ringing": "phone", "text": "text message",
                  "texted": "text message", "texting": "text message", "sms": "text message",
                  "whatsapp": "WhatsApp", "message": "text message", "messaged": "text message",
                  "write": "post", "wrote": "post", "writing": "post"}
_CHANNEL_VERB = (r"(?:e-?mail(?:ed|ing)?|call(?:ed|ing)?|phon(?:e|ed|ing)|ring(?:ing)?|rang|text(?:ed|ing)?|sms"
                 r"|whatsapp|messag(?:e|ed|ing)|writ(?:e|ing)|wrote)")
_PASSIVE_VERBS = {"phone": "called", "text message": "texted", "email": "emailed", "WhatsApp": "messaged on WhatsApp",
                  "post": "written to", None: "contacted"}
_ASK = r"^(?:(?:please|kindly|just|only|also|can\s+you|could\s+you|would\s+you|will\s+you|you\s+can)\s+)*"
# What may follow a channel in a standing preference: "email me instead", "by email, not phone", "email please".
_CHANNEL_TAIL = re.compile(rf"^[\s,]*(?:(?:only|instead|please|if\s+possible|where\s+possible|from\s+now\s+on|(?:in|on)"
                           rf"\s+the\s+app|going"
                           rf"\s+forward|in\s+future|thanks|preferably|ideally)\b[\s,]*)*(?:(?:instead\s+of|rather"
                           rf"\s+than|over|not|than|and\s+not|but\s+not|never|to)\s+(?:by\s+|via\s+|a\s+)?"
                           rf"(?P<avoid>{_CHANNEL}|{_CHANNEL_VERB})\b.*|(?:only|instead|please|thanks)?)$", re.I)
_CONTACT_BY = re.compile(
    rf"{_ASK}(?:contact|reach|update|notify|answer|reply(?:\s+to)?|respond(?:\s+to)?|write\s+back(?:\s+to)?|write\s+to"
    rf"|get\s+back\s+to|get\s+in\s+touch(?:\s+with)?|get\s+hold\s+of|follow\s+up(?:\s+with)?|keep\s+me\s+updated"
    rf"|keep\s+me\s+posted|send\s+me\s+(?:the\s+|my\s+|any\s+)?(?:notifications?|updates?|alerts?|reminders?"
    rf"|messages?))(?:\s+me)?\s+(?:only\s+)?(?:by|via|through|over|on"
    rf"|using|with)\s+(?:a\s+)?(?P<channel>{_CHANNEL})\b(?P<tail>.*)$",
    re.I,
)
_VERB_ME = re.compile(rf"{_ASK}(?P<verb>e-?mail|text|sms|whatsapp|message|call|phone|ring)(?P<me>\s+me)?(?P<tail>.*)$",
                      re.I)
_PREFER = re.compile(
    r"^I(?:'d|\s+would)?(?:\s+(?:much|really|strongly|generally|always|definitely|still))*\s+(?:prefer|rather)"
    r"(?:\s+(?:to\s+be\s+)?(?:contacted|reached|updated|notified)|\s+(?:you\s+)?(?:contact|reach)(?:ed)?\s+me"
    r"|\s+to\s+hear\s+from\s+(?:you|support)|\s+to\s+communicate|\s+to\s+(?:talk|chat))?"
    rf"(?:\s+(?:by|via|over|through|on|using))?\s+(?P<channel>{_CHANNEL})\b(?P<tail>.*)$"
    rf"|^I(?:'d|\s+would)\s+rather\s+(?:you\s+|support\s+)?(?P<verb>{_CHANNEL_VERB})\s+me\b(?P<tail2>.*)$",
    re.I,
)
_CHANNEL_IS_BEST = re.compile(
    rf"^(?P<channel>{_CHANNEL})\s+(?:is|works|would\s+be|are)\s+(?:(?:much|the|probably|always|generally)\s+)*(?:best"
    r"|better|easiest|preferred|ideal|my\s+preference)\b(?P<tail>.*)$"
    r"|^(?:the\s+)?(?:best|easiest|preferred)\s+(?:way|channel|method)\s+to\s+(?:reach|contact|get\s+hold\s+of|get\s+in"
    rf"\s+touch\s+with)\s+me\s+is\s+(?:by\s+|via\s+|through\s+|over\s+)?(?P<channel2>{_CHANNEL})\b(?P<tail2>.*)$",
    re.I,
)
_DONT = re.compile(
    rf"{_ASK}(?:don't|do\s+not|never|no\s+need\s+to)\s+(?:ever\s+)?(?P<verb>call|phone|ring|text|e-?mail|message"
    rf"|contact|whatsapp)(?:\s+me)?(?P<tail>.*)$"
    rf"|^no\s+(?P<channel>(?:phone\s+)?calls|texts|e-?mails)\b(?P<tail2>.*)$",
    re.I,
)
_DONT_TAIL = re.compile(r"^[\s,]*(?:(?:again|at\s+all|any\s?more|on\s+this\s+number|please|thanks|ever)\b[\s,]*)*"
                        r"(?:(?:just\s+|only\s+)?(?P<use>e-?mail|text|message|whatsapp|call|phone|ring)(?:\s+me)?"
                        r"(?:\s+instead)?(?:\s+please)?)?$", re.I)
_CANT_TAKE = re.compile(
    r"^I\s+(?:can't|cannot|can\s+not|am\s+unable\s+to|'m\s+unable\s+to|won't\s+be\s+able\s+to|don't|do\s+not|never)"
    r"(?:\s+(?:usually|always|really|normally))?\s+(?:take|answer|pick\s+up|receive|check|get)\s+(?:any\s+)?"
    r"(?P<what>(?:phone\s+)?calls|the\s+phone|my\s+phone|e-?mails?|my\s+e-?mails?|texts|text\s+messages)\b"
    r"(?P<tail>.*)$",
    re.I,
)
_CLOCK = r"(?:\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.|h|o'clock)?|noon|midday|midnight)"
_DAYS = r"(?:mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays|weekdays|weekends|week\s*days)"
_WINDOW = re.compile(
    r"^(?:only\s+|usually\s+|ideally\s+|preferably\s+)?"
    rf"(?:(?:before|after|from|until|till|past|between|around)\s+{_CLOCK}"
    rf"(?:\s*(?:and|-|to|until|till)\s*{_CLOCK})?"
    r"|(?:in\s+the\s+|during\s+the\s+|on\s+|at\s+|in\s+)?(?:early\s+|late\s+)?(?:mornings?|afternoons?|evenings?"
    rf"|nights?|daytime|lunch\s*time|{_DAYS})\b"
    r"|(?:during|outside(?:\s+of)?|within|after|before|in)\s+(?:(?:normal|regular|my|the|usual|working)\s+)?"
    r"(?:work(?:ing)?|office|business|school)\s+hours"
    r"|(?:after|before)\s+(?:work|school|lunch|dinner)\b"
    r"|(?:when\s+I'm\s+|while\s+I'm\s+)?at\s+(?:work|night|the\s+office|lunch)\b"
    rf"|on\s+{_DAYS}"
    r"|any\s*time)",
    re.I,
)
_WHEN_END = re.compile(r"\s*(?:[,;]|\s(?:because|since|as|so|but|please|thanks|thank|if|unless|otherwise|though"
                       r"|although|and\s+I|I)\b)", re.I)
_TIME_ASK = re.compile(
    rf"^(?:it's\s+|it\s+is\s+)?(?:best|better|easiest|ideal)\s+(?:to\s+)?(?P<verb>call|ring|phone|reach|contact|text)"
    r"(?:\s+me)?\s+(?P<when>.+)$"
    rf"|{_ASK}(?:only\s+)?(?P<verb2>call|ring|phone|text|contact|reach)\s+me(?:\s+back)?\s+(?:only\s+)?(?P<when2>.+)$"
    r"|^(?:the\s+)?best\s+time\s+to\s+(?P<verb3>call|ring|phone|reach|contact|text)(?:\s+me)?\s+is\s+(?P<when3>.+)$"
    r"|^I(?:'m|\s+am)\s+(?:only\s+|usually\s+|generally\s+|mostly\s+|best\s+)?(?:available|reachable|free|around"
    r"|contactable|easiest\s+to\s+reach)(?:\s+(?:to\s+talk|for\s+(?:a\s+)?calls?|by\s+phone|on\s+the\s+phone))?"
    r"\s+(?P<when4>.+)$"
    r"|^(?P<when5>(?:(?:weekday|weekend|week\s*day)\s+)?(?:early\s+|late\s+)?(?:mornings|afternoons|evenings)"
    rf"|{_DAYS}|after\s+{_CLOCK}|before\s+{_CLOCK})"
    r"\s+(?:are|is|work)\s+(?:best|better|easiest|ideal)\b.*$"
    # "calling in the mornings before 10 is better than evenings"
    r"|^(?P<verb6>calling|phoning|ringing|texting|contacting)(?:\s+me)?\s+(?P<when6>(?:in|on|at|before|after|between"
    r"|during)\b[^,;]{1,60}?)\s+(?:is|are|would\s+be|works?)\s+(?:much\s+|far\s+|a\s+lot\s+)?(?:better|best|easier"
    r"|ideal|preferable)\b.*$"
    # "Calls only between 12 and 2", "texts only after 6pm"
    r"|^(?:phone\s+)?(?P<verb7>call|text)s?\s+(?:only|just)\s+(?P<when7>(?:between|before|after|from|in|on|during)\b.+)$",
    re.I,
)
_LEADING_NUMBER = re.compile(rf"^\s*(?:on|at|via)\s+(?:my\s+)?(?:(?:{_PHONE_QUALS})\s+){{0,2}}(?:{_PHONE_NOUN}\b)?"
                             rf"(?:\s+number)?[\s,:-]*(?:{_PHONE_VALUE}|{EMAIL.pattern})[\s,]*", re.I)
_AT_PLACE = re.compile(r"^at\s+(?:work|the\s+office)\b", re.I)
_PARTS_OF_DAY = frozenset("early late mornings afternoons evenings".split())
_UNSURE = re.compile(r"\b(?:maybe|perhaps|might|not\s+sure|wondering|I\s+wonder|suppose|imagine|I\s+wish"
                     r"|hypothetical(?:ly)?)\b", re.I)


def without_condition(text: str) -> str | None:
    """`text` without a leading condition that only says when a contact detail or channel applies ("if the courier
    needs to call, ...", "in future if you need me, please text"); None when what is left is uncertain itself."""
    rest = _without_leading_condition(text)
    return None if rest == text or uncertain_in_itself(rest) else rest


def _without_leading_condition(text: str, *, comma_first: bool = True) -> str:
    first, then = (_CONDITION_TO_COMMA, _CONDITION_THEN) if comma_first else (_CONDITION_THEN, _CONDITION_TO_COMMA)
    rest = first.sub("", text, count=1)
    return rest if rest != text else then.sub("", text, count=1)


def contact_preferences(clause: Clause, ctx: RuleContext) -> list[Candidate]:
    """"Contact me by email, not phone" (the channel) and "best to call after 6pm" (the time): one subject each.
    The caller (support.support_clause) has set hypotheticals aside; "I'd prefer email" is not one here."""
    text = clause.text
    if _UNSURE.search(text) or (clause.question and not (_REQUEST.match(text) or _DONT.match(text))):
        return []  # a question asks; "Don't call me" only looks like one
    if (number := PHONE_SHAPED.match(text)) and (rest := re.match(r"\s*[,;:]\s*(?P<rest>\S.*)$", text[number.end():])):
        text = rest.group("rest")  # "07512 664 038, whatsapp is better than calls": the number is read elsewhere
    return _contact_time(text, ctx) or _contact_channel(text, ctx)


def _channel(word: str | None) -> str | None:
    if not word:
        return None
    word = " ".join(word.lower().split())
    return _CHANNEL_NAMES.get(word) or _VERB_CHANNELS.get(word)


def _channel_candidate(ctx: RuleContext, channel: str, avoid: str | None, *, negative: bool = False) -> Candidate:
    person = ctx.person
    if negative:
        content = person.sentence(f"does not want to be contacted by {channel}")
    else:
        content = person.sentence(f"prefers to be contacted by {channel}")
        if avoid and avoid != channel:
            content += f", not {avoid}"
    metadata = {"value": channel, "sentiment": "negative" if negative else "positive"}
    if avoid and not negative:
        metadata["avoid"] = avoid
    return ctx.candidate(content, memory_type="preference", confidence=0.85, rule="preference.contact_channel",
                         subject=CONTACT_CHANNEL, tags=("preference", "contact"), metadata=metadata)


# "email only please", "WhatsApp only": the one channel to use.
_CHANNEL_ONLY = re.compile(rf"^(?:(?:and|so|but|then)\s+)?(?:by\s+|via\s+)?(?P<channel>{_CHANNEL})\s+only"
                           r"(?:[\s,]+(?:please|pls|thanks|from\s+now\s+on|going\s+forward|in\s+future))*[\s.!]*$", re.I)


# "whatsapp is fine also": a channel the user accepts, beside the one they prefer (no subject: it replaces nothing).
# "email is fine" alone answers a question of the moment ("shall I email the label?"): only with "also" or "too".
_CHANNEL_OK = re.compile(rf"^(?:(?:and|oh\s+and)\s+)?(?:also\s+)?(?P<channel>{_CHANNEL})\s+(?:is|'s|works)(?:\s+also)?"
                         r"(?:\s+(?:fine|ok|okay|good|great|alright|all\s+right))?(?:\s+(?:too|also|as\s+well))?"
                         r"(?:[\s,]+(?:for\s+me|with\s+me|thanks|please))*[\s.!]*$", re.I)
_ALSO = re.compile(r"\b(?:also|too|as\s+well)\b", re.I)


def _contact_channel(text: str, ctx: RuleContext) -> list[Candidate]:
    if (match := _CHANNEL_ONLY.match(text)) and (channel := _channel(match.group("channel"))):
        return [_channel_candidate(ctx, channel, None)]
    if (match := _CHANNEL_OK.match(text)) and _ALSO.search(text) and (channel := _channel(match.group("channel"))):
        return [ctx.candidate(ctx.person.sentence(f"can also be contacted by {channel}"), memory_type="preference",
                              confidence=0.75, rule="preference.contact_channel_accepted", tags=("preference", "contact"),
                              metadata={"value": channel, "sentiment": "positive"})]
    if match := _CONTACT_BY.match(text) or _CHANNEL_IS_BEST.match(text):
        channel = _channel(match.group("channel") or match.groupdict().get("channel2"))
        tail = _CHANNEL_TAIL.match(match.group("tail") or match.groupdict().get("tail2") or "")
        if channel and (tail or match.re is _CHANNEL_IS_BEST):
            return [_channel_candidate(ctx, channel, _channel(tail.group("avoid")) if tail else None)]
        return []
    if match := _PREFER.match(text):
        channel = _channel(match.group("channel") or match.group("verb"))
        tail = _CHANNEL_TAIL.match(match.group("tail") if match.group("channel") else match.group("tail2"))
        return [_channel_candidate(ctx, channel, _channel(tail.group("avoid")))] if channel and tail else []
    if match := _VERB_ME.match(text):
        channel = _channel(match.group("verb"))
        tail = _CHANNEL_TAIL.match(_LEADING_NUMBER.sub("", match.group("tail")))  # "text me on 087 ... instead"
        # "email me the invoice" asks for a document; "text me instead" / "call me rather than emailing" is a standing
        # preference; a bare "call me" asks for a call now.
        if not tail or (channel == "phone" and not tail.group("avoid") and "instead" not in match.group("tail")):
            return []
        if not match.group("me") and not tail.group("avoid") and match.group("tail").strip(" ,"):
            return []  # "email please" answers how; "email the team" does not
        return [_channel_candidate(ctx, channel, _channel(tail.group("avoid")))] if channel else []
    if match := _DONT.match(text):
        tail_text = match.group("tail") if match.group("verb") else match.group("tail2")
        channel = _channel(match.group("verb") or match.group("channel").split()[-1])
        by = re.match(rf"^\s+(?:by|via|on|over|through)\s+(?P<channel>{_CHANNEL})\b", tail_text, re.I)
        if by:  # "don't contact me by phone"
            channel, tail_text = _channel(by.group("channel")), tail_text[by.end():]
        rest = _DONT_TAIL.match(tail_text)
        if channel is None or not rest:
            return []  # "don't email me the receipt yet"
        if (use := _channel(rest.group("use"))) and use != channel:  # "don't call, email me instead"
            return [_channel_candidate(ctx, use, channel)]
        return [_channel_candidate(ctx, channel, None, negative=True)]
    if match := _CANT_TAKE.match(text):
        what = match.group("what").lower()
        channel = "email" if "mail" in what else "text message" if "text" in what else "phone"
        if match.group("tail").strip(" ,"):
            return []  # "I can't take calls at work" is a time (read first), "... calls from you" is not a channel
        return [_channel_candidate(ctx, channel, None, negative=True)]
    return []


def _window(when: str, *, place_ok: bool = False) -> str | None:
    """The leading contact-time window of `when` ("after 6pm on weekdays"), or None when it names none. "at work"
    is a time only where it says when calls cannot be taken (`place_ok`); "reach me at work on ..." is a place."""
    when = when.strip(" ,")
    if not _WINDOW.match(when) or (not place_ok and _AT_PLACE.match(when)):
        return None
    end = _WHEN_END.search(when)
    window = (when[:end.start()] if end else when)[:80].strip(" ,.")
    return window if len(window.split()) <= 10 else None


def _contact_time(text: str, ctx: RuleContext) -> list[Candidate]:
    person = ctx.person
    metadata: dict = {}
    if match := _TIME_ASK.match(text):
        groups = match.groupdict()
        raw_when = next((groups[key] for key in ("when", "when2", "when3", "when4", "when6", "when7") if groups[key]),
                        None)
        verb = next((groups[key] for key in ("verb", "verb2", "verb3", "verb6", "verb7") if groups[key]), None)
        if groups["when2"]:  # "reach me on +44 7700 900123 after 6pm": the number is contacts()'s
            raw_when = _LEADING_NUMBER.sub("", raw_when)
        if raw_when is None:  # "mornings are best"
            window = " ".join(groups["when5"].lower().split())
            preposition = ("" if window.startswith(("after", "before")) else "in the"
                           if window.split()[0] in _PARTS_OF_DAY else "on")
            content = person.sentence(f"prefers to be contacted {preposition} {window}".replace("  ", " "))
        else:
            window = raw_when.strip(" .") if groups["when3"] else _window(raw_when)
            if not window or len(window.split()) > 10:
                return []
            if groups["when4"]:
                content = rewrite_first_person(f"{text[:match.start('when4')]}{window}", person)
            else:
                channel = _VERB_CHANNELS.get(verb.lower()) if verb else None
                content = person.sentence(f"prefers to be {_PASSIVE_VERBS[channel]} {window}")
        metadata["value"] = window
    elif (match := _DONT.match(text)) and match.group("verb") and (window := _window(match.group("tail"))):
        channel = _VERB_CHANNELS.get(match.group("verb").lower())
        content = person.sentence(f"does not want to be {_PASSIVE_VERBS[channel]} {window}")
        metadata |= {"value": window, "sentiment": "negative"}
    elif (match := _CANT_TAKE.match(text)) and (window := _window(match.group("tail"), place_ok=True)):
        content = rewrite_first_person(f"{text[:match.start('tail')]} {window}", person)
        metadata |= {"value": window, "sentiment": "negative"}
    else:
        return []
    return [ctx.candidate(content, memory_type="preference", confidence=0.8, rule="preference.contact_time",
                          subject=CONTACT_TIME, tags=("preference", "contact"), metadata=metadata)]


# A number shaped like a phone number and nothing else: international (+), a trunk 0, or North American 3-3-4.
PHONE_SHAPED = re.compile(r"(?<![\w+(/.-])(?:\+\d{1,3}[\s.-]?\(?\d[\d\s().-]{6,16}\d|0\d{1,4}[\s-]\d[\d\s-]{4,12}\d"
                           r"|\(?\d{3}\)?[\s.-]\d{3}[\s.-]\d{4})(?![\w-]|\.\d)")
_SOMEONE_ELSE_HERE = re.compile(rf"\b(?:his|her|their|him|them|he|she|its(?!\s+[+\d(])|your|the\s+company's|website|site|shop|store|office's"
                                rf")\b|\b{_NOT_POSSESSIVES}[A-Za-z]+'s\b", re.I)
# A number named as something else just before it ("account 4417 2290 88", "the booking ref is ..."); after it ("...,
# about my booking") the word names what the call is about.
_DOCUMENT_BEFORE = re.compile(r"\b(?:bill|account|order|reference|ref|policy|case|ticket|booking|invoice|meter|serial"
                              r"|tracking|membership|customer)\b[^,;.]{0,30}$", re.I)


# A sentence about a number that was, or is wrong: "my old number was ...", "..., sorry I mean ...".
_NOT_NOW = re.compile(r"\b(?:old|previous|former|was|were|used\s+to|sorry|I\s+mean|I\s+meant|not|wrong|typo\w*)\b", re.I)
_ANOTHERS_NUMBER = re.compile(r"\b(?:rang|called|phoned|dialled|dialed|tried|ring|call|dial|phone)\s+(?:on\s+|at\s+)?$"
                              r"|\bthe\s+(?:[\w-]+\s+){1,2}(?:is|'s|on|:)\s*$"
                              r"|\b(?!(?:it|that|this|mine|number|phone|mobile|cell|line|me|us|whatsapp|here|now|new)\b)"
                              r"(?-i:[A-Za-z]+)\s+(?:is|'s)\s*$"
                              # "a taxi from Addison Lee: 020 ...": a name's number
                              r"|(?<!\.\s)\b(?!(?:WhatsApp|SMS|I)\b)(?-i:[A-Z][\w&'-]*)\s*:\s*$", re.I)


# "please deal with my stand-in Joanne Pike from then, 0118 ...": someone of the user's, whatever the word for them.
_POSSESSED_PERSON = re.compile(r"\b(?i:my|our)\s+(?!(?i:name)\b)(?:[a-z-]+|[A-Z]{2,4})\s+(?:(?:Dr|Mr|Mrs|Ms|Miss|Mx|Prof)\.?\s+[A-Z][a-z'-]+"
                               r"|[A-Z][a-z'-]+\s+[A-Z][a-z'-]+)\b")
# "contact me at ... or on 0118 ...", "my own number": a number the sentence says is the customer's ("I won't be there;
# 07700 ... is the number to call" and "My bad, 07700 ... is hers" do not).
_ME_OR_MY = re.compile(r"\b(?:(?:call|ring|phone|text|reach|contact|get\s+hold\s+of|message|whatsapp)\s+me|me\s+(?:at|on)"
                       r"|my\s+(?:own\s+)?(?:number|mobile|phone|cell|landline|line))\b", re.I)


def names_someone(text: str) -> bool:
    """Whether a customer's sentence names someone of theirs ("my son", "my stand-in Joanne Pike", "my GP Dr Patel")."""
    return bool(MY_RELATION.search(text) or _POSSESSED_PERSON.search(text))


# "Me, on the shop line 0117 ...", "Me first — 07911 ... — then my husband ...": the customer answering whom to call.
_ME_ON = re.compile(r"(?:^|[,;:.(—–-]\s*)(?:me|mine|myself)(?:\s+first)?\s*[,;:—–-]*\s*(?:on\s+(?:the\s+|my\s+)?"
                    r"(?:[\w-]+\s+){0,2}?)?$", re.I)
# Someone introduced just before the number: "the manager there is Ravi Menon, 07700 900 812".
_NAME_BEFORE = re.compile(r"\b(?:the|my|our)\s+(?!(?:[\w-]+\s+)?name\b)(?:[\w-]+\s+){1,3}?(?:is|will\s+be)\s+(?:(?:Mr|Mrs|Ms|Miss|Dr)\.?\s+)?"
                          r"(?P<name>(?-i:[A-Z][a-z'-]+)"
                          r"(?:\s+(?-i:[A-Z][\w'-]+))?)\s*[,:-]?\s*(?:on\s+)?$", re.I)


def unclaimed_phones(sentence: str, clauses: list[Clause], ctx: RuleContext, said: list, *, someone_named: bool
                     ) -> list[Candidate]:
    """"Can they text rather than call? 07456 118 902.": a number shaped only like a phone number, in a customer's
    sentence that names no one else, no other kind of number and no number of theirs in the past, and that no rule
    has read, is the customer's phone number, "unqualified" (it does not replace the number on file)."""
    if _NOT_NOW.search(sentence) or any(clause.question or clause.uncertain for clause in clauses
                                        if PHONE_SHAPED.search(clause.text)):
        return []
    others_in_sentence = (_SOMEONE_ELSE_HERE.search(sentence) or MY_RELATION.search(sentence)
                          or _POSSESSED_PERSON.search(sentence))
    # Someone named in an earlier sentence of the message leaves a number to the customer only in a sentence about
    # them: "For everything else contact me at ... or on 0118 ..." after "our IT lead ... she's on 07723 ...".
    others_here = others_in_sentence or someone_named and not _ME_OR_MY.search(sentence)
    read = " ".join(getattr(item, "content", "") or "" for item in said)
    found = []
    for match in PHONE_SHAPED.finditer(sentence):
        number = match.group(0).strip()
        digits = sum(char.isdigit() for char in number)
        if not 9 <= digits <= 15 or number in read or _ISO_DATE.fullmatch(number):
            continue
        if others_here and not _ME_ON.search(sentence[:match.start()]):
            continue  # whose it is, with others named, only "me, on ..." says
        if _DOCUMENT_BEFORE.search(sentence[:match.start()]):
            continue
        if _ANOTHERS_NUMBER.search(sentence[:match.start()]):
            continue  # "I rang 01632 445 900", "the front desk is 0121 ...", "sam is 0412 ...": not the customer's
        if (named := _NAME_BEFORE.search(sentence[:match.start()])) and not (
                ctx.person.known and named.group("name").casefold() in ctx.person.known.casefold()):
            continue  # "the manager there is Ravi Menon, 07700 900 812": his, unless the name is the customer's
        if after := _KIND_AFTER.match(sentence, match.end()):  # "0161 496 0732 (office)": that kind's number
            said_kind = (after.group("kind") or after.group("kind2")).lower()
            kind = _PHONE_KINDS[said_kind]
            found.append(ctx.candidate(f"{ctx.person.possessive} {_phone_label(kind, [said_kind])} is {number}",
                                       confidence=0.75, rule="contact.phone_given", subject=phone_subject(kind),
                                       tags=("pii", "contact"), metadata={"pii": True, "value": number, "kind": kind}))
            continue
        metadata = {"pii": True, "value": number, "kind": "mobile", "unqualified": True}
        found.append(ctx.candidate(f"{ctx.person.possessive} phone number is {number}", confidence=0.75,
                                   rule="contact.phone_given", subject=phone_subject(None), tags=("pii", "contact"),
                                   metadata=metadata))
    return found
