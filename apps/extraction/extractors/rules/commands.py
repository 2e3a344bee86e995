"""What the user asks of the memory itself: "remember that ...", "forget my phone number", "I no longer live in X".

Commands are read per sentence before the question filter, so "Can you remember that my son is allergic to
nuts?" still counts. Retractions become `action="delete"` candidates keyed by subject; the extractor later
pins them to a matching existing memory when it can.
"""

import dataclasses
import re
from collections.abc import Callable

from apps.extraction.extractors.base import Candidate
from apps.extraction.extractors.rules import lexicon, subjects
from apps.extraction.extractors.rules.addresses import address_kind
from apps.extraction.extractors.rules.contacts import EMAIL, PHONE, email_kind, phone_kind
from apps.extraction.extractors.rules.context import SUBJECT_ADVERBS as ADV
from apps.extraction.extractors.rules.context import RuleContext
from apps.extraction.extractors.rules.dates import find_dates
from apps.extraction.extractors.rules.facts import org_value, place_value
from apps.extraction.extractors.rules.identifiers import identifier_kind, identifiers
from apps.extraction.extractors.rules.people import someones_detail
from apps.extraction.extractors.rules.person import rewrite_first_person
from apps.extraction.extractors.rules.preferences import object_key
from apps.extraction.extractors.rules.text import MAX_CLAUSE_CHARS, Clause, split_clauses, strip_filler

_POLITE = r"^(?:please\s+)?(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?)?(?:also\s+)?(?:please\s+)?"
_REMEMBER = re.compile(
    _POLITE + r"(?P<verb>remember|memori[sz]e|keep\s+in\s+mind|bear\s+in\s+mind|don't\s+forget|do\s+not\s+forget"
    r"|never\s+forget|make\s+a\s+note|take\s+note|note|save|store)\b"
    r"(?:\s+(?:on|in|to)\s+(?:my|the|your)\s+(?:profile|file|account|record|records|notes))?"  # "save on my profile that"
    r"(?:\s+(?:of|that|this|the\s+fact\s+that))?"
    r"(?:\s*[:,-]\s*|\s+)(?P<body>.+)$",
    re.I,
)
_REMEMBER_REJECT = re.compile(r"^(?:me|it|this|that|when|what|how|who|where|why|which|everything|anything|us)\b", re.I)
_ERASE_VERBS = (r"forget|delete|remove|erase|wipe|clear|drop|discard|purge|scrub|scrap|bin|ditch|get\s+rid\s+of"
                r"|stop\s+remembering"
                r"|stop\s+storing|stop\s+keeping|stop\s+using")
_FORGET = re.compile(
    _POLITE + rf"(?:{_ERASE_VERBS})\s+(?:about\s+)?(?P<what>.+)$"
    # "I'd like you to delete ...", "I want you to forget ...", "I need you to remove ..."
    rf"|^(?:I(?:'d|\s+would)\s+(?:like|prefer|rather|love)|I\s+(?:want|need))\s+(?:you\s+)?(?:to\s+)?"
    rf"(?:{_ERASE_VERBS})\s+(?:about\s+)?(?P<what2>.+)$"
    # "please don't keep my card details", "I don't want you storing my email", "take my number off your list"
    r"|^(?:please\s+)?(?:don't|do\s+not)\s+(?:keep|store|retain|save|hold|remember|record)\s+(?P<what3>.+)$"
    r"|^I\s+(?:don't|do\s+not)\s+want\s+(?:you\s+)?(?:to\s+)?(?:keep|keeping|store|storing|retain|retaining|save"
    r"|saving|hold|holding|have|having|remember)\s+(?P<what4>.+)$"
    r"|^I\s+(?:don't|do\s+not)\s+want\s+(?P<what5>my\s+.+?)\s+(?:kept|stored|saved|held|on\s+(?:file|record))\b.*$"
    rf"|{_POLITE}take\s+(?P<what6>.+?)\s+(?:off|out(?:\s+of|\s+from)?)(?:\s+(?:your|the|my)\s+(?:file|records?|system|list|account|notes"
    r"|profile))?(?:\s+(?:completely|entirely|altogether|for\s+good))?$",
    re.I,
)
_RECORDS = re.compile(r"\s+(?:from|off|in|on)\s+(?:your|the|my|our)\s+(?:records?|files?|system|database|notes|memory"
                      r"|account|profile|list)\b.*$|\s+on\s+(?:file|record)\b.*$|\s+(?:any\s?more|any\s+longer)$",
                      re.I)
