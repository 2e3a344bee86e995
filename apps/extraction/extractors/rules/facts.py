"""Durable facts a user states about themselves: name, work, home and attributes (health, age, family ...).

Every pattern is anchored at the start of a clause (after fillers like "Oh, btw,"), so "My sister lives in
Rome" or "Do I like tea?" never reads as a statement about the user.
"""

import re

from apps.extraction.extractors.base import Candidate
from apps.extraction.extractors.rules import lexicon
from apps.extraction.extractors.rules.context import SUBJECT_ADVERBS as ADV
from apps.extraction.extractors.rules.context import RuleContext
from apps.extraction.extractors.rules.dates import find_dates
from apps.extraction.extractors.rules.person import rewrite_first_person
from apps.extraction.extractors.rules.text import NAME_PARTICLES, cut_value, normalise_key, proper_name

_AM = r"(?:'m|\s+am)"

# --- Names ---------------------------------------------------------------------------------------------
_NAME = re.compile(
    r"^(?:my\s+(?:full\s+|first\s+|real\s+|given\s+)?name(?:'s|\s+is|\s*:)|name's|name\s*:|(?:the\s+)?(?:full\s+)?name"
    r"(?:\s+on\s+the\s+(?:account|booking|policy|card|order|reservation|ticket))?\s+is|I(?:'m|\s+am)\s+called"
    r"|I\s+go\s+by|(?:you\s+can\s+|please\s+|just\s+)*call\s+me|(?P<opening>this\s+is))\s+(?P<value>.+)$",
    re.I,
)
_CAP = r"[^\W\d_a-z][\w'-]*"
_IM_NAME = re.compile(rf"^I(?:'m| am) (?:(?:Dr|Mr|Mrs|Ms|Miss|Mx|Prof)\.? )?(?P<value>{_CAP}(?: (?:{_CAP}|de|del|da|di|van|von|la|le|dos|das|bin|al)){{0,4}})"
                      r"(?P<rest>(?: here| from .*|,.*)?)$")
_NAME_HERE = re.compile(rf"^(?:(?i:it's|it\s+is|this\s+is)\s+)?(?P<value>{_CAP}(?: {_CAP}){{0,3}}) (?:here|speaking|again)(?: again)?"
                        r"(?:,\s*(?P<rest>.+)|\s+(?:from|of|at)\s+[A-Z].*)?$")  # "Gemma here from Fairweather Roofing"
_NAME_FIELD = re.compile(rf"(?:^|[,;]\s*|\band\s+)(?:(?:my|the)\s+)?(?:full\s+)?name(?:\s+is|\s*:|\s*-)?\s+"
                         rf"(?P<value>{_CAP}(?:\s+{_CAP}){{1,4}})\s*$")
_APPOSITIVE = re.compile(r"^,\s+(?P<role>(?:an?|the)\s+.+?)(?:\s+from\s+(?P<place>.+))?$", re.I)
_NAME_WORD = re.compile(r"[^\W\d_](?:[^\W\d_]|['.-])*")  # letters: "MA26 KCS" is a number plate, not a name
_NAME_FILLERS = frozenset("actually really just simply now".split())
_ME_NAMED = re.compile(r"(?:^|,\s*)(?i:me),\s+(?P<value>(?-i:[^\W\d_a-z][\w'.-]+)(?:\s+(?-i:[^\W\d_a-z][\w'.-]+)){1,3})"
                       r"(?=\s*(?:,|$))")
_SIGN_OFF = re.compile(rf"^(?i:thanks|thank\s+you|many\s+thanks|regards|kind\s+regards|best\s+regards|warm\s+regards"
                       rf"|best\s+wishes|best|cheers|sincerely|yours\s+sincerely|yours|all\s+the\s+best)(?:[,!.]\s*|\s*[-–—]\s*)"
                       rf"(?P<value>{_CAP}(?: {_CAP}){{1,3}})\s*(?:\([^)]*\))?[.!]?$")
_LOWER_NAME = re.compile(r"^(?:I(?:'m| am)|this is|it's|it is|my name is|name's) (?P<value>[a-z][a-z'-]+(?: [a-z][a-z'-]+){1,4})(?:,\s*\S.*)?$")
_NOT_NAME_ENDINGS = ("ing", "ed", "ly", "ful", "less", "ous", "ive", "able", "ible", "ant", "ent", "ic", "ary", "ory",
                     "ish", "ist", "ism", "ness", "ment", "tion", "sion")
_NAME_PART_CHANGE = re.compile(
    r"^my\s+(?:new\s+)?(?P<part>sur|last|family|first|given|maiden)\s*name\s+(?:is\s+now|has\s+(?:now\s+)?changed\s+to"
    r"|changed\s+to|is\s+going\s+to\s+be|will\s+be|is|'s)\s+(?:(?:spelt|spelled|written)\s+)?(?P<value>.+)$"
    r"|^I(?:'ve|\s+have)?(?:\s+(?:just|recently|legally|officially))*\s+changed\s+my\s+(?:(?P<part2>sur|last|family|first"
    r"|given)\s*)?name\s+(?:back\s+)?to\s+(?P<v2>.+)$"
    r"|^I(?:'ve|\s+have)?\s+(?:gone|went|changed|switched|reverted)\s+back\s+to\s+my\s+(?:maiden|old|previous|birth)"
    r"\s+(?:sur|last\s+|family\s+)?name,?\s+(?:which\s+is\s+|so\s+it's\s+|it's\s+)?(?P<v3>.+)$",
    re.I,
)


