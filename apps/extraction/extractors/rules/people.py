"""The user's contacts: "my assistant Tom books my travel, tom@example.com", "my wife Sara is the account holder",
"please cc my accountant, Priya Shah (priya@example.com)", "my colleague Dev handles billing".

Each is one memory naming the relation, the name, the role and any contact detail given with it. A contact's email
or phone number is theirs: contacts.py never reads it as the user's own. Subjects (subjects.contact_subject) keep
one slot per contact the user has one of ("contact:assistant") and one per name otherwise
("contact:colleague:dev"); a detail given on its own ("my wife's email is ...") has a slot of its own.
"""

import re
from dataclasses import dataclass

from apps.extraction.extractors.base import Candidate
from apps.extraction.extractors.rules import lexicon
from apps.extraction.extractors.rules.contacts import EMAIL, MY_RELATION, PHONE, PHONE_SHAPED
from apps.extraction.extractors.rules.context import RuleContext
from apps.extraction.extractors.rules.dates import MONTHS, WEEKDAYS
from apps.extraction.extractors.rules.person import ADVERBS, rewrite_first_person, rewrite_second_person
from apps.extraction.extractors.rules.subjects import contact_subject
from apps.extraction.extractors.rules.text import normalise_key, proper_name

_RELATION_WORDS = "|".join(sorted((re.escape(word) for word in lexicon.CONTACT_RELATIONS), key=len, reverse=True))
_MODIFIERS = "|".join(sorted(lexicon.CONTACT_RELATION_MODIFIERS))
_RELATION = rf"(?P<said>(?:(?:{_MODIFIERS})\s+)?(?P<relation>{_RELATION_WORDS}))"
_ASK = (r"^(?:(?:please|kindly|also|and|can\s+you|could\s+you|would\s+you|will\s+you|you\s+can|you\s+may"
        r"|feel\s+free\s+to)\s+)*")
_ADVERBS = r"(?:(?:also|usually|normally|now|always|generally|mostly|sometimes|often|currently|still)\s+)*"
_HOLDER = (r"account\s+holder|holder|contact|user|owner|admin|administrator|payer|bill\s+payer|signatory"
           r"|policy\s*holder|driver|person|decision[- ]maker|point\s+of\s+contact|manager|guarantor|tenant")
_PREDICATE = (
    rf"(?:{_ADVERBS}(?:books|handles|manages|deals\s+with|takes\s+care\s+of|looks\s+after|pays|sorts|runs|orders"
    r"|arranges|organi[sz]es|collects|approves|signs|uses|shares|does|makes|reads|answers|receives"
    rf"|is\s+(?:also\s+|now\s+)?(?:the|an?|my|our)\s+(?:[\w-]+\s+){{0,2}}?(?:{_HOLDER})"
    r"|is\s+(?:also\s+)?(?:authori[sz]ed|allowed|permitted|named|listed|registered)"
    r"|is\s+(?:also\s+)?on\s+(?:the|my|our|this)\s+(?:account|policy|plan|booking|lease|contract)"
    r"|has\s+(?:full\s+)?(?:access|permission|authority|power\s+of\s+attorney))"
    # "my ex-husband must not be given any information", "my son is not allowed to order": what they may not do
    r"|(?:must|should|can|may|is|are|will)\s*(?:not|n't|never|no\s+longer)\s+(?:be\s+)?(?:given|told|sent|shown|allowed"
    r"|permitted|authori[sz]ed|contacted|called|discuss|know|have|access|receive|get|see|speak|talk|deal|order"
    r"|on\s+(?:the|my|our)\s+(?:account|policy|plan))"
    r"|(?:will|can|may|might|should|could|is\s+going\s+to)\s+(?:also\s+)?(?:be\s+)?(?:call(?:ing)?|contact(?:ing)?"
    r"|e-?mail(?:ing)?|phon(?:e|ing)|speak|talk|act|deal|handle|sign|approve|pay|book|manage|collect|pick\s+up"
    r"|answer|accept|be\s+in\s+touch|get\s+in\s+touch|in\s+touch|ring|reach\s+out))\b"
)
@dataclass(frozen=True)
class _Patterns:
    role: re.Pattern
    is_named: re.Pattern
    detail: re.Pattern
    copy: re.Pattern
    may_contact: re.Pattern


