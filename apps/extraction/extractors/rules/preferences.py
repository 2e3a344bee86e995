"""Preferences: likes and dislikes, favourites, habits ("I always ...") and standing instructions to the assistant.

The subject is "preference:<normalised object>", so "I like tea", "I don't like tea anymore" and "I hate tea" all
speak about "preference:tea" and a later one replaces an earlier one.
"""

import re

from apps.extraction.extractors.base import Candidate
from apps.extraction.extractors.rules import lexicon
from apps.extraction.extractors.rules.context import SUBJECT_ADVERBS as ADV
from apps.extraction.extractors.rules.context import RuleContext
from apps.extraction.extractors.rules.dates import find_dates
from apps.extraction.extractors.rules.person import IRREGULAR_PAST, is_past_participle, rewrite_first_person
from apps.extraction.extractors.rules.subjects import setting_subject
from apps.extraction.extractors.rules.text import ONE_OFF, cut_value, normalise_key, refers_to_context

_AM = r"(?:'m|\s+am)"

_POSITIVE = "prefer|like|love|enjoy|adore|appreciate|fancy|favou?r"
_NEGATIVE = ("hate|dislike|detest|despise|loathe|can't\\s+stand|cannot\\s+stand|can't\\s+bear|don't\\s+like|do\\s+not"
             "\\s+like|don't\\s+enjoy|do\\s+not\\s+enjoy|don't\\s+love|do\\s+not\\s+love|don't\\s+care\\s+for|do\\s+not"
             "\\s+care\\s+for|don't\\s+really\\s+like|never\\s+liked")
_LIKE = re.compile(rf"^I{ADV}\s+(?P<verb>{_NEGATIVE}|{_POSITIVE})\s+(?P<obj>.+)$"
                   rf"|^I(?:'d|\s+would){ADV}\s+(?P<verb2>prefer)\s+(?P<obj2>.+)$", re.I)
_FAN_SIZE = r"(?:big\s+|huge\s+|massive\s+|great\s+|real\s+|die-hard\s+)?"
_FAN = re.compile(rf"^I{_AM}(?P<neg>\s+not)?{ADV}\s+(?:(?:a|an)\s+{_FAN_SIZE}fan\s+of|into|keen\s+on|fond\s+of"
                  r"|passionate\s+about|obsessed\s+with|crazy\s+about)"
                  r"\s+(?P<obj>.+)$"
                  rf"|^I{_AM}{ADV}\s+(?:a|an)\s+{_FAN_SIZE}(?P<obj2>.+?)\s+fan$", re.I)
_FAVOURITE = re.compile(r"^my\s+(?:absolute\s+|all-time\s+|all\s+time\s+)?favou?rite\s+(?P<what>[\w' -]{1,40}?)\s+"
                        r"(?:is|are|has\s+to\s+be|would\s+be)\s+(?P<obj>.+)$", re.I)
_FAVOURITE_LAST = re.compile(r"^(?P<obj>[\w' -]{1,60}?)\s+(?:is|are)\s+(?:definitely\s+)?my\s+"
                             r"(?:absolute\s+|all-time\s+)?favou?rite(?:\s+(?P<what>[\w' -]{1,40}))?$", re.I)
_RATHER = re.compile(r"^I'd\s+rather\s+(?P<obj>.+?)\s+than\s+.+$", re.I)
_HABIT = re.compile(r"^I(?:\s+(?:almost|pretty\s+much|basically|nearly))?\s+(?P<adv>always|never)\s+(?P<verb>[\w'-]+)"
                    r"(?P<rest>.*)$", re.I)
_INSTRUCTION = re.compile(r"^(?:please\s+)?(?:(?P<adv>always|never|don't\s+ever|do\s+not\s+ever|don't|do\s+not)"
                          r"|(?:from\s+now\s+on,?|going\s+forward,?|in\s+(?:the\s+)?future,?)\s+"
                          r"(?:please\s+)?(?P<adv2>always\s+|never\s+|don't\s+|do\s+not\s+)?)\s*"
                          r"(?P<verb>[a-z][\w'-]*)(?P<rest>.*)$", re.I)