_TRAILING_POLITENESS = re.compile(r"(?:,?\s+(?:please|thanks|thank\s+you|for\s+me|now|too|as\s+well))+$", re.I)
_FORGET_STATEMENT = re.compile(r"^(?:(?:that|about)\s+)?(?:I\s+(?:said|told\s+you|mentioned)\s+(?:that\s+)?)?"
                               r"(?=(?:I|I'm|I've)\b|my\s+[\w' -]+?\s+(?:is|are)\b)", re.I)
_HAS_VERB = re.compile(r"^(?:I|we|you)\b|\b(?:is|are|was|were|am|be|been|has|have|had|will|would|can|could|do|does"
                       r"|did|need|needs|want|wants|likes?|loves?|hates?|lives?|works?|goes|starts?|ends?|must|should"
                       r"|shall|may|might|ought|cannot|can't|won't|don't|doesn't|isn't|aren't|mustn't|shouldn't|prefers?"
                       r"|uses?|gets?|takes?|keeps?|pays?|owns?|runs?|handles?|manages?|belongs?|comes?|stays?)\b"
                       r"|'s\s+(?!name\b)\w|'re\b|'m\b|'ll\b|'ve\b", re.I)
_QUALIFIERS = ("home|house|work|personal|private|mobile|cell|business|office|landline|whatsapp|fax|shipping|delivery"
               "|billing|postal"
               "|expired|dead|closed|cancelled|canceled|former|ex"
               "|secondary|second|other|backup|alternate|alternative|old|current|previous|saved|new|last")
_FORGET_SUBJECT = re.compile(rf"^(?:my|the|our|that|this)\s+(?:(?:{_QUALIFIERS})\s+)*(?P<noun>[\w -]{{1,60}}?)"
                             r"(?:\s+(?:you\s+have|on\s+file|I\s+(?:gave|mentioned|told\s+you)).*)?\s*$", re.I)
_SELF_QUALIFIERS = frozenset("old current previous saved new last expired dead closed cancelled canceled former ex"
                             .split())
_FORGET_WHERE = re.compile(r"^where\s+I\s+(?P<verb>live|'m\s+from|am\s+from|work)\b", re.I)
_FORGET_PREFERENCE = re.compile(r"^(?:my|the)\s+preference\s+(?:for|about|on)\s+(?P<obj2>.+)$", re.I)


def sentence_command(sentence: str, clauses: list[Clause], ctx: RuleContext,
                     clause_rules: Callable[[Clause, RuleContext], list[Candidate]]) -> list[Candidate] | None:
    """Candidates for a sentence (split into `clauses`) holding a remember/forget command, or None when it holds none.

    A forget request may share its sentence with other clauses ("Please delete my email address, I don't want
    you keeping it", "remove my old number, my new one is ..."): the request is read from its own clause and the
    other clauses are read as usual, so a privacy request is never lost to phrasing.
    """
    text = strip_filler(sentence).rstrip(" .!?")
    match = _REMEMBER.match(text)
    if match and not _FORGET.match(text):
        return _remember_command(text, match, ctx, clause_rules)
    whole = forget_request(text)
    found = _forget(whole, ctx, clause_rules) if whole else []
    if found:  # "delete my home address and my email"
        return found
    for index, clause in enumerate(clauses):
        what = forget_request(clause.text)
        if what is None:
            continue
        named = _named_before(clauses[:index]) if _DEICTIC.fullmatch(what) else None
        if named:  # "and the work email, please take it out from my file": "it" is the work email
            what = named
        if _DEICTIC.fullmatch(what):
            if not _RECORDS_VERB.search(clause.text):
                return None  # "forget it", "never mind": not a request about stored data
            forget = _delete(ctx, None, "asked to forget what they had just said", "retract.forget")
            forget.metadata["refers_back"] = True
            forgets = [forget]
        else:
            forgets = _forget(what, ctx, clause_rules)
        noun = _forgotten_noun(what)
        found = []
        for position, other in enumerate(clauses):
            if position == index:
                found += forgets  # in sentence order: "my number is X, but take it off my file" forgets X
            elif not (other.question or other.uncertain):
                if noun:  # "remove my old number, my new one is ...": "one" is the noun just forgotten
                    other = dataclasses.replace(other, text=_NEW_ONE.sub(rf"\g<1> {noun} ", other.text))
                found += clause_rules(other, ctx)
        return found
    return None


