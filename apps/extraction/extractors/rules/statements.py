"""The generic statement path: a first-person statement no structured rule recognised, kept when salient.

"My husband handles the billing", "our choir rehearses every Tuesday", "we farm 300 acres of barley": no pattern
names these, yet each is a durable fact about the customer. A clause that no rule recognised becomes a *pending
statement* when cheap filters pass: a statement, not a question or hypothetical; the user or their organisation
or household within its first words, or what is "better for me"; not a request about the current problem nor a
remark on the conversation; 3 to 60 words. A standing request counts too ("please only ring me after 3pm":
"please" with only/always/never/in future/instead ... about the user). The extractor then scores all pending
statements of a job in one call to the salience classifier (apps.extraction.salience) and keeps those at or
above the threshold, rewritten in the third person, with no subject: such a statement is not one single-valued
attribute. A statement with a date is an episode with the date resolved, like a plan.
"""

import re
from dataclasses import dataclass

from apps.extraction.extractors.base import Candidate
from apps.extraction.extractors.rules import lexicon
from apps.extraction.extractors.rules.context import RuleContext
from apps.extraction.extractors.rules.dates import find_dates
from apps.extraction.extractors.rules.person import rewrite_first_person
from apps.extraction.extractors.rules.text import Clause, refers_to_context

MIN_WORDS = 3
MAX_WORDS = 60
FIRST_PERSON_WITHIN = 4  # words: "At work we use Zoom" counts, "The app crashes when I open it" does not
MAX_CONFIDENCE = 0.85  # below what a structured rule gives a plain statement

_FIRST_PERSON = frozenset("i i'm i've i'd i'll me my mine myself we we're we've we'd we'll us our ours "
                          "ourselves".split())
