"""Facts that only make sense as a dialogue: a customer's bare answer to the agent's question, and the agent
restating what it knows about the customer.

"Can I take your full name?" / "Siobhán Ní Bhriain, card ends 4471." states a name without saying "my name is":
the question names the slot, the answer fills it. The agent's "Your address is now 118 Kirkstall Lane" is read
as the customer's own "My address is now ...", with less confidence, by the same rules as a customer's clause.
"""

import re

from apps.extraction.extractors.rules import lexicon
from apps.extraction.extractors.rules.addresses import address_value
from apps.extraction.extractors.rules.contacts import EMAIL, MY_RELATION, PHONE, PHONE_SHAPED
from apps.extraction.extractors.rules.text import NAME_PARTICLES, Clause

# What an agent's question asks for, in the order the slots are tried on the answer.
_SLOT_QUESTIONS = (
    ("name", re.compile(r"\b(?:your|the(?:\s+[\w-]+){0,2}'s|the)\s+(?:full\s+|first\s+and\s+last\s+)?name\b"
                        r"|\bwho\s+(?:am\s+I|I'm)\s+(?:speaking|talking|chatting)\s+(?:to|with)|\bname\s+(?:and|,)"
                        r"|\bwho\s+should\s+(?:we|I|the\s+\w+)\s+(?:contact|call|ask\s+for)|\bname\s+on\s+the\b", re.I)),
    ("email", re.compile(r"\be-?mail(?:\s+address)?\b", re.I)),
    ("phone", re.compile(r"\b(?:phone|mobile|cell|contact)\s+(?:number)?|\bnumber\s+(?:to|we\s+can)\s+(?:reach|call)"
                         r"|\bbest\s+number\b", re.I)),
    ("address", re.compile(r"\b(?:your|the|new|delivery|shipping|postal|billing|home)\s+address\b|\bpost\s?code\b"
                           r"|\bzip\s+code\b", re.I)),
    # Only theirs, and only a question asking no other date: "When is your son's birthday?", "what date did you
    # order? I'll also need your date of birth" are not answered with the customer's birthday.
    ("birthday", re.compile(r"^(?!.*\b(?:what|which)\s+(?:date|day)\b)(?!.*\bwhen\s+(?:did|was|is|will)\b).*(?:\byour\s+"
                            r"(?:(?![\w-]+'s\b)[\w-]+\s+){0,5}?(?:date\s+of\s+birth|birth\s*date|DOB|birthday)\b"
                            r"|\bwhen\s+were\s+you\s+born\b)", re.I | re.S)),
    ("time", re.compile(r"\b(?:best|good|convenient|preferred)\s+time\s+(?:to|for\s+us\s+to)\s+(?:reach|call|contact|ring"
                        r"|phone|get\s+hold\s+of)\s+you\b|\bwhen\s+(?:is|would\s+be)\s+(?:the\s+|a\s+)?(?:best|good)"
                        r"\s+(?:time\s+)?to\s+(?:reach|call|contact|ring)\s+you\b", re.I)),
)
# "Could you give me your father's name and the delivery address?": the name asked for is not the customer's.
_SOMEONE_ELSES_NAME = re.compile(r"\b(?:your|his|her|their)\s+(?:[\w-]+\s+){0,2}?[\w-]+['\u2019]s\s+(?:full\s+|first\s+"
                                 r"|last\s+)?name\b", re.I)
# "weekdays after 6pm please": an answer that names when, as "please call me ..." for the contact-time rules.
_WHEN_ANSWER = re.compile(r"^(?:(?:any|every)\s*)?(?:weekdays?|weekends?|mornings?|afternoons?|evenings?|lunchtime"
                          r"|mondays?|tuesdays?|wednesdays?|thursdays?|fridays?|saturdays?|sundays?|after|before|between"
                          r"|from|in\s+the|during|around|anytime|any\s+time)\b[^,;.!?]*$", re.I)
_ASKS = re.compile(r"\?|\b(?:can|could|may)\s+I\s+(?:take|have|get|grab|ask\s+for)|\bplease\s+(?:confirm|provide|share"
                   r"|send|tell|give)|\bwhat(?:'s|\s+is)\s+your\b|\b(?:could|can|would)\s+you\s+(?:please\s+)?(?:give|tell"
                   r"|send|confirm|share|provide|let\s+me\s+know)\b|\b(?:I|we)(?:'ll|\s+will|\s+just|'d)?\s+need\b", re.I)
_NAME_ANSWER = re.compile(r"^(?:(?:sure|yes|yeah|ok|okay|of\s+course|certainly|hi|hello)[\s,.!-]+)*(?:it's\s+|it\s+is\s+"
                          r"|this\s+is\s+|I'm\s+|I\s+am\s+)?(?P<name>(?!(?i:it's|it|this|that|I'm|I|my)\b)"
                          r"[^\W\d_][\w'.-]*(?:\s+[^\W\d_][\w'.-]*){1,5})\s*$")
_GIVEN_NAME_ANSWER = re.compile(r"^(?:(?:sure|yes|yeah|ok|okay|hi|hello)[\s,.!-]+)*(?:it's\s+|it\s+is\s+|this\s+is\s+|I'm\s+)?"
                                r"(?P<name>(?!(?:It|This|That|I|My|Yes|No|Sure)\b)[^\W\d_a-z][^\W\d_A-Z]{2,}(?:-[^\W\d_][^\W\d_A-Z]+)?)\s*$")