def _named_before(clauses: list[Clause]) -> str | None:
    """The thing a bare noun phrase just before a forget request names ("the work email"), for its "it"."""
    for clause in reversed(clauses):
        text = re.sub(r"^(?:and|also|oh|so|but)\s+", "", strip_filler(clause.text), flags=re.I).rstrip(" ,.")
        bare = re.sub(rf"\b(?:{_QUALIFIERS})\b", "", text, flags=re.I)  # "work" in "the work email" is no verb
        if _FORGET_SUBJECT.match(text) and len(text.split()) <= 5 and not _HAS_VERB.search(bare):
            return text
        return None
    return None


_DEICTIC = re.compile(r"(?:it|that|this|that\s+one|this\s+one|them)(?:\s+(?:completely|entirely|altogether))?", re.I)
_RECORDS_VERB = re.compile(r"\b(?:take\s+\w+\s+off|delete|remove|erase|wipe|purge|scrub)\b|\b(?:file|records?|system)\b",
                           re.I)


_NEW_ONE = re.compile(r"^((?:my|the|our)\s+(?:new|current|correct|right|updated)|(?:here's|here\s+is)\s+(?:my|the)"
                      r"\s+(?:new|correct|right|updated))\s+one\s+", re.I)


def _forgotten_noun(what: str) -> str | None:
    match = _FORGET_SUBJECT.match(what)
    return " ".join(match.group("noun").split()) if match else None


def forget_request(text: str) -> str | None:
    """What a clause asks to have forgotten ("my email address"), or None when it asks nothing of the kind."""
    text = _TRAILING_POLITENESS.sub("", strip_filler(text).rstrip(" .!?"))
    match = _FORGET.match(text)
    if not match and ", " in text:  # "take the house number off completely, it's being disconnected"
        match = _FORGET.match(_TRAILING_POLITENESS.sub("", text.split(", ", 1)[0]))
    if not match:
        return None
    what = next(value for key, value in match.groupdict().items() if key.startswith("what") and value)
    what = _RECORDS.sub("", _TRAILING_POLITENESS.sub("", what.strip()))
    return _TRAILING_POLITENESS.sub("", what).strip() or None


_ON_RECORD = re.compile(r"^(?:on|in|to)\s+(?:my|the|your)\s+(?:profile|file|account|record|records|notes)\s*", re.I)


def _remember_command(text: str, match: re.Match, ctx: RuleContext, clause_rules) -> list[Candidate] | None:
    body = match.group("body")
    if _REMEMBER_REJECT.match(body) or len(body.split()) < 2:
        return None
    verb = match.group("verb").lower()
    after_verb = _ON_RECORD.sub("", text[match.end("verb"):].strip())  # "save on my profile that ..."
    if verb in ("save", "store", "note") and not re.match(r"^(?:that\b|[:,-])", after_verb):
        return None  # "save the file", "note the time" are not memory requests; "note that ..." / "save: ..." are
    confidence = 0.85 if verb in ("note", "take note", "make a note", "save", "store") else 0.95
    # "remember that <clause>" announces a statement, whatever its verb ("invoices must go to finance").
    announced = bool(re.match(r"^(?:that|the\s+fact\s+that)\b|^[:,-]", after_verb, re.I))
    return _remember(body, ctx, clause_rules, confidence, announced=announced)