def _patterns(word: str, *, lazy: bool) -> _Patterns:
    """The patterns for a contact whose name is one to three of `word` (a regex). `lazy`: where a predicate follows
    the name ("my wife sara is the account holder"), the fewest words that let it read on, none if it reads on
    without ("my assistant usually books ...")."""
    name = rf"(?P<name>{word}(?:\s+{word}){{0,2}})"
    short_name, maybe = (rf"(?P<name>{word}(?:\s+{word}){{0,2}}?)", "??") if lazy else (name, "?")
    return _Patterns(
        role=re.compile(rf"^(?:and\s+)?(?:my|our)\s+{_RELATION}(?:,?\s+{short_name}){maybe}"
                        rf"(?P<aside>\s*\([^()]{{0,100}}\))?,?\s+(?P<predicate>{_PREDICATE})(?P<rest>.*)$", re.I),
        is_named=re.compile(rf"^(?:my|our)\s+{_RELATION}(?:'s\s+name)?\s+is\s+(?:called\s+)?{name}\b(?P<rest>.*)$", re.I),
        detail=re.compile(
            rf"^(?:my|our)\s+{_RELATION}(?:\s+{short_name}){maybe}'s\s+(?P<thing>(?:[\w-]+\s+){{0,2}}?(?:e-?mail"
            r"(?:\s+address)?|number|phone|mobile|cell|landline|line|address|id|details|contact\s+details))\s*(?:is|are|:)"
            r"\s*(?P<value>\S.*)$",
            re.I,
        ),
        copy=re.compile(
            rf"{_ASK}(?P<verb>cc|bcc|copy\s+in|copy|loop\s+in|include|add|keep)\s+my\s+{_RELATION}(?:,?\s+{name})?"
            r"(?P<rest>.*)$"
            rf"|{_ASK}(?:send|forward|copy)\s+(?P<what>(?:(?:all|any|the|a|future)\s+)?(?:[\w-]+\s+){{0,2}}?(?:updates?"
            r"|copy|copies|everything|emails?|invoices?|receipts?|confirmations?|statements?|correspondence|letters?"
            rf"|bills?|documents?|paperwork))\s+(?:also\s+)?to\s+my\s+{_RELATION.replace('?P<', '?P<r2_')}"
            rf"(?:,?\s+{name.replace('?P<', '?P<r2_')})?(?P<r2_rest>.*)$",
            re.I,
        ),
        may_contact=re.compile(
            rf"{_ASK}(?:(?:speak|talk|deal)\s+(?:to|with)|contact|call|ring|phone|e-?mail|reach)\s+my\s+{_RELATION}"
            rf"(?:,?\s+{name})?(?P<rest>.*)$",
            re.I,
        ),
    )


# A name is capitalised, unless the user types in lowercase ("my wife sara is the account holder"): then a word is a
# name only where the sentence reads on after it ("my assistant usually books ..." has none), and _name turns down
# the everyday words.
_CAPITALISED = _patterns(r"(?-i:[A-Z][\w'-]*)", lazy=False)
_ANY_CASE = _patterns(r"[^\W\d_][\w'-]*", lazy=True)

_GOVERNED_PHONE = re.compile(r"(?:\b(?:on|at|with|number|phone|mobile|cell|tel|landline|whatsapp|line)\b(?:\s+is|'s)?[\s:,-]*"
                             r"|^|\s)"
                             r"(?P<number>\+?\(?\d[\d\s().-]{5,18}\d)(?!\w)", re.I)
_NOT_NAME_WORDS = frozenset(lexicon.CONTACT_RELATIONS) | {"i", "i'm", "i'll", "i've", "please"}


# "my son Richard", "my wife": the contact a later "his number is ..." / "her mobile is ..." in the message means.
_MENTION = re.compile(rf"\bmy\s+(?:(?:{_MODIFIERS})\s+)?(?P<relation>{_RELATION_WORDS})\b"
                      r"(?:,?\s+(?P<name>(?-i:[A-Z][\w'-]*)(?:\s+(?-i:[A-Z][\w'-]*)){0,2}))?", re.I)
# Also after a verb that asks to forget it: "please delete her number", "you can forget his email as well".
# The verbs of commands._ERASE_VERBS (and "take ... off", "keep"): "get rid of her number" as "delete her number".
_FORGET_VERBS_BEFORE = "".join(rf"|(?<=\b{verb}\s)" for verb in
                               ("remove delete forget erase drop take wipe clear keep store hold purge scrub scrap bin "
                                "ditch discard").split()) + r"|(?<=\brid\sof\s)"
_PRONOUN_DETAIL = re.compile(
    rf"(?:^|(?<=[,;:]\s)|(?<=\band\s){_FORGET_VERBS_BEFORE})(?P<pronoun>his|her|their)\s+(?=(?:[\w-]+\s+){{0,2}}?"
    r"(?:name|e-?mail|number|phone|mobile|cell|landline|line|address|date\s+of\s+birth|birthday|details|info)\b)",
    re.I,
)


