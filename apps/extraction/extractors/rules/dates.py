"""Date expressions in English ("next Friday", "March 3rd", "from 1 to 15 August"), resolved against a message time.

The text is always kept verbatim; resolution is best effort and only happens when the message has a time.
"next <weekday>" means that weekday in the following calendar week (Monday-based), "on/this <weekday>" the
coming one (today included); a day and month without a year is the next such day, or the last one when
the sentence is in the past tense.
"""

import calendar
import re
from dataclasses import dataclass
from datetime import date, timedelta

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4, "may": 5,
    "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9, "sep": 9, "sept": 9,
    "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}
NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a few": 3, "couple of": 2, "few": 3,
}

_ORD = r"(?:st|nd|rd|th)?"
_DAY = r"(?:[12]\d|3[01]|0?[1-9])"
MONTH_PATTERN = (r"(?:january|february|march|april|may|june|july|august|september|october|november|december"
          r"|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?")
_YEAR = r"(?:19|20)\d{2}"
WEEKDAY_PATTERN = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_NUMBER = r"(?:\d{1,3}|a couple of|a few|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_UNIT = r"(?:days?|weeks?|months?|years?)"
_TO = r"\s*(?:-|to|until|till|through|thru|and)\s*"

_DATE = re.compile(
    rf"\b(?:"
    rf"(?:from\s+|between\s+)?(?:the\s+)?(?P<r1_d1>{_DAY}){_ORD}{_TO}(?:the\s+)?(?P<r1_d2>{_DAY}){_ORD}(?:\s+of)?"
    rf"\s+(?P<r1_m>{MONTH_PATTERN})(?:,?\s+(?P<r1_y>{_YEAR}))?"
    rf"|(?:from\s+|between\s+)?(?P<r2_m>{MONTH_PATTERN})\s+(?P<r2_d1>{_DAY}){_ORD}{_TO}(?P<r2_d2>{_DAY}){_ORD}\b"
    rf"(?:,?\s+(?P<r2_y>{_YEAR}))?"
    rf"|(?:the\s+)?(?P<dm_d>{_DAY}){_ORD}(?:\s+of)?\s+(?P<dm_m>{MONTH_PATTERN})(?:,?\s+(?P<dm_y>{_YEAR}))?"
    rf"|(?P<md_m>{MONTH_PATTERN})\s+(?:the\s+)?(?P<md_d>{_DAY}){_ORD}\b(?:,?\s+(?P<md_y>{_YEAR}))?"
    # "I'm back on the 28th": a day of this month, or of the next once it has gone by
    rf"|the\s+(?P<ord_d>{_DAY})(?:st|nd|rd|th)\b(?!\s+(?:of\s+)?{MONTH_PATTERN})(?!\s*-?\s*(?:floor|storey|story|level|time"
    rf"|attempt|row|seat|place|stop|house|flat|door|gate|grade|year|week|day|anniversary|birthday|century|round|lap)\b)"
    rf"|(?P<iso_y>{_YEAR})-(?P<iso_m>[01]\d)-(?P<iso_d>[0-3]\d)"
    rf"|(?P<numeric>\d{{1,2}}/\d{{1,2}}(?:/\d{{2,4}})?)"
    rf"|(?P<rel>the day after tomorrow|day after tomorrow|tomorrow|tonight|today|yesterday"
    rf"|this (?:morning|afternoon|evening))"
    rf"|(?P<nx_w>next|this|coming|last)\s+(?P<nx_u>{WEEKDAY_PATTERN}|week|weekend|month|year)"
    rf"|in\s+(?P<in_n>{_NUMBER})\s+(?P<in_u>{_UNIT})"
    rf"|(?P<ago_n>{_NUMBER})\s+(?P<ago_u>{_UNIT})\s+ago"
    rf"|(?P<wd>{WEEKDAY_PATTERN})(?!s)"
    rf"|(?P<mo_p>in|this|next|last|during|early|late|mid|end of)\s*-?\s*(?P<mo>{MONTH_PATTERN})"
    rf"(?:\s+(?P<mo_y>{_YEAR}))?"
    rf"|in\s+(?P<yr>{_YEAR})"
    rf"|(?P<holiday>christmas(?:\s+eve|\s+day)?|easter|thanksgiving|new\s+year's(?:\s+eve|\s+day)?|halloween"
    rf"|the\s+holidays)"
    rf")\b",
    re.I,
)
_FIXED_HOLIDAYS = {"christmas": (12, 25), "christmas day": (12, 25), "christmas eve": (12, 24), "halloween": (10, 31),
                   "new year's": (1, 1), "new year's day": (1, 1), "new year's eve": (12, 31)}