def remember_body(sentence: str) -> str | None:
    """What a "remember that ..." sentence asks to remember, or None."""
    match = _REMEMBER.match(strip_filler(sentence).rstrip(" .!?"))
    return match.group("body") if match else None


def _remember(body: str, ctx: RuleContext, clause_rules, confidence: float, *, announced: bool = False
              ) -> list[Candidate]:
    person = ctx.person
    if body.lower().startswith("to "):
        content = person.sentence(f"asked the assistant to remember {rewrite_first_person(body, person, named=True)}")
        return [ctx.candidate(content, confidence=confidence - 0.1, rule="explicit.remember_to",
                              tags=("explicit", "task"))]
    found = []
    for clause in split_clauses(body):
        plain = Clause(text=clause.text, question=False, uncertain=clause.uncertain, hedged=clause.hedged)
        structured = [] if plain.uncertain else clause_rules(plain, ctx)
        if structured:
            for candidate in structured:
                candidate.confidence = max(candidate.confidence, confidence)
                candidate.tags = sorted({*candidate.tags, "explicit"})
            found += structured
            continue
        if (not announced and not _HAS_VERB.search(clause.text)) or len(clause.text) > MAX_CLAUSE_CHARS:
            continue  # "Can you remember my order number?" names a thing, it states nothing
        rewritten = rewrite_first_person(clause.text, person)
        about_user = rewritten != clause.text or bool(re.match(r"^(?:I|my|me)\b", clause.text, re.I))
        content = rewritten if about_user else person.sentence(f"asked to remember that {clause.text}")
        dates = find_dates(clause.text, ctx.reference)
        found.append(ctx.candidate(content, memory_type="episode" if dates else "fact", confidence=confidence,
                                   rule="explicit.remember", tags=("explicit",),
                                   metadata=dates[0].metadata() if dates else {}))
    return found


_LIST_BREAK = re.compile(r"(?<!\s)(?:\s*,\s*(?:and\s+)?|\s+(?:and|&|as\s+well\s+as|plus)\s+)(?=(?:my|the|our|that)\b)",
                         re.I)  # (?<!\s): a match starts once per whitespace run, not at each of its characters


def _forget(what: str, ctx: RuleContext, clause_rules) -> list[Candidate]:
    """Deletes for "my email and my home address": each listed thing on its own."""
    found = _forget_one(what, ctx, clause_rules)
    if found:
        return found
    parts = _LIST_BREAK.split(what)
    for part in parts[1:] and parts:
        if re.search(r"\b(?:is|are|was|were|'s)\b", part):
            return []  # "my old number, my new one is ...": a statement follows, not another thing to forget
        forgotten = _forget_one(part, ctx, clause_rules)
        if not forgotten:
            return []  # "my old number, my new one is ...": not a list of things to forget
        found += forgotten
    return found


# What identifies a thing to forget by its value: an email or a number ("remove mei.tan@x.sg", "the old Visa 0093").
_VALUE_TOKENS = re.compile(rf"{EMAIL.pattern}|\+?\d[\d\s().-]{{2,18}}\d|\b[A-Z]{{1,5}}-?\d[\w-]{{2,}}")


def forgotten_values(what: str) -> list[str]:
    """The values named in a forget request ("remove mei.tan@x.sg", "the old Visa 0093")."""
    return [value.strip() for value in _VALUE_TOKENS.findall(what) if sum(char.isalnum() for char in value) >= 3]


def _someones_details(what: str, ctx: RuleContext) -> list[Candidate]:
    """"Gareth Pryce's details": everything about him; "her mobile number" (Beatriz's): that detail of hers only."""
    if (someone := someones_detail(what, ctx.sentence)) is None:
        return []
    who, detail = someone
    whose = f"their {who}'s" if who.islower() else f"{who}'s"  # a relation ("wife") or a name
    if detail is None:
        candidate = _delete(ctx, None, f"asked to forget {whose} details", "retract.forget", value=who)
    else:
        label = {"phone": "phone number", "email": "email address"}[detail]
        candidate = _delete(ctx, None, f"asked to forget {whose} {label}", "retract.forget")
        candidate.metadata["detail"] = detail
    candidate.metadata["person"] = who
    return [candidate]


