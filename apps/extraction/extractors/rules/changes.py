"""Changes that name the value they replace: "Tuesdays instead of Wednesdays", "from Monthly Pro to Annual Pro",
"the number is now 120 people, not 80", "we're stopping the Friday pickups", "the Tuesday one is cancelled".

A free-form note holding the old value ("The user would like Mondays, Wednesdays and Thursdays") has no subject a new
value could replace, so the change's own memory carries the old value (metadata "retires") and consolidation
supersedes the earlier notes that name it (`names_old_value`). Only values of a shape that names one thing are taken:
a weekday, a date, a number (kept with its unit or currency), a capitalised name; never a common word ("instead of
emailing" is a standing preference, not a replaced value).
"""

import re
from typing import NamedTuple

from apps.extraction.extractors.rules.dates import MONTH_PATTERN, WEEKDAY_PATTERN

_DAY = rf"{WEEKDAY_PATTERN}s?"
_DATE = rf"\d{{1,2}}(?:st|nd|rd|th)?\s+{MONTH_PATTERN}|{MONTH_PATTERN}\s+\d{{1,2}}(?:st|nd|rd|th)?"
_AMOUNT = r"(?:[A-Z]{0,3}[$€£¥])?\d+(?:[.,]\d+)*(?:\s*(?:am|pm|k|%))?"
_NOT_UNIT = r"(?!(?:and|or|to|a|an|the|for|from|in|on|at|with|instead|not|now|per|each|every|of)\b)"
_UNIT = rf"(?:\s+{_NOT_UNIT}(?-i:[a-z][a-z-]{{2,20}}))?"
_NAME = r"(?-i:[A-Z][\w&'-]*(?:\s+(?:[A-Z][\w&'-]*|\d[\w-]*)){0,3})"
_NUMBERED = r"(?-i:[a-z]{3,12}\s+\d{1,4}[A-Z]?)(?!\w|[.,:]\d)"  # "table 7", "room 12", "unit 5B"
_VALUE = rf"(?:the\s+|my\s+|our\s+|your\s+)?(?P<old>{_DATE}|{_DAY}|{_NUMBERED}|{_AMOUNT}{_UNIT}|{_NAME})"
_AFTER = r"(?=$|[\s,.;:!?)])"
_CHANGE_VERB = (r"(?:mov|switch|chang|go|going|went|upgrad|downgrad|transferr?|swap|updat|increas|decreas|reduc|rais|lower"
                r"|cut|bump|drop|push|shift|convert)")
_PATTERNS = (
    re.compile(rf"\b(?:instead\s+of|rather\s+than|in\s+place\s+of|replacing)\s+{_VALUE}{_AFTER}", re.I),
    re.compile(rf"\b{_CHANGE_VERB}\w*\b[^.;!?]{{0,60}}?\bfrom\s+{_VALUE}\s+(?:down\s+|up\s+|over\s+|back\s+)?to\b", re.I),
    re.compile(rf"\b(?:down|up)\s+(?:to\s+)?[^.;!?,]{{1,30}}?\bfrom\s+(?:the\s+)?(?P<old>{_AMOUNT}(?!\s+{MONTH_PATTERN}){_UNIT}){_AFTER}", re.I),
    # "now 120 people, not 80" / "Thursday, not Tuesday": a new value beside the old one it is not any more
    re.compile(rf"(?:\d|{_DAY}|{_DATE})[\w ]{{0,20}}?,?\s+(?:and\s+)?not\s+{_VALUE}{_AFTER}(?!\s+(?:yet|now|sure|really))",
               re.I),
    # endings: the old value goes with nothing in its place
    re.compile(rf"\b(?:stop|stopping|stopped|cancel|cancell?ing|cancell?ed|drop|dropping|dropped|end|ending|ended"
               r"|release|releasing|released)"
               rf"\s+(?:the|my|our)\s+"
               rf"(?P<old>{_DAY}|{_DATE}|{_NAME})(?=\s+[a-z])", re.I),
    re.compile(rf"\bthe\s+(?P<old>{_DAY}|{_DATE}|{_NAME})(?:\s+[a-z]+)?\s+(?:one\s+)?(?:is|has\s+been|was|will\s+be)\s+"
               r"(?:cancelled|canceled|dropped|removed|stopped|released|ended|gone)\b", re.I),
)
# A word one of the patterns needs; a sentence without any is not read further.
_MAY_RETIRE = re.compile(r"\b(?:instead|rather|place|replacing|from|not|stop\w*|cancel\w*|drop\w*|end\w*|release\w*"
                         r"|removed|gone)\b", re.I)
