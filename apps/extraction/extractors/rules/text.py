"""Text plumbing for the rules extractor: normalising, sentence and clause splitting, value cutting.

Every pattern here is either anchored with bounded alternations or scans with simple character classes,
so matching stays linear in the input; long clauses are skipped by the rules rather than matched slowly.
"""

import re
from dataclasses import dataclass

MAX_CLAUSE_CHARS = 400  # the structured rules ignore longer clauses (pasted logs, code, essays)

_TYPOGRAPHY = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " ", "\u2013": "-"})
# Chat shorthand that would otherwise defeat the first-person patterns; only lowercase forms (and "Im").
_SHORTHAND = {
    "i": "I", "im": "I'm", "Im": "I'm", "ive": "I've", "dont": "don't", "doesnt": "doesn't", "didnt": "didn't",
    "cant": "can't", "isnt": "isn't", "wasnt": "wasn't", "havent": "haven't", "hasnt": "hasn't", "arent": "aren't",
    "i'm": "I'm", "i've": "I've", "i'll": "I'll", "i'd": "I'd",
    # texting shorthand: "can u text me", "ur records", "pls call"
    "u": "you", "ur": "your", "pls": "please", "plz": "please", "wont": "won't", "couldnt": "couldn't",
    "wouldnt": "wouldn't", "shouldnt": "shouldn't", "youre": "you're", "thats": "that's", "whats": "what's",
}
_SHORTHAND_WORD = re.compile(r"(?<![\w'@.])(?:i|im|Im|ive|dont|doesnt|didnt|cant|isnt|wasnt|havent|hasnt|arent"
                             r"|i'm|i've|i'll|i'd|u|ur|pls|plz|wont|couldnt|wouldnt|shouldnt|youre|thats|whats)(?![\w'@-])")
# Every horizontal space, Unicode ones included, becomes one plain space: runs of unusual spaces would otherwise
# make the rules' \s*/\s+ pairs backtrack.
_SPACES = re.compile(r"[^\S\n]+")


# A dash between words sets off a clause ("founder of Loop Analytics — we're on the Team plan"); one between numbers
# is a range ("9–5").
_CLAUSE_DASH = re.compile(r"\s*\u2014\s*|\s+\u2013\s+(?!\d)|(?<!\d)\s+\u2013\s+")


# "Kind regards,\nLiang Wei": a sign-off on a line of its own goes with the name on the next line.
_SIGN_OFF_LINE = re.compile(r"(?im)^(\s*(?:kind\s+regards|warm\s+regards|best\s+regards|regards|best\s+wishes|many\s+thanks|thanks"
                            r"|thank\s+you|cheers|sincerely|yours\s+sincerely|yours\s+faithfully|all\s+the\s+best|best))"
                            r"\s*[,!.]?[^\S\n]*\n\s*(?=[^\W\d_])")


def normalise_text(text: str) -> str:
    text = _SIGN_OFF_LINE.sub(r"\1, ", text)
    text = _CLAUSE_DASH.sub("; ", text)
    text = text.translate(_TYPOGRAPHY)
    text = _SHORTHAND_WORD.sub(lambda match: _SHORTHAND[match.group(0)], text)
    return _SPACES.sub(" ", text)


# A sentence ends at . ! ? (plus closing quotes/brackets) followed by space, or at a line break.
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\s*\n\s*")
_ABBREVIATION_END = re.compile(
    # not the end of an address: "henrik@online.no." or "example.co." ends a sentence
    r"(?:(?<![\w.@/-])(?:mr|mrs|ms|dr|st|prof|jr|sr|inc|ltd|co|corp|no|nr|approx|vs|e\.g|i\.e|a\.m|p\.m|u\.s)"
    r"|(?<![\w.])[A-Z])\.$",
    re.I,
)


def split_sentences(text: str) -> list[str]:
    sentences: list[str] = []
    carry = ""
    for piece in _SENTENCE_BREAK.split(text):
        piece = piece.strip()
        if not piece:
            continue
        piece = f"{carry} {piece}" if carry else piece
        if _ABBREVIATION_END.search(piece):
            carry = piece
            continue
        carry = ""
        sentences.append(piece)
    if carry:
        sentences.append(carry)
    return sentences