_TITLE = r"(?:(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof)\.?\s+)"
# "my daughter Lucía is on the plan", "changed to my sister, Josephine Adeyinka", "our accountant, Ms. Sato": a
# contact named in passing, wherever in the sentence.
_CAPITALISED_NAME = r"(?P<name>(?-i:[A-Z][\w'-]*)(?:\s+(?-i:[A-Z][\w'-]*)){0,2})"
_OUR_RELATION = rf"\b(?:my|our)\s+(?:(?:{_MODIFIERS})\s+)?(?P<relation>{_RELATION_WORDS})(?!'s)\b(?:,\s*|\s+)(?:{_TITLE})?"
_NAMED_IN_PASSING = re.compile(_OUR_RELATION + _CAPITALISED_NAME, re.I)
# Typed in lowercase, a word after the relation is a name only where a name can end: "my husband budi and ...",
# "our daughter sari who is 14", not "my boss saw the charge".
_NAMED_IN_PASSING_LOWER = re.compile(
    _OUR_RELATION + r"(?P<name>[^\W\d_][\w'-]*(?:\s+[^\W\d_][\w'-]*(?=\s+[a-z]+s\b))?)"
    r"(?=\s*(?:[,.;:!?)]|$)|\s+(?:and|who|is|has|was|will|can|needs?|wants?)\b|\s+(?:on|at)\s+[+(\d]"
    r"|\s+[a-z]+s\b)",  # "my partner dean on 07440 ...", "our childminder rosa delgado picks finn up"
    re.I,
)
# "our head chef Ana Lopes", "my finance director, Dr. Sam Ito", "our buyer is Sam Okafor", "our billing contact, Sam
# Ito" (a person or contact only with what they are for): someone who works with or for the user.
_STAFF_HEADS = "|".join(sorted((re.escape(word) for word in lexicon.JOB_HEADS), key=len, reverse=True))
_STAFF_NAMED = re.compile(
    rf"\b(?:my|our)\s+(?P<relation>(?-i:(?:[a-z-]+|[A-Z]{{2,4}})\s+){{0,2}}?(?:{_STAFF_HEADS})|(?-i:[a-z-]+\s+){{1,2}}?(?:person|contact"
    rf"|guy|lady|rep))(?!'s)\b(?:,\s*|\s+(?:is|'s|will\s+be)(?:\s+now)?\s+|\s+)"
    rf"(?:{_TITLE})?"
    + _CAPITALISED_NAME,
    re.I,
)
# "the manager there is Ravi Menon", "the site contact will be Sam Ito": who holds a role for the user's business.
# Only with where they are, or as the user's contact: "the engineer is Bob" is the provider's.
_THE_ROLE_IS = re.compile(
    rf"(?:^|[,;]\s+|\band\s+)the\s+(?:(?P<relation>(?-i:[a-z-]+\s+){{0,2}}?(?:{_STAFF_HEADS}))"
    r"\s+(?:there|here|on\s+site|at\s+(?:the\s+)?(?-i:[A-Za-z]+)(?:\s+(?-i:[A-Z][a-z]+))?)"
    r"|(?P<contact>(?-i:[a-z-]+\s+){1,2}?(?:person|contact)))"
    rf"\s+(?:is|will\s+be)\s+(?:now\s+)?(?:{_TITLE})?" + _CAPITALISED_NAME,
    re.I,
)
# "my sister, Josephine Adeyinka-Oduya... no, just Josephine Adeyinka": the name the user settles on.
_NAME_CORRECTED = re.compile(r"^\s*(?:\.{2,}|\u2026|,|-+)?\s*(?:no|sorry|I\s+mean|I\s+meant|actually)\b[\s,.!]*(?:just|it's"
                             r"|it\s+is|only)?\s*(?P<name>(?-i:[A-Z][\w'-]*)(?:\s+(?-i:[A-Z][\w'-]*)){0,2})", re.I)


# A first person with a number or an address right after it: "text me on 0770...", "my email is a@b.c".
_OWN_DETAIL = re.compile(r"\b(?:me|my|I|I'm|us|our)\b(?=(?:(?!\b(?:his|her|their|he|she|they)\b)[^.;!?]){0,30}?(?:\d{3}|@))")
_TIME_WORDS = frozenset({*"yesterday today tonight tomorrow now then morning afternoon evening".split(), *WEEKDAYS,
                         *MONTHS})


def _text_of(item) -> str:
    return item.content if isinstance(item, Candidate) else item.text


# "I'm Ayşe Yıldız, mum of Elif Yıldız in Year 9 and Kerem Yıldız in Year 7": the customer's children, by the parent
# the customer says they are.
_PARENT_OF = re.compile(r"\b(?:I'm\s+|I\s+am\s+|as\s+)?(?:the\s+)?(?:mum|mom|mother|mam|dad|father|parent)\s+(?:of|to)\s+"
                        r"(?P<children>.+)$", re.I)
_CHILD = re.compile(r"(?P<name>(?-i:[^\W\d_a-z][^\W\d_]+)(?:\s+(?-i:[^\W\d_a-z][^\W\d_'-]*(?:[-'][^\W\d_]+)*)){0,2})"
                    r"(?P<about>\s+(?:in\s+(?:year|grade|class|form)\s+\w+|\(\d{1,2}\)|aged\s+\d{1,2})|,\s+\d{1,2}(?=\s*(?:,|and\b|$)))?"
                    r"\s*(?:,\s*(?:and\s+)?|\s+and\s+|$)", re.I)


def children_named(text: str, ctx: RuleContext) -> list[Candidate]:
    """The children a customer names as their parent ("mum of Elif in Year 9 and Kerem in Year 7"), one memory each."""
    if ctx.role != "user" or not (match := _PARENT_OF.search(text.rstrip(" .!"))):
        return []
    found, rest = [], match.group("children")
    while rest and (child := _CHILD.match(rest)) and child.end() > 0:
        name = child.group("name")
        if name.split()[0].lower() in lexicon.COMMON_WORDS or name.split()[0] in ("I", "The", "My", "Our"):
            break
        about = (child.group("about") or "").strip(" ,()")
        about = f"aged {about}" if about.isdigit() else about
        content = f"{ctx.person.possessive} child is {name}" + (f" ({about})" if about else "")
        found.append(ctx.candidate(ctx.person.starting(content), confidence=0.8, rule="contact.child_of",
                                   subject=contact_subject("child", name, single=False), tags=("contact",),
                                   metadata={"relation": "child", "name": name}))
        rest = rest[child.end():]
    return found