# "New place is 5 Station Mews, ...", "the new flat's at ...": the answer may name what the address is of.
_ADDRESS_ANSWER = re.compile(r"^(?:(?:sure|yes|ok|okay|it's|it\s+is|(?:the\s+|our\s+|my\s+)?new\s+(?:one|address|place|home"
                             r"|house|flat|apartment)(?:\s+is|'s)(?:\s+at)?)[\s,:.!-]+)*"
                             r"(?P<address>(?:(?:flat|apt|apartment|unit|suite|house|level)\s+\w+,?\s+)?\d+[a-z]?,?\s+[^\W\d_]"
                             r"[^,;]*?(?:,\s*[^,;]+?){0,3})$", re.I)
# "Sure, it's 07700 900123": what may stand before a bare phone number or email address.
_AFFIRMATIVE = r"(?:sure|yes|yep|yeah|yup|ok|okay|of\s+course|certainly)"
_VALUE_LEAD = re.compile(rf"^(?:(?:{_AFFIRMATIVE}|it's|it\s+is|that's|that\s+is|(?:the\s+)?new\s+(?:one\s+)?is)[\s,:.!-]+)*",
                         re.I)


# "We'll text your mobile, is that still 07700 900 207?" / "Yes": the agent's value, confirmed.
# "Is your home number 020 7946 0185 still correct? And your mobile 07700 900 884?" / "yes both": two values.
_DETAIL = r"(?:[\w-]+\s+)?(?:address|number|phone|mobile|cell|landline|e-?mail(?:\s+address)?)"
_STILL_RIGHT = r"\s+still\s+(?:correct|right|valid|current|good|the\s+same|up\s+to\s+date|ok|okay)"
_CONFIRM_QUESTION = re.compile(
    r"\bis\s+(?:it|that|this)\s+still\s+(?P<value>[^?]{3,80})\?"
    rf"|\bis\s+your\s+(?P<thing>{_DETAIL})\s+still\s+(?P<value2>[^?]{{3,80}})\?"
    rf"|\bis\s+your\s+(?P<thing3>{_DETAIL})\s+(?P<value3>[^?]{{3,80}}?){_STILL_RIGHT}\?"
    rf"|(?<=\?)\s*(?:and|also|plus)\s+(?:is\s+)?your\s+(?P<thing4>{_DETAIL})\s+(?P<value4>[^?]{{3,80}}?)"
    rf"(?:{_STILL_RIGHT})?\?",
    re.I,
)
# "I'll ship it to 12 Jacaranda Avenue, Parkhurst. Is that right?": the value is in the sentence before.
_IS_THAT_RIGHT = re.compile(r"\b(?:is|does)\s+(?:that|this)\s+(?:(?:still\s+)?(?:right|correct|ok|okay)|sound\s+right)\?",
                            re.I)
_SENT_TO = re.compile(r"\b(?:to|at)\s+(?P<value>\d[^.?!]{3,100})[.?!]\s*$")
_THING = re.compile(r"\b(?P<thing>address|mobile|phone|number|e-?mail)\b", re.I)
_YES = re.compile(rf"^(?:{_AFFIRMATIVE}|correct|that's\s+(?:right|correct)|that\s+is\s+(?:right|correct)|right"
                  r"|still\s+the\s+same|same\s+(?:one|as\s+before)|it\s+is|it's\s+still|that's\s+still)\b", re.I)
_LABELS = {"address": "address", "phone": "phone number", "email": "email address"}


# Any request to confirm what the agent just read out ("Is that all correct?", "still the best number?", "can you
# confirm ..."): confirmation_asked reads the values of such questions; a reading followed by one waits for the yes.
_ASKS_TO_CONFIRM = re.compile(r"\b(?:is|are|does)\s+(?:that|this|it|those|these)\s+(?:all\s+)?(?:still\s+)?(?:right|correct"
                              r"|ok|okay|accurate|current|up\s+to\s+date|the\s+(?:best|right))\b[^?]*\?|\bstill\s+(?:the\s+best"
                              r"|right|correct|current|valid|good)\b[^?]*\?|\bcan\s+you\s+confirm\b", re.I)


def asks_to_confirm_reading(text: str) -> bool:
    """Whether an agent message asks the customer to confirm what it says (then its readings are not yet theirs)."""
    return _ASKS_TO_CONFIRM.search(text) is not None or _IS_THAT_RIGHT.search(text) is not None


def confirmation_asked(question: str | None) -> list[tuple[str, str, str]]:
    """(slot, label, value) for each value about the customer the agent asks them to confirm; the label keeps the
    agent's own words for the kind ("home number") so that two numbers confirmed together stay two."""
    found = []
    for match in _CONFIRM_QUESTION.finditer(question or ""):
        value = next(match.group(key) for key in ("value", "value2", "value3", "value4") if match.group(key))
        value = value.strip(" .,")
        named = match.group("thing") or match.group("thing3") or match.group("thing4")
        thing = (named or next(
            (said.group("thing") for said in reversed(list(_THING.finditer(question[:match.start()])))), "")).lower()
        thing = " ".join(thing.split())
        if EMAIL.fullmatch(value):
            found.append(("email", _label(named, "email"), value))
        elif PHONE.fullmatch(value) and 7 <= sum(char.isdigit() for char in value) <= 15:
            found.append(("phone", _label(named, "phone"), value))
        elif "address" in thing and re.search(r"\d", value) and not EMAIL.search(value):
            found.append(("address", _label(named, "address"), value))
    if not found and (right := _IS_THAT_RIGHT.search(question or "")):
        before = question[:right.start()]
        if (sent := _SENT_TO.search(before)) and (address := address_value(sent.group("value"))):
            found.append(("address", _LABELS["address"], address))
    return found