def stated_name(text: str, *, opening: bool, lowercase: bool = False, known: str | None = None,
                ) -> tuple[str, str, float] | None:
    """(name, subject, confidence) when the clause states the user's name. `known`: the name known for the user, which
    only a name in an opening may replace ("Bogdan Petrović, logistics coordinator at Drina Foods." later on is a
    self-introduction only while no other name is known)."""
    match = _NAME.match(text)
    if match:
        if match.group("opening") and not opening:
            return None
        words = match.group("value").split()
        while words and words[0].lower() in _NAME_FILLERS:
            words.pop(0)
        value = _name_value(" ".join(words))
        if not _plausible_name(value, strict=bool(match.group("opening"))):
            # "this is aisha rahman, account holder": a lowercase typist's name is read below
            return _lowercase_name(text) if opening and lowercase else None
        lowered = text[:match.start("value")].lower()
        subject = "preferred_name" if ("call me" in lowered or "go by" in lowered) else "name"
        if subject == "preferred_name" and not _plausible_name(value, strict=True):
            return None
        return proper_name(value), subject, 0.7 if match.group("opening") else 0.95 if subject == "name" else 0.85
    match = _IM_NAME.match(text) or _NAME_HERE.match(text)
    if match and _plausible_name(match.group("value"), strict=True):
        words = match.group("value").split()
        if match.re is _NAME_HERE and len(words) == 1 and not opening:
            return None  # "Sunday here is fine" is not a name; "Rafael Duarte Nogueira here" is
        return match.group("value"), "name", 0.75 if opening else 0.6
    match = _ME_NAMED.search(text)  # "two adults, me, Sofia Marchetti, and my fiancé Luca Bianchi"
    if match and _plausible_name(match.group("value"), strict=True):
        return match.group("value"), "name", 0.75
    match = _NAME_FIELD.search(text)
    if match and _plausible_name(match.group("value"), strict=True):
        return match.group("value"), "name", 0.8
    if found := opening_name(text):
        role = found[1] or ""
        head = _ROLE_START.match(role) if role else None
        if opening and (not role or head and (head.group("head") or head.group("head2") or "").lower() in lexicon.JOB_HEADS
                        or re.match(r"^I(?:'m|\s+am)\b", role) or _CUSTOMER_OF.match(role)):
            return found[0], "name", 0.7
        if head and (head.group("head") or "").lower() in lexicon.JOB_HEADS and (
                known is None or known.casefold() == found[0].casefold()):
            return found[0], "name", 0.6  # a name with a role at an organisation, further on in the message
    return _lowercase_name(text) if opening and lowercase else None


def _lowercase_name(text: str) -> tuple[str, str, float] | None:
    """"i'm maria del carmen ruiz", "this is aisha rahman" from a lowercase typist."""
    match = _LOWER_NAME.match(text)
    if match and _plausible_lowercase_name(match.group("value")):
        return proper_name(match.group("value")), "name", 0.7
    return None


def sign_off_name(sentence: str, known: str | None = None) -> str | None:
    """The name a message is signed with ("Regards, Beatriz Santos", "Thanks, Sione Taufa (account holder)"): the
    customer's, unless another name is known for them."""
    match = _SIGN_OFF.match(sentence.strip())
    if match and _plausible_name(match.group("value"), strict=True) and (
            known is None or known.casefold() == match.group("value").casefold()):
        return match.group("value")
    return None


_OPENING_NAME = re.compile(
    r"^(?:(?i:it's|this\s+is)\s+)?(?P<value>(?!(?:I(?:'\w+)?|It's|It|This|That|There's|Here's)\b)[^\W\d_a-z][\w'.-]+(?:\s+(?:[^\W\d_a-z][\w'.-]+|"
    + "|".join(sorted(NAME_PARTICLES)) + r")){1,4})"
    r"(?:\s+(?:again|here|speaking))?(?:\s*,\s*(?P<rest>.+)|\s+(?P<from>from|of|at)\s+(?P<org>[A-Z].+))?$")


def opening_name(text: str) -> tuple[str, str | None, str | None] | None:
    """(name, what follows the comma, organisation) for an opening "Priya Raghunathan, Head of Ops at X"."""
    match = _OPENING_NAME.match(text)
    if not match or not _plausible_name(match.group("value"), strict=True):
        return None
    rest = match.group("rest")
    if rest and not _ROLE_START.match(rest) and not re.match(r"^I(?:'m|\s+am)\b", rest) and not _CUSTOMER_OF.match(rest):
        return None  # "New York, please": a name only when a role or nothing follows
    return match.group("value"), rest, match.group("org")


# "..., Bastion Shield Total customer", "..., a Harbour Club member": whose customer the person introducing themselves is.
_CUSTOMER_OF = re.compile(r"^(?:an?\s+)?(?P<product>(?-i:[A-Z])[\w&+'-]*(?:\s+(?-i:[A-Z0-9])[\w&+'-]*){0,3})\s+"
                          r"(?P<role>customer|subscriber|member|client|user|account\s+holder)s?$", re.I)
_ROLE_START = re.compile(r"^(?:the\s+|an?\s+)?(?:[\w&-]+\s+){0,3}?(?P<head>[\w-]+)\s+(?:at|of|for|with)\s+[A-Z]"
                         r"|^(?:the\s+|an?\s+)?(?:[\w&-]+\s+){0,2}?(?P<head2>[\w-]+)$")


def _name_value(raw: str) -> str:
    """The name at the start of `raw`: up to three words, not counting particles ("Maria del Carmen Ruiz")."""
    words = cut_value(raw, lexicon.NAME_BREAKS - NAME_PARTICLES, max_words=6).split()
    kept, named = [], 0
    for word in words:
        if word.lower() not in NAME_PARTICLES:
            if named == 4:
                break
            named += 1
        kept.append(word)
    while kept and kept[-1].lower() in NAME_PARTICLES:
        kept.pop()
    return " ".join(kept)


def _plausible_lowercase_name(value: str) -> bool:
    words = value.split()
    named = [word for word in words if word not in NAME_PARTICLES]
    return (2 <= len(named) <= 4 and words[0] not in NAME_PARTICLES and words[-1] not in NAME_PARTICLES
            and not any(word in lexicon.NOT_NAMES or word in lexicon.NAME_BREAKS or word in lexicon.COMMON_WORDS
                        or word in lexicon.JOB_HEADS or word in lexicon.LANGUAGES or word in lexicon.DIETS
                        or word in lexicon.HEALTH_CONDITIONS or word.endswith(_NOT_NAME_ENDINGS) for word in named))


# A company's legal form: "Alvarez Frame Studio LLC, EIN ..." opens with a business, not a person.
_LEGAL_FORM = re.compile(r"\b(?:Ltd|Limited|LLC|LLP|PLC|Plc|Inc|Corp|GmbH|SAS|SARL|BV|AG|Pty|SpA|Srl)\b")


def _plausible_name(value: str, *, strict: bool) -> bool:
    words = value.split()
    if not words or not all(_NAME_WORD.fullmatch(word) for word in words) or _LEGAL_FORM.search(value):
        return False
    if words[0].lower() in lexicon.NOT_NAMES or words[0].lower() in ("not", "none", "unknown", "secret", "private"):
        return False
    return not strict or all(word[0].isupper() and word.lower() not in lexicon.NOT_NAMES for word in words)