def _forget_one(what: str, ctx: RuleContext, clause_rules) -> list[Candidate]:
    person = ctx.person
    statement = _FORGET_STATEMENT.match(what)
    if statement:  # "forget that I live in Berlin": retract whatever that statement would have stored
        inner = what[statement.end():]
        stated = clause_rules(Clause(text=inner, question=False, uncertain=False, hedged=False), ctx)
        rest = f"asked to forget that {rewrite_first_person(inner, person, named=True)}"
        deletes = [_delete(ctx, candidate.subject, rest, "retract.forget", value=candidate.metadata.get("value"))
                   for candidate in stated if candidate.subject and candidate.action == "add"]
        if deletes:
            return deletes
    if match := _FORGET_PREFERENCE.match(what):
        key = object_key(match.group("obj2"))
        return [_delete(ctx, f"preference:{key}", f"asked to forget their preference for {match.group('obj2')}",
                        "retract.forget", value=key)] if key else []
    ids = identifiers(what, ctx)
    if ids:  # "forget order #12345"
        return [_delete(ctx, candidate.subject, f"asked to forget {candidate.content.split(' has ', 1)[-1]}",
                        "retract.forget", value=candidate.metadata["identifier"]) for candidate in ids]
    if someones := _someones_details(what, ctx):
        return someones
    if len(split_clauses(what)) == 1 and (values := forgotten_values(what)):  # whatever memory holds the value
        return [_delete(ctx, None, f"asked to forget {value}", "retract.forget", value=value) for value in values]
    if match := _FORGET_WHERE.match(what):
        subject = "employer" if match.group("verb").lower() == "work" else "location"
        label = lexicon.SUBJECT_LABELS[subject]
        return [_delete(ctx, subject, f"asked to forget their {label}", "retract.forget")]
    if match := _FORGET_SUBJECT.match(what):
        noun = " ".join(match.group("noun").lower().split())
        qualifiers = [word.lower() for word in re.findall(r"\w+", what[match.start("noun") - 30 if match.start("noun")
                      > 30 else 0:match.start("noun")]) if word.lower() in _QUALIFIER_WORDS]
        qualifier = next((word for word in qualifiers if word not in _SELF_QUALIFIERS), None)
        subject = lexicon.SUBJECT_NOUNS.get(noun) or _identifier_subject(noun)
        if subject:
            label = lexicon.SUBJECT_LABELS.get(subject, noun)
            label = f"{qualifier} {label}" if qualifier and not label.startswith(qualifier) else label
            if subject in _DETAIL_KINDS and qualifier and (kind := _DETAIL_KINDS[subject][0](qualifier)):
                subject = _DETAIL_KINDS[subject][1](kind)  # "my delivery address": the shipping address, no other
            candidate = _delete(ctx, subject, f"asked to forget their {label}", "retract.forget")
            if qualifier:
                candidate.metadata["qualifier"] = qualifier
            return [candidate]
    return []  # "forget it", "delete my account": not a memory we can name


_QUALIFIER_WORDS = frozenset(_QUALIFIERS.split("|"))
# The user's contact details that come in kinds: how a qualifier names the kind, and the kind's subject.
_DETAIL_KINDS = {
    subjects.PHONE: (phone_kind, subjects.phone_subject),
    subjects.EMAIL: (email_kind, subjects.email_subject),
    subjects.ADDRESS: (address_kind, subjects.address_subject),
}
_IDENTIFIER_NOUN = re.compile(r"^(?P<kind>[\w-]+(?:\s+[\w-]+)?)\s+(?:number|no|id|code|reference|details|card)s?$")


def _identifier_subject(noun: str) -> str | None:
    """"loyalty number" -> "identifier:loyalty": a forget of every identifier of that kind."""
    match = _IDENTIFIER_NOUN.match(noun)
    kind = identifier_kind(match.group("kind")) if match else None  # "delete my account" closes it: not ours
    return subjects.identifier_subject(kind) if kind else None