_JOIN_RANGE = re.compile(rf"^{_TO}$", re.I)
_RANGE_OPENER = re.compile(r"\b(?:from|between)\s+$", re.I)
# Verbs that put a date in the past ("I moved in January"); "I've scheduled a visit for Thursday" stays ahead.
# "last" only as "last week", "last Monday": "my last day will be 31 July" is ahead.
_PAST_TENSE = re.compile(r"\b(?:was|were|had|did|went|ago|last(?=\s+(?:week|month|year|night|time|weekend|summer|winter"
                         r"|spring|autumn|fall|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b)|yesterday|used\s+to"
                         r"|moved|started|joined|received"
                         r"|ordered|bought|paid|charged|happened|arrived|delivered|visited|got|came|left|lost|broke"
                         r"|returned|cancell?ed|placed|passed\s+away|died|retired|graduated)\b", re.I)
_WEEKDAY_BEFORE_DATE = re.compile(r"^,?\s*(?:the\s+)?$", re.I)


@dataclass(frozen=True)
class DateMention:
    text: str  # verbatim, e.g. "next Friday" or "from 1 to 15 August"
    start: int
    end: int
    past: bool  # "last week", "yesterday", "two days ago"
    day: date | None = None  # resolved start, when the message has a time
    end_day: date | None = None
    precision: str = "day"  # "day" | "week" | "month" | "year"

    def metadata(self) -> dict:
        data = {"date_text": self.text}
        if self.day:
            data["date"] = self.day.isoformat()
            if self.precision != "day":
                data["date_precision"] = self.precision
        if self.end_day:
            data["date_end"] = self.end_day.isoformat()
        return data


# "I've placed a travel notice for Japan from 14 to 28 March", "ordered a replacement for Friday": a date that what was
# done is for, not when it was done.
_FOR_DATE = re.compile(r"\b(?:for|to|until|till|from|between|starting|effective|through)\s+(?:the\s+)?$", re.I)
_RANGE_START = re.compile(r"(?:from|between)\s", re.I)
# Only what puts something in a calendar: "I've had no signal from 2 March" and "I've paid rent from 1 January" report.
_PRESENT_PERFECT = re.compile(r"\b(?:I've|we've|I\s+have|we\s+have|(?:has|have|'s)\s+been)\s+(?:\w+\s+)?(?:placed|booked"
                              r"|scheduled|rescheduled|moved|set|arranged|reserved|ordered|changed|put|extended|updated"
                              r"|added|registered|noted|brought\s+forward|pushed\s+back)\b", re.I)


def find_dates(text: str, reference: date | None) -> list[DateMention]:
    """Date expressions in `text`, resolved against `reference` when given; "from X to Y" becomes one range."""
    past_tense = bool(_PAST_TENSE.search(text))
    done_for = past_tense and bool(_PRESENT_PERFECT.search(text))  # "I've placed ... for": "we went ... from" stays past
    mentions = [_mention(match, reference, past_tense and not (done_for and (_FOR_DATE.search(text[:match.start()])
                                                                             or _RANGE_START.match(match.group(0)))))
                for match in _DATE.finditer(text) if not _ambiguous_may(match) and not _no_one_date(text, match)]
    return _join_ranges(text, mentions, reference)


_DAY_OF_MONTH_BEFORE = re.compile(r"\b(?:on|by|until|till|from|before|after)\s+$", re.I)


def _no_one_date(text: str, match: re.Match) -> bool:
    """A bare "the 28th" that is no one date: "on the 1st of each month" (every month), "the 3rd time" (no "on")."""
    return bool(match.group("ord_d")) and (
        re.match(r"\s+of\s+(?:each|every|the)\b", text[match.end():], re.I) is not None
        or not _DAY_OF_MONTH_BEFORE.search(text[:match.start()]))