_ENDINGS = len(_PATTERNS) - 2  # the last two patterns end a value rather than replace it
_NOT_A_VALUE = re.compile(r"^(?:I|I'm|It|It's|That|This|We|You|They|He|She|Yes|No|OK|Okay|Please|Thanks|Sorry|But|And|So"
                          r"|Now|Then|Also|Just|Maybe|Not|Hi|Hello)$", re.I)
_AMOUNT_VALUE = re.compile(rf"^{_AMOUNT}")
_COUNTED = re.compile(rf"(?<![\w.,])(?P<number>\d+(?:[.,]\d+)*)\s+(?P<unit>{_NOT_UNIT}[a-z][a-z-]{{2,20}})\b")


class Retired(NamedTuple):
    old: str  # "Wednesdays", "80 people", "Monthly Pro"
    new: str | None  # the value of the same kind said to take its place ("Tuesdays", "120 people"), if any


def retired_values(sentence: str) -> list[Retired]:
    """The old values a sentence says are replaced, in order, each once, with the values said to replace them."""
    if not _MAY_RETIRE.search(sentence):
        return []  # every sentence of every message comes here: most name no change at all
    found: list[Retired] = []
    for index, pattern in enumerate(_PATTERNS):
        for match in pattern.finditer(sentence):
            value = match.group("old").strip(" ,.")
            words = value.split()
            if not words or _NOT_A_VALUE.match(words[0]) and len(words) == 1:
                continue
            if _AMOUNT_VALUE.match(value) and not re.search(r"[$€£¥%]|\d\s*[a-z]", value, re.I) and len(words) == 1:
                # a bare number ("120 people, not 80") names something only with the unit said beside the new one
                unit = next((said.group("unit") for said in _COUNTED.finditer(sentence)
                             if said.group("number") != value), None)
                if unit is None:
                    continue
                value = f"{value} {unit}"
            if value not in [retired.old for retired in found]:
                replacing = index < _ENDINGS  # "stopping the Friday pickups, Tuesday only": Friday goes, nothing takes its place
                found.append(Retired(value, _replacement(sentence, value, match.start("old")) if replacing else None))
    return found


def _replacement(sentence: str, old: str, at: int) -> str | None:
    """The value of the old one's kind nearest it in the sentence: a weekday for a weekday, a count of the same
    unit for a count ("now 120 people, not 80"). Names and dates are never swapped in: a note may tell their history."""
    if re.fullmatch(_DAY, old, re.I):
        shape = re.compile(rf"\b{_DAY}\b", re.I)
    elif counted := _COUNTED.fullmatch(old):
        shape = re.compile(rf"(?<![\w.,])\d+(?:[.,]\d+)*\s+{re.escape(counted.group('unit').rstrip('s'))}s?\b")
    else:
        return None
    others = [match for match in shape.finditer(sentence) if not (match.start() <= at < match.end())
              and match.group(0).casefold().rstrip("s") != old.casefold().rstrip("s")]
    nearest = min(others, key=lambda match: abs(match.start() - at), default=None)
    return nearest.group(0) if nearest else None