def _name_change(ctx: RuleContext, text: str) -> list[Candidate]:
    """"My surname is now Okafor": the full name with the new part, replacing the old name."""
    match = _NAME_PART_CHANGE.match(text)
    if not match:
        return []
    part = (match.group("part") or match.group("part2") or "").lower()
    value = _name_value(match.group("value") or match.group("v2") or match.group("v3"))
    if part == "maiden" or not _plausible_name(value, strict=False):
        return []
    value = proper_name(value)
    known = (ctx.person.known or "").split()
    if part in ("sur", "last", "family"):
        full = " ".join(known[:-1] + value.split()) if len(known) >= 2 else (
            f"{known[0]} {value}" if known else None)
    elif part in ("first", "given"):
        full = " ".join(value.split() + known[1:]) if known else None
    else:
        full = value
    if full is None:  # the user's name is not known: keep the part on its own
        label = "first name" if part in ("first", "given") else "surname"
        return [ctx.candidate(f"The user's {label} is {value}", confidence=0.9, rule="identity.name_part",
                              subject=f"name:{label.replace(' ', '_')}", tags=("identity",), metadata={"value": value})]
    return [ctx.candidate(f"The user's name is {full}", confidence=0.9, rule="identity.name_change", subject="name",
                          tags=("identity",), metadata={"value": full, "change": part or "name"})]


def _name(ctx: RuleContext, text: str) -> list[Candidate]:
    if changed := _name_change(ctx, text):
        return changed
    found = stated_name(text, opening=ctx.opening, lowercase=ctx.lowercase, known=ctx.person.known)
    if not found:
        return []
    value, subject, confidence = found
    content = (f"The user's name is {value}" if subject == "name"
               else f"The user prefers to be called {value}")
    named = [ctx.candidate(content, confidence=confidence, rule=f"identity.{subject}", subject=subject,
                           tags=("identity",), metadata={"value": value})]
    tail = text[text.find(value) + len(value):]
    here = re.match(r"^(?:\s+(?:here|speaking|again))?,\s*(?:I(?:'m|\s+am)\s+)?(?P<rest>.+)$", tail)
    if here:  # "Aroha Ngata here, team lead at Kowhai Health", "Priya R, Head of Operations at X"
        named += _work(ctx, f"I'm {here.group('rest')}")
    elif from_org := re.match(r"^(?:\s+(?:here|speaking|again))?\s+(?:from|of|at)\s+(?P<org>[A-Z].+)$", tail):
        if org := org_value(from_org.group("org")):
            named += _work_facts(ctx, None, org, "works at", "identity.employer", 0.75)
    if customer := _CUSTOMER_OF.match(re.sub(r"^\s*,\s*", "", tail)):  # "Babatunde Bankole, Bastion Shield Total customer"
        named.append(ctx.candidate(ctx.person.sentence(f"is a {customer.group('product')} {customer.group('role').lower()}"),
                                   confidence=0.75, rule="identity.customer_of", tags=("account",),
                                   metadata={"value": customer.group("product")}))
    appositive = _APPOSITIVE.match(tail)
    if appositive:  # "I'm Tom, a freelance designer from Manchester"
        named += _work(ctx, f"I'm {appositive.group('role')}")
        if appositive.group("place"):
            named += _home(ctx, f"I'm from {appositive.group('place')}")
    return named


# --- Work ------------------------------------------------------------------------------------------------
_WORK = re.compile(
    rf"^I(?:'m|\s+am|'ve\s+been|\s+have\s+been)?{ADV}\s+(?:work(?:ing)?|employed)(?:\s+(?:remotely|full[- ]time"
    rf"|part[- ]time|freelance|nights|days|weekends|(?:night\s+|day\s+|early\s+|late\s+)?shifts|from\s+home"
    rf"|in\s+the\s+office|there))?\s+(?P<rest>(?:as|at|for|by)\s+.+)$"
    # "I'm at Yorkshire Water now as a data analyst"
    rf"|^I(?:'m|\s+am){ADV}\s+(?P<rest2>at\s+(?-i:[A-Z]).*?\s+as\s+.+)$",
    re.I,
)
_WORK_IN = re.compile(rf"^I{ADV}\s+work\s+in\s+(?P<field>[\w -]+?)(?:\s+(?:now|these\s+days))?$", re.I)
_IM_A = re.compile(rf"^I{_AM}(?:\s+(?:now|currently|also|actually|just|still))*\s+(?P<article>an?|the)\s+(?P<rest>.+)$",
                   re.I)
_JOB_STATE = re.compile(rf"^I{_AM}(?:\s+(?:now|currently|also|happily))*\s+(?P<state>freelancing"
                        rf"|{'|'.join(sorted(lexicon.JOB_STATES))})(?:\s+(?:now|these\s+days|btw))?$", re.I)
_MY_JOB = re.compile(r"^my\s+(?:current\s+|new\s+)?(?:job(?:\s+title)?|role|title|position|profession|occupation)"
                     r"\s+is\s+(?:as\s+)?(?P<job>.+)$", re.I)
_MY_EMPLOYER = re.compile(r"^my\s+(?:current\s+|new\s+)?(?:employer|company)\s+is\s+(?:called\s+)?(?P<org>.+)$", re.I)
_STARTED_AT = re.compile(r"^I(?:'ve|\s+have)?(?:\s+(?:just|recently|finally))*\s+(?:started|joined|accepted)"
                         r"\s+(?:a\s+)?(?:new\s+)?(?:job|position|role)\s+(?:at|with)\s+(?P<org>.+)$", re.I)
_BECAME = re.compile(
    r"^I(?:'ve|\s+have)?(?:\s+(?:just|recently|now|finally|officially))*\s+(?:become|became|been\s+(?:promoted|appointed"
    r"|made|named)(?:\s+(?:to|as))?|got\s+promoted\s+to|was\s+(?:promoted|appointed|made|named)(?:\s+(?:to|as))?"
    r"|started\s+as|taken\s+over\s+as|took\s+over\s+as|stepped\s+(?:up|in)\s+as|moved\s+into\s+(?:a|the)\s+role\s+of)"
    r"\s+(?:the\s+(?:new\s+)?|an?\s+(?:new\s+)?|our\s+)?(?P<job>.+?)(?:\s+(?:at|for|with)\s+(?P<org>\S.*))?$",
    re.I,
)
_IM_ROLE_AT = re.compile(r"^I(?:'m|\s+am)(?:\s+(?:now|currently|the\s+new|still))*\s+(?P<job>[\w -]+?)\s+(?:at|for|with)"
                         r"\s+(?P<org>(?-i:[A-Z]).+)$"
                         r"|^I(?:'m|\s+am)(?:\s+(?:now|currently|the\s+new|still))*\s+(?P<job2>(?:head|director|chief|vp|lead"
                         r"|manager)\b[\w -]*?)(?:\s+(?:now|btw|these\s+days|here))*$", re.I)