_LEADING_OPENER = re.compile(r"(?:from|between)\s+", re.I)
_BETWEEN_DATES = re.compile(rf"{_TO}|,?\s*(?:the\s+)?", re.I)


def leading_date(text: str) -> DateMention | None:
    """The date expression `text` opens with ("Next Friday I'm flying ...", "Thursday, March 6 ..."), unresolved;
    None when it opens with none. The same as find_dates' first mention when that starts the text, but only the
    start is read, so a clause without a leading date costs one failed match."""
    first = _DATE.match(text)  # "from 1 to 15 August" is one match; "from Monday to Friday" two, joined below
    if first is None and (opener := _LEADING_OPENER.match(text)):
        first = _DATE.match(text, opener.end())
    if first is None or _ambiguous_may(first):
        return None
    mentions = [_mention(first, None, False)]
    while len(mentions) < 4:  # the dates right after it may join it: "from Monday to Friday", "Thursday, March 6"
        between = _BETWEEN_DATES.match(text, mentions[-1].end)
        following = _DATE.match(text, between.end())
        if following is None or _ambiguous_may(following):
            break
        mentions.append(_mention(following, None, False))
    mention = _join_ranges(text, mentions)[0]
    return mention if mention.start == 0 else None


def _mention(match: re.Match, reference: date | None, past_tense: bool) -> DateMention:
    day, end_day, precision = _resolve(match, reference, past_tense) if reference else (None, None, "day")
    groups = match.groupdict()
    past = bool(groups["nx_w"] and groups["nx_w"].lower() == "last") or bool(groups["ago_n"]) or (
        (groups["rel"] or "").lower() == "yesterday")
    return DateMention(text=match.group(0), start=match.start(), end=match.end(), past=past, day=day,
                       end_day=end_day, precision=precision)


def _ambiguous_may(match: re.Match) -> bool:
    # "this may take" / "in may" written in lowercase: the modal verb, not the month.
    month = match.group("mo") or match.group("md_m")
    return month == "may" and not match.group("md_d")


def _join_ranges(text: str, mentions: list[DateMention], reference: date | None = None) -> list[DateMention]:
    joined: list[DateMention] = []
    for mention in mentions:
        previous = joined[-1] if joined else None
        if (previous and previous.text.lower() in WEEKDAYS and mention.text.lower() not in WEEKDAYS
                and _WEEKDAY_BEFORE_DATE.match(text[previous.end:mention.start])):
            # "Thursday, March 6": one date, and the calendar date decides; the weekday picks its year
            day, end_day = _year_of_weekday(mention.day, mention.end_day, WEEKDAYS.index(previous.text.lower()),
                                            reference, explicit_year=bool(re.search(r"\b\d{4}\b", mention.text)))
            joined[-1] = DateMention(text=text[previous.start:mention.end], start=previous.start, end=mention.end,
                                     past=mention.past, day=day, end_day=end_day, precision=mention.precision)
            continue
        if (previous and _JOIN_RANGE.match(text[previous.end:mention.start])
                and _RANGE_OPENER.search(text[:previous.start])):
            opener = _RANGE_OPENER.search(text[:previous.start])
            joined[-1] = DateMention(
                text=text[opener.start():mention.end], start=opener.start(), end=mention.end,
                past=previous.past and mention.past, day=previous.day, end_day=mention.end_day or mention.day,
                precision=previous.precision,
            )
            continue
        joined.append(mention)
    return joined


def _year_of_weekday(day: date | None, end_day: date | None, weekday: int, reference: date | None, *,
                     explicit_year: bool = False) -> tuple[date | None, date | None]:
    """`day` moved a year when the weekday says the year it was read in is wrong: on a year when the past tense read
    it as last year's ("I've moved it to Friday 24 April" said on 14 April 2026 is 2026's Friday), back a year when
    a day gone by this year was read as next year's ("your slot on Thursday 12 March", said on 20 March 2026). Any
    other mismatch (a wrong weekday in "Friday 21 May", or a year said) keeps the date as read."""
    if day is None or reference is None or day.weekday() == weekday or explicit_year:
        return day, end_day
    if day >= reference and day.year != reference.year + 1:
        return day, end_day
    for year in (day.year + 1,) if day < reference else (day.year - 1,):
        try:
            moved = day.replace(year=year)
        except ValueError:  # 29 February
            continue
        if moved.weekday() == weekday:
            try:
                return moved, end_day.replace(year=end_day.year + year - day.year) if end_day else None
            except ValueError:  # the range ends on 29 February
                return day, end_day
    return day, end_day