# "my husband might collect for me sometimes, he's Declan Gallagher, number 07722 ...": named after what they do.
_NAMED_AFTER = re.compile(r"^[^.;]{0,80}?,\s+(?:he's|she's|he\s+is|she\s+is|his\s+name\s+is|her\s+name\s+is"
                          r"|(?:he|she)(?:'s|\s+is)\s+called)\s+(?P<rest>(?-i:[^\W\d_a-z])[\w'-]+(?:\s+(?-i:[^\W\d_a-z])[\w'-]+){0,2}"
                          r"(?:[,;]?\s.*)?)$", re.I)


def relation_named_after(text: str) -> str | None:
    """"my husband Declan Gallagher, number 07722 ..." for "my husband might collect ..., he's Declan Gallagher,
    number 07722 ...": the contact as named in passing, for contacts_named_in_passing; None when no one is."""
    if not (relation := MY_RELATION.search(text)) or not (named := _NAMED_AFTER.match(text[relation.end():])):
        return None
    return f"my {relation.group('relation')} {named.group('rest')}"


def contacts_named_in_passing(text: str, ctx: RuleContext, known: list) -> list[Candidate]:
    """A memory for each contact `text` names ("my daughter Lucía") that no candidate in `known` is about yet, with
    an email or phone number given right after the name."""
    found = []
    pattern = _NAMED_IN_PASSING_LOWER if ctx.lowercase else _NAMED_IN_PASSING
    for relation_match in [*pattern.finditer(text), *_STAFF_NAMED.finditer(text),
                           *(_THE_ROLE_IS.finditer(text) if ctx.role == "user" else ())]:
        match, end = relation_match, relation_match.end()
        if corrected := _NAME_CORRECTED.match(text[end:end + 80]):
            match, end = corrected, end + corrected.end()
        name = _name(match.group("name"))
        first = (name or "").split()[0].lower() if name else ""
        if not name or len(name) < 2 or first in lexicon.COMMON_WORDS or first in ADVERBS or first in _TIME_WORDS:
            continue  # "my manager Yesterday ..."
        if re.match(r"'s\b", text[end:]) or name.endswith("'s"):
            continue  # "my assistant Priti Solanki's email is ...": their detail, which the detail rules read
        said = " ".join((relation_match.group("relation") or relation_match.group("contact")).split())
        if relation_match.re is _THE_ROLE_IS and relation_match.group("relation") and "site" not in said.split():
            said = f"site {said}"  # "the manager there": the manager at one of the user's places, not their boss
        staff = relation_match.re in (_STAFF_NAMED, _THE_ROLE_IS)
        relation, single = (normalise_key(said), False) if staff else _relation(said)
        subject = contact_subject(relation, name, single=single)
        if re.match(r"\s*(?:\.{2,}|\u2026)\s*$", text[end:]):
            continue  # "my sister, Josephine Adeyinka-Oduya...": trailing off, the next sentence may correct it
        window = text[end:end + 120]
        if own := _OWN_DETAIL.search(window):
            window = window[:own.start()]  # "my son Tom, text me on 0770...": from "me" on, the user's own
        details = _details(window)
        if any(getattr(item, "subject", None) == subject or name.casefold() in _text_of(item).casefold() and all(
                value in _text_of(item) for value in details.values()) for item in [*known, *found]):
            continue  # already said by a rule, or by a statement the salience classifier will score, details and all
        role = None if staff else _contact_role(text[:relation_match.start()], window)
        said = " ".join(word if word.isupper() and len(word) > 1 else word.lower() for word in said.split())  # "IT lead"
        content = (f"{ctx.person.possessive} {said} {name} is their {role}" if role
                   else f"{ctx.person.possessive} {said} is {name}")
        if details:
            content += f" ({', '.join(details.values())})"
        if staff:
            metadata = {"relation": relation, "name": name, **details, **({"pii": True} if details else {})}
            if re.search(r"\s(?:is|will\s+be)\s+now\s|\snow\s+(?:is|will\s+be)\s", relation_match.group(0) + " "):
                metadata["replaces_role"] = relation.split()[-1]  # "my coordinator is now Sam Ito": the one before goes
            found.append(ctx.candidate(ctx.person.starting(content), confidence=0.8, rule="contact.named_in_passing",
                                       subject=subject, tags=("contact", "third_party", *(("pii",) if details else ())),
                                       metadata=metadata))
            continue
        found.append(_candidate(ctx, ctx.person.starting(content), said, name, details, "contact.named_in_passing"))
    return found