def _label(named: str | None, slot: str) -> str:
    """The agent's name for a detail ("home number", "mobile") when it names one of that slot, else the slot's."""
    named = " ".join((named or "").lower().split())
    if not named or _THING.search(named) is None:
        return _LABELS[slot]
    if slot == "phone" and named.split()[-1] == "number" and len(named.split()) == 1:
        return _LABELS[slot]
    fits = {"email": "mail" in named, "address": "address" in named,
            "phone": not ("mail" in named or "address" in named)}
    return named if fits[slot] else _LABELS[slot]


def confirmed_statements(answer: str, confirmations: list[tuple[str, str, str]], said: list[str]) -> list[str]:
    """A "yes" to the agent's "is that still ...?" as the customer's own statement of the value, unless their answer
    already states that slot (`said`, from slot_statements)."""
    if not confirmations or not _YES.match(answer.strip()):
        return []
    stated = " ".join(said).lower()
    return [f"My {label} is {value}" for slot, label, value in confirmations if f"my {_LABELS[slot]}" not in stated]


_PHONE_KIND_AFTER = re.compile(r"\s*\((?P<kind>office|work|home|landline|mobile)\)$", re.I)
_KIND_IS = re.compile(r"^(?:that's|that\s+is|it's|which\s+is)\s+(?:the\s+|my\s+|our\s+)?(?P<kind>office|work|home|landline)\b",
                      re.I)
_ADDRESS_KIND_ASKED = re.compile(r"\b(delivery|shipping|billing|postal|invoice|invoicing)\s+address\b", re.I)


def asks_someone_elses_name(question: str | None) -> bool:
    """Whether an agent message asks for someone else's name ("your father's name"): the answer names them."""
    return bool(question) and _SOMEONE_ELSES_NAME.search(question) is not None


def requested_slots(question: str | None) -> list[str]:
    """The slots an agent message asks the customer for ("name", "email", "phone", "address"). A name, which any
    words can fill, only when a sentence that asks names it: "I can issue it in the company's name. Where should it
    go?" asks for no name, and "attention Meera Pillai" in the answer is not the customer's."""
    if not question or not _ASKS.search(question):
        return []
    asking = [sentence for sentence in re.split(r"(?<=[.!?])\s+|\n", question) if _ASKS.search(sentence)]
    slots = [slot for slot, pattern in _SLOT_QUESTIONS
             if any(pattern.search(sentence) for sentence in (asking if slot == "name" else [question]))
             and not (slot == "name" and any(_SOMEONE_ELSES_NAME.search(sentence) for sentence in asking))]
    if "address" in slots and len(kinds := set(_ADDRESS_KIND_ASKED.findall(question))) == 1:
        slots[slots.index("address")] = f"address:{kinds.pop().lower()}"
    # "Could you give me the serial number?", "I have your EORI as GB 318 4470 2290 00, is that right?"
    for sentence in asking:
        for match in [*_ID_ASKED.finditer(sentence), *_ID_READ_BACK.finditer(sentence)]:
            label = " ".join(match.group("label").lower().split())
            if not _NOT_ID_LABELS.intersection(label.split()):
                slots.append(f"identifier:{label}")
    return slots


_ID_LABEL = r"(?P<label>(?:[\w-]+\s+){0,2}?(?:number|no|reference|ID|registration|reg|serial(?:\s+number)?))"
_ID_ASKED = re.compile(rf"\b(?:your|the)\s+(?:[\w-]+'s\s+)?{_ID_LABEL}\b", re.I)
_ID_READ_BACK = re.compile(r"\b(?:I|we)(?:'ve|\s+have)?\s+(?:got|have|see)\s+your\s+(?P<label>(?:[\w-]+\s+){0,2}?[\w-]+)"
                           r"\s+(?:down\s+)?as\s+(?=[A-Z0-9]{2,}[\w -]*\d)", re.I)
_NOT_ID_LABELS = frozenset("phone mobile cell contact telephone landline best house flat card address email e-mail "
                           "name date birth postcode post zip".split())
_CORRECTED_IN_ANSWER = re.compile(r"\b(?:sorry|wrong|I\s+mean|I\s+meant|actually|mistake|typo|misread|read\s+it\s+wrong)\b",
                                  re.I)
_ID_VALUE_IN_TEXT = re.compile(r"(?<![\w-])(?=[A-Z0-9-]*\d[A-Z0-9-]*\d)[A-Z0-9][A-Z0-9-]{4,}(?![\w-])")
# A value of capitals and digits, two digits at least and five characters: "MA26 KCS", "GB 318 4470 2209 00".
_ID_VALUE = re.compile(r"(?=(?:[^\d]*\d){2})(?=(?:\s*[A-Z0-9-]){5})[A-Z0-9][A-Z0-9-]*(?:[ ][A-Z0-9][A-Z0-9-]*){0,5}")


