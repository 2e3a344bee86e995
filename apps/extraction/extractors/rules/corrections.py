"""Corrections: "sorry, I meant Thursday", "actually it's 3 seats, not 5".

A correction names a new value and, often, the old one. It applies to the latest earlier fact of the batch that
holds the old value (or, without one, a value of the same shape: a weekday, a date, a time, a number), which is
rewritten before it is stored; when the old value is in an existing memory instead, that memory is updated.
"""

import re
from dataclasses import replace
from datetime import date

from apps.extraction.extractors.base import Candidate, ExistingMemory
from apps.extraction.extractors.rules.contacts import EMAIL, PHONE
from apps.extraction.extractors.rules.context import RuleContext
from apps.extraction.extractors.rules.dates import (
    MONTH_PATTERN,
    RESOLVED_DATE_NOTE,
    WEEKDAY_PATTERN,
    find_dates,
    with_resolved_date,
)

# Separators are possessive and values bounded: these run on whole sentences of any length, and an overlapping
# "-" run or "not" run would otherwise backtrack cubically (a value longer than 80 characters is refused anyway).
_SORRY = (r"(?:(?:oh|ah|sorry|oops|apologies|my\s+(?:bad|mistake)|(?:(?:also|and)\s+)?(?:a\s+)?correction(?:\s+(?:on|to|for|about)"
          r"\s+(?:the|my|your)\s+[\w-]+(?:\s+address)?)?|wait|no|nope|actually|hang\s+on|scratch\s+that"
          r"|typo|I\s+mean)[\s,.:;!-]++)")
_VALUE = r"[^,;]{1,80}?"
_CORRECTION = re.compile(
    rf"^{_SORRY}*(?:I\s+meant(?:\s+to\s+(?:say|write|type))?|that\s+should\s+(?:be|have\s+been|say|read)"
    r"|it\s+should\s+(?:be|say|read|have\s+been)|make\s+(?:that|it)|I\s+mis(?:typed|spoke|wrote)[\s,;:-]+(?:it's|it\s+is)?"
    rf"|the\s+correct\s+\w+\s+is|correction\s*:)\s+(?P<new>{_VALUE})(?:,?\s+not\s+(?P<old>{_VALUE}))?(?:,.*)?$",
    re.I,
)
# "actually it's 3 seats, not 5" / "sorry, Thursday not Tuesday": a leading apology makes "X, not Y" a correction.
_NOT_BUT = re.compile(
    rf"^{_SORRY}+(?:it's|it\s+is|is|that's|that\s+is|there\s+are|there're|we\s+have|we're|we\s+are|I\s+have|I'm|I\s+am"
    rf"|(?:the|my|our)\s+[\w' -]{{1,30}}?\s+(?:is|are))?\s*(?P<new>{_VALUE}),?\s+not\s+(?P<old>{_VALUE})"
    r"(?:,\s*(?:I|i)\b.*)?$",  # "..., not 14, I typed it wrong"
    re.I,
)
_NOT_THEN = re.compile(rf"^{_SORRY}*not\s+(?P<old>{_VALUE})\s*+[,;:-]++\s*+(?:it's\s+|it\s+is\s+)?(?P<new>{_VALUE})$", re.I)
# "No, sorry, the 30th, the 29th is only when the van comes": a bare value of a known shape after an apology.
_BARE_VALUE = re.compile(rf"^{_SORRY}+(?:the\s+|on\s+the\s+|on\s+|at\s+)?(?P<new>\d{{1,2}}(?:st|nd|rd|th)|(?:next\s+)?"
                         r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|\d{1,2}(?::\d{2})?\s*(?:am|pm))"
                         r"(?P<old>)(?:[,;].*)?$", re.I)
