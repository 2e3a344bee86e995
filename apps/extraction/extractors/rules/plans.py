"""Plans with dates ("I'm flying to Tokyo next Friday") and support events the user reports ("I got my refund")."""

import re

from apps.extraction.extractors.base import Candidate
from apps.extraction.extractors.rules import lexicon
from apps.extraction.extractors.rules.context import SUBJECT_ADVERBS as ADV
from apps.extraction.extractors.rules.context import RuleContext
from apps.extraction.extractors.rules.dates import find_dates, leading_date
from apps.extraction.extractors.rules.facts import place_value
from apps.extraction.extractors.rules.person import rewrite_first_person

_AM = r"(?:'m|\s+am)"

# --- Plans with dates ----------------------------------------------------------------------------------
_PLAN_IM = re.compile(rf"^I{_AM}(?P<neg>\s+not)?{ADV}\s+(?P<word>[\w'-]+)", re.I)
_PLAN_WILL = re.compile(r"^I(?:'ll|\s+will|'m\s+going\s+to|\s+am\s+going\s+to|'m\s+planning\s+(?:to|on)"
                        r"|\s+am\s+planning\s+(?:to|on)|\s+plan\s+to|\s+intend\s+to|\s+have\s+to|\s+need\s+to"
                        r"|'ve\s+got\s+to)"
                        r"(?P<neg>\s+not|n't)?\b", re.I)
_PLAN_HAVE = re.compile(r"^I(?:\s+have|'ve\s+got|\s+have\s+got|\s+got)\s+(?:a|an|my|the|another|two|\d+)"
                        r"\s+(?P<rest>.+)$", re.I)
_PLAN_MY = re.compile(r"^(?:my|our|(?P<the>the))\s+(?P<thing>(?:[\w'-]+\s+){0,3}?[\w'-]+)\s+(?:is|are|'s|was|were"
                      r"|will\s+be|has\s+been|got|starts|begins|ends|expires|renews|runs\s+out|finishes)"
                      r"(?P<neg>\s+not|n't)?\b", re.I)
# "the lease ends on 30 June": in the customer's words, "the" lease is theirs when it is a thing an account holds.
_THEIR_THINGS = frozenset("policy contract subscription plan membership lease tenancy booking reservation flight cruise "
                          "trip cover warranty trial term loan mortgage insurance renewal appointment visit installation "
                          "fix deal hearing completion closing exchange surgery operation procedure wedding exam interview "
                          "viewing inspection survey handover tribunal mediation consultation date deadline".split())
_ADDRESSES_ASSISTANT = re.compile(r"\byou(?:r|rs)?\b", re.I)
_VAGUE_OBJECT = re.compile(r"\b(?:it|that|this|them|those|these)\b", re.I)
_PLAN_STATES = frozenset("off away out on in at due scheduled booked busy unavailable back visiting going".split())
_MOVING = re.compile(rf"^I{_AM}{ADV}\s+(?:moving|relocating)\s+to\s+(?P<place>.+)$", re.I)
_MY_THINGS_ELSEWHERE = frozenset("name email phone number favourite favorite birthday job role title pronouns".split())


# After "getting" or "having" (which mostly report the moment: "I'm getting an error"), an event of the user's life.
_LIFE_EVENT = re.compile(r"\s+(?:(?:married|engaged|divorced|remarried|bapti[sz]ed|christened)\b"
                         r"|(?:a\s+baby|twins|(?:an?\s+|my\s+)?(?:[\w-]+\s+){0,2}?(?:surgery|operation|procedure|transplant"
                         r"|replacement|reconstruction|c-section|caesarean|scan|biopsy|treatment|chemo(?:therapy)?)"
                         r"|(?:a|my)\s+(?:wedding|party|celebration|housewarming|christening|graduation)\b))", re.I)