# "always aisle", "yes please, always Portuguese", "Always a room away from the lift": what the customer wants every time,
# named without a verb.
_ALWAYS_WANTED = re.compile(r"^(?:(?:yes|yeah|yep|and|also|oh|so|ok|okay)[\s,]+)*(?:(?:[\w'-]+\s+){0,3}?please[\s,]+)?"
                            r"always\s+(?:an?\s+|the\s+)?"
                            r"(?P<obj>[^\W\d][\w' -]{1,50}?)(?:[\s,]+please)?$", re.I)
# "please send all invoices to the finance team", "address all letters to my wife": where every one of a kind of
# paperwork goes, a standing instruction though no "always" says so ("email all the photos to me" is for now).
_FOR_EVERY_DOCUMENT = re.compile(
    r"^(?:please\s+|pls\s+|(?:can|could|would)\s+you\s+(?:please\s+)?)(?P<verb>[a-z][\w'-]*)"
    r"(?P<rest>\s+(?:all|every|any)\s+(?:future\s+|of\s+(?:my|our)\s+|(?:my|our)\s+)?(?:invoices?|bills?|statements?"
    r"|letters?|receipts?|correspondence|communications?|reminders?|notifications?|updates?|deliveries|parcels|post|mail"
    r"|paperwork)\b.*)$", re.I)
# "all invoices for order 12345", "all receipts for the March trip", "every statement from 2023": one thing's, not every
_FOR_ONE_THING = re.compile(r"\b(?:for|from|of|about|on)\s+(?:the\s+|this\s+|that\s+|my\s+|our\s+)?(?:order|booking"
                            r"|trip|stay|visit|job|project|case|claim|ticket|event|holiday|\w+\s+(?:trip|stay|visit|order"
                            r"|booking|holiday))\b|\d{3,}|\b(?:19|20)\d{2}\b", re.I)
_ROUTING_VERBS = frozenset("send address email post mail forward deliver copy cc route bill invoice".split())
_INSTRUCTION_VERBS = frozenset(
    "use answer reply respond write include give show explain format call address speak talk add put mention ask "
    "keep send list provide cite summarize summarise start end check confirm suggest recommend assume treat refer "
    "convert round spell sign email text contact book schedule".split()
)
_OBJECT_STOPS = frozenset(
    "over rather instead than because since but though although if when unless as so which especially except "
    "anymore these nowadays now lately generally either more too much very".split()
)
_TRAILING_FILLER = re.compile(r"(?:,?\s+(?:a\s+lot|so\s+much|very\s+much|a\s+ton|a\s+bunch|too|as\s+well|though"
                              r"|anyway|please|thanks|thank\s+you|lol|haha|going\s+forward|from\s+now\s+on"
                              r"|in\s+(?:the\s+)?future|if\s+possible|where\s+possible|these\s+days|now|any\s?more"
                              r"|any\s+longer))+\s*$", re.I)
_REQUESTS = re.compile(r"^(?:not\s+)?to\s+(?:think|ask|know|say|see|check|confirm|cancel|order|return|change|update"
                       r"|speak|talk|bother|interrupt|admit|tell|answer|share|disclose|be\s+rude|complain)\b", re.I)


def object_key(obj: str) -> str:
    obj = _TRAILING_FILLER.sub("", obj)
    obj = re.sub(r"^(?:(?:a|an|the|my|some|to|not)\s+)+", "", obj.strip(), flags=re.I)
    stops = _OBJECT_STOPS | {"to"} if not obj.lower().startswith("to ") else _OBJECT_STOPS
    return normalise_key(cut_value(obj, stops, max_words=6))