# "Oh dear, I have given you the wrong number, it is 07911 402 767": the wrong value goes unnamed.
_WRONG = re.compile(
    r"(?:^|[,.;!]\s*+)(?:I(?:'ve|\s+have)?\s+(?:given|sent|told|typed)\s+you\s+the\s+wrong\s+[\w-]+"
    r"|(?:that's|that\s+is|that\s+was|it's|it\s+was)\s+the\s+wrong\s+[\w-]+)[\s,;:.-]++(?:sorry[\s,]++)?"
    rf"(?:it's|it\s+is|it\s+should\s+be|the\s+(?:right|correct)\s+one\s+is)\s+(?P<new>{_VALUE})(?P<old>)(?:,.*)?$",
    re.I,
)
_ARTICLE = re.compile(r"^(?:the|a|an|on|at|for|in)\s+", re.I)
_SHAPES = (
    re.compile(rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+{MONTH_PATTERN}\b|\b{MONTH_PATTERN}\s+\d{{1,2}}(?:st|nd|rd|th)?\b",
               re.I),
    re.compile(r"\b\d{1,2}(?:st|nd|rd|th)\b", re.I),
    re.compile(rf"\b(?:next\s+|this\s+)?{WEEKDAY_PATTERN}\b", re.I),
    re.compile(r"\b\d{1,2}(?::\d{2})?\s*(?:am|pm)\b|\b\d{1,2}:\d{2}\b", re.I),
    re.compile(r"(?<![\w+])(?!\d{4}-\d\d-\d\d)(?=\+?(?:[ .-]?\d){7})\+?\d{2,5}(?:[ .-]\d{2,5}){1,4}(?![\w-])"),  # a phone number
    re.compile(r"(?<![\w-])\d+(?:[.,]\d+)?(?![\w-])"),
)


_MID_CORRECTION = re.compile(
    r"^(?P<before>.+?)[,;:]?\s+(?:sorry,?\s+I\s+mean|no\s+sorry|no\s+wait|oops|sorry|wait|I\s+mean|correction|no)[,!:]?\s+"
    r"(?:(?:I\s+meant|it's|it\s+is|make\s+(?:that|it)|should\s+be|that\s+should\s+be)\s+)?(?P<new>[^,;]+?)(?:[,;].*)?$",
    re.I,
)
_NUMBER = re.compile(r"\+?\d[\d\s().-]*\d|\d")


def split_mid_correction(text: str) -> tuple[str, str, str] | None:
    """(the statement, the old value, the new value) of "send it to a@x.com, no sorry, it's b@x.com"."""
    match = _MID_CORRECTION.match(text.strip().rstrip(" .!"))
    if not match:
        return None
    before, new = match.group("before"), match.group("new").strip()
    for shape in (EMAIL, _NUMBER):
        if shape.fullmatch(new) and (olds := shape.findall(before)):
            return before, olds[-1].strip(), new
    return None


# "please make the contract for 9 vans, not 8": a count corrected in passing, without an apology; it applies only to
# a fact that holds the old count of the same thing ("8 vans").
_COUNT_NOT = re.compile(r"\b(?P<new>(?P<count>\d{1,6})\s+(?P<unit>[^\W\d_]{3,20})),?\s+not\s+(?P<old>\d{1,6})(?![\w.,]*\d)",
                        re.I)


_REPORTED = re.compile(r"\b(?:invoices?|quotes?|quoted|says?|said|charged?|charges|charging|billed|bills?|tracking|receipts?"
                       r"|statements?|shows?|showed|shown|listed|lists?|told|letter|email(?:ed)?|confirmation)\b", re.I)


# "Sorry, it is 07911 402 767, the last two digits the other way round": the right phone number after an apology; it
# corrects the latest phone number of the batch.
_RIGHT_NUMBER = re.compile(rf"^{_SORRY}+(?:it's|it\s+is|that's|that\s+is|it\s+should\s+be|the\s+(?:right|correct)\s+"
                           r"(?:one|number)\s+is)\s+(?P<new>\+?\d{2,5}(?:[ .-]\d{2,5}){1,4})(?P<old>)(?:\s*[,;].*)?$",
                           re.I)


# "my email is wrong on the booking, it should be a@x.com", "My mobile 07700 ... is out of date, please change it to
# ...": the detail named wrong, then the right one.
_WRONG_THEN_RIGHT = re.compile(
    r"^(?:(?:oh|and|also|btw|ps)[\s,]+)*(?:the|my|our)\s+(?P<noun>email(?:\s+address)?|e-mail|(?:mobile|phone|cell)(?:\s+number)?"
    r"|number|landline)\b"
    r"[^,;]{0,80}?\b(?:(?:is|was|'s)\s+(?:wrong|incorrect|(?:my\s+|an\s+|the\s+)?old(?:\s+one)?|out\s+of\s+date|outdated"
    r"|not\s+right|a\s+typo)|(?:has\s+|'s\s+)?changed)\b[^,;]{0,60}?"  # "my mobile changed too, new one's ..."
    r"[,;]\s*(?:(?:so|and)\s+)?(?:it\s+should\s+be|it's|it\s+is|(?:the\s+)?(?:right|correct|new)\s+one(?:\s+is|'s)"
    r"|(?:please|pls|can\s+you|could\s+you)?\s*(?:change|update|correct|set)\s+it\s+to|(?:please\s+)?use)\s+(?P<new>\S.*)$",
    re.I)