def slot_statements(answer: str, slots: list[str]) -> list[str]:
    """The customer's bare answers rephrased as statements ("my name is ...") for the slots asked about."""
    # "It is N3K0LP0912345. Sorry, I read it wrong, ... so N3K0LP0912354": the value they settle on is the last
    values = list(dict.fromkeys(value.group(0) for value in _ID_VALUE_IN_TEXT.finditer(answer)
                                if not PHONE_SHAPED.fullmatch(value.group(0))))
    settled = values[-1] if len(values) > 1 and _CORRECTED_IN_ANSWER.search(answer) else None
    statements = []
    pieces = _answer_pieces(answer, slots)
    if pieces and MY_RELATION.match(pieces[0]):
        # "Who should we contact if we can't reach you?" - "My son Bilal, 07700 900 152": the number is his
        slots = [slot for slot in slots if slot not in ("phone", "email")]
    for index, piece in enumerate(pieces):
        for slot in slots:
            said = piece
            if slot.startswith("address") and not _FULL_DATE.match(piece):
                said = ", ".join(pieces[index:])  # "14 Rowan Way, Norwich NR2 3PL": an address goes on past its commas
            elif slot == "phone" and index + 1 < len(pieces) and (kind := _KIND_IS.match(pieces[index + 1])):
                said = f"{piece} ({kind.group('kind')})"  # "0161 496 0732, that's the office"
            statement = _as_statement(slot, settled if settled and slot.startswith("identifier:") and
                                      _ID_VALUE_IN_TEXT.search(piece) else said)
            if statement:
                statements.append(statement)
                slots = [other for other in slots if other != slot]
                break
    return statements


def _answer_pieces(answer: str, slots: list[str]) -> list[str]:
    """The leading fragments of an answer: "Siobhán Ní Bhriain, card ends 4471. I'm flying ..." -> name, card."""
    first_sentence = re.split(r"(?<=[.!?])\s+|\n", answer.strip(), maxsplit=1)[0].rstrip(" .!")
    pieces = [piece.strip() for piece in re.split(r"\s*[,;]\s*(?=\S)", first_sentence) if piece.strip()]
    if "name" in slots:  # "tanvir chowdhury 07700 900 374": a name and the number after it, given without a comma
        pieces = [part for piece in pieces for part in _name_then_number(piece)]
    return pieces[:4]


def _name_then_number(piece: str) -> list[str]:
    named = _NUMBER_AFTER_WORDS.search(piece)
    if named and _plausible_given_name(piece[:named.start()]):
        return [piece[:named.start()], piece[named.end():]]
    return [piece]


def _plausible_given_name(words: str) -> bool:
    said = words.split()
    return 2 <= len(said) <= 4 and not any(word.lower() in lexicon.COMMON_WORDS or word.lower() in lexicon.NOT_NAMES
                                           or word.lower() in _NOT_ID_LABELS or word.lower() in lexicon.NAME_BREAKS
                                           for word in said)


_NUMBER_AFTER_WORDS = re.compile(r"(?<=[^\W\d_])\s+(?=\+?\d[\d ().-]{6,}\d$)")


# "14 March 1989", "3/11/1988", "March 14, 1989": a whole date with its year, which no address or name is.
_FULL_DATE = re.compile(r"^(?:(?:\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?[^\W\d_]{3,9}|[^\W\d_]{3,9}\s+\d{1,2}(?:st|nd|rd|th)?),?"
                        r"\s+\d{4}|\d{1,2}[./-]\d{1,2}[./-](?:\d{4}|\d{2}))$")


def _as_statement(slot: str, piece: str) -> str | None:
    if _FULL_DATE.match(piece.strip()):
        return f"My date of birth is {piece.strip()}" if slot == "birthday" else None
    if slot == "name":
        match = _NAME_ANSWER.match(piece)
        if match and not re.search(r"\b(?:I|my|me|we|you|your|the|a|an|is|are|was|have|has)\b", match.group("name"), re.I):
            return f"My name is {match.group('name')}"
        # "Danielle, I'm the office manager", "it's Tomasz": a given name alone, capitalised, no common word
        if (match := _GIVEN_NAME_ANSWER.match(piece)) and match.group("name").lower() not in lexicon.COMMON_WORDS and (
                match.group("name").lower() not in lexicon.NOT_NAMES):
            return f"My name is {match.group('name')}"
    if slot.startswith("address") and (match := _ADDRESS_ANSWER.match(piece)):
        kind = slot.partition(":")[2]  # "What's the delivery address?": the answer is that one
        return f"My {kind + ' ' if kind else ''}address is {match.group('address')}"
    if slot == "time" and _WHEN_ANSWER.match(piece):
        return f"Please call me {piece}"
    value = piece[_VALUE_LEAD.match(piece).end():]
    if slot.startswith("identifier:"):
        label = slot.split(":", 1)[1]
        # "EORI is GB 318 ...", "the serial's WB30-558812": the answer names what it gives
        head = re.sub(r"\s+(?:number|no|reference|id)$", "", label)
        if named := re.match(rf"(?:(?:the|my|our)\s+)?{re.escape(head)}(?:\s+(?:number|no\.?|reference|id))?"
                             r"(?:\s+is|'s|:|\s+-)\s*", value, re.I):
            value = value[named.end():]
        if _ID_VALUE.fullmatch(value) and not PHONE_SHAPED.fullmatch(value):
            label = label if re.search(r"\b(?:number|no|reference|id|registration|reg|serial)$", label) else f"{label} number"
            return f"My {label} is {value}"
    if slot == "phone" and (kind := _PHONE_KIND_AFTER.search(value)):  # "0161 496 0732 (office)"
        value, said_kind = value[:kind.start()], f"{kind.group('kind').lower()} "
    else:
        said_kind = ""
    if slot == "phone" and PHONE.fullmatch(value) and 7 <= sum(char.isdigit() for char in value) <= 15:
        return f"My {said_kind}phone number is {value}"
    if slot == "email" and EMAIL.fullmatch(value):
        return f"My email address is {value}"
    return None