_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")
# Clear signs of a request or of the conversation itself, rejected before any embedding is computed.
_NOT_A_STATEMENT = re.compile(
    r"^(?:please|pls|kindly|can|could|would|will|help|let|tell|show|send|give|check|look|fix|sort|thanks|thank"
    r"|sorry|ok|okay"
    r"|(?:I|we)\s+(?:really\s+|just\s+|urgently\s+)?need\s+(?:help|someone|somebody|an?\s+(?:refund|callback"
    r"|replacement|engineer|technician|electrician|plumber|appointment|new\s+\w+))"
    r"|(?:I|we)\s+(?:really\s+|just\s+|urgently\s+|also\s+)?(?:need|want|wanna)\s+(?:you\b|to\s|make\s)"
    r"|(?:I|we)\s+(?:really\s+|just\s+|urgently\s+|also\s+)?(?:need|want)\s+(?:the|my|our|it|this|that|them|him"
    r"|her)\b[^,]{0,60}?\b(?:changed|updated|cancell?ed|fixed|moved|removed|added|sorted|reissued|corrected"
    r"|refunded|replaced|sent|checked|booked|done|looked\s+at)\b"
    r"|(?:I|we)\s+(?:have|had|got)\s+(?:a|an|another|one\s+more|two|some|a\s+quick|a\s+few)\s+(?:quick\s+)?"
    r"(?:question|questions|problem|problems|issue|issues|query|queries|complaint)"
    r"|(?:I|we)(?:'m|'re|\s+am|\s+are)\s+(?:just\s+|still\s+|now\s+|currently\s+)?(?:trying|looking|hoping"
    r"|waiting|writing|calling|contacting|reaching|asking|checking|getting|having|typing|reading|back|here"
    r"|sorry|afraid|confused|not\s+sure|wondering)"
    r"|(?:I|we)\s+(?:was|were)\s+(?:just\s+)?(?:wondering|hoping|trying|told|asked)"
    r"|(?:I|we)\s+still\s+(?:have\s+(?:nothing|no)|haven't|have\s+not|can't|cannot|don't|didn't|got\s+nothing)\b"
    r"|(?:I|we)(?:'m|'re|\s+am|\s+are)\s+not\s+\w+ing\b"  # "I'm not flying on Friday any more": a plan called off
    r"|(?:I|we)(?:'ll|\s+will|'ve\s+(?:just\s+)?tried|\s+have\s+tried|\s+(?:just\s+|already\s+)?tried)\b"
    r"|(?:I|we)\s+(?:understand|see|agree|appreciate|wonder|guess|hope|suppose|mean|meant|apologi[sz]e)\b"
    r"|(?:I|we)\s+got\s+(?:it|your|that|this)\b"
    r"|my\s+(?:question|problem|issue|query|complaint|bad|mistake|apologies)\b"
    r")",
    re.I,
)
# A state that was and is no more: "I used to have the Premium tier", "we no longer keep chickens". Kept, it would
# hold the old value in an active memory; the retraction and change rules read what it ends.
_NOT_ANY_MORE = re.compile(r"\b(?:used\s+to|previously|formerly|in\s+the\s+past|back\s+then|at\s+one\s+point"
                           r"|no\s+longer|any\s?more"
                           # "my old address was 8 Grove Lane", "our previous supplier was Brightgas": what was
                           r"|(?:my|our|the)\s+(?:old|previous|former)\s+(?:[\w-]+\s+){0,2}?(?:was|were)"
                           # "I lived in Leeds until 2019": a state that has ended
                           r"|(?:lived|worked|was|were|stayed|rented|owned|studied|banked|had)\s+(?:[\w'-]+\s+){0,6}?(?:up\s+)?"
                           r"(?:until|till)\s+(?:(?:19|20)\d\d|last|recently|a\s+(?:few|couple)|then|(?:early|late|mid)\b"
                           r"|(?:jan|febr)uary|march|april|may|june|july|august|september|october|november|december)"
                           # "our old office on Baker Street closed last year", "before I moved here I was with ..."
                           r"|^(?:my|our|the)\s+(?:old|previous|former)\s+|^before\s+(?:I|we)\s+(?:moved|switched|changed|joined"
                           r"|came|started)"
                           # "my sister thinks I should switch to Octopus": someone else's suggestion, not what is
                           r"|\b(?:thinks?|thought|says?|said|suggested|reckons?)\s+(?:that\s+)?(?:I|we)\s+(?:should|could|ought\s+to)"
                           # "the app says I'm on the Family plan": what a record claims, when it is brought up to dispute
                           r"|^(?:the|your|my)\s+(?:app|system|website|site|portal|invoice|bill|letter|e-?mail|statement|records?"
                           r"|profile|confirmation|form|receipt)\s+(?:says|said|shows|showed|lists|listed|has|had)\b)\b",
                           re.I)
# What the structured rules own: the user's name and contact details, and anything holding an e-mail address, a
# link or a long number (a card or account number the identifier rules declined is not to be kept either way).
OWNED_BY_RULES = re.compile(
    r"^my\s+(?:full\s+|first\s+|last\s+|real\s+|middle\s+|sur)?name\b|@|https?://|www\.|\d(?:[\s().-]?\d){6}",
    re.I,
)
_POINTS_BACK = re.compile(r"\b(?:here|there|it|this|that|them)$", re.I)  # "I live here", "I love it"
_PREFERENCE = re.compile(
    r"\b(?:prefer|prefers|preferred|preference|rather|favou?rite|like|likes|love|loves|enjoy|enjoys|hate|hates"
    r"|dislike|dislikes|can't\s+stand|don't\s+want|works\s+best|best\s+for\s+(?:me|us)|instead\s+of)\b",
    re.I,
)


# A standing request: "please only ring me after 3pm", "please write to me by post in future".
_POLITE_START = re.compile(r"^(?:please|pls|plz|kindly)\s+(?:do\s+)?", re.I)
_STANDING = re.compile(r"\b(?:only|always|never|in\s+future|in\s+the\s+future|from\s+now\s+on|going\s+forward"
                       r"|by\s+default|as\s+(?:the\s+)?default|any\s?more|instead|rather\s+than|not\s+(?:by|on|to)"
                       r"|no\s+more)\b", re.I)