_WRONG_WORD = re.compile(r"\b(?:wrong|incorrect|old|out\s+of\s+date|outdated|not\s+right|typo|changed)\b", re.I)


def wrong_then_right(text: str) -> str | None:
    """The sentence restated as the customer's current detail ("My email is a@x.com"), or None."""
    match = _WRONG_THEN_RIGHT.match(text.strip().rstrip(" .!")) if _WRONG_WORD.search(text) else None
    if not match:
        return None
    shape = EMAIL if match.group("noun").lower().startswith(("email", "e-mail")) else PHONE
    value = shape.match(match.group("new"))
    return f"My {match.group('noun').lower()} is {value.group(0)}" if value else None


# What a correction of an earlier fact says ("120 people, not 80", "sorry, I meant Thursday", "it should be ..."): a batch
# with none of it needs no earlier memory's text. A bare "not" ("it has not shipped") or "no" is too common to count.
_CORRECTION_CUE = re.compile(r",?\s+not\s+(?:the\s+)?\S*\d|\b(?:actually|sorry|oops|apologies|meant|correction|wrong"
                             r"|mistake|typo|make\s+(?:that|it)|should\s+(?:be|say|read|have\s+been)|mistyped|misspoke"
                             r"|miswrote|scratch\s+that)\b", re.I)


def may_correct(text: str) -> bool:
    """Whether `text` may hold a correction of an earlier fact ("it's 120 people now, not 80")."""
    return bool(_CORRECTION_CUE.search(text))


def correction(text: str, ctx: RuleContext) -> Candidate | None:
    """A marker candidate for a correction sentence; `apply_corrections` consumes it."""
    text = text.strip().rstrip(" .!")
    match = (_CORRECTION.match(text) or _NOT_BUT.match(text) or _NOT_THEN.match(text) or _BARE_VALUE.match(text)
             or _RIGHT_NUMBER.match(text)
             or _WRONG.search(text) or _COUNT_NOT.search(text))
    if not match:
        return None
    new = _ARTICLE.sub("", match.group("new").strip())
    old = _ARTICLE.sub("", (match.group("old") or "").strip())
    if match.re is _COUNT_NOT:
        if _REPORTED.search(text):
            return None  # "your invoice charges us for 9 vans, not 8": what someone else said, not a correction
        old = f"{old} {match.group('unit')}"
    if not new or len(new.split()) > 6 or len(old.split()) > 6:
        return None
    return correction_marker(ctx, new=new, old=old)


def correction_marker(ctx: RuleContext, *, new: str, old: str) -> Candidate:
    marker = ctx.candidate(new, confidence=0.0, rule="correction")
    marker.metadata |= {"correction": {"new": new, "old": old, "id": id(marker),
                                       "reference": ctx.reference.isoformat() if ctx.reference else None}}
    return marker


# "You've got my surname as Smyth, it's Smith", "I thought my card ended in 4412 but it's 4421", "your colleague said
# my plan was Gold but it's actually Silver": a record or a belief of the customer's detail, then the right value.
_RECORDED_THEN_RIGHT = re.compile(
    rf"^{_SORRY}*(?:I\s+(?:thought|assumed|was\s+told)|(?:(?:you|they|it|the\s+[\w-]+(?:\s+[\w-]+)?|your\s+[\w-]+(?:\s+[\w-]+)?)"
    r"(?:'ve|\s+have|\s+has|'s)?\s+(?:got|had|has|have|shows?|showed|shown|lists?|listed|says?|said|puts?|spelt|spelled"
    r"|records?|recorded|registered|wrote|written|typed|printed)))\s+(?:that\s+)?(?P<owner>my|our)\s+"
    r"(?P<noun>(?:[\w-]+\s+){0,2}?[\w-]+)\s+(?:down\s+)?(?P<verb>as|was|is|were|are|ended\s+in|ends\s+in|ending\s+in)\s+"
    r"(?P<old>[^,;]{1,60}?)(?:\s*+[,;]\s*+|\s++)(?:but\s+|and\s+|when\s+)?(?:it's|it\s+is|they're|they\s+are|it\s+should\s+be"
    r"|the\s+(?:right|correct)\s+one\s+is)\s+(?:actually\s+|really\s+|in\s+fact\s+)?(?P<new>[^,;]{1,60}?)(?:\s*[,;].*)?$",
    re.I)