# --- The agent speaking about the customer ---------------------------------------------------------------
# Capitalised too ("We've ...", "Our records ..."), but not "US": the country is no "us".
_AGENT_SELF = re.compile(r"\b(?:I|I'm|I've|I'll|I'd|[Mm]e|[Mm]y|[Ww]e|[Ww]e're|[Ww]e've|[Ww]e'll|us|[Oo]ur)\b")
_SECOND_TO_FIRST = {
    "you're": "I'm", "you've": "I've", "you'll": "I'll", "you'd": "I'd", "you are": "I am", "you have": "I have",
    "you were": "I was", "your": "my", "yours": "mine", "yourself": "myself",
}
_SECOND = re.compile(r"\b(?:you're|you've|you'll|you'd|you\s+are|you\s+have|you\s+were|your|yours|yourself|you)\b", re.I)
_SUBJECT_YOU = re.compile(r"^(?:\W*)you\b|(?:\b(?:and|but|so|because|since|that|when|while|as)\s+|[:;,]\s*)you\b",
                          re.I)


_READS_RECORD = re.compile(r"^(?:(?:ok|okay|right|thanks|great)[\s,.!]+)?(?:I\s+can\s+see|I\s+see|I've\s+found|it\s+looks\s+like"
                           r"|(?:our|the)\s+(?:records?|system)\s+(?:shows?|says?))\s+(?:that\s+|here\s+that\s+)?(?=you(?:'re|\s+are|'ve|\s+have)\b)",
                           re.I)


def agent_statement_as_customer(sentence: str, clauses: list[Clause]) -> str | None:
    """An agent's sentence (split into `clauses`) about the customer in the customer's own words, or None.

    Only sentences about "you" that say nothing of the agent itself are read ("Your address is now ...",
    "You're on the Business plan"); "I've added your work number" is an action, read as an episode elsewhere.
    """
    sentence = _READS_RECORD.sub("", sentence)  # "I can see you're a Silver member": what the record says
    if "?" in sentence or not _SECOND.search(sentence) or _AGENT_SELF.search(sentence):
        return None
    if any(clause.uncertain or clause.question for clause in clauses):
        return None  # "you might want to upgrade", "if you move ..."
    return in_first_person(sentence)


def in_first_person(sentence: str) -> str:
    """The agent's `sentence` about "you" with the customer speaking: "you're" -> "I'm", "your" -> "my"."""

    def swap(match: re.Match) -> str:
        word = " ".join(match.group(0).lower().split())
        if word == "you":
            before = sentence[:match.start()]
            return "I" if not before.strip() or _SUBJECT_YOU.search(before + "you") else "me"
        return _SECOND_TO_FIRST[word]

    return _SECOND.sub(swap, sentence)


def speaks_of_itself(text: str) -> bool:
    """Whether the agent's `text` says "I", "we" or "our": then "I" is not the customer's."""
    return bool(_AGENT_SELF.search(text))


# "I've noted that you'd like text messages rather than phone calls", "Noted: WhatsApp on +351 ... is your preferred
# channel", "I've added to your record: interpreter for all appointments", "I've put a note on your account saying
# ...": what the agent says it keeps on the customer's record, read even where the customer's own words were not.
_RECORD = (r"(?:(?:to|on|in|onto|against)\s+(?:(?:your|his|her|their|the)\s+(?:[\w-]+\s+)?(?:record|profile|file|account|notes"
           r"|details|system|booking)"
           # "Noted on TSJ-502977: ...": a booking or account reference of capitals and digits
           r"|(?:(?:your|the)\s+(?:[\w-]+\s+)?)?(?-i:[A-Z][A-Z0-9]*-?\d[A-Z0-9-]{3,})))")
_NOTE_LEAD = (r"(?:^|(?<=,\s)and\s+|(?<=;\s)|(?<=\sand\s))(?:(?:ok|okay|great|perfect|thanks|thank\s+you|of\s+course|certainly|absolutely|sure|understood"
              r"|no\s+problem|right|lovely|done|all\s+done)[\s,.!-]+)*")
_NOTED = re.compile(
    _NOTE_LEAD + r"(?:(?:I've|I\s+have|I|we've|we\s+have|we)\s+(?:also\s+|now\s+|just\s+)?"
    rf"(?:(?:noted|recorded|made\s+a\s+note\s+of)(?:\s+{_RECORD})?(?:\s*:\s*|\s+that\s+|\s+(?!that\b))"
    rf"|(?:added|put|made|left)\s+a\s+(?:[\w-]+\s+)?note(?:\s+{_RECORD})?(?:\s*:\s*|\s+(?:saying|that)\s+)"
    rf"|(?:added|put)(?:\s+(?:that|this|it|both|them|those))?\s+{_RECORD}(?:\s*:\s*|\s+that\s+))"
    rf"|(?:noted(?:\s+{_RECORD})?|note\s+added|added\s+{_RECORD})(?:\s*:\s*|\s+that\s+))(?P<what>\S.*)$",
    re.I,
)
_NOTED_IS_CLAUSE = re.compile(r"\bthat\s+$|(?:saying|:)\s*$", re.I)
# "I've noted your new address", "I've noted that down": a pointer to what was said, saying nothing itself.
_ONLY_A_POINTER = re.compile(r"^(?:(?:your|the|that|this|it|those|these|all\s+(?:of\s+)?(?:that|this)|everything|both"
                             r"|them|down|new|updated|latest|preference|preferences|details?|change|changes|request"
                             r"|requests?|information|info|as\s+well|too|for\s+next\s+time|for\s+the\s+future)[\s,.!]*)+$",
                             re.I)