_TO_ME = re.compile(r"\b(?:me|my|us|our)\b", re.I)
_RECURRING = re.compile(r"\b(?:every|each)\s+(?:other\s+)?$", re.I)
# "mornings are much better for me": a preference whose first person comes last.
_BETTER_FOR_ME = re.compile(r"\b(?:better|best|easier|easiest|ideal|preferable|suits?|suit\s+\w+\s+better)"
                            r"(?:\s+\w+)?\s+for\s+(?:me|us)\b", re.I)


# A clause without a first person that reads as a standing fact: a subject (a noun phrase, a name, he/she/they, "there
# is") and a verb of state or habit within its first words; never one about the service, the conversation or "it".
THIRD_PERSON_MIN_WORDS = 4
THIRD_PERSON_MIN_SCORE = 0.85
# Below this lexical score no third-person clause of the dev corpus reached THIRD_PERSON_MIN_SCORE with the model:
# such a clause is rejected without being embedded.
THIRD_PERSON_LEXICAL_FLOOR = 0.4
_THIRD_PERSON_FACT = re.compile(
    r"^(?:(?:the|his|her|their|both|all|each|every)\s+)?(?:[\w'-]+\s+){0,3}?(?:is|are|has|have|'s|was|were|uses?|takes?"
    r"|lives?|works?|needs?|gets?|goes|receives?|runs?|owns?|eats?|drinks?|wears?|does|sells?|makes?|keeps?|stays?"
    r"|sleeps?|starts?|finishes?|opens?|closes?|covers?|comes?|holds?|handles?|manages?|looks\s+after)\b"
    r"|^there(?:'s|\s+is|\s+are|\s+isn't|\s+aren't|\s+will\s+be)\b",
    re.I,
)
_NOT_ABOUT_THEM = re.compile(
    r"^(?:it|it's|this|that|that's|these|those|which|what|who|where|when|how|why|everything|something|nothing|anything"
    r"|everyone|someone|nobody|you|your|you're|yours|here|thanks|thank|hello|hi|hey|yes|yeah|no|nope|ok|okay|sure"
    r"|great|perfect|fine|cool|lovely|brilliant|awesome|sorry|also|and|but|so|then|just|maybe|probably|actually"
    r"|the\s+(?:app|website|site|page|link|form|code|error|system|portal|chat|agent|bot|call|email|message|text"
    r"|problem|issue|fault|delay|wait|queue|order|parcel|package|delivery|refund|payment|invoice|bill|charge"
    r"|ticket|case|reference|update|reply|answer|price|cost|total|fee|offer|deal|discount))\b",
    re.I,
)


@dataclass
class PendingStatement:
    """A clause waiting for its salience score; the extractor scores a job's pending statements in one batch."""

    text: str
    ctx: RuleContext
    instruction: str | None = None  # a standing request, without its "please"
    retires: tuple = ()  # old values the clause says it replaces, with their replacements (changes.Retired)
    third_person: bool = False  # no first person in it: kept only from THIRD_PERSON_MIN_SCORE

    def candidate(self, score: float) -> Candidate:
        candidate = self._candidate(score)
        if self.retires:
            candidate.metadata["retires"] = [list(retired) for retired in self.retires]
        return candidate

    def _candidate(self, score: float) -> Candidate:
        person = self.ctx.person
        confidence = min(score, MAX_CONFIDENCE)
        if self.instruction:
            content = person.sentence(f"asked support to {rewrite_first_person(self.instruction, person, named=True)}")
            return self.ctx.candidate(content, memory_type="preference", confidence=confidence, rule="statement",
                                      tags=("statement", "instruction"), metadata={"salience": score})
        metadata = {"salience": score}
        dates = [mention for mention in find_dates(self.text, self.ctx.reference)
                 if not _RECURRING.search(self.text[:mention.start])]  # "every Tuesday" is a habit, not a date
        if dates:  # "our second shop opens on Quay Street on 15 September": an event, with its date resolved
            memory_type, tags = "episode", ("statement",)
            metadata |= dates[0].metadata()
        elif _PREFERENCE.search(self.text) or _BETTER_FOR_ME.search(self.text):
            memory_type, tags = "preference", ("statement", "preference")
        else:
            memory_type, tags = "fact", ("statement",)
        return self.ctx.candidate(rewrite_first_person(self.text, person), memory_type=memory_type,
                                  confidence=confidence, rule="statement", tags=tags, metadata=metadata)


