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
from apps.extraction.extractors.rules.dates import MONTHS, WEEKDAYS, find_dates
from apps.extraction.extractors.rules.facts import org_value, place_value
from apps.extraction.extractors.rules.identifiers import identifier_kind, identifiers
from apps.extraction.extractors.rules.people import contact_named, pronoun_fits, someones_detail
from apps.extraction.extractors.rules.person import rewrite_first_person
from apps.extraction.extractors.rules.preferences import object_key
from apps.extraction.extractors.rules.text import MAX_CLAUSE_CHARS, Clause, split_clauses, strip_filler, topic_words

_POLITE = (r"^(?:please\s+|kindly\s+)?(?:(?:(?:can|could|would|will)\s+you|you\s+can|you\s+may)\s+(?:please\s+|kindly\s+)?)?"
           r"(?:also\s+|just\s+)?(?:please\s+|kindly\s+)?")
_REMEMBER = re.compile(
    _POLITE + r"(?P<verb>remember|memori[sz]e|keep\s+in\s+mind|bear\s+in\s+mind|don't\s+forget|do\s+not\s+forget"
    r"|never\s+forget|make\s+a\s+note|take\s+note|note|save|store|flag|put\s+(?:a\s+)?note"
    r"|write\s+(?:(?:it\s+)?down|(?:in|on|into)\s+(?:my|the|our)\s+(?:profile|file|notes?|records?|account))"
    r"|add\s+(?:to|on|in)\s+(?:my|the|our)\s+(?:profile|file|notes?|records?|account))\b"
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
    r"|profile))?(?:\s+(?:completely|entirely|altogether|for\s+good))?(?:\s+as\s+(?:an?\s+|my\s+)?(?:authori[sz]ed\s+)?"
    r"(?:contact|user|account\s+holder|admin|signatory|driver|member)s?)?$"
    # "I'd rather you didn't keep my address"
    r"|^I(?:'d|\s+would)\s+(?:rather|prefer(?:\s+it\s+if)?)\s+you\s+(?:didn't|did\s+not)\s+(?:keep|store|hold|have|save)"
    r"\s+(?P<what7>.+)$"
    # "I no longer want my partner Alex listed as a contact"
    r"|^I\s+(?:no\s+longer|don't|do\s+not)\s+want\s+(?P<what9>.+?)\s+(?:listed|named|kept|included|on\s+(?:file|record"
    r"|the\s+account|my\s+account))(?:\s+as\s+.+|\s+on\s+.+)?$"
    # "my old email j.doe@example.com should be removed", "his number can be deleted now"
    # "can you make sure my date of birth isn't stored?"
    r"|^(?:(?:please|can\s+you|could\s+you|would\s+you)\s+)?make\s+sure\s+(?:that\s+)?(?P<what11>.+?)\s+(?:isn't|is\s+not"
    r"|aren't|are\s+not|doesn't\s+get|don't\s+get|never\s+gets?)\s+(?:stored|kept|saved|held|recorded|on\s+(?:file|record))\b.*$"
    # "Chloe shouldn't be on my account anymore", "my brother doesn't need to be listed any more"
    r"|^(?P<what10>(?:my|our)\s+[\w -]{1,30}?|(?-i:[A-Z][\w-]*)(?:\s+(?-i:[A-Z][\w-]*)){0,2})\s+(?:shouldn't|should\s+not"
    r"|doesn't\s+need\s+to|does\s+not\s+need\s+to|no\s+longer\s+needs\s+to|needn't|mustn't|must\s+not)\s+be\s+"
    r"(?:on|in|listed|named|kept)\s+(?:on\s+|in\s+)?(?:my|the|your|our)\s+(?:account|records?|file|profile|contacts?)\b.*$"
    r"|^(?P<what8>(?:(?:my|our|the|his|her|their)\b|(?-i:[A-Z][\w-]*)(?:\s+(?-i:[A-Z][\w-]*)){0,2}'s\s).+?)"
    r"\s+(?:should|can|must|needs\s+to|has\s+to|could)\s+(?:be\s+)?"
    r"(?:removed|deleted|erased|forgotten|taken\s+off|wiped|purged|come\s+off|come\s+out)\b.*$",
    re.I,
)
_RECORDS = re.compile(r"\s+(?:from|off|in|on)\s+(?:your|the|my|our)\s+(?:(?:authori[sz]ed|emergency|account)\s+)?"
                      r"(?:records?|files?|system|database|notes|memory|account|profile|list|contacts?|users?)\b.*$"
                      r"|\s+on\s+(?:file|record)\b.*$|\s+(?:any\s?more|any\s+longer)$"
                      r"|\s+as\s+(?:an?\s+|my\s+)?(?:authori[sz]ed\s+)?(?:contact|user|account\s+holder|admin|signatory|driver"
                      r"|member)s?$",
                      re.I)
_TRAILING_POLITENESS = re.compile(r"(?:,?\s+(?:please|thanks|thank\s+you|for\s+me|now|too|as\s+well|entirely|completely"
                                  r"|altogether|for\s+good|permanently))+$", re.I)
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
# A detail named by the business it is with or for: "my BT landline", "my Vodafone mobile" (the user's own, named by its
# provider), "the Vireo billing address" (a kind of address the business is billed at). One word, never a possessive
# ("my Nan's phone number") and never two ("the Sarah Jones delivery address" may be a person's).
_OWNER_NAMED = re.compile(
    r"^(?:(?:my|our)\s+(?-i:[A-Z][A-Za-z&.-]*[a-zA-Z])(?!['\u2019])\s+(?P<own>(?:(?:home|work|office|business|personal)\s+)?"
    r"(?:landline|mobile|phone|cell|e-?mail)(?:\s+(?:number|address))?)"
    r"|(?:the|that)\s+(?-i:[A-Z][A-Za-z&.-]*[a-z])(?!['\u2019])\s+(?P<kind>(?:billing|shipping|delivery|postal|invoice|invoicing"
    r"|work|office|business)\s+(?:address|e-?mail(?:\s+address)?|phone(?:\s+number)?|landline(?:\s+number)?)))\s*$", re.I)