_STARTERS = r"(?:I|I'm|I've|I'll|I'd|my|me|we|we're|we've|we'll|we'd|please)"
_QUESTION_WORDS = (
    r"(?:do|does|did|can|could|would|will|should|shall|is|are|am|was|were|have|has|had|may|might|what|what's|where"
    r"|where's|when|why|who|who's|whom|whose|which|how|how's|isn't|aren't|don't|doesn't|didn't|can't|won't|wouldn't"
    r"|shouldn't|any|anyone|anything)"
)
# Clauses break at ";" and before a conjunction or comma that starts a new first-person statement or a question,
# so "My name is Alice and I work at TechCorp" is two clauses but "Portland, Oregon" and "tea and coffee" are not.
_CLAUSE_BREAK = re.compile(
    rf"\s*;\s*|\s*:\s+(?={_STARTERS}\b)|,?\s+(?:and|but|so|plus|also|and also|and now|but now)\s+(?={_STARTERS}\b)"
    rf"|,\s+(?=(?:{_STARTERS}|and|but|so|please|thanks|thank|{_QUESTION_WORDS})\b)"
    # "We've moved house, our new address is ...": a new detail begins a clause of its own
    r"|,\s+(?=(?:(?:our|the)\s+)?new\s+(?:address|home\s+address|number|mobile|phone|e-?mail)\b)",
    re.I,
)
_LEADING_FILLER = re.compile(
    r"^(?:(?:(?:hi|hello|hey|hiya|dear|good\s+(?:morning|afternoon|evening|day)|greetings|bonjour|hola|hej|hallo|ciao"
    r"|salut|kia\s+ora|g'day|howdy|morning|evening)(?:\s+(?:there|again|all|team|folks))?(?:\s+\w+(?=\s*,))?|ok|okay|oh|ah|well|so|yes|yeah|yep|yup|no|nope"
    r"|nah|actually|btw|by the way|fyi|also|and|but|anyway|anyways|honestly|tbh|um+|uh+|er|alright|right now|right"
    r"|great|cool|sure|thanks|thank you|just so you know|just fyi|for (?:the record|context|reference|future reference"
    r"|what it's worth|your information)|as i (?:said|mentioned)|as mentioned|personally|basically|plus|again|currently"
    r"|these days|nowadays|at the moment|at present|lately|now|oh and|and also|good news|great news|all done|done"
    r"|all set|perfect|certainly|of course|absolutely|no problem|understood|got it|noted|update|quick update"
    r"|small update|an update|heads up|news|just to let you know|just letting you know|to let you know|one more thing"
    r"|another thing|(?:I\s+)?forgot to (?:mention|say)|I should (?:mention|add|say)|worth mentioning|just so you're aware"
    r"|for your records|for your notes|for the file|on second thoughts?|come to think of it|(?:oh\s+)?(?:and\s+)?(?:also\s+)?(?:very\s+)?important"
    # "Two changes: ...", "Second: please ...", "Lastly, ...": announcing what follows
    r"|(?:(?:one|two|three|four|a\s+few|a\s+couple\s+of|couple\s+of|some|several|quick|small|last|final|other|another)\s+)+"
    r"(?:things?|changes?|updates?|questions?|points?|requests?)(?=\s*:)|(?:first|second|third)(?=\s*[:,])|firstly|secondly"
    r"|thirdly|lastly|finally)\b[\s,.;:!-]*)+",
    re.I,
)
_HEDGE = re.compile(r"^(?:I think|I guess|I believe|I suppose|I'd say|probably|pretty sure)\b(?:\s+that)?[\s,]*", re.I)
_QUESTION_START = re.compile(rf"^{_QUESTION_WORDS}\b", re.I)
# "if possible, write to me in Spanish" is a polite request, not a condition.
_POLITE_IF = r"(?!\s+(?:possible|at\s+all\s+possible|you\s+can|you\s+could|you\s+don't\s+mind|that's\s+(?:ok|okay|alright)"
_POLITE_IF += r"|convenient)(?![\w'\u2019]))"
_CONDITIONAL_START = re.compile(
    rf"^(?:if{_POLITE_IF}|unless|suppose|supposing|imagine|assuming|hypothetically|what if|in case|let's say|say|even if|when"
    r"|whenever|once|as soon as|in theory)\b",
    re.I,
)
_UNCERTAIN = re.compile(
    r"\b(?:if (?:I|we)|(?:I|we) wish|were (?:I|we)|(?:I|we) might|(?:I|we) may|maybe|perhaps|thinking (?:about|of)"
    r"|considering|not sure|wondering|I wonder|(?:haven't|have not|hasn't|not yet) decided|undecided|pretend"
    r"|hypothetical(?:ly)?|in theory|I would(?!\s+(?:also\s+|really\s+|much\s+|always\s+)?(?:prefer|rather)\b)|would I|could I|I could|I'd (?:like|love|want|be|have|go|move))\b",
    re.I,
)