_IM_ROLE_OF = re.compile(r"^I(?:'m|\s+am)(?:\s+(?:now|currently|the\s+new|still))*\s+(?P<job>(?:the\s+)?(?:[\w-]+\s+)?"
                         r"(?:ceo|cto|cfo|coo|cio|founder|co-founder|owner|president|director|chair|vp))\s+of"
                         r"\s+(?P<org>(?-i:[A-Z]).+)$",
                         re.I)
_JOINED = re.compile(r"^I(?:'ve| have)?(?: (?:just|recently|finally))* joined (?P<org>[A-Z].+)$")
_JOB_STOPS = frozenset("at for with in and but since because where who which so now currently until on from by i "
                       "here there today".split())
_ORG_STOPS = frozenset("as and but since for in on where which who because now currently doing with until from to so i "
                       "after following "
                       "remotely part-time full-time last next this ago anymore these nowadays today".split())
_NOT_ORGS = frozenset(["home", "night", "nights", "weekends", "the weekend", "the moment", "myself", "it", "this",
                       "that", "least", "once", "times", "my desk", "the office", "a desk", "work", "all"])
_NOT_JOB_WORDS = frozenset("this that my your account order subscription card plan app website".split())
_NOT_JOB_OPENERS = frozenset("only one first last best worst main same new bit little".split())
_OF_ORG_HEADS = frozenset("ceo cto cfo coo cio founder co-founder owner president director head vp chair".split())


_CALLED = re.compile(r"^(?:a|an|the)\s+(?:[\w-]+\s+){0,2}?(?:company|firm|business|agency|startup|start-up|shop|store"
                     r"|practice|studio|organi[sz]ation|charity|place|team)\s+(?:called|named)\s+", re.I)


def org_value(raw: str) -> str | None:
    org = cut_value(_CALLED.sub("", raw), _ORG_STOPS, max_words=6)
    if not org or org.lower() in _NOT_ORGS or org.split()[0].lower() in lexicon.DEICTIC_OBJECTS:
        return None
    return org


def _job(raw: str) -> str | None:
    job = cut_value(raw, _JOB_STOPS, max_words=6)
    first = job.split()[0].lower() if job else ""
    acronym = bool(job) and job.split()[0].isupper() and len(job.split()) > 1  # "IT manager", not "it"
    if not job or first in lexicon.DEICTIC_OBJECTS and not acronym or first in _NOT_JOB_OPENERS:
        return None
    # "the owner of this account", "an admin on my plan": a role in this conversation, not a job
    return None if _NOT_JOB_WORDS.intersection(job.lower().split()) else job


def _work_facts(ctx: RuleContext, job: str | None, org: str | None, org_verb: str, rule: str,
                confidence: float, job_sentence: str | None = None) -> list[Candidate]:
    found = []
    person = ctx.person
    if job:
        head = job.split(" of ")[0].split()[-1].lower()
        student = head in lexicon.STUDENT_HEADS
        sentence = job_sentence or person.sentence(f"works as {_with_article(job)}")
        if org and not student and org.casefold() not in sentence.casefold():
            sentence += f" at {org}"  # the role is read with its organisation ("CFO at Brannock & Hale")
        found.append(ctx.candidate(sentence, confidence=confidence, rule=f"{rule}.job", subject="job_title",
                                   tags=("identity", "work"), metadata={"value": job}))
        if org and student:
            return found + [ctx.candidate(person.sentence(f"studies at {org}"), confidence=confidence,
                                          rule=f"{rule}.school", subject="school", tags=("identity",),
                                          metadata={"value": org})]
    if org:
        found.append(ctx.candidate(person.sentence(f"{org_verb} {org}"), confidence=confidence,
                                   rule=f"{rule}.employer", subject="employer", tags=("identity", "work"),
                                   metadata={"value": org}))
    return found


def _job_head(job: str) -> str:
    return job.split(" of ")[0].split()[-1].lower()


def _with_article(job: str) -> str:
    first = job.split()[0].lower()
    if first in ("a", "an", "the", "head", "chief") or first.endswith("'s"):
        return job
    return f"{'an' if first[0] in 'aeiou' else 'a'} {job}"


def _work(ctx: RuleContext, text: str) -> list[Candidate]:
    person = ctx.person
    match = _WORK_IN.match(text)
    if match and match.group("field").lower() in lexicon.INDUSTRIES:
        field = match.group("field")
        return [ctx.candidate(person.sentence(f"works in {field}"), confidence=0.8, rule="identity.industry",
                              subject="industry", tags=("identity", "work"), metadata={"value": field})]
    match = _WORK.match(text)
    if match:
        rest, job, org, org_verb = match.group("rest") or match.group("rest2"), None, None, "works at"
        for part in re.split(r"\s+(?=(?:as|at|for|by)\s)", rest, flags=re.I):
            word, _, value = part.partition(" ")
            word = word.lower()
            if word == "as" and not job:
                job = _job(re.sub(r"^(?:an?|the)\s+", "", value, flags=re.I))
            elif word in ("at", "for", "by") and not org:
                org = org_value(re.sub(r"\s+now$", "", value))
                org_verb = {"at": "works at", "for": "works for", "by": "is employed by"}[word]
        return _work_facts(ctx, job, org, org_verb, "identity.work", 0.9)
    match = _JOB_STATE.match(text)
    if match:
        state = match.group("state").lower().replace("freelancing", "freelance")
        # Working for themselves is who they work for, and leaves what they do as it was ("a video editor");
        # retired or out of work, they no longer do it.
        subject = "employer" if state in ("freelance", "self-employed") else "job_title"
        return [ctx.candidate(person.sentence(f"is {state}"), confidence=0.85, rule="identity.job_state",
                              subject=subject, tags=("identity", "work"), metadata={"value": state})]
    match = _IM_A.match(text)
    if match:
        return _im_a(ctx, match)
    match = _BECAME.match(text) or _IM_ROLE_AT.match(text) or _IM_ROLE_OF.match(text)
    groups = match.groupdict() if match else {}
    if match and (job := _job(groups.get("job") or groups.get("job2") or "")) and _job_head(job) in lexicon.JOB_HEADS:
        org = org_value(groups.get("org") or "") if groups.get("org") else None
        return _work_facts(ctx, job, org, "works at", "identity.role", 0.85,
                           job_sentence=ctx.person.sentence(f"is {_with_article(job)}"))
    match = _MY_JOB.match(text)
    if match and (job := _job(match.group("job"))):
        return _work_facts(ctx, job, None, "", "identity.my_job", 0.9,
                           job_sentence=f"{person.possessive} job is {job}")
    match = _MY_EMPLOYER.match(text) or _STARTED_AT.match(text) or _JOINED.match(text)
    if match and (org := org_value(match.group("org"))):
        confidence = 0.75 if match.re is _JOINED else 0.9
        return _work_facts(ctx, None, org, "works at", "identity.employer", confidence)
    return []