_NAMED_DETAIL = re.compile(r"^(?P<word>[a-z][\w-]{2,})\s+(?P<kind>address|email(?:\s+address)?|e-mail(?:\s+address)?"
                           r"|(?:phone\s+)?number)$")
_SELF_QUALIFIERS = frozenset("old current previous saved new last expired dead closed cancelled canceled former ex"
                             .split())
_BEFORE_NOW = frozenset("old previous former ex expired dead closed cancelled canceled".split())
_FORGET_WHERE = re.compile(r"^where\s+I\s+(?P<verb>live|'m\s+from|am\s+from|work)\b", re.I)
_FORGET_PREFERENCE = re.compile(r"^(?:my|the)\s+preference\s+(?:for|about|on)\s+(?P<obj2>.+)$", re.I)


def sentence_command(sentence: str, clauses: list[Clause], ctx: RuleContext,
                     clause_rules: Callable[[Clause, RuleContext], list[Candidate]]) -> list[Candidate] | None:
    """Candidates for a sentence (split into `clauses`) holding a remember/forget command, or None when it holds none.

    A forget request may share its sentence with other clauses ("Please delete my email address, I don't want
    you keeping it", "remove my old number, my new one is ..."): the request is read from its own clause and the
    other clauses are read as usual, so a privacy request is never lost to phrasing.
    """
    if (new := _NEW_THING.search(sentence)) and _OLD_ONE.search(sentence):  # "my new number is X, delete the old one"
        sentence = _OLD_ONE.sub(lambda old: f"my {old.group('old')} {new.group('noun')}", sentence)
        clauses = split_clauses(sentence)
    text = strip_filler(sentence).rstrip(" .!?")
    match = _REMEMBER.match(text)
    if match and not _FORGET.match(text):
        return _remember_command(text, match, ctx, clause_rules)
    whole = forget_request(text)
    found = _forget(whole, ctx, clause_rules) if whole else []
    if found:  # "delete my home address and my email"
        # what the sentence says besides: "delete my old email, the new one is a@b.com", "..., my email is a@b.com"
        said = _new_value_after(whole) + [clause for clause in clauses[1:] if not (clause.question or clause.uncertain)
                 and forget_request(clause.text) is None and _HAS_VERB.search(clause.text)]
        if len(clauses) == 1 and (rest := text.partition(whole)[2].lstrip(" ,;")) and "," in text.partition(whole)[2][:2] and (
                forget_request(rest) is None and _HAS_VERB.search(rest) and not _new_value_after(whole)):
            said.append(Clause(text=rest, question=False, uncertain=False, hedged=False))  # "..., use a@b.com from now on"
        return found + [candidate for clause in said for candidate in clause_rules(clause, ctx)
                        if candidate.action == "add"]
    if erase_it := _ERASE_IT.search(text):  # "stop sending to my work email and delete it"
        if found := _antecedent_forgotten(text[:erase_it.start()], ctx, clause_rules):
            return found
    parsed = _clause_forgets(clauses, ctx, clause_rules)
    if parsed is not None and any(candidate.action == "delete" for candidate in parsed):
        return parsed
    if loose := _loosely_asked_to_forget(sentence.strip().rstrip(" .!?"), ctx, clause_rules):
        said = _said_before_request(sentence.strip())  # "my new email is a@b.com so you can delete the old one"
        return [candidate for clause in (split_clauses(said) if said else []) if not (clause.question or clause.uncertain)
                for candidate in clause_rules(clause, ctx) if candidate.action == "add"] + loose + [
            candidate for clause in clauses if not (clause.question or clause.uncertain)
            for candidate in clause_rules(clause, ctx) if candidate.action == "delete"
            and candidate.subject not in {forget.subject for forget in loose}]
    return parsed


_ALSO = re.compile(r"^(?:and\s+)?(?P<what>(?:my|our|his|her|their|(?-i:[A-Z][\w-]*)(?:\s+(?-i:[A-Z][\w-]*)){0,2}'s)\s+.+?)"
                   r"\s+(?:too|as\s+well|also)$", re.I)


_OLD_ONE = re.compile(r"(?:the|my|our|that)\s+(?P<old>old|previous|former|other)\s+one", re.I)
_NEW_THING = re.compile(r"\b(?:my|our|the)\s+new\s+(?P<noun>(?:[\w-]+\s+)?(?:number|address|e-?mail(?:\s+address)?|mobile"
                        r"|phone|card|account|name|surname|plan|one))\b", re.I)