def _where(content: str, value: str) -> re.Match | None:
    """Where a memory names `value` as `retired_values` took it: a weekday in either number ("Friday" in "pickups
    on Fridays"), a number as a whole number with its unit just after it or its currency before it, a date, a
    numbered thing ("table 7"), a name as whole words in its own case."""
    words = value.split()
    day = re.fullmatch(rf"({WEEKDAY_PATTERN})s?", value, re.I)
    if day:
        return re.search(rf"\b{day.group(1)}s?\b", content, re.I)
    amount = re.match(r"^(?P<currency>[A-Z]{0,3}[$€£¥])?(?P<number>\d+(?:[.,]\d+)*)(?P<rest>.*)$", value)
    if amount:
        number = re.escape(amount.group("number"))
        currency = r"[$€£¥]" if amount.group("currency") else ""
        at = re.search(rf"(?<![\d.,]){currency}{number}(?![\d]|[.,]\d)", content)
        if at is None:
            return None
        rest = amount.group("rest").strip()
        if not rest or currency:
            return at
        unit = rest.split()[0].rstrip("s").casefold()
        return at if re.match(rf"\s*(?:[a-z]+\s+)?{re.escape(unit)}", content[at.end():], re.I) else None
    if re.fullmatch(_DATE, value, re.I) or re.fullmatch(_NUMBERED, value):
        return re.search(rf"(?<![\w-]){re.escape(value)}(?![\w-])", content, re.I)
    if len(words) == 1 and len(value) < 3:
        return None
    return re.search(rf"(?<![\w&-]){re.escape(value)}(?![\w&-])", content)


def names_old_value(content: str, value: str) -> bool:
    """Whether a memory names `value` as an old value, not as the one a change replaces ("... rather than the 2
    year" is the change itself, said before)."""
    return _where(content, value) is not None and value not in [retired.old for retired in retired_values(content)]


def restated_without(content: str, retired: Retired) -> str | None:
    """A note naming an old value said again as things now stand: the new value of the same kind in its place
    ("Mondays, Wednesdays and Thursdays" -> "Mondays, Tuesdays and Thursdays"), or, with none, the old weekday taken
    out of its list ("collections every Tuesday and Friday, with fragile handling" -> "collections every Tuesday,
    with fragile handling"). None when neither can be done: the note goes as a whole."""
    for _ in range(3):  # each place it is named ("on Fridays ... the Friday pickup")
        content = _restated_once(content, retired)
        if content is None or _where(content, retired.old) is None:
            return content
    return None


def _restated_once(content: str, retired: Retired) -> str | None:
    at = _where(content, retired.old)
    if at is None:
        return None
    if retired.new and _where(content, retired.new) is None:  # already there: "Tuesday and Friday" less Friday
        new = retired.new
        if re.fullmatch(_DAY, new, re.I):  # in the number the note said it: "Wednesday" -> "Tuesday"
            new = new.rstrip("sS") + ("s" if at.group(0).lower().endswith("s") else "")
            return content[:at.start()] + new + content[at.end():]
        number = re.match(r"\d+(?:[.,]\d+)*", new)
        return content[:at.start()] + number.group(0) + content[at.end():] if number else None
    if not re.fullmatch(_DAY, retired.old, re.I):
        return None
    before, after = content[:at.start()], content[at.end():]
    day = _DAY
    if re.search(rf"\b{day},\s+$", before, re.I) and re.match(r"\s+and\s+", after):
        return before.rstrip()[:-1] + after  # "Mon, Wed and Thu" less Wed
    if re.search(rf"\b{day}\s+and\s+$", before, re.I):
        head = re.sub(r"\s+and\s+$", "", before)
        head = re.sub(rf"(\b{day}),\s+({day})$", r"\1 and \2", head, flags=re.I)  # "Mon, Wed" -> "Mon and Wed"
        return head + after
    if re.search(rf"\b{day},\s+$", before, re.I):
        return before.rstrip()[:-1] + after
    if re.match(rf"(?:,\s+|\s+and\s+)(?={day}\b)", after, re.I):
        return before + re.sub(r"^(?:,\s+|\s+and\s+)", "", after)
    return None