@dataclass(frozen=True)
class Clause:
    text: str  # the clause with leading fillers ("Oh, btw,") and hedges ("I think") removed
    question: bool  # a question to or about something, never a statement of fact
    uncertain: bool  # conditional, hypothetical or wishful: never a positive fact
    hedged: bool  # "I think ...": kept, with less confidence


def conditional_sentence(sentence: str) -> bool:
    """Whether a sentence opens with a condition ("If I move, ..."), which makes every clause of it uncertain."""
    return bool(_CONDITIONAL_START.match(strip_filler(sentence)))


def uncertain_in_itself(text: str) -> bool:
    """Whether a clause is conditional or hypothetical in its own words, not only by the sentence it is in."""
    return bool(_CONDITIONAL_START.match(text) or _UNCERTAIN.search(text))


def strip_filler(text: str) -> str:
    return _LEADING_FILLER.sub("", text, count=1).strip()


# "We moved the books to Xero and don't use QuickBooks anymore": a negated second verb shares the subject, and is a
# statement of its own (a retraction the first clause would hide).
_SHARED_SUBJECT_NEGATION = re.compile(r"^(?P<subject>I|we)\b(?P<first>.+?),?\s+and\s+(?P<second>(?:don't|do\s+not|no\s+longer"
                                      r"|never|can't|cannot|won't)\s+.+)$", re.I)


def _with_shared_subjects(piece: str) -> list[str]:
    match = _SHARED_SUBJECT_NEGATION.match(piece)
    if not match:
        return [piece]
    return [f"{match.group('subject')}{match.group('first')}", f"{match.group('subject')} {match.group('second')}"]


# "Our cat, Pixel, has kidney disease": a break before "has" that leaves a subject with no verb behind it.
_SUBJECT_ONLY = re.compile(r"^(?:my|our|the|his|her|their)\s+(?!.*\b(?:is|are|was|were|has|have|had|do|does|did|will"
                           r"|would|can|could|should|I|I'm|I've|we|you)\b)[^,]+(?:,\s*(?:an?\s+)?[^,]+)?$", re.I)
_VERB_FIRST = re.compile(r"^(?:is|are|was|were|has|have|had|does|did"
                         r"|(?:will|can|should|must|would|could|may|might)(?!\s+(?:you|I|we|it|they|he|she)\b))\b", re.I)


def _with_subjects_rejoined(pieces: list[str], ends_with_question: bool) -> list[str]:
    joined: list[str] = []
    for index, piece in enumerate(pieces):
        asked = ends_with_question and index == len(pieces) - 1
        if joined and not asked and _VERB_FIRST.match(piece) and _SUBJECT_ONLY.match(joined[-1]):
            joined[-1] = f"{joined[-1]}, {piece}"
        else:
            joined.append(piece)
    return joined


def split_clauses(sentence: str) -> list[Clause]:
    """The clauses of one sentence, each marked question / uncertain / hedged."""
    ends_with_question = sentence.rstrip().endswith("?")
    conditional = conditional_sentence(sentence)
    pieces = _with_subjects_rejoined([part for piece in _CLAUSE_BREAK.split(sentence) if piece and piece.strip(" ,.!?")
                                      for part in _with_shared_subjects(strip_filler(piece))], ends_with_question)
    clauses = []
    for index, piece in enumerate(pieces):
        body = strip_filler(piece).rstrip(" .!?,;:")
        hedge = _HEDGE.match(body)
        if hedge:
            body = body[hedge.end():]
        if not body:
            continue
        question = bool(_QUESTION_START.match(body)) or (ends_with_question and index == len(pieces) - 1)
        uncertain = conditional or uncertain_in_itself(body)
        clauses.append(Clause(text=body, question=question, uncertain=uncertain, hedged=bool(hedge)))
    return clauses


# Words that end a captured value ("I live in Paris with my wife" -> "Paris").
_WORD = re.compile(r"[^\s,;:!?()\"]+|[,;:!?()\"]")
_TRAILING = ".!?,;:'\"-)"
_ABBREVIATION = re.compile(r"(?:[A-Z]\.)+|[A-Z][a-z]{0,3}\.")


def cut_value(text: str, stops: frozenset[str], max_words: int = 6, keep_comma_names: bool = False) -> str:
    """The leading words of `text` up to a stop word or punctuation, at most `max_words` words."""
    words: list[str] = []
    tokens = _WORD.findall(text)
    for index, token in enumerate(tokens):
        if token == "," and keep_comma_names and words:
            following = tokens[index + 1] if index + 1 < len(tokens) else ""
            if following[:1].isupper() and following.lower() not in stops:
                words[-1] += ","
                continue
            break
        if token in ",;:!?()\"":
            break
        bare = token.rstrip(_TRAILING)
        if bare.lower() in stops or not bare:
            break
        if token.endswith((".", "!", "?")):
            if not _ABBREVIATION.fullmatch(token):
                words.append(bare)
                break
            words.append(token)
        else:
            words.append(token)
        if len(words) >= max_words:
            break
    return " ".join(words).strip(" ,'\"-")