def _clause_forgets(clauses: list[Clause], ctx: RuleContext, clause_rules) -> list[Candidate] | None:
    """The forget requests in the clauses of the sentence, with the other clauses read as usual; None for none.
    "Remove him from the family plan, and you can forget his email as well": the second clause is the one that asks
    for something known to go, so every clause that asks is read, not only the first."""
    asked: dict[int, list[Candidate]] = {}
    nouns = []
    requested = False
    for index, clause in enumerate(clauses):
        what = forget_request(clause.text)
        if what is None and requested and (also := _ALSO.match(strip_filler(clause.text).rstrip(" .!"))):
            what = also.group("what")  # "take Sam off the account, his email too": the email is asked to go too
        if what is None:
            continue
        requested = True
        named = _named_before(clauses[:index]) if _DEICTIC.fullmatch(what) else None
        if named:  # "and the work email, please take it out from my file": "it" is the work email
            what = named
        if _DEICTIC.fullmatch(what):
            if not _RECORDS_VERB.search(clause.text):
                if not asked:
                    return None  # "forget it", "never mind": not a request about stored data
                continue
            before = ", ".join(other.text for other in clauses[:index])
            if index and (named_thing := _loosely_asked_to_forget(before, ctx, clause_rules) or (
                    _antecedent_forgotten(before, ctx, clause_rules))):
                asked[index] = named_thing  # "there's no need to keep my passport number, please delete it"
                nouns.append(None)
                break
            forget = _delete(ctx, None, "asked to forget what they had just said", "retract.forget")
            forget.metadata["refers_back"] = True
            asked[index] = [forget]
        else:  # "get rid of my landline number, it's been cut off": what comes before the comma
            asked[index] = _forget(what, ctx, clause_rules) or (
                _forget(what.split(", ", 1)[0], ctx, clause_rules) if ", " in what else [])
            if ", " in what and asked[index]:  # "delete my old email, the new one is a@b.com"
                asked[index] += [candidate for said in _new_value_after(what) for candidate in clause_rules(said, ctx)
                                 if candidate.action == "add"]
            for piece in clause.text.split(", ")[1:]:  # "take Sam off the account, his email too"
                if also := _ALSO.match(strip_filler(piece).rstrip(" .!")):
                    asked[index] += _forget(also.group("what"), ctx, clause_rules)
        nouns.append(_forgotten_noun(what))
        if asked[index]:
            break  # one request per sentence: what follows it is read as usual
    if not asked:
        return None
    noun = next((noun for noun in reversed(nouns) if noun), None)
    found = []
    for position, other in enumerate(clauses):
        if position in asked:
            found += asked[position]  # in sentence order: "my number is X, but take it off my file" forgets X
        elif not (other.question or other.uncertain):
            if noun:  # "remove my old number, my new one is ...": "one" is the noun just forgotten
                other = dataclasses.replace(other, text=_NEW_ONE.sub(rf"\g<1> {noun} ", other.text))
            found += clause_rules(other, ctx)
    return found


# A request to forget in words the grammar above does not parse ("that old Hotmail address, bin it please", "I'd like
# my date of birth removed from your system", "there's no need to keep my work email"): a request marker, a verb
# that takes data away (or keeps it, negated), and a thing the sentence names that can be forgotten.
_ASKING_TO = re.compile(r"\b(?:please|pls|plz|kindly|can\s+you|could\s+you|would\s+you|will\s+you|I'd\s+like|I\s+would"
                        r"\s+like|I\s+want|I\s+need|make\s+sure|you\s+can|could\s+(?:my|the|that)\b)"
                        r"|^(?:\W*(?:and|also|oh|so|ok|okay)\b[\s,]*)*(?:take|get|remove|delete|erase|wipe|forget|scrub|purge"
                        r"|drop|bin|clear|strike|cross)\b", re.I)
_TAKES_AWAY = re.compile(r"\b(?:forget|delete[ds]?|remove[ds]?|erase[ds]?|wipe[ds]?|purge[ds]?|scrub(?:bed)?|bin(?:ned)?"
                         r"|ditch(?:ed)?|drop(?:ped)?|clear(?:ed)?\s+out|get\s+rid\s+of|(?:take|taken|get|got|strike|struck"
                         r"|cross|crossed)\s+(?:[\w'-]+\s+){0,5}?off)\b", re.I)
_NOT_KEPT = re.compile(r"\b(?:don't|do\s+not|no\s+need\s+to|not\s+need\s+to|no\s+(?:point|sense|reason)(?:\s+in)?"
                       r"|(?:prefer|rather)\s+you\s+(?:did\s+not|didn't|not)|stop|no\s+longer\s+want\s+you\s+to"
                       r"|don't\s+want\s+you\s+to|(?:can|could|would|will)\s+you\s+(?:please\s+)?not|please\s+not)\s+(?:\w+\s+){0,2}?(?:keep|keeping|store|storing|hold|holding|save|saving"
                       r"|retain|retaining|record|recording|have)\b(?:\s+on\s+to\b|\s+onto\b)?(?!\s+\w+ing\b)|\bdon't\s+want\s+(?:my|our)\b[^.]*\bon\s+(?:your|the)"
                       r"\s+(?:records?|file|system)\b", re.I)
_OWN_DOING = re.compile(r"^(?:I|we)(?:'ve|\s+have)?\s+(?:just\s+|already\s+)?(?:deleted|removed|erased|cleared|dropped"
                        r"|binned|wiped)\b", re.I)
_THING_START = re.compile(r"\b(?:my|our|the|that|this|any\s+record\s+of\s+my|any\s+notes\s+(?:about|on)\s+my)\s+(?=\w)",
                          re.I)


def _loosely_asked_to_forget(text: str, ctx: RuleContext, clause_rules) -> list[Candidate]:
    taking = _TAKES_AWAY.search(text)
    verb = taking if taking and _ASKING_TO.search(text) else _NOT_KEPT.search(text)
    if _OWN_DOING.match(text) or verb is None:
        return []
    if values := [value for value in forgotten_values(_request_scope(text, verb)) if is_forgettable_value(value)]:
        return [_delete(ctx, None, f"asked to forget {value}", "retract.forget", value=value) for value in values]
    phrase = verb.group(0)
    if inner := _TAKE_OFF.match(phrase):  # "get my old email off your system": the object sits inside
        if not RECORDS_AFTER.match(text[verb.end():]):
            return []  # "take my name off the waiting list" is not about what is known of them
        if inner.group("object"):
            return _thing_forgotten(inner.group("object"), ctx, clause_rules)
    if _A_MESSAGE.search(text):
        return []  # "delete the email I sent earlier": a message, not their address
    place = _TAKEN_FROM.search(text[verb.end():])
    if place and not RECORDS_AFTER.match(" " + place.group("place")):
        return []  # "remove my email from the newsletter", "my address from the label": not what is known of them
    after = _OBJECT_END.split(text[verb.end():], maxsplit=1)[0]
    if after.strip() and not _DEICTIC_START.match(after.strip()):
        return _thing_forgotten(after, ctx, clause_rules)  # "please delete my medical condition ..."
    # "that old address, bin it", "I want my number taken off", "I don't want my address on your records"
    return (_thing_forgotten(phrase, ctx, clause_rules) if verb.re is _NOT_KEPT else []) or _thing_forgotten(
        text[:verb.start()], ctx, clause_rules, last=True)