_A_DETAIL_OF_YOURS = re.compile(r"^(?:your|the|that|this)\s+(?:[\w-]+\s+){0,2}(?:number|address|e-?mail(?:\s+address)?|details"
                                r"|preferences?|request|change|info(?:rmation)?|name|wishes)$", re.I)
_ANOTHER_NOTE = re.compile(r",?\s+and\s+(?:(?:I've|I\s+have)\s+)?(?:also\s+)?(?:noted|recorded)\s+(that\s+)?", re.I)


_AGENT_ACTS_NEXT = re.compile(r",?\s+(?:and|but)\s+(?:(?:I|we)(?:'ve|\s+have|'ll|\s+will)?\s+(?!(?:also\s+)?(?:noted|recorded)\b)"
                              r"|(?:also\s+)?(?:added|set\s+up|booked|updated|changed|removed|sent|arranged|switched|moved"
                              r"|cancell?ed|ordered|applied|issued|refunded|credited|registered)\b)", re.I)
# "noted that you'll bring a spare one on Friday": something the customer will do once, not a fact to keep.
_ONE_OFF_NOTE = re.compile(r"^you(?:'ll|\s+will|'re\s+going\s+to)\b", re.I)


def agent_notes(sentence: str) -> list[tuple[str, bool]]:
    """What the agent's `sentence` says it has noted on the customer's record, as it said it: (text, whether a whole
    clause: "noted that you'd like ..."), one per note ("I've recorded X, and noted that Y"); [] for none."""
    match = _NOTED.search(sentence.strip())
    if not match or "?" in sentence:
        return []
    lead = sentence.strip()[match.start():match.start("what")]
    what = _AGENT_ACTS_NEXT.split(match.group("what"), maxsplit=1)[0]  # "..., and I've switched ...": an action
    pieces = _ANOTHER_NOTE.split(what.rstrip(" .!"))  # what, "that " or None, what, ...
    clause_flags = [bool(_NOTED_IS_CLAUSE.search(lead)), *(bool(that) for that in pieces[1::2])]
    notes = []
    for what, whole_clause in zip(pieces[::2], clause_flags, strict=True):
        what = what.strip(" ,;")
        if what and not (_ONLY_A_POINTER.match(what) or _A_DETAIL_OF_YOURS.match(what) or _ONE_OFF_NOTE.match(what)) and len(
                what.split()) >= 2:
            notes.append((what, whole_clause))
    return notes


# "I've updated your mobile to 07700 900 222": the agent's change, read as the customer's "my mobile is ...".
_AGENT_UPDATED = re.compile(
    r"^(?:(?:done|great|ok|okay|perfect|sure|of\s+course|all\s+done)[\s,.!:-]+)*(?:I've|I\s+have|I|we've|we\s+have|we)"
    r"\s+(?:now\s+|just\s+|also\s+)?(?:updated|changed|set|switched|corrected)\s+your\s+(?P<thing>(?:[\w-]+\s+){0,2}?"
    r"(?:address|number|phone|mobile|cell|e-?mail(?:\s+address)?|name|surname|plan|tier))\s+(?:to|as)\s+(?P<value>[^?]+?)"
    r"[.!]?$",
    re.I,
)


def agent_update_as_customer(sentence: str) -> str | None:
    """The agent's "I've updated your <detail> to <value>" in the customer's words, or None."""
    match = _AGENT_UPDATED.match(sentence.strip())
    if not match:
        return None
    return f"My {' '.join(match.group('thing').split())} is {match.group('value')}"


# "I have you at 22 Alma Terrace, York.", "We've got your mobile as 07700 900 207.", "Our records show your email as
# ...": the agent reads back what the account holds, the value in force until the customer gives another. Read as
# the customer's "my address is ...", so that a new value said next replaces it rather than standing beside it.
_READBACK_LEAD = r"^(?:(?:ok|okay|right|thanks|thank\s+you|great|perfect|so|and|currently|at\s+the\s+moment)[\s,.!:-]+)*"
_ON_FILE = r"(?:\s+(?:on\s+(?:file|record|the\s+account|our\s+system)|in\s+our\s+(?:records|system)))?"
_READBACK = re.compile(
    _READBACK_LEAD + r"(?:(?:I|we)(?:'ve|\s+have)?\s+(?:still\s+|currently\s+)?(?:have|got|see|show)"
    r"|(?:our|the)\s+(?:records?|system|account)\s+(?:still\s+)?(?:shows?|has|have|lists?))\s+"
    rf"(?:you\s+(?:down\s+|registered\s+|listed\s+)?(?:at|as\s+living\s+at)\s+(?P<address>.+)"
    rf"|your\s+(?P<thing>{_DETAIL}){_ON_FILE}\s+as\s+(?P<value>.+))$",
    re.I,
)