def clean_content(text: str) -> str:
    """Single-spaced, without trailing punctuation, capitalised."""
    text = re.sub(r"\s+", " ", text).strip().rstrip(" .!,;:-")
    return text[:1].upper() + text[1:] if text[:1].islower() else text


# Lowercase particles inside a full name ("Maria del Carmen Ruiz", "Ludwig van Beethoven").
NAME_PARTICLES = frozenset("de del della der den di da das dos du la le van von ter ten bin binti al el y e st".split())
_NAME_CONNECTORS = frozenset("of and for the on upon at in".split())  # "Bank of Ireland", "Marks and Spencer"


def proper_name(value: str) -> str:
    """A name (a person's, an organisation's) in its stored form: each word typed in lowercase is capitalised, part by
    part ("anne-marie" -> "Anne-Marie"), except a name particle, or a connecting word after the first; any other word
    keeps the user's casing ("McCarthy", "iPhone Repairs")."""
    words = value.split()
    return " ".join(
        word if not word.islower() or word in NAME_PARTICLES or (index and word in _NAME_CONNECTORS)
        else "-".join(part[:1].upper() + part[1:] for part in word.split("-"))
        for index, word in enumerate(words))


_NORMALISE_STRIP = re.compile(r"^(?:(?:a|an|the|my|some|their|his|her|our|any|to)\s+)+", re.I)
_NORMALISE_DROP = re.compile(r"[^\w\s'&+#-]")


def normalise_key(value: str) -> str:
    """A stable, case-folded key for subjects: "Green Tea!" and "green tea" are the same object."""
    value = _NORMALISE_DROP.sub(" ", value.casefold())
    value = _NORMALISE_STRIP.sub("", value.strip())
    return " ".join(value.split())[:60].strip(" '-")


# "never used this shop in my life", "don't send anything in that time", "I always mix that up": what the statement is
# about was named earlier in the conversation, so on its own it says nothing a later reader can use.
# ("that" only after a preposition or "use": "I prefer that calls come early" is a clause, not a thing.)
_DEICTIC_THING = re.compile(r"(?:\b(?:this|these|those)|\b(?:in|at|on|for|from|with|during|by|of|use|uses|used|using)\s+that)"
                            r"\s+(?!(?:is|was|are|were|has|had|will|would|can|could|should|may|might|must|does|did|means?"
                            r"|way|much|many|far|long|often|point|week|month|year|morning|evening|afternoon|weekend)\b)"
                            r"[a-z][\w-]*\b(?!\s+(?:is|are|was|were)\b)"
                            r"|\b(?:mix|mixes|mixed|mess|messes|messed|sort|sorts|sorted)\s+(?:that|this|it|them)\s+up\b")


# "just for this month", "this time", "today", "for now": a wish for once, not how the customer wants it from now on.
ONE_OFF = re.compile(r"\b(?:(?:just|only)\s+)?(?:for\s+)?this\s+(?:time|once|month|week|year|order|one)\b|\btoday\b|\btonight\b"
                     r"|\bfor\s+(?:now|the\s+moment)\b|\buntil\b|\bjust\s+once\b", re.I)


def refers_to_context(text: str) -> bool:
    """Whether `text` is about something only the conversation around it names ("this shop", "that time")."""
    return _DEICTIC_THING.search(text) is not None


# Words that say nothing of what a note is about: "the note about he lost his job" is about losing a job.
_NOT_TOPIC_WORDS = frozenset(
    "the a an he she they it i we you his her their its my our your him them me us is are was were be been has have had "
    "that this those these about on of to for in at and or with from any all some note notes bit part thing info "
    "information entry comment record now then there here".split())


def topic_words(text: str) -> list[str]:
    """The words a note about `text` must hold, as stems ("he lost his job" -> ["lost", "job"])."""
    return [_stem(word) for word in re.findall(r"[a-z][a-z'-]*", text.casefold()) if word not in _NOT_TOPIC_WORDS]


def names_topic(content: str, words: list[str], *, least: int = 2) -> bool:
    """Whether `content` holds every word of a topic (two words at least, so one word never empties a profile; one
    where only free-form notes are searched: "the note about my surgery")."""
    held = {_stem(word) for word in re.findall(r"[a-z][a-z'-]*", content.casefold())}
    return len(words) >= max(least, 1) and all(word in held for word in words)


def _stem(word: str) -> str:
    word = word.removesuffix("'s")
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word