# Where the request ends and a statement begins: "delete my parents' address, my uncle is my contact now, 07700 ...",
# and where a statement ends and the request begins: "my new number is 07700 900 111, please delete the old one".
_INSTEAD_USE = re.compile(r"[,;]\s+(?:and\s+|but\s+|just\s+|please\s+)?(?=(?:use|try|call|ring|text|e-?mail|contact|reach"
                          r"|send|write)\b)", re.I)
_STATEMENT_START = re.compile(r"[,;]\s+(?=(?:and\s+|but\s+)?(?:my|our|I|I'm|I've|we|we're|he|she|his|her|their|they"
                              r"|use|try|call|ring|text|e-?mail|contact|reach|send|write)\b)",  # ", use my office number ..."
                              re.I)
_REQUEST_START = re.compile(r"[,;]\s+|\s+(?:so|and|but|then)\s+(?=(?:you|please|pls|can|could|would|will|I'd|I\s+want)\b)",
                            re.I)


_NEW_VALUE_SAID = re.compile(r"\b(?:new|correct|right|current|updated)\b[^,;]*?\b(?:is|are|'s)\b", re.I)


def _new_value_after(what: str) -> list[Clause]:
    """The new value said after the thing to forget: "my old email, the new one is a@b.com" -> "my new email is
    a@b.com"."""
    noun = _forgotten_noun(what.split(", ", 1)[0])
    return [Clause(text=re.sub(r"^the\s+", "my ", _NEW_ONE.sub(rf"\g<1> {noun} ", piece) if noun else piece, flags=re.I),
                   question=False, uncertain=False, hedged=False)
            for piece in what.split(", ")[1:] if _NEW_VALUE_SAID.search(piece)]


def _said_before_request(text: str) -> str | None:
    """The statement a sentence makes before its request to forget ("my new email is a@b.com" in "..., so you can
    delete the old one"), or None when the request points back at it ("my old email is a@b.com, bin it")."""
    verb = _TAKES_AWAY.search(text) or _NOT_KEPT.search(text)
    starts = [match for match in _REQUEST_START.finditer(text, 0, verb.start())] if verb else []
    if not starts or _DEICTIC_START.match(text[verb.end():].strip()):
        return None
    return text[:starts[-1].start()]


def _request_scope(text: str, verb: re.Match) -> str:
    """The part of `text` that the request (its verb at `verb`) is about: its own clause, and what comes before it
    back to the last statement only when it points back ("that old address x@y.com, bin it")."""
    after = _STATEMENT_START.search(text, verb.end())
    end = after.start() if after else len(text)
    starts = [match.end() for match in _REQUEST_START.finditer(text, 0, verb.start())]
    if starts and not _DEICTIC_START.match(text[verb.end():].strip()):
        return text[starts[-1]:end]
    return text[:end]


def _thing_forgotten(words: str, ctx: RuleContext, clause_rules, *, last: bool = False) -> list[Candidate]:
    """The first (or `last`) thing `words` name that can be forgotten, read longest first: "my old mobile number"."""
    starts = list(_THING_START.finditer(words))
    if not starts and (name := re.match(r"\s*(?-i:[A-Z][\w'-]+)(?:\s+(?-i:[A-Z][\w'-]+)){0,2}", words)):
        # "no need to keep Chloe as a contact": someone called by name
        return [candidate for candidate in _forget_one(name.group(0).strip(), ctx, clause_rules)
                if candidate.metadata.get("person")]
    if last:  # the user's own thing first: "my date of birth for that age check, don't keep it" is the date of birth
        starts = [*[m for m in reversed(starts) if m.group(0).lower().startswith(("my", "our"))],
                  *[m for m in reversed(starts) if not m.group(0).lower().startswith(("my", "our"))]]
    for match in starts:
        opening = match.group(0).lower()
        phrase = ("my " + words[match.end():]) if opening.startswith("any") else words[match.start():]
        tokens = phrase.split()
        for length in range(min(len(tokens), 6), 1, -1):
            found = _forget_one(" ".join(tokens[:length]).rstrip(" ,.;:!?"), ctx, clause_rules)
            if found and all(candidate.subject or candidate.metadata.get("person") for candidate in found):
                return found
    return []


_TAKE_OFF = re.compile(r"^(?:take|taken|get|got|strike|struck|cross|crossed)\s+(?P<object>.*?)\s*off$", re.I)
# What is known of the customer, after "from"/"off": "your records", "the system", "my account", "your contacts".
RECORDS_AFTER = re.compile(r"^\s*(?:(?:your|the|my|our)\s+(?:records?|files?|system|database|notes|account|profile"
                           r"|details|books|contacts?)\b|$|[,.;!?])", re.I)
_OBJECT_END = re.compile(r"\b(?:from|out\s+of|off|at|to|into|in|on|for|as|because|since|so|but|please|now|anymore)\b|[,;]",
                         re.I)
_TAKEN_FROM = re.compile(r"\b(?:from|off|out\s+of)\s+(?P<place>.+)$", re.I)
_A_MESSAGE = re.compile(r"\b(?:last|previous|earlier|first|other)\s+(?:e-?mail|message|text)\b"
                        r"|\b(?:e-?mail|message|text)\s+(?:I|we)\s+(?:just\s+|already\s+)?(?:sent|wrote|forwarded)\b", re.I)