def _im_a(ctx: RuleContext, match: re.Match) -> list[Candidate]:
    rest, article = match.group("rest"), match.group("article").lower()
    org_match = re.search(r"\s(at|for|with)\s+(?P<org>.+)$", rest, re.I)
    job = _job(rest)
    if not job:
        return []
    org = org_value(org_match.group("org")) if org_match else None
    if org and org_match.group(1).lower() == "with" and not org[0].isupper():
        org = None  # "an engineer with 10 years of experience"
    words = job.split(" of ")
    if not org and len(words) == 2 and words[0].split()[-1].lower() in _OF_ORG_HEADS and words[1][:1].isupper():
        job, org = words[0], words[1]  # "I'm the CEO of Acme"
    head = job.split(" of ")[0].split()[-1].lower()
    if head not in lexicon.JOB_HEADS and (not org or head in lexicon.COMMON_WORDS):
        return []  # "I'm a member at the gym", "I'm a long-time customer of yours"
    sentence = ctx.person.sentence(f"is {article} {job}")
    return _work_facts(ctx, job, org, "works at", "identity.role", 0.85 if org else 0.75, job_sentence=sentence)


# --- Home ------------------------------------------------------------------------------------------------
_LIVE = re.compile(rf"^(?P<subj>I|we)(?:'ve\s+been|\s+have\s+been|'re|\s+are|'m|\s+am)?{ADV}\s+(?:live|living|reside"
                   r"|residing)\s+in\s+(?P<place>.+)$", re.I)
_BASED = re.compile(rf"^I{_AM}{ADV}\s+(?P<verb>based|located)\s+(?:in|out\s+of)\s+(?P<place>.+)$", re.I)
# "I'm in York now", "we're now in Utrecht": where they are now, said of a place by name, with nothing after it
_IN_NOW = re.compile(r"^(?P<subj>I|[Ww]e)(?i:'m|\s+am|'re|\s+are)\s+(?i:(?P<now>now)\s+)?(?i:in)\s+(?P<place>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*){0,2})"
                     r"(?(now)|\s+(?i:now))(?:\s*,\s*(?i:(?:I|we)\s+)?(?i:moved|relocated)\b.*)?$")  # "..., moved last month"
_VISITING = re.compile(r"\b(?:back|until|till|visit(?:ing)?|trip|holiday|vacation|travel(?:l?ing)?|conference|stay(?:ing)?"
                       r"|week(?:end)?|days?|for\s+(?:a|the|work|business))\b", re.I)
_FROM = re.compile(rf"^I(?:{_AM}|{ADV}\s+come){ADV}\s+from\s+(?P<place>.+)$", re.I)
_MOVED = re.compile(rf"^(?P<subj>I|we)(?:'ve|\s+have|'d|\s+had)?{ADV}\s+(?:moved|relocated)\s+(?:back\s+)?to"
                    r"\s+(?P<place>.+)$", re.I)
_LIVED = re.compile(rf"^I(?:'ve|\s+have){ADV}\s+lived\s+in\s+(?P<place>.+?)\s+(?:for|since)\s+.+$", re.I)
_HOMETOWN = re.compile(r"^(?:my\s+(?:home\s*town|home\s+city)\s+is|I\s+grew\s+up\s+in)\s+(?P<place>.+)$", re.I)
_PLACE_STOPS = frozenset(
    "and but since for with because now currently where which who until when ago last next this in at on from by "
    "as so i anymore these nowadays today recently originally though although to after before about around while "
    "during then also too years months weeks tomorrow yesterday".split()
)
_NOT_PLACES = frozenset([
    "here", "there", "home", "it", "this", "that", "town", "the area", "the city", "the same place", "the moment",
    "fear", "hope", "denial", "peace", "harmony", "poverty", "debt", "pain", "misery", "a bubble", "the past",
    "the present", "the future", "luxury", "style",
])
_NOT_PLACE_WORDS = frozenset(
    "apartment flat house condo dorm hotel tent van car building team department support company office sales "
    "marketing accounting hr it corporate future past work school internet".split()
)


def place_value(raw: str) -> str | None:
    place = cut_value(raw, _PLACE_STOPS, max_words=5, keep_comma_names=True)
    words = place.lower().replace(",", "").split()
    if (not words or place.lower() in _NOT_PLACES or words[0] in _NOT_PLACES or words[0] in lexicon.DEICTIC_OBJECTS
            or any(word in _NOT_PLACE_WORDS for word in words) or any(char.isdigit() for char in place)
            or re.match(r"^(?:dr|mr|mrs|ms|miss|prof)\.?$", words[0]) or place.endswith(("'s", "\u2019s"))
            or re.search(r"'s\s+(?:practice|office|surgery|clinic|place|house)$", place, re.I)):
        return None  # "Dr Patel's practice", "my sister's": a person's place, not a town
    return place


