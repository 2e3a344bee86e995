"""Cheap hand-made features of a clause, shared by the embedding model and the lexical fallback.

Each is a number in 0..1 computed with a few anchored or word-bounded patterns, so a clause costs
microseconds. They carry what an embedding of a short clause tends to blur: is the user the subject,
is it happening now, is it addressed to the agent.
"""

import re

FEATURE_NAMES = (
    "first_person_subject",  # "I ...", "we ..."
    "first_person_possessive",  # "my ...", "our ..."
    "plural",  # "we", "our", "us": an organisation or household
    "has_number",
    "has_proper_noun",  # a capitalised word after the first (not "I")
    "length",  # words, saturating at 30
    "progressive",  # "I'm trying", "we're seeing": something under way
    "past_event",  # "I tried", "I've just sent": something that happened
    "transient_words",  # now, today, again, still, yet, error, crashed ...
    "request_words",  # need help, want to, looking for, about my ...
    "emotion_words",  # frustrated, sorry, glad ...
    "second_person",  # you / your: talking to the agent
    "deictic",  # it / this / that: pointing into the conversation
    "habitual_words",  # always, usually, every, since, years ...
    "negation",
    "stative_start",  # "I have", "we use", "I'm a", "our X is": the shape of a standing fact
    "polite_request",  # "please ...": a request, standing ("please only ring me after 3pm") or not
    "standing_words",  # only, always, in future, from now on, by default ...
)

_FIRST_SUBJECT = re.compile(r"^(?:I|I'm|I've|I'd|I'll|we|we're|we've|we'd|we'll)\b", re.I)
_FIRST_POSSESSIVE = re.compile(r"^(?:my|our)\b", re.I)
_PLURAL = re.compile(r"\b(?:we|we're|we've|we'd|we'll|our|ours|us)\b", re.I)
_NUMBER = re.compile(r"\d")
_CAPITALISED = re.compile(r"(?<=\s)(?!I\b|I')[A-Z][\w'&.-]*")
_PROGRESSIVE = re.compile(r"^(?:I'm|I\s+am|we're|we\s+are)(?:\s+(?:still|just|now|currently|already|really))*"
                          r"\s+(?:\w+ing)\b", re.I)
_PAST = re.compile(
    r"^(?:I|we)(?:'ve|\s+have)?(?:\s+(?:just|already|also|still|then|only|even|accidentally))*"
    r"\s+(?:tried|clicked|pressed|sent|got|received|called|phoned|emailed|paid|ordered|booked|opened|entered"
    r"|uploaded|reset|restarted|rebooted|reinstalled|updated|changed|cleared|checked|followed|did|made|missed|lost"
    r"|dropped|forgot|noticed|saw|signed|scanned|plugged|waited|cancelled|returned|filled|moved|topped|found"
    r"|deleted|attached|wrote|read|typed|submitted|logged|was|were|had)\b",
    re.I,
)
_TRANSIENT = re.compile(
    r"\b(?:now|right\s+now|today|tonight|yesterday|this\s+(?:morning|afternoon|evening|week)|last\s+night"
    r"|again|still|yet|just|already|anymore|error|errors|crash(?:ed|es|ing)?|broken|broke|stuck|fail(?:ed|s|ing)?"
    r"|declined|pending|frozen|froze|keeps|kept|not\s+working|doesn't\s+work|won't|isn't|hasn't|haven't|didn't"
    r"|can't\s+(?:log|sign|find|open|see|get|access|connect|load)|ago|minutes?|hours?|mistake|wrong|missing"
    r"|delayed|cancell?ed|expired|locked)\b",
    re.I,
)
_REQUEST = re.compile(
    r"\b(?:need\s+(?:help|you|someone|a|an|the|to|it)|want\s+(?:to|my|the|a)|would\s+like|trying\s+to"
    r"|looking\s+(?:for|to)|hoping|wondering|question|problem|issue|about\s+(?:my|the|our)|asap|urgent(?:ly)?"
    r"|refund|cancel|callback|call\s+me|help)\b",
    re.I,
)
_EMOTION = re.compile(
    r"\b(?:frustrated|annoyed|angry|upset|disappointed|happy|glad|pleased|relieved|sorry|worried|confused"
    r"|stressed|fed\s+up|shocked|amazed|excited|tired|starving|appreciate|thanks|thank|love\s+(?:it|your|that)"
    r"|hate\s+(?:it|this|that)|ruined|patience|done\s+with)\b",
    re.I,
)
_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|you're|you've|you'll)\b", re.I)
_DEICTIC = re.compile(r"\b(?:it|this|that|these|those|here|there)\b", re.I)
_HABITUAL = re.compile(
    r"\b(?:always|usually|normally|generally|mostly|often|every|each|since|years?|decade|annually|monthly|weekly"
    r"|daily|per\s+(?:week|month|year|day)|a\s+(?:week|month|year|day)|full[- ]time|part[- ]time|only|never"
    r"|all\s+(?:our|my)|whole)\b",
    re.I,
)
_POLITE = re.compile(r"^(?:please|pls|plz|kindly)\b", re.I)
_STANDING = re.compile(r"\b(?:only|always|never|in\s+(?:the\s+)?future|from\s+now\s+on|going\s+forward|default"
                       r"|any\s?more|for\s+good)\b", re.I)
_NEGATION = re.compile(r"\b(?:not|no|never|don't|doesn't|didn't|can't|cannot|won't|isn't|aren't|haven't|hasn't)\b",
                       re.I)
_STATIVE = re.compile(
    r"^(?:(?:I|we)(?:\s+(?:also|only|still|both|all|mainly|mostly|usually|always|really|actually))*"
    r"\s+(?:have|has|own|use|run|rent|live|work|pay|speak|teach|keep|sell|ship|host|manage|handle|employ|travel"
    r"|drive|ride|play|train|stream|invoice|bill|bank|buy|wear|need|take|care|volunteer|go|get|eat|can't\s+have"
    r"|can't\s+eat|don't\s+(?:use|have|drive|eat|drink))"
    r"|(?:I'm|I\s+am|we're|we\s+are)(?:\s+(?:also|still|both|all|now|currently))*\s+(?:an?|the|on|with|in|based"
    r"|from|registered|allergic|intolerant|diabetic|vegan|vegetarian|deaf|blind|pregnant|self-employed|retired)\b"
    r"|(?:my|our)\s+[\w' -]{1,30}?\s+(?:is|are|has|have|runs|sits|goes|uses|lives|works)\b)",
    re.I,
)


def hand_features(text: str) -> list[float]:
    """The FEATURE_NAMES values of one clause, in order."""
    words = text.split()
    return [
        float(bool(_FIRST_SUBJECT.match(text))),
        float(bool(_FIRST_POSSESSIVE.match(text))),
        float(bool(_PLURAL.search(text))),
        float(bool(_NUMBER.search(text))),
        float(bool(_CAPITALISED.search(text))),
        min(len(words), 30) / 30.0,
        float(bool(_PROGRESSIVE.match(text))),
        float(bool(_PAST.match(text))),
        min(len(_TRANSIENT.findall(text)), 2) / 2.0,
        min(len(_REQUEST.findall(text)), 2) / 2.0,
        float(bool(_EMOTION.search(text))),
        float(bool(_SECOND_PERSON.search(text))),
        float(bool(_DEICTIC.search(text))),
        min(len(_HABITUAL.findall(text)), 2) / 2.0,
        float(bool(_NEGATION.search(text))),
        float(bool(_STATIVE.match(text))),
        float(bool(_POLITE.match(text))),
        float(bool(_STANDING.search(text))),
    ]