def _number(word: str) -> int:
    word = word.lower()
    return int(word) if word.isdigit() else NUMBER_WORDS.get(word, 1)


def _month(word: str) -> int:
    return MONTHS[word.lower().rstrip(".")]


def _add_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    return date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))


def _calendar_day(year: int | None, month: int, day: int, reference: date, past_tense: bool) -> date | None:
    try:
        if year:
            return date(year, month, day)
        candidate = date(reference.year, month, day)
    except ValueError:
        return None
    if past_tense and candidate > reference:
        return _calendar_day(reference.year - 1, month, day, reference, past_tense)
    if not past_tense and candidate < reference:
        return _calendar_day(reference.year + 1, month, day, reference, past_tense)
    return candidate


def _resolve(match: re.Match, reference: date, past_tense: bool) -> tuple[date | None, date | None, str]:
    g = match.groupdict()
    year = lambda key: int(g[key]) if g.get(key) else None  # noqa: E731
    for prefix in ("r1", "r2"):
        if g[f"{prefix}_d1"]:
            # The range's end decides its year: "from 14 to 28 March", said on 20 March, is under way, not next year's.
            month = _month(g[f"{prefix}_m"])
            end = _calendar_day(year(f"{prefix}_y"), month, int(g[f"{prefix}_d2"]), reference, past_tense)
            start = _calendar_day(end.year if end else year(f"{prefix}_y"), month, int(g[f"{prefix}_d1"]), reference,
                                  past_tense)
            return start, end, "day"
    if g["dm_d"]:
        return _calendar_day(year("dm_y"), _month(g["dm_m"]), int(g["dm_d"]), reference, past_tense), None, "day"
    if g["md_m"]:
        return _calendar_day(year("md_y"), _month(g["md_m"]), int(g["md_d"]), reference, past_tense), None, "day"
    if g["ord_d"]:
        day = int(g["ord_d"])
        for months in ((0, -1, -2) if past_tense else (0, 1, 2)):  # a 31st skips the months without one
            first = _add_months(reference.replace(day=1), months)
            if day <= calendar.monthrange(first.year, first.month)[1]:
                candidate = first.replace(day=day)
                if (candidate <= reference) if past_tense else (candidate >= reference):
                    return candidate, None, "day"
        return None, None, "day"
    if g["iso_y"]:
        try:
            return date(int(g["iso_y"]), int(g["iso_m"]), int(g["iso_d"])), None, "day"
        except ValueError:
            return None, None, "day"
    if g["rel"]:
        rel = g["rel"].lower()
        offset = 2 if "after" in rel else 1 if rel == "tomorrow" else -1 if rel == "yesterday" else 0
        return reference + timedelta(days=offset), None, "day"
    if g["nx_w"]:
        return _relative_unit(g["nx_w"].lower(), g["nx_u"].lower(), reference)
    if g["in_n"]:
        return _shift(reference, _number(g["in_n"]), g["in_u"].lower()), None, "day"
    if g["ago_n"]:
        return _shift(reference, -_number(g["ago_n"]), g["ago_u"].lower()), None, "day"
    if g["wd"]:
        ahead = (WEEKDAYS.index(g["wd"].lower()) - reference.weekday()) % 7
        if past_tense:
            return reference - timedelta(days=(reference.weekday() - WEEKDAYS.index(g["wd"].lower())) % 7), None, "day"
        return reference + timedelta(days=ahead), None, "day"
    if g["mo"]:
        month, prefix = _month(g["mo"]), g["mo_p"].lower()
        if g["mo_y"]:
            return date(int(g["mo_y"]), month, 1), None, "month"
        if prefix == "next":
            later = month > reference.month
        elif prefix == "last":
            later = month >= reference.month  # means: a year back
        else:
            later = month > reference.month if past_tense else month >= reference.month
        if prefix == "last" or (past_tense and prefix != "next"):
            year_ = reference.year - 1 if later else reference.year
        else:
            year_ = reference.year if later else reference.year + 1
        return date(year_, month, 1), None, "month"
    if g["yr"]:
        return date(int(g["yr"]), 1, 1), None, "year"
    if g["holiday"]:
        month_day = _FIXED_HOLIDAYS.get(" ".join(g["holiday"].lower().split()))
        if month_day:
            return _calendar_day(None, *month_day, reference, past_tense), None, "day"
    return None, None, "day"  # numeric dates like 3/5 are ambiguous between US and European order