def _home(ctx: RuleContext, text: str) -> list[Candidate]:
    person = ctx.person
    for pattern, template, rule, confidence in (
        (_LIVE, "lives in {place}", "identity.location.live", 0.9),
        (_LIVED, "lives in {place}", "identity.location.live", 0.85),
        (_BASED, "is {verb} in {place}", "identity.location.based", 0.9),
        (_IN_NOW, "is based in {place}", "identity.location.based", 0.8),
        (_FROM, "is from {place}", "identity.location.from", 0.8),
        (_MOVED, "moved to {place}", "identity.location.moved", 0.9),
        (_HOMETOWN, "{possessive} hometown is {place}", "identity.hometown", 0.85),
    ):
        match = pattern.match(text)
        if not match or not (place := place_value(match.group("place"))):
            continue
        if pattern is _IN_NOW and _VISITING.search(ctx.sentence.partition(text)[2] if text in ctx.sentence else ctx.sentence):
            continue  # "I'm in Tokyo now, back next week": a stay, not where they live
        metadata = {"value": place}
        content = template.format(place=place, verb=(match.groupdict().get("verb") or "").lower(),
                                  possessive=person.possessive)
        if pattern is _MOVED:
            metadata["change"] = "moved"
            tail = match.group("place")[len(place):]
            dates = find_dates(tail, ctx.reference)
            if dates and dates[0].start < 4:
                content += f" {dates[0].text}"
                metadata |= dates[0].metadata()
        if pattern is not _HOMETOWN:
            content = person.sentence(content)
        if (match.groupdict().get("subj") or "I").lower() == "we":
            confidence -= 0.1
        # Where someone grew up is not where they live now.
        subject = "hometown" if pattern is _HOMETOWN else "location"
        return [ctx.candidate(content, confidence=confidence, rule=rule, subject=subject,
                              tags=("identity", "location"), metadata=metadata)]
    return []


# --- Attributes: health, diet, age, birthday, nationality, languages, family ----------------------------
_ALLERGY = re.compile(rf"^I{_AM}{ADV}(?:\s+(?:severely|very|highly|deathly|mildly|extremely))?\s+allergic\s+to"
                      r"\s+(?P<what>.+)$", re.I)
_HAVE_ALLERGY = re.compile(r"^I\s+have\s+(?:a|an)\s+(?:severe\s+|mild\s+|bad\s+)?(?P<what>[\w -]{1,40}?)\s+allergy\b",
                           re.I)
_DIET = re.compile(rf"^I{_AM}{ADV}(?:\s+(?:an?|strictly|fully|mostly|strict))*\s+(?P<diet>vegetarian|vegan|pescatarian"
                   r"|pescetarian|keto|kosher|halal|paleo|celiac|coeliac|diabetic|lactose[- ]intolerant"
                   r"|gluten[- ]intolerant|gluten-free)(?:\s+(?:now|these\s+days|too|as\s+well))?"
                   r"(?:,?\s+(?:and|so|which\s+means)\s+.+)?$", re.I)
# Conditions and needs that matter to how a customer is served; the whole clause is kept ("... and can't have sugar").
_CONDITION_STATE = re.compile(
    rf"^I{_AM}{ADV}(?:\s+(?:an?|registered|partially|profoundly|severely))*\s+(?P<cond>asthmatic|epileptic|pregnant"
    r"|deaf|blind|hard\s+of\s+hearing|partially\s+sighted|visually\s+impaired|hearing\s+impaired|sight\s+impaired"
    r"|wheelchair\s+user|colou?r[- ]?blind|dyslexic|autistic|disabled|immunocompromised|immunosuppressed|an[a]?emic"
    r"|housebound|on\s+dialysis|on\s+blood\s+thinners|insulin[- ]dependent|neurodivergent|on\s+oxygen)\b.*$", re.I)
_HAVE_CONDITION = re.compile(
    r"^I(?:\s+(?:have|suffer\s+from|live\s+with)|'ve\s+got|(?:'ve|\s+have)?\s+(?:been|was)\s+diagnosed\s+with)"
    r"\s+(?:a\s+|an\s+|mild\s+|severe\s+|chronic\s+|bad\s+)*(?P<cond>(?:type\s+[12]\s+)?diabetes|asthma|epilepsy"
    r"|arthritis|heart\s+(?:condition|disease|problems?)|high\s+blood\s+pressure|hypertension|copd|multiple\s+sclerosis"
    r"|parkinson's|dementia|migraines?|pacemaker|hearing\s+aids?|hearing\s+loss|sight\s+loss|low\s+vision"
    r"|disability|mobility\s+(?:issues|problems)|limited\s+mobility|chronic\s+pain|crohn's|c[o]?eliac\s+disease"
    r"|anxiety|adhd|autism|dyslexia|bad\s+back|back\s+problems|kidney\s+disease|cancer|lupus|fibromyalgia"
    r"|sleep\s+apnoea|sleep\s+apnea|ibs|allergies|food\s+allerg(?:y|ies)|nut\s+allergy|peanut\s+allergy|stoma"
    r"|long\s+covid|visual\s+impairment|hearing\s+impairment)\b.*$", re.I)
_USE_AID = re.compile(r"^I(?:\s+(?:use|need|rely\s+on|depend\s+on)|'m\s+(?:in|using))\s+(?:a\s+|an\s+)?(?P<cond>wheelchair"
                      r"|hearing\s+aids?|walking\s+(?:stick|frame|aid)|cane|walker|mobility\s+scooter|screen\s+reader"
                      r"|guide\s+dog|sign\s+language(?:\s+interpreter)?|interpreter|large\s+print|step-free\s+access"
                      r"|wheelchair\s+access|ground[- ]floor\s+\w+|braille|oxygen|insulin|an\s+epipen|epipen"
                      r"|accessible\s+\w+)\b.*$", re.I)
_CANNOT_CONSUME = re.compile(r"^I\s+(?:can't|cannot|can\s+not|don't|do\s+not|must\s+not|mustn't|shouldn't)\s+(?:eat|have|drink"
                             r"|take|tolerate|consume)\s+(?!(?:\w+ed|given|sent|told|said|done|been|got|gotten|made|put|let"
                             r"|written|taken|known|seen|shown|paid|left|brought|bought|kept|had|gone)\b)(?P<cond>(?!(?:it|that|this|them|a|an|the|my|our|any|one|enough|time|access)\b)[\w -]{2,40}?)"
                             r"(?:\s+(?:at\s+all|anymore|any\s+more))?(?:\s+(?:because|since|as|due)\b.*)?$", re.I)
_AGE = re.compile(r"^I(?:'m|\s+am|(?:'ve|\s+have)?\s+just\s+turned|\s+turned)\s+(?P<age>\d{1,3})(?:\s*(?:years?\s+old"
                  r"|yrs?\s+old|yo|y/o|year-old))?(?:\s+(?:last|this)\s+\w+|\s+yesterday|\s+today|\s+recently)?$", re.I)