_RECORDED_VERBS = re.compile(r"\b(?:thought|assumed|told|got|had|has|have|shows?|showed|shown|lists?|listed|says?|said|puts?"
                             r"|spelt|spelled|records?|recorded|registered|wrote|written|typed|printed)\b", re.I)


def recorded_then_right(text: str) -> tuple[str, str, str] | None:
    """(the detail restated with the right value, the wrong value, the right one), or None."""
    text = text.strip().rstrip(" .!")
    match = _RECORDED_THEN_RIGHT.match(text) if _RECORDED_VERBS.search(text) else None
    if not match:
        return None
    old, new = _ARTICLE.sub("", match.group("old").strip()), _ARTICLE.sub("", match.group("new").strip())
    if not old or not new or old.casefold() == new.casefold() or len(new.split()) > 6 or len(old.split()) > 6:
        return None
    verb = match.group("verb").lower()
    verb = "ends in" if verb.endswith(" in") else "are" if verb in ("were", "are") else "is"
    return f"{match.group('owner').capitalize()} {match.group('noun')} {verb} {match.group('new').strip()}", old, new


# Metadata of a candidate read from the correcting sentence itself (corrected_statement): kept only when the
# correction it stands beside corrected nothing.
UNLESS_CORRECTED = "unless_corrected"


def corrected_statement(text: str, fix: Candidate) -> str | None:
    """The sentence of a correction as a statement of its own, the apology and the value it rules out taken away:
    "Sorry, the account number is 5520 1188, not 5520 1186" -> "the account number is 5520 1188". When the old value
    was never read (nothing in the batch or on file holds it), the new one must still be."""
    old = fix.metadata["correction"]["old"]
    stated = re.sub(rf"^{_SORRY}+", "", text.strip().rstrip(" .!"), flags=re.I)
    if old:
        stated = re.sub(rf",?\s+not\s+{re.escape(old)}\b.*$", "", stated, flags=re.I)
    return stated if stated != text and len(stated.split()) >= 3 else None


def apply_corrections(candidates: list[Candidate], existing: list[ExistingMemory]) -> list[Candidate]:
    result: list[Candidate] = []
    applied: set[int] = set()
    for candidate in candidates:
        fix = candidate.metadata.get("correction")
        if fix is None:
            beside = candidate.metadata.pop(UNLESS_CORRECTED, None)
            if beside is None or beside not in applied:
                result.append(candidate)
            continue
        index = _latest_holding(result, fix)
        if index is not None:
            result[index] = _corrected(result[index], fix)
            applied.add(fix["id"])
            continue
        if fix["old"]:
            memory = next((memory for memory in existing if _holds(memory.content, fix["old"])
                           and _holds_counted(memory, fix)), None)
            if memory is not None:
                metadata = {"rule": "correction", "corrected": fix["old"]}
                content = _redate(_replace(memory.content, fix["old"], fix["new"]), fix, metadata)
                result.append(replace(candidate, content=content, memory_type=memory.memory_type,
                                      confidence=0.85, action="update", target_memory_id=memory.id,
                                      subject=memory.subject, tags=["correction"], metadata=metadata))
                applied.add(fix["id"])
    return result


def _holds_counted(memory: ExistingMemory, fix: dict) -> bool:
    """Whether a memory holds a bare old number as the correction counts it: "3 rooms, not 2" corrects "2 rooms", never
    the 2 of "The user has 2 dogs" or of "Flat 2"; a bare "3, not 2" only a count the memory is about."""
    if not fix["old"].isdigit():
        return True
    head, _, unit = fix["new"].partition(" ")
    if head.isdigit() and unit.isalpha():
        return _holds(memory.content, f"{fix['old']} {unit}")
    if fix["new"].isdigit():
        return (memory.subject or "").startswith("quantity:")
    return True  # "+7 701 555 2814, not 2841": a value of another shape, which _replace fits to what holds it


def _holds(content: str, value: str) -> bool:
    return bool(re.search(rf"(?<!\w){re.escape(value)}(?!\w)", content, re.I))