def _delete(ctx: RuleContext, subject: str | None, rest: str, rule: str, value: str | None = None,
            confidence: float = 0.9) -> Candidate:
    metadata = {"value": value} if value else {}
    return ctx.candidate(ctx.person.sentence(rest), confidence=confidence, rule=rule, subject=subject,
                         tags=("retraction",), metadata=metadata, action="delete")


# --- Retractions stated in passing ("I don't work at TechCorp anymore") -----------------------------------
_ANYMORE = r"(?:\s+(?:any\s?more|any\s+longer))"
_NO_LONGER_LIVE = re.compile(
    # "I don't live in a big city" is a plain negation; only "no longer" / "anymore" take a fact back.
    rf"^(?:I|we)\s+no\s+longer\s+live\s+in\s+(?P<value>.+?){_ANYMORE}?$"
    rf"|^(?:I|we)\s+(?:don't|do\s+not)\s+live\s+in\s+(?P<v1>.+?){_ANYMORE}$"
    rf"|^I(?:'m|\s+am)\s+no\s+longer\s+(?:living|based|located)\s+in\s+(?P<v2>.+)$"
    rf"|^I(?:'m|\s+am)\s+not\s+(?:living|based|located)\s+in\s+(?P<v3>.+?){_ANYMORE}$"
    rf"|^(?:I|we)(?:'ve|\s+have)?(?:\s+just)?\s+moved\s+(?:away\s+from|out\s+of)\s+(?P<v4>.+)$",
    re.I,
)
_NO_LONGER_WORK = re.compile(
    rf"^I\s+no\s+longer\s+work\s+(?:at|for)\s+(?P<value>.+?){_ANYMORE}?$"
    rf"|^I\s+(?:don't|do\s+not)\s+work\s+(?:at|for)\s+(?P<v1>.+?){_ANYMORE}$"
    rf"|^I(?:'m|\s+am)\s+no\s+longer\s+(?:working\s+(?:at|for)|employed\s+(?:at|by)|with)\s+(?P<v2>.+)$"
    rf"|^I(?:'m|\s+am)\s+not\s+(?:working\s+(?:at|for)|employed\s+(?:at|by)|with)\s+(?P<v3>.+?){_ANYMORE}$",
    re.I,
)
_LEFT_ORG = re.compile(r"^I(?:'ve|\s+have)?(?:\s+(?:just|recently|now|also))*\s+(?:left|quit)\s+(?P<value>[A-Z][\w&.'-]*"
                       r"(?:\s+(?:[A-Z][\w&.'-]*|&|and|of))*)(?:\s+(?:now|recently|last\s+\w+|in\s+\w+))?$")
_LEFT_JOB = re.compile(
    r"^I(?:'ve|\s+have)?(?:\s+just|\s+recently|\s+finally)?\s+(?:quit|left|lost)\s+my\s+job\b(?:\s+(?:at|with)\s+"
    r"(?P<value>.+)|\s+(?:last|this|yesterday|recently|today|\w+\s+(?:days?|weeks?|months?|years?)\s+ago)\b.*)?$"
    r"|^I(?:'ve|\s+have)?(?:\s+just|\s+recently)?\s+(?:got\s+|was\s+|been\s+)?(?:laid\s+off|fired|let\s+go)"
    r"(?:\s+from\s+(?P<v2>.+))?$",
    re.I,
)
_NO_LONGER_JOB = re.compile(rf"^I(?:'m|\s+am)\s+(?:no\s+longer\s+(?P<a1>an?|the)\s+(?P<value>.+?){_ANYMORE}?"
                            rf"|not\s+(?P<a2>an?|the)\s+(?P<v2>.+?){_ANYMORE})$", re.I)