def preference_subject(obj: str) -> str | None:
    """The subject of a preference for `obj`: its dimension when values of it exclude each other
    ("the detailed view" -> preference:view, "email" -> preference:contact_channel), else the object itself."""
    key = object_key(obj)
    if not key:
        return None
    words = key.split()
    if words[0] in ("being", "getting", "receiving") and len(words) > 1:
        words = words[1:]
    if words[-1] in lexicon.LANGUAGES and len(words) <= 3:  # "I prefer Spanish", "plain English"
        return "preference:language"
    channel = [word for word in words if word in lexicon.CONTACT_CHANNELS]
    if channel and len(words) <= 3 and (len(words) == 1 or words[-1] in lexicon.CONTACT_CHANNELS
                                        or words[-1] in ("call", "calls", "contact", "updates", "messages")):
        return "preference:contact_channel"
    head = words[-1]
    singular = head[:-1] if head.endswith("s") and not head.endswith("ss") and len(head) > 3 else head
    if len(words) > 1 and singular in lexicon.PREFERENCE_DIMENSIONS:
        return f"preference:{singular}"
    return f"preference:{key}"


def _preferences(ctx: RuleContext, text: str) -> list[Candidate]:
    person = ctx.person
    if match := _LIKE.match(text) or _FAN.match(text):
        obj = _TRAILING_FILLER.sub("", match.group("obj") or match.group("obj2") or "")
        first = obj.split()[0].lower().strip(",.")
        when_clause = obj.lower().startswith(("it when", "when", "it if"))
        if (first in lexicon.DEICTIC_OBJECTS and not when_clause) or _REQUESTS.match(obj):
            return []
        verb = (match.groupdict().get("verb") or match.groupdict().get("verb2") or "").lower()
        negative = bool(re.match(_NEGATIVE, verb) or match.groupdict().get("neg") or re.match(r"not\b", obj, re.I))
        plain = re.sub(r"^(?:it\s+)?(?:when|if)\s+", "", obj, flags=re.I) if when_clause else obj
        key = object_key(plain)
        if not key:
            return []
        # Dislikes keep their own subject: "I hate phone calls" does not replace "I prefer email".
        subject = f"preference:{key}" if negative or when_clause else preference_subject(plain)
        return [ctx.candidate(rewrite_first_person(text, person), memory_type="preference",
                              confidence=0.85 if verb not in ("like", "appreciate", "fancy") else 0.8,
                              rule="preference.like", subject=subject, tags=("preference",),
                              metadata={"value": key, "sentiment": "negative" if negative else "positive"})]
    if match := _FAVOURITE.match(text) or _FAVOURITE_LAST.match(text):
        what = normalise_key(match.group("what") or "").replace("colour", "color")
        subject = f"preference:favourite {what}" if what else f"preference:{object_key(match.group('obj'))}"
        return [ctx.candidate(rewrite_first_person(text, person), memory_type="preference", confidence=0.9,
                              rule="preference.favourite", subject=subject, tags=("preference",),
                              metadata={"value": match.group("obj"), "sentiment": "positive"})]
    if (match := _RATHER.match(text)) and (key := object_key(match.group("obj"))):
        return [ctx.candidate(rewrite_first_person(text, person), memory_type="preference", confidence=0.75,
                              rule="preference.rather", subject=f"preference:{key}", tags=("preference",),
                              metadata={"value": key, "sentiment": "positive"})]
    if refers_to_context(text):
        return []  # "I never use this shops in my life", "don't send anything in that time"
    if (match := _HABIT.match(text)) and _present_tense(match.group("verb")):
        key = object_key(f"{match.group('verb')}{match.group('rest')}")
        return [ctx.candidate(rewrite_first_person(text, person), memory_type="preference", confidence=0.7,
                              rule="preference.habit", subject=f"preference:{key}", tags=("preference", "habit"),
                              metadata={"value": key, "frequency": match.group("adv").lower()})]
    if (match := _ALWAYS_WANTED.match(text)) and not _verb_like(match.group("obj").split()[0]) and not re.search(
            r"\b(?:you|your|it|this|that|them|me|us)\b", match.group("obj"), re.I) and (
            key := object_key(match.group("obj"))):
        obj = match.group("obj")
        return [ctx.candidate(person.sentence(f"always wants {_with_article(text, obj)}"), memory_type="preference",
                              confidence=0.75, rule="preference.always", subject=preference_subject(obj),
                              tags=("preference",), metadata={"value": key, "sentiment": "positive"})]
    if (match := _INSTRUCTION.match(text)) and match.group("verb").lower() not in _INSTRUCTION_VERBS:
        match = None
    if not match and (every := _FOR_EVERY_DOCUMENT.match(text)) and every.group("verb").lower() in _ROUTING_VERBS and not (
            ONE_OFF.search(text) or find_dates(text, None) or _FOR_ONE_THING.search(text)):
        match = every  # "please send all invoices to the finance team": every one, from now on
    if match:
        action = _TRAILING_FILLER.sub("", f"{match.group('verb')}{match.group('rest')}")
        key = object_key(action)
        mode = " ".join((match.groupdict().get("adv") or match.groupdict().get("adv2") or "").lower().split())
        mode = {"always": "to always", "never": "to never", "don't ever": "to never", "do not ever": "to never",
                "don't": "not to", "do not": "not to"}.get(mode, "to")
        content = person.sentence(f"wants the assistant {mode} {rewrite_first_person(action, person, named=True)}")
        return [ctx.candidate(content, memory_type="preference", confidence=0.8, rule="preference.instruction",
                              subject=f"preference:{key}", tags=("preference", "instruction"),
                              metadata={"value": key})]
    return []