def _replace(content: str, old: str, new: str) -> str:
    """`old` replaced by `new` once; "3 seats" replacing "5" in "5 seats" gives "3 seats", not "3 seats seats", and a
    whole phone number replacing its last digits ("07700 900 462, not 426") replaces the number that ends in them, and
    a whole email address the address that starts with the part named ("kw.owusu@posteo.de, not k.owusu")."""
    shape = PHONE if PHONE.fullmatch(new.strip()) else EMAIL if EMAIL.fullmatch(new.strip()) else _shape(new)
    if shape is not None and not shape.fullmatch(old.strip()):
        for value in shape.finditer(content):
            if _holds(value.group(0), old):
                start = value.start() + (value.group(0).startswith("(") and not new.startswith("("))  # "(0770 ..."
                return f"{content[:start]}{new}{content[value.end():]}"
    label = new.rpartition(" ")[0]
    if label and re.search(rf"(?<!\w){re.escape(label)}\s+{re.escape(old)}(?!\w)", content, re.I):
        return re.sub(rf"(?<!\w){re.escape(label)}\s+{re.escape(old)}(?!\w)", lambda _: new, content, count=1,
                      flags=re.I)  # "flat 4, not 14" in "flat 14 Rowan Court": "flat 4 Rowan Court"
    head, _, unit = new.partition(" ")
    if unit and re.search(rf"(?<!\w){re.escape(old)}\s+{re.escape(unit)}(?!\w)", content, re.I):
        old, new = f"{old} {unit}", new
    return re.sub(rf"(?<!\w){re.escape(old)}(?:\s+{re.escape(unit)})?(?!\w)" if unit else
                  rf"(?<!\w){re.escape(old)}(?!\w)", lambda _: new, content, count=1, flags=re.I)


def _shape(value: str) -> re.Pattern | None:
    return next((shape for shape in _SHAPES if shape.fullmatch(value.strip())), None)


def _latest_holding(candidates: list[Candidate], fix: dict) -> int | None:
    """The latest candidate the correction applies to: the customer's own words first ("Actually make it 3" after
    "4 lines on the same tariff" and the agent's "£22 per line" corrects the 4), then anything of the batch."""
    for own_words_only in (True, False):
        if (index := _latest_of(candidates, fix, own_words_only)) is not None:
            return index
    return None


def _agents_words(candidate: Candidate) -> bool:
    metadata = candidate.metadata
    return bool(metadata.get("restated_by_agent")) or str(metadata.get("rule", "")).startswith("support.")


def _latest_of(candidates: list[Candidate], fix: dict, own_words_only: bool) -> int | None:
    shape = None if fix["old"] else _shape(fix["new"])
    for index in range(len(candidates) - 1, -1, -1):
        candidate = candidates[index]
        if candidate.action == "delete" or (own_words_only and _agents_words(candidate)):
            continue
        if fix["old"] and _holds(candidate.content, fix["old"]):
            return index
        if shape is not None and shape.search(RESOLVED_DATE_NOTE.sub("", candidate.content)):
            return index
    return None


def _corrected(candidate: Candidate, fix: dict) -> Candidate:
    content = RESOLVED_DATE_NOTE.sub("", candidate.content)
    if fix["old"]:
        content = _replace(content, fix["old"], fix["new"])
    else:
        shape = _shape(fix["new"])
        content = shape.sub(lambda _: fix["new"], content, count=1)
    metadata = dict(candidate.metadata)
    value = metadata.get("value")
    if isinstance(value, str) and fix["old"] and _holds(value, fix["old"]):
        metadata["value"] = _replace(value, fix["old"], fix["new"])
    metadata["corrected"] = True
    return replace(candidate, content=_redate(content, fix, metadata), metadata=metadata,
                   tags=sorted({*candidate.tags, "correction"}))


def _redate(content: str, fix: dict, metadata: dict) -> str:
    """The corrected content with the date note of its date phrase; `metadata` (updated in place) holds that date
    alone: the old one's keys are dropped first, so a range corrected to a day keeps no end."""
    content = RESOLVED_DATE_NOTE.sub("", content)
    for key in [key for key in metadata if key.startswith("date")]:
        del metadata[key]
    reference = date.fromisoformat(fix["reference"]) if fix.get("reference") else None
    mentions = find_dates(content, reference)
    mention = next((mention for mention in mentions if mention.day), mentions[0] if mentions else None)
    if mention is None:
        return content
    metadata |= mention.metadata()
    return with_resolved_date(content, metadata)