_NO_LONGER_LIKE = re.compile(
    rf"^I{ADV}\s+no\s+longer\s+(?:like|love|enjoy|prefer|hate|dislike|eat|drink|use)\s+(?P<value>.+)$"
    r"|^I(?:'ve|\s+have)?\s+stopped\s+(?:liking|loving|enjoying|eating|drinking)\s+(?P<v2>.+)$"
    r"|^I(?:'m|\s+am)\s+no\s+longer\s+(?:a\s+(?:big\s+)?fan\s+of|into)\s+(?P<v3>.+)$",
    re.I,
)
_NO_LONGER_DIET = re.compile(rf"^I(?:'m|\s+am)\s+(?:no\s+longer\s+(?:an?\s+)?(?P<value>{'|'.join(lexicon.DIETS)})"
                             rf"|not\s+(?:an?\s+)?(?P<v2>{'|'.join(lexicon.DIETS)}){_ANYMORE})$", re.I)
_CONTACT_GONE = re.compile(
    r"^(?:my|this|that)\s+(?:old\s+)?(?P<noun>email(?:\s+address)?|(?:phone|mobile|cell)(?:\s+number)?|number)"
    r"(?:\s+\S+@\S+|\s+[+\d][\d\s().-]+)?\s+(?:is\s+no\s+longer|isn't\s+\w+\s+any\s?more|is\s+not\s+\w+\s+any\s?more"
    r"|doesn't\s+work\s+any\s?more|is\s+(?:out\s+of\s+date|outdated|wrong|invalid|disconnected))"
    r"|^I\s+(?:no\s+longer|don't)\s+(?:use|have)\s+(?:that|this|my|the|a)\s+(?:old\s+)?(?P<noun2>email(?:\s+address)?"
    r"|(?:phone|mobile|cell)(?:\s+number)?|number)",
    re.I,
)


def _value(match: re.Match) -> str:
    return next((value for key, value in match.groupdict().items() if value and key.startswith("v")), "").strip()


def clause_retraction(clause: Clause, ctx: RuleContext) -> list[Candidate]:
    """Delete candidates for a clause that takes back an earlier fact; [] when it does not."""
    text, person = clause.text, ctx.person
    if clause.question or clause.uncertain:
        return []
    if (match := _NO_LONGER_LIVE.match(text)) and (place := place_value(_value(match))):
        return [_delete(ctx, "location", f"no longer lives in {place}", "retract.location", value=place)]
    if (match := _NO_LONGER_WORK.match(text)) and (org := org_value(_value(match))):
        return [_delete(ctx, "employer", f"no longer works at {org}", "retract.employer", value=org)]
    if (match := _LEFT_ORG.match(text)) and (org := org_value(match.group("value"))):
        return [_delete(ctx, "employer", f"no longer works at {org}", "retract.employer", value=org)]
    if match := _LEFT_JOB.match(text):
        org = org_value(_value(match)) if _value(match) else None
        rest = f"no longer works at {org}" if org else "left their job"
        return [_delete(ctx, "employer", rest, "retract.employer", value=org),
                _delete(ctx, "job_title", "no longer has their previous job title", "retract.job_title",
                        confidence=0.8)]
    if match := _NO_LONGER_DIET.match(text):
        return [_delete(ctx, "diet", f"is no longer {_value(match).lower()}", "retract.diet", value=_value(match))]
    match = _NO_LONGER_JOB.match(text)
    if match and (job := _value(match)) and job.split()[-1].lower() in lexicon.JOB_HEADS:
        article = match.group("a1") or match.group("a2")
        return [_delete(ctx, "job_title", f"is no longer {article} {job}", "retract.job_title", value=job)]
    if (match := _NO_LONGER_LIKE.match(text)) and (key := object_key(_value(match))):
        content = rewrite_first_person(text, person)
        return [ctx.candidate(content, confidence=0.85, rule="retract.preference", subject=f"preference:{key}",
                              tags=("retraction", "preference"), metadata={"value": key}, action="delete")]
    if match := _CONTACT_GONE.match(text):
        noun = (match.group("noun") or match.group("noun2")).lower()
        subject = "email" if noun.startswith("email") else "phone"
        value = (EMAIL if subject == "email" else PHONE).search(text)
        rest = f"no longer uses {value.group(0) if value else 'their ' + lexicon.SUBJECT_LABELS[subject]}"
        return [_delete(ctx, subject, rest, "retract.contact", value=value.group(0) if value else None,
                        confidence=0.85)]
    return []