# What a contact is to the account, said before them ("my emergency contact is my uncle, Suresh Iyer") or after
# ("put my sister Ana Lopes as emergency contact").
_ROLE = (r"(?P<role>(?:[a-z-]+\s+){0,2}?(?:contact|next\s+of\s+kin|guarantor|account\s+holder|signatory|representative"
         r"|carer|caregiver|guardian|proxy|nominee|beneficiary|attorney))")
_ROLE_BEFORE = re.compile(rf"\b(?:my|our|the)\s+{_ROLE}\s+(?:is|will\s+be|should\s+be)\s+(?:now\s+)?$", re.I)
_ROLE_AFTER = re.compile(rf"^\s*,?\s*(?:is|as|will\s+be|to\s+be)\s+(?:now\s+)?(?:my|our|the|an?)?\s*{_ROLE}\b", re.I)


def _contact_role(before: str, after: str) -> str | None:
    match = _ROLE_BEFORE.search(before) or _ROLE_AFTER.match(after)
    return " ".join(match.group("role").lower().split()) if match else None


# Someone else the sentence has brought up before its pronoun: "the installer", "a man from the council".
_SOMEONE_ELSE = re.compile(r"\b(?:the|a|an)\s+(?!(?:name|number|email|e-mail|phone|mobile|address)\b)[a-z]+", re.I)


def people_named(text: str) -> list[tuple[str, str]]:
    """The user's people a user sentence names, as (relation word, name): "my son Thiago" -> ("son", "Thiago")."""
    return [(match.group("relation").lower(), name) for match in _MENTION.finditer(text)
            if (name := _name(match.group("name")))]


def mentioned_contact(text: str) -> tuple[str, str | None] | None:
    """The last of the user's contacts a user sentence names, as (relation word, name or None)."""
    mention = None
    for match in _MENTION.finditer(text):
        mention = (match.group("relation").lower(), _name(match.group("name")))
    return mention


def pronoun_fits(pronoun: str, relation: str) -> bool:
    """Whether "his", "her" or "their" can stand for a contact of `relation` ("her number": not the user's son's)."""
    return {"his": relation not in lexicon.FEMALE_RELATIONS, "her": relation not in lexicon.MALE_RELATIONS,
            "their": relation not in lexicon.MALE_RELATIONS | lexicon.FEMALE_RELATIONS}[pronoun.lower()]


def with_pronouns_resolved(text: str, mention: tuple[str, str | None] | None, *, requests_only: bool = False) -> str:
    """`text` with "his/her/their <detail>" read as the mentioned contact's, where the pronoun fits the relation:
    after "my son Richard ...", "His number is 07831 664 920" -> "my son Richard's number is 07831 664 920".
    `requests_only`: only where a verb asks to forget the detail ("please delete her number")."""
    if mention is None:
        return text
    relation, name = mention
    # "my son Timur's number"; someone who works with the user by their name alone ("Sam Ito's email"), as no
    # pattern reads "my billing contact Sam Ito's"
    owner = f"{name}'s " if name and relation not in lexicon.CONTACT_RELATIONS else (
        f"my {relation}" + (f" {name}" if name else "") + "'s ")

    def resolved(match: re.Match) -> str:
        before = text[:match.start()]
        after_verb = not re.search(r"(?:^|[,;:]\s|\band\s)$", before)
        # "his email can come off your system", "take Sam off the account, his email too"
        asked = after_verb or _TO_BE_REMOVED.match(text[match.end():]) or (
            _ALSO_TAKEN.match(text[match.end():]) and _REMOVAL_BEFORE.search(before))
        if requests_only and (not asked or _ASKING.search(before)):
            # a contact named in an earlier message: only "delete her number" reaches them, and not where the
            # sentence says who asks ("Tomasz asks ...: please don't keep his mobile": someones_detail reads that)
            return match.group(0)
        if after_verb:
            before = re.split(r"[,;:]", before)[-1]  # "remove him from the family plan, and forget his email": his
        if not pronoun_fits(match.group("pronoun"), relation) or _SOMEONE_ELSE.search(before):
            return match.group(0)  # "The installer called and his number is ...": the installer's
        return owner

    return _PRONOUN_DETAIL.sub(resolved, text)


_ALSO_TAKEN = re.compile(r"(?:[\w-]+\s+){1,3}?(?:too|as\s+well)\b", re.I)
_REMOVAL_BEFORE = re.compile(r"\b(?:take|get|remove|delete|erase|wipe|forget|scrub|purge|drop|strike|cross)\b", re.I)
_TO_BE_REMOVED = re.compile(r"(?:[\w-]+\s+){1,3}?(?:should|can|must|needs\s+to|has\s+to|could)\s+(?:be\s+)?(?:removed"
                            r"|deleted|erased|forgotten|taken\s+off|wiped|purged|come\s+off|come\s+out)\b", re.I)