# "We looked at the Rose Garden package but went for the Classic one": what was weighed and turned down, then what
# was chosen; only the choice is a fact.
_TURNED_DOWN_THEN = re.compile(
    r"^(?P<subject>I|we|my\s+[a-z]+|our\s+[a-z]+)(?:'d|'ve|\s+had|\s+have)?\s+(?:first\s+|originally\s+|initially\s+)?"
    r"(?:looked\s+at|thought\s+(?:of|about)|considered|wanted|was\s+hoping\s+for|were\s+hoping\s+for"
    r"|was\s+going\s+to|were\s+going\s+to|nearly|almost|planned|had\s+planned|asked\s+about|tried)\b[^,;]{1,80}?"
    r",?\s+but\s+(?P<then>(?:then\s+|in\s+the\s+end\s+|eventually\s+|now\s+)?)(?P<rest>.+)$", re.I)
# "We thought about moving to Leeds" (the clause before "but we're staying in York"): weighed, not done.
_ONLY_WEIGHED = re.compile(
    r"^(?:I|we)(?:'d|'ve|\s+had|\s+have)?\s+(?:first\s+|originally\s+|initially\s+|briefly\s+)?(?:thought\s+(?:of|about)"
    r"|considered|looked\s+(?:at|into)|was\s+going\s+to|were\s+going\s+to|nearly|almost|planned\s+to|had\s+planned"
    r"|wanted\s+to|toyed\s+with|weighed\s+up)\b", re.I)
# "(I'm not vegetarian,) my wife is": the predicate is in the clause before; alone it says nothing.
_ELLIPTICAL = re.compile(r"^(?:(?:my|our|his|her|their|the)\s+)?\S+(?:\s+\S+)?\s+(?:is|are|am|was|were|does|do|did|has|have|had"
                         r"|can|will|would|could|should)\s*[.!]?$", re.I)
_CHOSEN = re.compile(r"^(?:went|chose|picked|decided|settled|opted|booked|ordered|took|got|stuck|ended\s+up)\b", re.I)


def chosen_after_turned_down(text: str) -> str | None:
    """The choice in "<subject> weighed X but chose Y", with its subject ("We went for the Classic one in the end"),
    or the clause after "but" when it is the customer's own ("but we'd rather ..."); "" when what follows is not theirs;
    None when the sentence is not of that shape."""
    match = _TURNED_DOWN_THEN.match(text)
    if not match:
        return None
    rest = match.group("rest")
    if _CHOSEN.match(rest):
        return f"{match.group('subject')} {rest}"
    return rest if re.match(r"(?:I|we|my|our)\b", rest, re.I) else ""


def pending_statement(clause: Clause, ctx: RuleContext) -> PendingStatement | None:
    """The clause as a statement worth scoring, or None when a cheap filter already rules it out."""
    if (chosen := chosen_after_turned_down(clause.text)) is not None:
        if not chosen:
            return None  # "we were hoping for 150 guests but the venue only holds 120": nothing of theirs is now
        clause = Clause(text=chosen, question=clause.question, uncertain=False, hedged=clause.hedged)
    if clause.question or clause.uncertain or "?" in clause.text:
        return None
    text = clause.text
    words = _WORD.findall(text)
    if not MIN_WORDS <= len(words) <= MAX_WORDS:
        return None
    if OWNED_BY_RULES.search(text) or (len(words) <= 4 and _POINTS_BACK.search(text)) or refers_to_context(text):
        return None
    polite = _POLITE_START.match(text)
    if polite:
        body = text[polite.end():]
        if _STANDING.search(body) and _TO_ME.search(body) and body[:1].isalpha():
            return PendingStatement(text=text, ctx=ctx, instruction=body)
        return None
    if _NOT_A_STATEMENT.match(text) or _NOT_ANY_MORE.search(text) or _ONLY_WEIGHED.match(text) or _ELLIPTICAL.search(
            text):
        return None
    first_person = any(word.lower() in _FIRST_PERSON and word != "US" for word in words[:FIRST_PERSON_WITHIN])
    if first_person or _BETTER_FOR_ME.search(text):
        return PendingStatement(text=text, ctx=ctx)
    if ctx.role == "user" and len(words) >= THIRD_PERSON_MIN_WORDS and _THIRD_PERSON_FACT.match(text) and not (
            _NOT_ABOUT_THEM.match(text)):
        # "the roof is slate and there's a bat roost in the loft", "Landlord is Mr Harjit Sandhu": the customer's
        # things without a first person; a higher score is asked of them (THIRD_PERSON_MIN_SCORE)
        return PendingStatement(text=text, ctx=ctx, third_person=True)
    return None