_DEICTIC_START = re.compile(r"^(?:it|that|this|them|those|these)\b", re.I)


def is_forgettable_value(value: str) -> bool:
    """An email address, or a number long enough to be a phone or an identifier (not "the 0161 number")."""
    return bool(EMAIL.fullmatch(value)) or sum(char.isdigit() for char in value) >= 6 or bool(
        re.fullmatch(r"[A-Z]{1,5}-?\d[\w-]{2,}", value))


_ERASE_IT = re.compile(rf"(?:,\s*|\s+)(?:and|then|so)\s+(?:please\s+)?(?:{_ERASE_VERBS})\s+(?:it|that|them)\b", re.I)
_OWN_PHRASE = re.compile(r"\b(?:my|our)\s+(?=\w)", re.I)
_POINTED_PHRASE = re.compile(r"\b(?:that|this|the)\s+(?=\w)", re.I)


def _antecedent_forgotten(before: str, ctx: RuleContext, clause_rules) -> list[Candidate]:
    """What "it" is in "... my work email and delete it", "that email is dead now, please remove it": the last "my ..."
    phrase before it that names a thing to forget, else the last "that ..." or "the ..." one ("I only gave my date of
    birth for the age check, please delete it": the date of birth); longest reading first."""
    for phrases in (_OWN_PHRASE, _POINTED_PHRASE):
        for start in reversed([match.start() for match in phrases.finditer(before)]):
            words = before[start:].split()
            for length in range(min(len(words), 5), 1, -1):
                found = _forget_one(" ".join(words[:length]).rstrip(" ,.;"), ctx, clause_rules)
                if found:
                    return found
    if pointed := list(_POINTED_THING.finditer(before)):
        # "you don't need that code anymore, please delete it": that part of the free-form notes naming it ("the code
        # is 8093" out of "There's a gate, the code is 8093, boxes can go by the door"), never a detail with a subject
        candidate = _delete(ctx, None, f"asked to forget the {pointed[-1].group('thing').lower()}", "retract.forget")
        candidate.metadata.update(topic=topic_words(pointed[-1].group("thing")), notes_only=True, cut=True)
        return [candidate]
    return []


# Only a detail kept to be used ("that code", "that door entry code", "that lockbox combo"): "that booking", "this week",
# "that charge" are not notes' parts to cut, whatever "delete it" asks.
_POINTED_THING = re.compile(r"\b(?:that|this)\s+(?:[a-z-]+\s+){0,2}?(?P<thing>code|pin|passcode|password|combination|combo)\b",
                            re.I)


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


_LEADING_LINK = re.compile(r"^(?:(?:and|also|plus|then|so)\b[\s,]*)+", re.I)


def forget_request(text: str) -> str | None:
    """What a clause asks to have forgotten ("my email address"), or None when it asks nothing of the kind."""
    text = _TRAILING_POLITENESS.sub("", strip_filler(text).rstrip(" .!?"))
    text = _LEADING_LINK.sub("", text)  # "..., and you can forget his email as well"
    match = _FORGET.match(text)
    if not match and ", " in text:  # "take the house number off completely, it's being disconnected"
        match = _FORGET.match(_TRAILING_POLITENESS.sub("", text.split(", ", 1)[0]))
    if not match:
        return None
    what = next(value for key, value in match.groupdict().items() if key.startswith("what") and value)
    what = _INSTEAD_USE.split(what, maxsplit=1)[0]  # "delete my mobile, use my office number ... instead"
    what = _RECORDS.sub("", _TRAILING_POLITENESS.sub("", what.strip()))
    return _TRAILING_POLITENESS.sub("", what).strip() or None


_ON_RECORD = re.compile(r"^(?:on|in|to)\s+(?:my|the|your)\s+(?:profile|file|account|record|records|notes)\s*", re.I)


_OWN_CLAUSE = re.compile(r"^(?:(?:I|I'm|I've|I'd|we|we're|we've|we'd)\s+\w+|(?:my|our)\s+[\w' -]{1,40}?\s+(?:is|are|has|have)\b)",
                         re.I)


def _remember_command(text: str, match: re.Match, ctx: RuleContext, clause_rules) -> list[Candidate] | None:
    body = match.group("body")
    if _REMEMBER_REJECT.match(body) or len(body.split()) < 2:
        return None
    verb = match.group("verb").lower()
    after_verb = _ON_RECORD.sub("", text[match.end("verb"):].strip())  # "save on my profile that ..."
    if verb in ("save", "store", "note") and not re.match(r"^(?:that\b|[:,-])", after_verb) and not _OWN_CLAUSE.match(
            after_verb):
        return None  # "save the file", "note the time" are not memory requests; "note that ..." / "save: ..." are,
        # and so is "note we've a very nervy rescue greyhound": a statement of theirs follows
    confidence = 0.85 if verb in ("note", "take note", "make a note", "save", "store") else 0.95
    # "remember that <clause>" announces a statement, whatever its verb ("invoices must go to finance").
    announced = bool(re.match(r"^(?:that|the\s+fact\s+that)\b|^[:,-]", after_verb, re.I) or _OWN_CLAUSE.match(after_verb))
    return _remember(body, ctx, clause_rules, confidence, announced=announced)