def _shift(reference: date, count: int, unit: str) -> date:
    if unit.startswith("day"):
        return reference + timedelta(days=count)
    if unit.startswith("week"):
        return reference + timedelta(weeks=count)
    if unit.startswith("month"):
        return _add_months(reference, count)
    return _add_months(reference, 12 * count)


def _relative_unit(which: str, unit: str, reference: date) -> tuple[date, None, str]:
    step = {"next": 1, "last": -1}.get(which, 0)
    monday = reference - timedelta(days=reference.weekday())
    if unit in WEEKDAYS:
        target = WEEKDAYS.index(unit)
        if which == "next":
            return monday + timedelta(weeks=1, days=target), None, "day"
        if which == "last":
            back = (reference.weekday() - target) % 7 or 7
            return reference - timedelta(days=back), None, "day"
        return reference + timedelta(days=(target - reference.weekday()) % 7), None, "day"
    if unit == "week":
        return monday + timedelta(weeks=step), None, "week"
    if unit == "weekend":
        return monday + timedelta(weeks=step, days=5), None, "week"
    if unit == "month":
        return _add_months(reference.replace(day=1), step), None, "month"
    return date(reference.year + step, 1, 1), None, "year"


# --- The resolved date in a memory's content -------------------------------------------------------------
_ISO_PHRASE = re.compile(r"(?:19|20)\d{2}-\d{2}(?:-\d{2})?")


def resolved_date_note(metadata: dict) -> str | None:
    """How a resolved date reads in content: "2026-03-20", "2026-08-01 to 2026-08-15", "2026-04" (a month),
    "week of 2026-03-16"; None when nothing was resolved. `metadata` is DateMention.metadata()."""
    day = metadata.get("date")
    if not day:
        return None
    precision = metadata.get("date_precision", "day")
    phrase = str(metadata.get("date_text", "")).lower()
    if precision == "month":
        return day[:7]
    if precision == "year":
        return day[:4]
    if precision == "week" and "weekend" not in phrase:
        return f"week of {day}"
    end = metadata.get("date_end")
    return f"{day} to {end}" if end and end != day else day


def with_resolved_date(content: str, metadata: dict) -> str:
    """`content` with the date its phrase resolves to right after the phrase: "... lease ends on 30 June
    (2026-06-30)", "... next Friday (2026-03-20)".

    Unchanged when nothing was resolved, when the phrase is the ISO date itself ("2026-03-03"), when the phrase is not
    in the content, or when the date is already there (so calling it twice is harmless). A phrase with its year ("3
    March 2026", "03/05/2026") gets the note too: every date is then searchable in one form.
    `metadata` is a candidate's metadata holding DateMention.metadata(). Every rule that keeps a date phrase in
    its content goes through here (the rules extractor applies it to all its candidates).
    """
    phrase = metadata.get("date_text")
    note = resolved_date_note(metadata)
    if not phrase or not note or _ISO_PHRASE.fullmatch(phrase.strip()):
        return content
    index = content.find(phrase)
    if index < 0:
        index = content.lower().find(phrase.lower())
    if index < 0:
        return content
    end = index + len(phrase)
    if f"({note})" in content:
        return content
    return f"{content[:end]} ({note}){content[end:]}"


# The note with_resolved_date adds, for code that rewrites a date phrase and must drop the old note first.
RESOLVED_DATE_NOTE = re.compile(r"\s\((?:week of )?(?:19|20)\d{2}(?:-\d{2}(?:-\d{2})?)?"
                                r"(?: to (?:19|20)\d{2}-\d{2}-\d{2})?\)")