_STATES = frozenset("same happy glad good great fine nice ok okay sure ready right wrong available busy open closed "
                    "there here late early slow quick fast".split())


def _verb_like(word: str) -> bool:
    """"always send ...", "always late", "always be ...": a verb or a state, not a thing wanted."""
    word = word.lower()
    return (word in _INSTRUCTION_VERBS or word.endswith(("ing", "ed", "ly", "ful")) or word in _STATES
            or word in ("be", "get", "have", "make", "do", "go", "late", "early", "busy", "here", "there", "so", "too"))


def _with_article(text: str, obj: str) -> str:
    """The object as said: "a room away from the lift" keeps its article."""
    said = re.search(rf"\b(?:an?|the)\s+{re.escape(obj)}", text, re.I)
    return said.group(0) if said else obj


def _present_tense(verb: str) -> bool:
    verb = verb.lower()
    return not (is_past_participle(verb) or verb in IRREGULAR_PAST or verb in ("been", "ever"))


# "PDF invoices only please", "send confirmations as plain-text email", "statements in large print": the form in which
# the customer wants a kind of document, one preference per kind of document.
_DOCUMENTS = (r"invoices?|receipts?|statements?|confirmations?|bills?|letters?|documents?|updates?|reports?"
              r"|newsletters?|alerts?|notifications?|reminders?|correspondence|paperwork|post")
_FORMATS = (r"pdfs?|paper|plain[- ]text(?:\s+e-?mails?)?|large[- ]print|braille|audio|e-?statements?|electronic(?:ally)?"
            r"|printed|html|paperless|digital|online|by\s+post|by\s+e-?mail|e-?mail|word|excel|csv")
_DOCUMENT_FORMAT = re.compile(
    rf"^(?:please\s+)?(?:(?:only|always)\s+)?(?:send|e-?mail|give|post|mail|issue|do)\s+(?:me\s+|us\s+)?(?:the\s+|my\s+|our"
    rf"\s+|all\s+|any\s+|future\s+)?(?P<what>{_DOCUMENTS})\s+(?:only\s+)?(?:as|in)\s+(?:an?\s+)?(?P<format>{_FORMATS})\b"
    rf"|^(?:(?:only|just)\s+)?(?P<format2>{_FORMATS})\s+(?P<what2>{_DOCUMENTS})\s+only\b"
    rf"|^(?:I|we)(?:\s+(?:need|want|prefer|would\s+like|would\s+prefer)|'d\s+(?:like|prefer))\s+(?:the\s+|my\s+|our\s+|all\s+)?"
    rf"(?P<what3>{_DOCUMENTS})"
    rf"\s+(?:as|in)\s+(?:an?\s+)?(?P<format3>{_FORMATS})\b"
    r"|^(?:(?:only|just)\s+)?(?P<format4>e-?statements|e-?bills|paperless\s+billing)\s+only\b"
    rf"|^(?:the\s+|my\s+|our\s+|all\s+|any\s+)?(?P<what5>{_DOCUMENTS})\s+(?:should|must|need\s+to|have\s+to|can)\s+(?:always\s+"
    rf"|only\s+)?(?:come|go\s+out|be\s+sent|arrive|be)\s+(?:as\s+|in\s+)?(?P<format5>{_FORMATS}|by\s+(?:text|sms))\b",
    re.I,
)