def clause_remember(clause: str, ctx: RuleContext, clause_rules) -> list[Candidate] | None:
    """A request to remember that is one clause of a longer sentence ("There's an upright piano, and please note we've
    a very nervy rescue greyhound, so ..."), or None."""
    text = _LEADING_LINK.sub("", strip_filler(clause)).rstrip(" .!?")
    match = _REMEMBER.match(text)
    if match is None or _FORGET.match(text):
        return None
    return _remember_command(text, match, ctx, clause_rules) or None


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
        if about_user:
            content = rewritten
        elif _IMPERATIVE.match(clause.text):  # "..., so knock quietly": what support is to do
            content = person.sentence(f"asked support to {clause.text[0].lower()}{clause.text[1:]}")
        else:
            content = person.sentence(f"asked to remember that {clause.text}")
        dates = find_dates(clause.text, ctx.reference)
        found.append(ctx.candidate(content, memory_type="episode" if dates else "fact", confidence=confidence,
                                   rule="explicit.remember", tags=("explicit",),
                                   metadata=dates[0].metadata() if dates else {}))
    return found


# An instruction, not a statement: a first word that is no subject, and no verb after it ("knock quietly", "leave
# parcels with the neighbour"; never "invoices must go to finance").
_IMPERATIVE = re.compile(r"^(?!(?:the|a|an|my|our|his|her|their|its|this|that|these|those|there|it|he|she|they|we|i|you"
                         r"|your|all|every|each|some|any|no|nobody|everyone|someone)\b)(?-i:[a-z])[a-z]+\s+"
                         r"(?!(?:must|should|is|are|was|were|has|have|had|need|needs|can|could|will|would|go|goes|get"
                         r"|gets|come|comes|take|takes)\b)\w", re.I)
_LIST_BREAK = re.compile(r"(?<!\s)(?:\s*,\s*(?:and\s+)?|\s+(?:and|&|as\s+well\s+as|plus)\s+)(?=(?:my|the|our|that)\b)",
                         re.I)  # (?<!\s): a match starts once per whitespace run, not at each of its characters
_BARE_LIST_BREAK = re.compile(r"(?<!\s)(?:\s*,\s*(?:and\s+)?|\s+(?:and|&|plus)\s+)", re.I)


def forgotten_things(what: str, ctx: RuleContext) -> list[Candidate]:
    """The deletes a thing named as removed asks for ("my landline", "the card ending 4821", "Marta as a contact"), read
    as the customer's own request to forget it would be; nothing for what names no memory."""
    return [candidate for candidate in _forget(_RECORDS.sub("", what.strip()), ctx, lambda *_: [])
            if candidate.action == "delete"]


def _forget(what: str, ctx: RuleContext, clause_rules) -> list[Candidate]:
    """Deletes for "my email and my home address": each listed thing on its own."""
    found = _forget_one(what, ctx, clause_rules)
    if found:
        return found
    parts = _LIST_BREAK.split(what)
    owner = re.match(r"^(?:my|our|the)\s+", what, re.I)
    if len(parts) == 1 and owner:  # "my email address and phone number": the first "my" for each
        parts = [part if index == 0 else owner.group(0) + part for index, part in enumerate(_BARE_LIST_BREAK.split(what))]
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


def _contact_forgotten(what: str, ctx: RuleContext) -> list[Candidate]:
    """"Take my partner off the account", "remove Sam Keller from my contacts": the contact and what names them."""
    if (named := contact_named(what) or _contact_meant_by(what, ctx)) is None:
        return []
    relation, name = named
    if relation and not name and not _ABOUT_DATA.search(ctx.sentence) and not (
            _OFF_THE_ACCOUNT.search(ctx.sentence) and not _AS_A_USER.search(ctx.sentence)):
        return []  # "take my husband off the account as a user" changes who may act, it does not erase who he is
    known_names = {said for _, known in ctx.people if known for said in (known.casefold(), known.casefold().split()[0])}
    one_of_theirs = bool(name) and name.casefold() in known_names
    if relation is None and (len(name.split()) < 2 and not (_CONTACT_CONTEXT.search(ctx.sentence) or one_of_theirs)
                             or ctx.person.known and name.casefold() in ctx.person.known.casefold()):
        # a first name alone is someone where the request is about contacts, or one of the user's people ("please
        # remove Tomasz" after "my brother Tomasz is my emergency contact"); never the user
        return []
    rest = f"asked to forget their {relation}" + (f" {name}" if name else "") if relation else f"asked to forget {name}"
    candidate = _delete(ctx, f"contact:{relation}" if relation else None, rest, "retract.forget", value=name)
    candidate.metadata["person"] = name or relation
    return [candidate]


def _contact_meant_by(pronoun: str, ctx: RuleContext) -> tuple[str | None, str | None] | None:
    """Whom "remove him" / "take her off" means: the contact the message named just before, if the pronoun fits them;
    never a contact the message does not name ("Our cleaner Maria has left us. Please remove her." is not the mum)."""
    pronoun = {"him": "his", "her": "her"}.get(pronoun.strip().lower())
    if pronoun is None or not ctx.last_named or not pronoun_fits(pronoun, ctx.last_named[0]):
        return None
    return ctx.last_named


# "take my wife off the account": she is no longer one of the account's people; "... as an authorised user" only
# changes what she may do.
_OFF_THE_ACCOUNT = re.compile(r"\b(?:off|from)\s+(?:my|the|our|your)\s+(?:account|contacts?|records?|file|profile)\b", re.I)
_AS_A_USER = re.compile(r"\bas\s+(?:an?\s+|my\s+)?(?:(?:authori[sz]ed|additional|secondary|second|named)\s+)?"
                        r"(?:user|admin|administrator|signatory|driver|card\s*holder|member)s?\b", re.I)
# "remove the backup contact", "scrap my second driver": someone known by the part they play on the account.
_ROLE = re.compile(r"^(?:my|our|the)\s+(?P<role>(?!(?:contact|email|e-mail|phone|mobile|main|old|new|current|same|other)\b)"
                   r"[\w-]+(?:\s+[\w-]+)?\s+(?:contact|driver|traveller|traveler|signatory|account\s+holder|cardholder"
                   r"|card\s+holder|key\s*holder))$", re.I)