# "my wife's mobile number", "Gareth Pryce's details", "her email" (with who "her" is): what a forget request names.
_SOMEONES_DETAIL = re.compile(
    rf"^(?:all\s+(?:of\s+)?)?(?:the\s+)?(?:(?:(?:my|our)\s+(?:(?:{_MODIFIERS})\s+)?(?P<relation>{_RELATION_WORDS})"
    r"(?:,?\s+(?P<name>(?-i:[A-Z][\w-]*)(?:\s+(?-i:[A-Z][\w-]*)){0,2}))?"
    r"|(?:(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof)\.?\s+)?(?P<who>(?-i:[A-Z][\w-]*)(?:\s+(?-i:[A-Z][\w-]*)){0,2}))(?:s'|'s?)"
    r"|(?P<pronoun>his|her|their))\s+(?:(?:old|current|personal|private|own|work|home|mobile|cell|office|contact)\s+)*"
    r"(?P<detail>e-?mail(?:\s+address)?|(?:phone|mobile|cell|telephone|landline)(?:\s+(?:number|no\.?))?|number"
    r"|(?:postal\s+|home\s+)?address"
    r"|details|info(?:rmation)?|data|records?)\b",
    re.I,
)
# "Beatriz asks one more thing: please don't keep her mobile": who the "her" of a request on someone's behalf is.
_ASKING = re.compile(r"(?P<who>(?-i:[A-Z][\w-]+)(?:\s+(?-i:[A-Z][\w-]+))?)\s+(?:asks|asked|has\s+asked|says|said"
                     r"|wants|wanted|would\s+like|requests|requested|needs|prefers|doesn't\s+want|does\s+not\s+want)\b")
_DETAIL_KINDS = {"e": "email", "p": "phone", "m": "phone", "c": "phone", "t": "phone", "l": "phone", "n": "phone",
                 "a": "address", "h": "address"}


# "my partner", "my assistant Tom Reyes", "Sam Keller": a contact a forget request names as a whole.
_CONTACT_NAMED = re.compile(
    rf"^(?:(?:my|our)\s+(?:(?:{_MODIFIERS})\s+)?(?P<relation>{_RELATION_WORDS})(?:,?\s+(?P<name>(?-i:[A-Z][\w'-]*)"
    r"(?:\s+(?-i:[A-Z][\w'-]*)){0,2}))?|(?P<who>(?-i:[A-Z][\w'-]+)(?:\s+(?-i:[A-Z][\w'-]+)){0,2}))$",
    re.I,
)


def contact_named(what: str) -> tuple[str | None, str | None] | None:
    """(relation, name) for a forget request that names one of the user's contacts: "my partner" -> ("partner",
    None), "Sam Keller" -> (None, "Sam Keller"); None for anything else."""
    match = _CONTACT_NAMED.match(what.strip())
    if match is None:
        return None
    relation = (match.group("relation") or "").lower() or None
    name = match.group("name") or match.group("who")
    if name and name.split()[0].lower() in _NOT_NAME_WORDS | {"my", "our", "the", "your", "all", "everything"}:
        return None
    return relation, name


def someones_detail(what: str, sentence: str = "") -> tuple[str, str | None] | None:
    """(who, "phone" / "email", or None for all they gave) when a forget request names someone else's details:
    "my wife's mobile number" -> ("wife", "phone"), "Gareth Pryce's details" -> ("Gareth Pryce", None)."""
    match = _SOMEONES_DETAIL.match(what)
    if match is None:
        return None
    who = match.group("name") or match.group("who")
    if match.group("pronoun"):
        asking = list(_ASKING.finditer(sentence[:sentence.find(what)] if what in sentence else sentence))
        mention = mentioned_contact(sentence)
        who = asking[-1].group("who") if asking else mention and (mention[1] or mention[0])
        if not who:
            return None
    elif who is None:
        who = match.group("relation").lower()
    elif who.split()[0].lower() in ("my", "our", "your", "the", "i", "we"):
        return None
    detail = match.group("detail").lower()
    return who, None if detail.startswith(("det", "inf", "dat", "rec")) else _DETAIL_KINDS[
        "a" if detail.startswith("postal") else detail[0]]


def people(text: str, ctx: RuleContext, *, question: bool = False) -> list[Candidate]:
    """A memory about one of the user's contacts stated in a user clause, or []."""
    if question and not re.match(r"^(?:(?:can|could|would|will)\s+you|please)\b", text, re.I):
        return []
    patterns = _ANY_CASE if ctx.lowercase else _CAPITALISED
    if match := patterns.detail.match(text):
        return _detail(match, text, ctx)
    if match := patterns.role.match(text) or patterns.may_contact.match(text):
        return _contact(match, text, ctx, "contact.role")
    if match := patterns.copy.match(text):
        return _copy(match, ctx)
    if (match := patterns.is_named.match(text)) and _name(match.group("name")):
        relation, _ = _relation(match.group("relation"))
        details = _details(match.group("rest"))
        if relation in lexicon.FAMILY_RELATIONS and not details:
            return []  # "my wife is called Sara": a family fact (facts.py)
        return _contact(match, text, ctx, "contact.named")
    return []


def _relation(word: str) -> tuple[str, bool]:
    return lexicon.CONTACT_RELATIONS[word.lower()]