# "Thiago has a severe peanut allergy", "he's allergic to penicillin": a statement about one of the user's people.
_PRONOUN_START = re.compile(r"^(?P<pronoun>he|she)(?='s\b|\s)", re.I)
_ABOUT_NOW = re.compile(r"\b(?:today|tonight|yesterday|this\s+(?:morning|afternoon|evening|week)|right\s+now|just\s+now"
                        r"|at\s+the\s+moment)\b", re.I)
_REPORTING = re.compile(r"^\s*(?:'s\s+|is\s+|was\s+)?(?:\w+ly\s+)?(?:said|says|told|tells|asked|asks|called|calls|rang"
                        r"|rings|phoned|emailed|thinks|thought|wants\s+to\s+know|wonders|is\s+wondering|was\s+wondering"
                        r"|is\s+asking|was\s+asking|mentioned|will|would|might|could|can't\s+find)\b", re.I)


# "Priyanka has moved on", "Lerato has left": the person is leaving the account, which the retraction rules read.
_GONE = re.compile(r"^\s*(?:'s\s+|has\s+|had\s+|is\s+|was\s+)?(?:now\s+|just\s+|also\s+)?(?:moved\s+on|left|gone|quit"
                   r"|no\s+longer|not\s+(?:with|at|on)|leaving|split\s+up|divorced)\b", re.I)


def statement_about_someone(clause: Clause, ctx: RuleContext) -> PendingStatement | None:
    """A clause about one of the user's people the conversation has named ("Leo is terrified of needles", or "she
    is 13" right after "my daughter Dana"), as the user's statement about them ("My son Leo is terrified of
    needles"), for the salience classifier to score like the user's own; None for anything else."""
    if clause.question or clause.uncertain or "?" in clause.text or not (ctx.people or ctx.last_named):
        return None
    text = clause.text.rsplit(": ", 1)[-1]  # "First the medical part: Thiago has a severe peanut allergy"
    words = _WORD.findall(text)
    if not MIN_WORDS <= len(words) <= MAX_WORDS or _ABOUT_NOW.search(text) or OWNED_BY_RULES.search(text):
        return None
    own = (ctx.person.known or "").split()[:1]
    who, rest = None, ""
    if (pronoun := _PRONOUN_START.match(text)) and ctx.last_named:
        relation = ctx.last_named[0]
        if (relation in lexicon.FEMALE_RELATIONS) != (pronoun.group("pronoun").lower() == "she") and (
                relation in lexicon.FEMALE_RELATIONS or relation in lexicon.MALE_RELATIONS):
            return None  # "he" after "my daughter Dana" is someone else
        who, rest = ctx.last_named, text[pronoun.end():]
    else:
        for relation, name in ctx.people:
            first = name.split()[0]
            said = next((form for form in (name, first) if re.match(rf"{re.escape(form)}(?='s\b|\s)", text, re.I)), None)
            if said and not (own and own[0].casefold() == first.casefold()):
                who, rest = (relation, name), text[len(said):]
                break
    if who is None or _REPORTING.match(rest) or _GONE.match(rest):
        return None
    relation, name = who
    return PendingStatement(text=f"My {relation} {name}{rest}" if name else f"My {relation}{rest}", ctx=ctx)