def _role_forgotten(what: str, ctx: RuleContext) -> list[Candidate]:
    """"Remove the backup contact": the memories naming someone as that, whoever they are."""
    if (match := _ROLE.match(what.strip())) is None:
        return []
    role = " ".join(match.group("role").lower().split())
    return [_delete(ctx, None, f"asked to forget their {role}", "retract.forget", value=role)]


_ABOUT_DATA = re.compile(r"\b(?:forget|delete|erase|wipe|purge|scrub|details|information|info|data|records?|file)\b", re.I)
_CONTACT_CONTEXT = re.compile(r"\b(?:contacts?|authori[sz]ed|account\s+holder|signatory|users?|admins?|members?|drivers?"
                              r"|listed|named)\b|\b(?:on|off|from)\s+(?:my|the|our)\s+account\b", re.I)


def _someones_details(what: str, ctx: RuleContext) -> list[Candidate]:
    """"Gareth Pryce's details": everything about him; "her mobile number" (Beatriz's): that detail of hers only."""
    if (someone := someones_detail(what, ctx.sentence)) is None:
        return []
    who, detail = someone
    whose = f"their {who}'s" if who.islower() else f"{who}'s"  # a relation ("wife") or a name
    if detail is None:
        candidate = _delete(ctx, None, f"asked to forget {whose} details", "retract.forget", value=who)
    else:
        label = {"phone": "phone number", "email": "email address", "address": "address"}[detail]
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
    if contact := _contact_forgotten(what, ctx) or _role_forgotten(what, ctx):
        return contact
    if len(split_clauses(what)) == 1 and not _NEW_VALUE_SAID.search(what) and (
            values := forgotten_values(what)):  # whatever memory holds the value
        return [_delete(ctx, None, f"asked to forget {value}", "retract.forget", value=value) for value in values]
    if match := _FORGET_WHERE.match(what):
        subject = "employer" if match.group("verb").lower() == "work" else "location"
        label = lexicon.SUBJECT_LABELS[subject]
        return [_delete(ctx, subject, f"asked to forget their {label}", "retract.forget")]
    if (owned := _OWNER_NAMED.match(what)) and (found := _forget_one(
            f"my {owned.group('own')}" if owned.group("own") else f"the {owned.group('kind')}", ctx, clause_rules)):
        return found  # "my BT landline": the landline; "the Vireo billing address": the billing address
    if match := _FORGET_SUBJECT.match(what):
        noun = " ".join(match.group("noun").lower().split())
        qualifiers = [word.lower() for word in re.findall(r"\w+", what[match.start("noun") - 30 if match.start("noun")
                      > 30 else 0:match.start("noun")]) if word.lower() in _QUALIFIER_WORDS]
        qualifier = next((word for word in qualifiers if word not in _SELF_QUALIFIERS), None)
        subject = lexicon.SUBJECT_NOUNS.get(noun) or _identifier_subject(noun)
        if subject:
            label = lexicon.SUBJECT_LABELS.get(subject, noun)
            label = f"{qualifier} {label}" if qualifier and not label.startswith(qualifier) else label
            if qualifier:
                subject = qualified_detail_subject(subject, qualifier)  # "my delivery address": the shipping address
            candidate = _delete(ctx, subject, f"asked to forget their {label}", "retract.forget")
            if qualifier:
                candidate.metadata["qualifier"] = qualifier
            if _BEFORE_NOW.intersection(qualifiers):
                candidate.metadata["old"] = True  # "delete my old number": what was on file, not one given now
            return [candidate]
        if (named := _NAMED_DETAIL.match(noun)) and named.group("word") not in lexicon.COMMON_WORDS:
            # "delete the posteo address": the detail known by a word of its value (its provider, its town)
            word = named.group("word")
            return [_delete(ctx, None, f"asked to forget their {word} {named.group('kind')}", "retract.forget", value=word)]
        if (vague := _VAGUE_TAIL.match(" ".join(match.group("noun").split()))) and not _NEVER_MIND.search(
                ctx.sentence or what):  # "forget the Outlook thing, it's working now": no request about data
            return _statement_forgotten(vague.group("topic"), ctx, clause_rules)
    if (note := _NOTE_ABOUT.match(what)) and (own := re.match(r"(?:my|our)\s+(?P<thing>[\w-]+(?:\s+[\w-]+)?)$",
                                                                 note.group("topic").strip(), re.I)):
        # "forget what I said about my diabetes": what the statement of it would have stored
        if found := _statement_forgotten(own.group("thing"), ctx, clause_rules):
            return found
    topic = re.split(r"[,;]|\s+(?:because|since|as|so|but|it's)\b", note.group("topic"))[0] if (
        note) and not re.match(r"(?:my|our)\b", note.group("topic"), re.I) else ""
    if len(words := topic_words(topic)) >= 2:
        # "remove the note about he lost his job": the notes holding every word of it
        said = rewrite_first_person(topic, ctx.person)
        candidate = _delete(ctx, None, f"asked to forget the note about {said}", "retract.forget")
        candidate.metadata["topic"] = words
        return [candidate]
    if place := _PLACE_ADDRESS.match(what):  # "the old Elm Road address": whatever memory names the place
        return [_delete(ctx, None, f"asked to forget the {place.group('place')} address", "retract.forget",
                        value=place.group("place"))]
    if (named := NAMED_THING.match(what)) and is_thing_name(named.group("name"), ctx):
        # "remove the Amex from my profile": whatever memory names it
        said = re.sub(r"^(?:my|our)\b", "their", what, flags=re.I)
        return [_delete(ctx, None, f"asked to forget {said}", "retract.forget", value=named.group("thing"))]
    if note and (own := re.match(r"(?:my|our)\s+(?P<thing>[\w-]+(?:\s+[\w-]+)?)$", note.group("topic").strip(), re.I)) and (
            words := topic_words(own.group("thing"))) and not lexicon.COMMON_WORDS.intersection(words) and not (
            _subject_noun(own.group("thing"))):  # "my medical condition" is the health subject, read elsewhere
        # "remove the note about my surgery": the free-form notes holding its words, however few
        said = re.sub(r"^The\b", "the", rewrite_first_person(note.group("topic"), ctx.person))
        candidate = _delete(ctx, None, f"asked to forget the note about {said}", "retract.forget")
        candidate.metadata.update(topic=words, notes_only=True)
        return [candidate]
    return []  # "forget it", "delete my account": not a memory we can name