def _name(raw: str | None) -> str | None:
    """The contact's name at the start of `raw`, in its stored form ("sara" -> "Sara"), or None."""
    if not raw:
        return None
    words = []
    for word in raw.split():
        lower = word.lower()
        if lower in lexicon.NOT_NAMES or lower in lexicon.NAME_BREAKS or lower in _NOT_NAME_WORDS or (
                word.islower() and (lower in lexicon.COMMON_WORDS or lower in ADVERBS)):
            break
        words.append(word)
    return proper_name(" ".join(words)) if words else None


def _with_name(text: str, match: re.Match, name: str | None, group: str = "name") -> str:
    """`text` with the name it gives in its stored form: "my wife sara is ..." -> "my wife Sara is ..."."""
    start = match.start(group)
    if not name or start < 0 or text[start:start + len(name)].lower() != name.lower():
        return text
    return text[:start] + name + text[start + len(name):]


def _details(text: str, *, aside: str = "") -> dict:
    """The email and phone number given with a contact; any phone-shaped number inside a parenthesis next to the name
    ("Jo (jo@example.com, 087 222 3344)"), elsewhere only one a phone word or "on"/"at" introduces."""
    details = {}
    if email := EMAIL.search(f"{aside} {text}"):
        details["email"] = email.group(0)
    for match in [*PHONE.finditer(aside), *_GOVERNED_PHONE.finditer(text)]:
        number = (match.groupdict().get("number") or match.group(0)).strip()
        # "Suresh Iyer, 07700 900 745": shaped like a phone number and given right after the name, or after a comma
        right_after = not text[:match.start("number") if match.re is _GOVERNED_PHONE else 0].strip(" ,:-") or (
            match.re is _GOVERNED_PHONE and re.search(r",\s*$", text[:match.start("number")]))
        governed = (match.re is PHONE or number[0] in "+(" or match.group(0)[:1].isalpha()
                    or right_after and PHONE_SHAPED.fullmatch(number))
        if 7 <= sum(char.isdigit() for char in number) <= 15 and governed:
            details["phone"] = number
            break
    return details


def _candidate(ctx: RuleContext, content: str, relation_word: str, name: str | None, details: dict, rule: str,
               aspect: str | None = None) -> Candidate:
    relation, single = _relation(relation_word)
    metadata = {"relation": relation, **({"name": name} if name else {}), **details}
    tags = ["contact", "third_party"]
    if details:
        metadata["pii"] = True
        tags.append("pii")
    return ctx.candidate(content, confidence=0.8, rule=rule,
                         subject=contact_subject(relation, name, single=single, aspect=aspect), tags=tuple(tags),
                         metadata=metadata)


def _contact(match: re.Match, text: str, ctx: RuleContext, rule: str) -> list[Candidate]:
    name = _name(match.group("name"))
    details = _details(match.group("rest"), aside=match.groupdict().get("aside") or "")
    content = rewrite_first_person(_with_name(text, match, name), ctx.person)
    return [_candidate(ctx, content, match.group("relation"), name, details, rule)]


def _detail(match: re.Match, text: str, ctx: RuleContext) -> list[Candidate]:
    thing, value = match.group("thing").lower(), match.group("value")
    details = _details(value)
    if "mail" in thing:
        aspect = "email"
    elif "address" in thing:
        aspect = "address"
    elif details.get("phone") or any(word in thing for word in ("phone", "mobile", "cell", "landline", "line")) or (
            thing == "number" and PHONE.match(value)):
        aspect = "phone"
    else:
        aspect = normalise_key(thing)
    if aspect == "phone" and "phone" not in details and PHONE.match(value):
        details["phone"] = PHONE.match(value).group(0).strip()
    name = _name(match.group("name"))
    content = rewrite_first_person(_with_name(text, match, name), ctx.person)
    return [_candidate(ctx, content, match.group("relation"), name, details, "contact.detail", aspect=aspect)]


def _copy(match: re.Match, ctx: RuleContext) -> list[Candidate]:
    person = ctx.person
    if match.group("relation"):
        said, relation, name, rest = match.group("said"), match.group("relation"), match.group("name"), match.group(
            "rest")
        wants = "copied on emails"
    else:
        said, relation, name, rest = (match.group("r2_said"), match.group("r2_relation"), match.group("r2_name"),
                                      match.group("r2_rest"))
        what = rewrite_first_person(match.group("what"), person, named=True)
        wants = f"to receive {what}"
    name = _name(name)
    details = _details(rest)
    who = f"their {said.lower()}" + (f" {name}" if name else "")
    if details:
        who += f" ({', '.join(details.values())})"
    content = person.sentence(f"wants {who} {wants}")
    return [_candidate(ctx, content, relation, name, details, "contact.copy")]


# "I want to add my brother as an authorised person. Kian Farahani, 07700 900 673.": the contact the sentence before
# named by relation alone, named and reached in a sentence of their own.
_NAME_AND_DETAILS = re.compile(r"^(?:(?:it's|he's|she's|they're|that's)\s+)?(?P<name>(?-i:[A-Z][\w'-]+)(?:\s+(?-i:[A-Z][\w'-]+)){0,3})"
                               r"\s*[,:-]\s*(?P<rest>.*(?:@|\d{3}).*)$", re.I)