# "I'd like the alerts weekly, not daily": how often the customer wants a kind of message.
_DOCUMENT_FREQUENCY = re.compile(
    rf"^(?:I(?:'d|\s+would)\s+(?:like|prefer)|I\s+want|(?:please\s+)?(?:only\s+)?send(?:\s+me)?)\s+(?:the\s+|my\s+|our\s+)?"
    rf"(?P<what>{_DOCUMENTS})\s+(?:only\s+)?(?P<often>daily|weekly|monthly|fortnightly|quarterly|yearly|annually"
    r"|once\s+a\s+(?:day|week|month|year)|every\s+(?:day|week|month))\b",
    re.I,
)


def _document_format(ctx: RuleContext, text: str) -> list[Candidate]:
    if often := _DOCUMENT_FREQUENCY.match(text):
        what, how_often = often.group("what").lower(), " ".join(often.group("often").lower().split())
        kind = what[:-1] if what.endswith("s") else what
        what_said = what if what.endswith(("s", "ence", "work")) or what == "post" else f"the {what}"
        return [ctx.candidate(ctx.person.sentence(f"wants {what_said} {how_often}"), memory_type="preference",
                              confidence=0.8, rule="preference.document_frequency",
                              subject=f"preference:frequency:{kind}", tags=("preference",),
                              metadata={"value": how_often, "documents": what})]
    match = _DOCUMENT_FORMAT.match(text)
    if not match:
        return []
    if said := match.group("format4"):  # "e-statements only please"
        what, form = ("bills" if "bill" in said.lower() else "statements"), "electronic"
    else:
        what = (match.group("what") or match.group("what2") or match.group("what3") or match.group("what5")).lower()
        form = " ".join((match.group("format") or match.group("format2") or match.group("format3")
                         or match.group("format5")).split())
    kind = what[:-1] if what.endswith("s") and what not in ("correspondence",) else what
    if said:
        content = ctx.person.sentence(f"wants {said.lower()} only")
    else:  # the customer's own words for the form, up to where the sentence moves on ("PDF attachments only")
        said_form = form
        if match.group("format"):
            said_form = re.split(r"[,;]|\s+(?:because|since|as|so|but|please|thanks)\b", text[match.start("format"):])[0]
        joint = "" if form.lower().startswith("by") else "in " if re.match(r"(?:large|braille)", form, re.I) else "as "
        content = ctx.person.sentence(f"wants {what} {joint}{said_form}")
    return [ctx.candidate(content, memory_type="preference", confidence=0.8, rule="preference.document_format",
                          subject=f"preference:format:{kind}", tags=("preference", "format"),
                          metadata={"value": form, "documents": what})]


# "please take me off the marketing emails", "stop sending me the newsletter", "unsubscribe me from promo texts", "I
# don't want any sales calls": what the customer does not want to receive.
_OPT_OUT = re.compile(r"^(?:(?:and|also|oh|so)[\s,]+)*(?:please\s+|can\s+you\s+|could\s+you\s+|I'd\s+like\s+you\s+to\s+)*"
                      r"(?:take\s+me\s+off|remove\s+me\s+from|unsubscribe\s+me\s+from|stop\s+sending\s+me|opt\s+me\s+out\s+of"
                      # "I don't want any marketing emails", "I'd like to opt out of newsletters"
                      r"|(?P<dont>I\s+(?:don't|do\s+not)\s+want)(?:\s+to\s+(?:receive|get))?"
                      r"|(?:I'd\s+like\s+to\s+|I\s+want\s+to\s+)?(?:opt\s+out\s+of|unsubscribe\s+from))"
                      r"\s+(?:the\s+|your\s+|all\s+(?:the\s+)?|any\s+(?:more\s+)?)?(?P<what>(?!to\s)[\w -]{0,40}?(?:e-?mails?|newsletters?"
                      r"|mailing\s+list|mailings|texts?|sms|calls|letters|post|offers|promotions|notifications))\b"
                      # what they don't want is all of its kind: not "I don't want the emails to go to my old address"
                      r"(?(dont)(?=\s*(?:$|[,.;!]|(?:please|anymore|any\s+more|from\s+\w+|thanks?|at\s+all|ever)\b)))", re.I)