def _subject_noun(thing: str) -> str | None:
    """The subject a noun names ("medical condition", "my usual pharmacy"'s "pharmacy"), or None."""
    thing = thing.casefold()
    return next((subject for noun, subject in lexicon.SUBJECT_NOUNS.items()
                 if thing == noun or thing.endswith(f" {noun}")), None)


_PLACE_ADDRESS = re.compile(r"^(?:the|my|our|that)\s+(?:(?:old|previous|former|last)\s+)?(?P<place>(?-i:[A-Z][\w'-]*)"
                            r"(?:\s+(?-i:[A-Z][\w'-]*)){0,3})\s+(?:address|house|flat|place|property)$", re.I)
_NOTE_ABOUT = re.compile(r"^(?:(?:the|that|my|any|your)\s+(?:notes?|bit|part|comment|entry|info(?:rmation)?)\s+"
                         r"(?:about|regarding|saying|that\s+says)"
                         r"|(?:what|anything|everything)\s+I\s+(?:said|told\s+you|mentioned|wrote)\s+(?:about|regarding))"
                         r"\s+(?:(?:the\s+)?fact\s+(?:that\s+)?)?(?P<topic>.+)$", re.I)
# "the Amex", "my Netflix add-on", "the Galaxy Tab S9": a thing the customer has, called by its name (the thing,
# "Netflix add-on", is what a memory must name to go: not every memory naming Netflix).
NAMED_THING = re.compile(r"^(?i:the|my|our|your|that)\s+(?P<thing>(?P<name>(?-i:[A-Z][\w&'!+-]+)(?:\s+(?-i:[A-Z0-9][\w&'!+-]*)){0,3})"
                          r"(?:\s+(?:card|account|subscription|membership|add-on|addon|integration|device|tablet|laptop"
                          r"|phone|car|van|policy|plan|note|booking|licence|license))?)$")
_NOT_THING_NAMES = frozenset((*WEEKDAYS, *MONTHS, "i", "it", "we", "you"))


def is_thing_name(name: str, ctx: RuleContext) -> bool:
    """A name of the customer's thing, not a day or month ("the Monday slot") nor the customer's own name."""
    first = name.split()[0].casefold()
    return first not in _NOT_THING_NAMES and len(name) >= 3 and not (
        ctx.person.known and first in ctx.person.known.casefold().split())


# "take the asthma thing off my profile", "delete the gluten stuff": the fact a word stands for, found by reading it
# in the statements that would have stored it ("I have asthma"); a word no such statement gives a subject is left.
_VAGUE_TAIL = re.compile(r"^(?P<topic>[\w-]+(?:\s+[\w-]+)?)\s+(?:thing|stuff|bit|business|note|info|information|detail"
                         r"|details|entry|part)$", re.I)
_TOPIC_STATEMENTS = ("I have {}", "I use {}")
_NEVER_MIND = re.compile(r"\b(?:fixed|sorted|working|works|resolved|solved|never\s+mind|ignore|nevermind|no\s+longer\s+an?\s+"
                         r"(?:issue|problem))\b", re.I)


def _statement_forgotten(topic: str, ctx: RuleContext, clause_rules) -> list[Candidate]:
    for template in _TOPIC_STATEMENTS:
        text = template.format(topic)
        stated = clause_rules(Clause(text=text, question=False, uncertain=False, hedged=False), ctx)
        subjects_stated = [candidate.subject for candidate in stated if candidate.action == "add" and candidate.subject
                           and not candidate.subject.startswith("identifier:")]
        if subjects_stated:
            return [_delete(ctx, subject, f"asked to forget that {rewrite_first_person(text, ctx.person, named=True)}",
                            "retract.forget") for subject in subjects_stated]
    return []


_QUALIFIER_WORDS = frozenset(_QUALIFIERS.split("|"))
# The user's contact details that come in kinds: how a qualifier names the kind, and the kind's subject.
_DETAIL_KINDS = {
    subjects.PHONE: (phone_kind, subjects.phone_subject),
    subjects.EMAIL: (email_kind, subjects.email_subject),
    subjects.ADDRESS: (address_kind, subjects.address_subject),
}


def qualified_detail_subject(subject: str, qualifier: str) -> str:
    """"phone" qualified by "office" -> "phone:work", "address" by "delivery" -> "address:shipping"; any other subject,
    or a qualifier that names no kind, unchanged."""
    if subject in _DETAIL_KINDS and (kind := _DETAIL_KINDS[subject][0](qualifier)):
        return _DETAIL_KINDS[subject][1](kind)
    return subject
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
        shape = EMAIL if subject == "email" else PHONE
        later = shape.search(text, match.end())
        if later and re.search(r"[,;]", text[match.end():later.start()]):
            return []  # "my email is wrong on the booking, it should be a@x.com": a change, which the contact rules read
        value = shape.search(text, 0, later.end() if later else match.end())
        rest = f"no longer uses {value.group(0) if value else 'their ' + lexicon.SUBJECT_LABELS[subject]}"
        return [_delete(ctx, subject, rest, "retract.contact", value=value.group(0) if value else None,
                        confidence=0.85)]
    return []