# "use my daughter's, paloma@example.es": a contact's email named by whose it is.
_RELATIONS_EMAIL = re.compile(rf"\bmy\s+(?:(?:{_MODIFIERS})\s+)?(?P<relation>{_RELATION_WORDS})'s(?:\s+(?:e-?mail|address"
                              rf"|one))?\s*[,:-]?\s*(?P<email>{EMAIL.pattern})", re.I)


def relations_email(text: str, ctx: RuleContext) -> list[Candidate]:
    """The email a user gives as a relation's ("use my daughter's, x@y.es"), or []."""
    if not (match := _RELATIONS_EMAIL.search(text)):
        return []
    said = match.group("relation").lower()
    content = f"{ctx.person.possessive} {said}'s email address is {match.group('email')}"
    return [_candidate(ctx, content, said, None, {"email": match.group("email")}, "contact.email_of", aspect="email")]


def contact_named_after_mention(text: str, mention: tuple[str, str | None] | None, ctx: RuleContext) -> list[Candidate]:
    """The name and details of the contact the sentence before mentioned without a name ("... add my brother. Kian
    Farahani, 07700 ..."), or []."""
    if mention is None or mention[1] or not (match := _NAME_AND_DETAILS.match(text.strip().rstrip("."))):
        return []
    name = _name(match.group("name"))
    if not name or len(name.split()) < 2:
        return []
    details = _details(match.group("rest"), aside=match.group("rest"))
    if not details:
        return []
    said = mention[0]
    content = f"{ctx.person.possessive} {said} is {name} ({', '.join(details.values())})"
    return [_candidate(ctx, content, said, name, details, "contact.named_after")]


# What the agent says it made someone for the customer: "I've added Richard as your nominated contact on 07831 ...",
# "David is now set up as a trusted contact", "Rosa Huamán is now authorised to collect Thiago, with 07700 ... on file".
_AGENT_NAME = r"(?P<name>(?-i:[A-Z][\w'-]+)(?:\s+(?-i:[A-Z][\w'-]+)){0,2})"
_ASSIGNED_ROLE = (r"(?P<role>(?:(?:[\w-]+\s+){0,2}?(?:contact|holder|member|user|payer|signatory|representative|guardian"
                  r"|carer|nominee|beneficiary|driver|traveller|attorney|admin|administrator)))")
_AGENT_ADDED = re.compile(
    rf"(?:^|[,;]\s*(?:and\s+)?|\band\s+)(?:(?:I|we)(?:'ve|\s+have)?\s+(?:now\s+|also\s+)?(?:added|set\s+up|registered"
    rf"|listed|made|put)\s+{_AGENT_NAME}\s+(?:down\s+)?as\s+(?:an?|your|the)\s+(?:new\s+)?{_ASSIGNED_ROLE}"
    rf"|{_AGENT_NAME.replace('?P<name>', '?P<name2>')}\s+(?:\(.{{0,40}}\)\s+)?is\s+(?:now\s+)?(?:set\s+up\s+as|listed\s+as|registered\s+as|added\s+as)?"
    rf"\s*(?:an?|your|the)\s+(?:new\s+)?{_ASSIGNED_ROLE.replace('?P<role>', '?P<role2>')})"
    r"(?P<rest>\b.*)$",
    re.I,
)
_AGENT_AUTHORISED = re.compile(
    rf"(?:^|[,;]\s*(?:and\s+)?|\band\s+){_AGENT_NAME}\s+is\s+(?:now\s+)?(?:authori[sz]ed|allowed|permitted|able)\s+to"
    r"\s+(?P<what>[^,;.]{3,60}?)(?P<rest>(?:[,;]|\s+with\s+|\s+on\s+|$).*)$",
    re.I,
)


_NOT_SOMEONE = frozenset("you your i we it this that he she they nobody everyone everybody someone somebody anyone "
                         "there here which who".split())


def agent_assigned_contacts(text: str, ctx: RuleContext) -> list[Candidate]:
    """The contact an agent's sentence says it has set up for the customer, with the number or address given."""
    found = []
    if match := _AGENT_ADDED.search(text):
        name = _name(match.group("name") or match.group("name2"))
        role = " ".join((match.group("role") or match.group("role2")).lower().split())
        content = f"{ctx.person.possessive} {role} is {name}" if name else None
    elif match := _AGENT_AUTHORISED.search(text):
        name = _name(match.group("name"))
        role = "authorised contact"
        what = rewrite_second_person(match.group("what"), ctx.person)
        content = f"{name} is authorised to {what} for {ctx.person.label}" if name else None
    else:
        return []
    if not name or name.split()[0].lower() in _NOT_SOMEONE or (
            ctx.person.known and name.casefold() in ctx.person.known.casefold()):
        return []
    details = _details(match.group("rest"))
    if details:
        content += f" ({', '.join(details.values())})"
    relation = normalise_key(role)
    found.append(ctx.candidate(ctx.person.starting(content), confidence=0.75, rule="contact.assigned_by_agent",
                               subject=contact_subject(relation, name, single=False),
                               tags=("contact", "third_party", *(("pii",) if details else ())),
                               metadata={"relation": relation, "name": name, **details, "restated_by_agent": True,
                                         **({"pii": True} if details else {})}))
    return found