def agent_readback_as_customer(sentence: str) -> str | None:
    """The agent's reading of an address, phone number or email address on the account, in the customer's words
    ("My address is 22 Alma Terrace, York"), or None when the sentence is no such reading or the value is not one."""
    match = _READBACK.match(sentence.strip().rstrip(".!"))
    if not match:
        return None
    if match.group("address") is not None:
        address = address_value(match.group("address"))
        return f"My address is {address}" if address else None
    value = match.group("value").strip(" .,")
    named = " ".join(match.group("thing").split())
    if EMAIL.fullmatch(value):
        return f"My {_label(named, 'email')} is {value}"
    if PHONE.fullmatch(value) and 7 <= sum(char.isdigit() for char in value) <= 15:
        return f"My {_label(named, 'phone')} is {value}"
    if "address" in named.lower() and (address := address_value(value)):
        return f"My {_label(named, 'address')} is {address}"
    return None


# "I'd like to move from Monthly Pro to the Annual Pro plan" / "Done, I've switched you to Annual Pro": a change the
# customer asks for is a fact once the agent makes it. Asked alone, or refused, it is only a wish.
_CHANGE_VERB = r"(?:move|switch|change|upgrade|downgrade|go|swap|transfer|put|convert|drop|bump)(?:\s+(?:me|us))?(?:\s+(?:down|up|back))?"
_PLAN_NOUN = r"(?:plan|tier|package|subscription|membership|tariff|bundle|edition|licen[cs]e)"
_PLAN_NAME = r"[\w+&.'-]+(?:\s+[\w+&.'-]+){0,3}?"
_PLAN_CHANGE_ASKED = re.compile(
    r"\b(?:I(?:'d|\s+would)\s+(?:like|love|prefer)\s+to|I\s+(?:want|need|wish)\s+to|(?:can|could|may)\s+(?:I|we)"
    r"|(?:can|could|would|will)\s+you(?:\s+please)?|please|I'd\s+like\s+you\s+to)\s+(?:please\s+)?"
    rf"{_CHANGE_VERB}\s+(?:me\s+|us\s+|(?:my|our)\s+(?:account|membership|subscription|plan)\s+)?(?:over\s+)?"
    rf"(?:from\s+(?:the\s+|my\s+|our\s+)?(?P<old>{_PLAN_NAME})(?:\s+{_PLAN_NOUN})?\s+)?"
    rf"(?:to|onto|on\s+to)\s+(?:the\s+|a\s+|an\s+)?(?:(?P<new>{_PLAN_NAME})\s+(?P<noun>{_PLAN_NOUN})\b"
    # "can you drop me down to Standard HD?": a name in capitals needs no "plan" after it
    r"|(?P<named>(?-i:[A-Z][\w+&'-]*)(?:\s+(?-i:[A-Z0-9][\w+&'-]*)){0,3})(?=\s*(?:[?.!,]|$|\s+(?:from|on|please|instead"
    r"|now|next|today|starting))))",
    re.I,
)
_CHANGE_REFUSED = re.compile(r"\b(?:can't|cannot|can\s+not|unable|not\s+able|unfortunately|isn't\s+(?:possible|available)"
                             r"|not\s+(?:possible|available|eligible))\b", re.I)


def plan_change_asked(text: str) -> tuple[str, str] | None:
    """(the change as the customer's statement once made, the new plan's name) for a plan change asked in `text`."""
    match = _PLAN_CHANGE_ASKED.search(text)
    if not match:
        return None
    new, noun = match.group("new") or match.group("named"), (match.group("noun") or "plan").lower()
    if new.split()[0].lower() in ("same", "other", "another", "cheaper", "better", "next", "new", "different"):
        return None  # "can I move to a cheaper plan?": no plan named
    old = match.group("old")
    change = f"from {old} {noun} to the {new} {noun}" if old else f"to the {new} {noun}"
    return f"I've switched {change}", new


def change_made(reply: str, new_value: str) -> bool:
    """Whether the agent's `reply` says it made the change to `new_value`, the switch aimed at it ("I've switched you
    to Annual Pro", "you're now on Annual Pro"), not a quote, a waiting list or a refusal."""
    value = re.escape(new_value)
    made = re.search(rf"\b(?:switched|moved|upgraded|downgraded|changed|transferred|converted)\s+(?:you|your\s+(?:account"
                     rf"|membership|subscription|plan))\s+(?:over\s+)?(?:to|onto|on\s+to)\s+(?:the\s+)?{value}\b"
                     rf"|\b(?:you're|you\s+are)\s+now\s+on\s+(?:the\s+)?{value}\b"
                     rf"|\b(?:you'll|you\s+will)\s+(?:now\s+)?be\s+on\s+(?:the\s+)?{value}\b", reply, re.I)
    return made is not None and _CHANGE_REFUSED.search(reply) is None



# "Hi, Rohan Deshpande, rewards number ..." / "Good morning Rohan.": a name standing alone between commas or stops
# in the customer's message is theirs when the agent's reply calls them by it (first name, or title and surname).
_NAME_PIECE = re.compile(r"[^,.;:!?\n()]+")
_NAME_TOKEN = r"(?-i:[^\W\d_a-z][^\W\d_]*(?:['-][^\W\d_]+)*)"
_STANDALONE_NAME = re.compile(rf"^{_NAME_TOKEN}(?:\s+(?:{_NAME_TOKEN}|{'|'.join(sorted(NAME_PARTICLES))})){{1,4}}$")
_TITLES = r"(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof)\.?"
_LOWERCASE_NAME = re.compile(r"^[a-z][a-z'-]+(?:\s+[a-z][a-z'-]+){1,3}$")