_BIRTHDAY = re.compile(r"^(?:my\s+(?:birthday|bday|b-day|date\s+of\s+birth|dob)(?:\s+is|\s*:)|I\s+was\s+born\s+on)\s+(?:on\s+)?"
                       r"(?P<when>.+)$"
                       # "DOB is 3 May 1981", "date of birth: 03/05/1981": the form's label, the customer's own
                       r"|^(?:(?:and|also|oh)[\s,]+)*(?:dob|d\.o\.b\.?|date\s+of\s+birth)\s*(?:is\s+|:\s*|-\s*|\s)(?P<when2>.+)$",
                       re.I)
_BORN_IN = re.compile(r"^I\s+was\s+born\s+in\s+(?P<where>.+)$", re.I)
_NATIONALITY = re.compile(rf"^I{_AM}\s+(?P<nat>[A-Za-z]+)$", re.I)
_SPEAK = re.compile(rf"^I{ADV}\s+(?:can\s+)?speak\s+(?P<langs>.+)$", re.I)
_NATIVE = re.compile(r"^my\s+(?:native|first|mother)\s+(?:language|tongue)\s+is\s+(?P<lang>[A-Za-z]+)$"
                     r"|^(?P<lang2>[A-Za-z]+)\s+is\s+my\s+(?:native|first|mother|main)\s+(?:language|tongue)\b.*$", re.I)
_LANGUAGE_WISH = re.compile(r"\b(?:speak|talk|write|writes|reply|respond|answer|call|calls|communicate|contact|chat|explain"
                            r"|someone\s+who\s+speaks?|better|prefer|easier|rather)\b[^.]{0,30}?\bin\s+"
                            r"(?:(?P<plain>simple|plain)\s+)?(?P<lang>[A-Za-z]+)\b"
                            r"|\bsomeone\s+who\s+speaks?\s+(?P<lang2>[A-Za-z]+)\b"
                            r"|\b(?P<lang3>[A-Za-z]+)\s+is\s+(?:much\s+|far\s+)?(?:better|easier)(?:\s+for\s+me)?(?:$|[,;.])", re.I)
_RELATIVE_NAME = re.compile(
    r"^my\s+(?P<who>wife|husband|partner|girlfriend|boyfriend|fianc[eé]e?|spouse|son|daughter|kid|child|mom|mum"
    r"|mother|dad|father|brother|sister|dog|cat|puppy|kitten|pet|baby|boss|manager)(?:'s\s+name\s+is|\s+is\s+called"
    r"|\s+is\s+named|\s+goes\s+by)\s+(?P<value>.+)$", re.I)
_HAVE_FAMILY = re.compile(
    r"^I\s+have\s+(?:a|an|one|two|three|four|five|six|\d)\s+(?:[\w-]+\s+){0,2}?(?P<what>kids?|children|sons?"
    r"|daughters?|dogs?|cats?|puppy|puppies|kittens?|brothers?|sisters?|siblings?|grandchildren|grandkids|twins"
    r"|parrots?|rabbits?|hamsters?|horses?)\b", re.I)
_MARITAL = re.compile(rf"^I{_AM}(?:\s+(?:happily|recently|newly|now))?\s+(?P<status>married|single|divorced|engaged"
                      r"|widowed)(?:\s+(?:to|with)\s+.+)?$", re.I)
_TIMEZONE = re.compile(r"^(?:my\s+time\s*zone\s+is\s+(?P<tz>.+)|I(?:'m|\s+am)\s+(?:in|on)\s+(?:the\s+)?(?P<tz2>[\w/+-]+"
                       r"(?:\s+[A-Za-z]+)?)\s+time\s*zone)$", re.I)
_NATIVE_IN_PASSING = re.compile(r",\s*(?P<lang>[A-Za-z]+)\s+is\s+my\s+(?:first|native|mother)\s+(?:language|tongue)\b", re.I)
_PRONOUNS = re.compile(r"^my\s+pronouns\s+are\s+(?P<value>[a-z]+/[a-z]+(?:/[a-z]+)?)$", re.I)
_LIST_STOPS = frozenset("because since but though although when if unless so which especially except".split())


# One key per condition, however it is said: "I'm diabetic" and "I have diabetes", "coeliac disease" and "I'm coeliac".
_CONDITION_NOUNS = {"diabetic": "diabetes", "asthmatic": "asthma", "epileptic": "epilepsy", "anaemic": "anaemia",
                    "anemic": "anaemia", "arthritic": "arthritis", "autistic": "autism", "dyslexic": "dyslexia",
                    "celiac": "coeliac", "celiac disease": "coeliac", "coeliac disease": "coeliac",
                    "hypertensive": "hypertension", "dyspraxic": "dyspraxia"}


def health_key(condition: str) -> str:
    return _CONDITION_NOUNS.get(condition, condition)


_ALSO_TAIL = re.compile(r"\s+(?:myself|too|as\s+well|also)$", re.I)  # "I'm coeliac myself", "I'm vegan too"