def _opt_out(ctx: RuleContext, text: str) -> list[Candidate]:
    if not (match := _OPT_OUT.match(text)):
        return []
    what = " ".join(match.group("what").lower().split())
    return [ctx.candidate(ctx.person.sentence(f"does not want {what}"), memory_type="preference", confidence=0.85,
                          rule="preference.opt_out", subject=f"preference:{object_key(what)}",
                          tags=("preference", "consent"), metadata={"value": what, "sentiment": "negative"})]


# "My home airport is Manchester", "our default service is Next Day Tracked", "my budget is £400 a month": a named
# value of a setting that holds one ("is fine", "is broken" name no value).
_SETTING = re.compile(
    r"^(?:(?:and|also|oh|so|btw)[\s,]+)*(?:my|our)\s+(?P<what>(?:[a-z][\w-]*\s+){0,2}?(?P<head>[a-z]+))\s+"
    r"(?:is|are)\s+(?:now\s+|still\s+|currently\s+|always\s+)?(?P<value>(?-i:[A-Z0-9£$€])[^,;]{0,50}?)\s*(?:[,;].*)?$",
    re.I,
)


def _setting(ctx: RuleContext, text: str) -> list[Candidate]:
    match = _SETTING.match(text)
    if not match or match.group("head").lower() not in lexicon.SETTING_HEADS or match.group("value").split()[0] in (
            "I", "It", "It's"):
        return []
    return [ctx.candidate(rewrite_first_person(text, ctx.person), memory_type="preference", confidence=0.8,
                          rule="preference.setting", subject=setting_subject(match.group("what")),
                          tags=("preference", "setting"), metadata={"value": match.group("value")})]


# "no pork in anything please", "Please, no champagne in the welcome basket", "no double stacking": something the
# customer never wants, said as "no X" with where or "please" (not "no problem", "no thanks", "no, that's fine").
_NO_THING = re.compile(r"^(?:(?:and|also|oh|so|but)[\s,]+)*(?:please[\s,]+)?(?:absolutely\s+|definitely\s+)?no\s+"
                       r"(?P<what>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,2}?)(?P<where>\s+(?:in|on|at|for|with|near)\s+[^,;]{2,40}?)?"
                       r"(?P<please>,?\s+(?:ever|at\s+all|please|pls|thanks?(?:\s+you)?))*$", re.I)
_NOT_WANTED_THINGS = frozenset("problem problems worries worry thanks thank need idea rush way matter change chance "
                               "one more longer further issue issues reason doubt answer reply luck sorry".split())


def nothing_wanted(ctx: RuleContext, text: str) -> list[Candidate]:
    """"no pork in anything please": what the customer never wants, or []."""
    match = _NO_THING.match(text.rstrip(" .!"))
    if not match or not (match.group("where") or match.group("please")) or match.group("what").split()[0].lower() in (
            _NOT_WANTED_THINGS) or refers_to_context(match.group("what")) or ONE_OFF.search(text):
        return []
    what = match.group("what").lower()
    where = match.group("where") or ""
    return [ctx.candidate(ctx.person.sentence(f"wants no {what}{rewrite_first_person(where, ctx.person)}"),
                          memory_type="preference", confidence=0.8, rule="preference.none",
                          subject=f"preference:{object_key(what)}", tags=("preference",),
                          metadata={"value": what, "sentiment": "negative"})]


PREFERENCE_RULES = (_document_format, _opt_out, _setting, _preferences)