def addressed_name(text: str, reply: str | None) -> str | None:
    """The name the customer gives on its own in `text` ("..., Rohan Deshpande, ...") when the agent's `reply`
    addresses them by it ("Good morning Rohan."), as their statement "My name is Rohan Deshpande"."""
    if not reply:
        return None
    for piece in _NAME_PIECE.findall(text):
        words = piece.split()
        if _LOWERCASE_NAME.match(" ".join(words)) and not any(
                word in lexicon.COMMON_WORDS or word in lexicon.NOT_NAMES or word in lexicon.NAME_BREAKS for word in words):
            # "... can u check it went through? kwabena owusu-ansah" / "Hey Kwabena!": typed in lowercase
            words = [word.title() if word not in NAME_PARTICLES else word for word in words]
        if not _STANDALONE_NAME.match(" ".join(words)) or words[-1].lower() in NAME_PARTICLES:
            continue
        if _DESCRIBED.match(text[text.find(piece) + len(piece):]):
            continue  # "Claire Dunmore, our finance director, ...": someone else, described
        called = rf"(?:{re.escape(words[0])}|{_TITLES}\s+{re.escape(words[-1])})"
        if re.search(rf"(?:^|{_GREETING}[\s,]+|,\s+){called}(?=\s*(?:[,.!?]|$))", reply):
            return f"My name is {' '.join(words)}"
    return None


# How an agent calls a customer by name: at the start of its reply or after a greeting ("Good morning Rohan."), or
# closing a sentence after a comma ("We look forward to it, Rohan."); "Sent to Claire." calls no one.
_GREETING = (r"(?i:\b(?:hi|hello|hey|dear|morning|afternoon|evening|thanks|thank\s+you|welcome(?:\s+back)?|congratulations"
             r"|congrats|sorry|ok|okay|great|sure|of\s+course|no\s+problem|certainly|absolutely|perfect|noted)\b)")
_DESCRIBED = re.compile(r"^\s*,\s*(?:(?:our|my|his|her|their|the)\s|who\b|she\b|he\b)", re.I)


# "For tariffs we have Fixed 24, ... or Green Flex, ..." / "Which plan would you like? We have Essentials at $35,
# Unlimited at $55, and Unlimited Plus at $70": named options of a plan-like kind the agent offers.
_OFFER_NOUN = re.compile(rf"\b(?P<noun>{_PLAN_NOUN})s?\b", re.I)
_OFFER_CUE = re.compile(r"\b(?:we\s+have|we\s+offer|there's|there\s+are|options?\s+(?:are|is)|choose\s+between"
                        r"|choice\s+of|which\s+(?:one|\w+)\s+would\s+you\s+like|you\s+can\s+(?:have|choose|pick))\b", re.I)
_OPTION = re.compile(r"(?-i:[A-Z][\w+&'-]*)(?:\s+(?:(?-i:[A-Z0-9][\w+&'-]*)|&|\+))*")
_CHOICE_TAIL = re.compile(r"^(?:\s+(?:please|pls|plz|for\s+sure|definitely|thanks|thank\s+you|then|I\s+think|sounds\s+good)"
                          r"|\s*[,.!;]|\s*$)", re.I)


def offered_options(text: str) -> tuple[str, list[str]] | None:
    """(the kind, the names) of the options the agent's message offers, or None."""
    for sentence in re.split(r"(?<=[.?!])\s+", text):
        if not _OFFER_CUE.search(sentence) or not (noun := _OFFER_NOUN.search(text)):
            continue
        after = sentence[_OFFER_CUE.search(sentence).end():]
        options = [option for option in _OPTION.findall(after) if option.split()[0] not in ("I", "We", "You")]
        if len(options) >= 2:
            return noun.group("noun").lower(), options
    return None


def chosen_option(answer: str, offered: tuple[str, list[str]] | None) -> list[str]:
    """"green flex pls": the customer's pick among the options the agent offered, as their statement."""
    if not offered:
        return []
    noun, options = offered
    reply = re.sub(r"^(?:(?:yes|yeah|ok|okay|great|perfect|hmm|um|so|then)[\s,.!]+)*(?:(?:the|I'll\s+(?:take|go\s+with|have)"
                   r"|I'd\s+like|let's\s+go\s+with|go\s+with)\s+)*", "", answer.strip(), flags=re.I)
    for option in sorted(options, key=len, reverse=True):
        if reply.lower().startswith(option.lower()) and _CHOICE_TAIL.match(reply[len(option):]):
            return [f"I'm on the {option} {noun}"]
    return []


# "Yes please", "Perfect, book it", "The first one": the customer agreeing to what the agent proposed; "Yes, but not
# until May", "No, I'm away then", "Is there anything later?" do not.
_AGREES = re.compile(r"^(?:yes|yep|yeah|yup|sure|ok|okay|perfect|great|lovely|brilliant|fine|please\s+do|go\s+ahead|do\s+it"
                     r"|book\s+it|that\s+works|that's\s+(?:fine|great|perfect|good)|sounds\s+good|(?:the\s+)?(?:first|earliest)"
                     r"(?:\s+one)?|that\s+one)\b", re.I)
_DEMURS = re.compile(r"\b(?:no|not|but|can't|cannot|won't|instead|rather|different|another|other|later|earlier)\b|\?",
                     re.I)


def agrees(answer: str) -> bool:
    """Whether the first sentence of the customer's `answer` agrees, without a reservation, to what the agent
    proposed just before."""
    first = re.split(r"(?<=[.!?])\s+", answer.strip(), maxsplit=1)[0]
    return bool(_AGREES.match(first)) and not _DEMURS.search(first)