def _attributes(ctx: RuleContext, text: str) -> list[Candidate]:
    person = ctx.person
    text = _ALSO_TAIL.sub("", text)

    def fact(subject, rule, confidence=0.9, tags=("identity",), content=None, **metadata):
        # The clause is rewritten only once a rule has recognised it: most clauses reach here to be turned down.
        return [ctx.candidate(content or rewrite_first_person(text, person), confidence=confidence, rule=rule,
                              subject=subject, tags=tags, metadata=metadata)]

    if match := (_ALLERGY.match(text) or _HAVE_ALLERGY.match(text)):
        what = cut_value(match.group("what"), _LIST_STOPS, max_words=8)
        return fact(f"allergy:{normalise_key(what)}", "health.allergy", tags=("health",), value=what) if what else []
    if match := (_CONDITION_STATE.match(text) or _HAVE_CONDITION.match(text) or _USE_AID.match(text)):
        condition = normalise_key(match.group("cond"))
        kind = "accessibility" if match.re is _USE_AID else "health"
        key = health_key(condition) if kind == "health" else condition
        return fact(f"{kind}:{key}", f"health.{kind}", tags=("health",), value=condition)
    if match := _CANNOT_CONSUME.match(text):
        avoided = normalise_key(match.group("cond"))
        return fact(f"diet:avoid:{avoided}", "health.avoid", confidence=0.8, tags=("health", "diet"), value=avoided)
    if match := _DIET.match(text):
        diet = match.group("diet").lower().replace(" ", "-")
        if diet in lexicon.DIETS:
            return fact("diet", "health.diet", tags=("health", "diet"), value=diet)
        condition = lexicon.HEALTH_CONDITIONS.get(diet, diet)
        return fact(f"health:{health_key(condition)}", "health.condition", tags=("health",), value=condition)
    if (match := _AGE.match(text)) and 3 <= int(match.group("age")) <= 120:
        age = match.group("age")
        turned = "turned" in text.lower()
        content = person.sentence(f"turned {age}" if turned else f"is {age} years old")
        return fact("age", "identity.age", confidence=0.85, content=content, value=age)
    if match := _BIRTHDAY.match(text):
        when = match.group("when") or match.group("when2")
        dates = find_dates(when, ctx.reference)
        metadata = {"date_text": dates[0].text} if dates else {}
        content = None if re.match(r"(?:my\s+(?:birthday|bday|b-day)|I\s+was)\b", text, re.I) else (
            f"{person.possessive} date of birth is {when.strip()}")
        return fact("birthday", "identity.birthday", content=content, **metadata) if dates else []
    if match := _BORN_IN.match(text):
        where = match.group("where")
        if re.fullmatch(r"(?:19|20)\d{2}", where.strip()):
            return fact("birth_year", "identity.birth_year", value=where.strip())
        place = place_value(where)
        return fact("birthplace", "identity.birthplace", value=place) if place else []
    if (match := _NATIONALITY.match(text)) and match.group("nat").lower() in lexicon.NATIONALITIES:
        nationality = match.group("nat")
        return fact("nationality", "identity.nationality", confidence=0.8, value=nationality)
    if (match := _SPEAK.match(text)) and any(word.strip(",.").lower() in lexicon.LANGUAGES
                                             for word in match.group("langs").split()[:8]):
        langs = cut_value(match.group("langs"), _LIST_STOPS, max_words=10)
        content = person.sentence(f"speaks {langs}")
        return fact(None, "identity.languages", confidence=0.85, content=content, tags=("identity", "language"),
                    value=langs)
    if (match := _NATIVE.match(text)) and (lang := match.group("lang") or match.group("lang2")).lower() in \
            lexicon.LANGUAGES:
        return fact("native_language", "identity.native_language", tags=("identity", "language"), value=lang)
    if (match := _LANGUAGE_WISH.search(text)) and (native := _NATIVE_IN_PASSING.search(text)) and (
            native.group("lang").lower() in lexicon.LANGUAGES):  # "write me in simple English, Korean is my first language"
        return _attributes(ctx, text[:native.start()].rstrip(" ,")) + fact(
            "native_language", "identity.native_language", tags=("identity", "language"),
            content=person.sentence(f"speaks {native.group('lang').capitalize()} as their first language"),
            value=native.group("lang").capitalize())
    if (match := _LANGUAGE_WISH.search(text)) and (
            lang := match.group("lang") or match.group("lang2") or match.group("lang3")).lower() in lexicon.LANGUAGES:
        said = f"{match.group('plain').lower()} {lang.capitalize()}" if match.group("plain") else lang.capitalize()
        content = rewrite_first_person(text, person) if re.match(r"^(?:I|my)\b", text, re.I) else person.sentence(
            f"prefers to communicate in {said}")
        return [ctx.candidate(content, memory_type="preference", confidence=0.8, rule="preference.language",
                              subject="preference:language", tags=("preference", "language"),
                              metadata={"value": lang.capitalize()})]
    if (match := _RELATIVE_NAME.match(text)) and _plausible_name(
            value := cut_value(match.group("value"), lexicon.NAME_BREAKS, max_words=2), strict=False):
        named = proper_name(value)  # "my wife is called sara"
        start = match.start("value")
        content = rewrite_first_person(text[:start] + named + text[start + len(value):], person)
        return fact(None, "family.name", confidence=0.85, content=content, tags=("family",),
                    relation=match.group("who").lower(), value=named)
    if match := _HAVE_FAMILY.match(text):
        return fact(None, "family.members", confidence=0.8, tags=("family",))
    if match := _MARITAL.match(text):
        return fact("marital_status", "family.marital_status", confidence=0.8, tags=("family",),
                    value=match.group("status").lower())
    if match := _TIMEZONE.match(text):
        zone = (match.group("tz") or match.group("tz2")).strip()
        return fact("timezone", "identity.timezone", confidence=0.85, value=zone)
    if match := _PRONOUNS.match(text):
        return fact("pronouns", "identity.pronouns", value=match.group("value"))
    return []


# First match wins within a clause: a clause is one statement.
# "Levothyroxine 75mcg once a day", "I'm on ramipril 5 mg": a medicine the customer takes, known by its dose.
_DOSED = re.compile(r"(?:^|\b(?:I\s+take|I'm\s+on|I\s+am\s+on|I\s+use|taking|and|plus|also)\s+|^(?:(?:my|the)\s+)?)"
                    r"(?P<drug>(?-i:[A-Z])[a-z]{3,}(?:\s+(?-i:[A-Z])[a-z]+)?|[a-z]{5,})\s+(?P<dose>\d+(?:\.\d+)?\s?"
                    r"(?:mg|mcg|µg|micrograms?|milligrams?|ml|iu|units?))\b(?P<rest>[^.;,]*)", re.I)
_SOMEONE_ELSE_TAKES = re.compile(r"\b(?:he|she|his|her|they|their|him|them)\b|\b(?:my|our)\s+(?:son|daughter|husband|wife"
                                 r"|partner|mum|mother|dad|father|child|kids?|baby|dog|cat|patient)\b", re.I)
_NOT_DRUGS = frozenset("about around only just over under nearly almost roughly approximately maybe".split())


def _medication(ctx: RuleContext, text: str) -> list[Candidate]:
    """One memory per medicine the customer says they take at a dose; someone else's medicines are theirs."""
    if not any(char.isdigit() for char in text) or _SOMEONE_ELSE_TAKES.search(ctx.sentence or text):
        return []  # every clause no earlier rule read comes here: most have no figure at all
    found = []
    for match in _DOSED.finditer(text):
        drug = match.group("drug")
        if drug.lower() in _NOT_DRUGS or drug.lower() in lexicon.COMMON_WORDS:
            continue
        rest = re.split(r"\s+(?:and|but|because|so)\b", match.group("rest"))[0].rstrip()
        found.append(ctx.candidate(ctx.person.sentence(f"takes {drug} {match.group('dose')}{rest}"), confidence=0.85,
                                   rule="health.medication", subject=f"medication:{normalise_key(drug)}",
                                   tags=("health",), metadata={"value": drug, "dose": match.group("dose")}))
    return found


IDENTITY_RULES = (_name, _attributes, _work, _home, _medication)