def _plans(ctx: RuleContext, text: str) -> list[Candidate]:
    if _ADDRESSES_ASSISTANT.search(text):
        return []  # "I'll call you tomorrow", "I'll send you the file on Monday": this conversation, not a plan
    statement = text
    if leading := leading_date(text):  # "Next Friday I'm flying to Tokyo"
        statement = text[leading.end:].lstrip(" ,")
    confidence = 0.0
    if match := _PLAN_IM.match(statement):
        word = match.group("word").lower()
        life_event = _LIFE_EVENT.match(statement, match.end("word"))  # "I'm getting married", not "getting an error"
        if not match.group("neg") and (word not in lexicon.NOT_PLANS or life_event) and (
                word.endswith("ing") or word in _PLAN_STATES):
            confidence = 0.8
    elif match := _PLAN_WILL.match(statement):
        vague = _VAGUE_OBJECT.search(statement)  # "I'll check it out tomorrow"
        confidence = 0.0 if match.group("neg") or vague else 0.75
    elif match := _PLAN_HAVE.match(statement):
        head_words = re.findall(r"[\w'-]+", match.group("rest").lower())[:4]
        confidence = 0.75 if any(word.rstrip("s") in lexicon.EVENT_NOUNS for word in head_words) else 0.0
    elif match := _PLAN_MY.match(statement):
        thing = match.group("thing").lower().split()
        theirs = not match.group("the") or thing[-1] in _THEIR_THINGS
        if theirs and not match.group("neg") and not _MY_THINGS_ELSEWHERE.intersection(thing):
            confidence = 0.75
            if match.group("the"):  # "the lease ends ..." -> "The user's lease ends ..."
                start = text.find(statement) + match.start("the")
                text = f"{text[:start]}my{text[start + 3:]}"
    if not confidence:
        return []
    dates = [mention for mention in find_dates(text, ctx.reference) if not mention.past and not _since(text, mention)
             and not _day_gone(mention, ctx.reference)]
    moving = _MOVING.match(statement)
    if not dates and not moving:
        return []
    metadata = dates[0].metadata() if dates else {}
    if moving and (place := place_value(moving.group("place"))):
        metadata["value"] = place
    if not dates:
        confidence = 0.65
    return [ctx.candidate(rewrite_first_person(text, ctx.person), memory_type="episode", confidence=confidence,
                          rule="plan", tags=("plan",), metadata=metadata)]


def _since(text: str, mention) -> bool:
    """"down since Saturday night": the date an ongoing state began, not something to come."""
    return re.search(r"\b(?:since|from)\s+(?:last\s+|this\s+)?$", text[:mention.start], re.I) is not None and \
        not re.search(r"\b(?:until|till|to)\b", text[mention.end:], re.I)


def _day_gone(mention, reference) -> bool:
    """A day before the message's own: "my broadband was down on Monday" reports, it plans nothing."""
    return reference is not None and mention.precision == "day" and mention.day is not None and (
        mention.end_day or mention.day) < reference


# --- Support outcomes the user reports ("I got my refund") ----------------------------------------------
_RECEIVED = re.compile(rf"^I(?:'ve|\s+have)?{ADV}\s+(?:got|received|gotten)\s+(?:my|the|a|an)\s+(?:new\s+)?"
                       r"(?P<what>refund|replacement|credit|voucher|package|parcel|order)\b", re.I)
_NOT_RECEIVED = re.compile(r"^I\s+(?:still\s+)?(?:haven't|have\s+not|never|didn't|did\s+not)(?:\s+yet)?\s+(?:received"
                           r"|receive|got|get|gotten)\s+(?:my|the|a|an|any)\s+(?P<what>[\w-]+)", re.I)


_CHARGED = re.compile(r"^(?:I|my\s+(?:card|account|bank\s+account))\s+(?:was|got|has\s+been|have\s+been|'ve\s+been)"
                      r"\s+(?:double[- ]charged|charged\s+twice|overcharged|charged\s+(?:again|incorrectly|wrongly)"
                      r"|billed\s+twice|double[- ]billed)\b", re.I)


def _user_outcomes(ctx: RuleContext, text: str) -> list[Candidate]:
    if _CHARGED.match(text):
        return [ctx.candidate(rewrite_first_person(text, ctx.person), memory_type="episode", confidence=0.8,
                              rule="support.user.billing_issue", tags=("support",), metadata={"kind": "issue"})]
    match = _RECEIVED.match(text) or _NOT_RECEIVED.match(text)
    if not match:
        return []
    kind = "received" if match.re is _RECEIVED else "not_received"
    return [ctx.candidate(rewrite_first_person(text, ctx.person), memory_type="episode", confidence=0.8,
                          rule=f"support.user.{kind}", tags=("support",),
                          metadata={"kind": kind, "item": match.group("what").lower()})]


PLAN_RULES = (_plans, _user_outcomes)
