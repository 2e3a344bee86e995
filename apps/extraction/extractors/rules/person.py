"""Third-person rewriting: "I prefer my coffee black" -> "The user prefers their coffee black"."""

import re
from dataclasses import dataclass
from typing import ClassVar

# Words that may sit between a subject and its verb without being the verb ("I really like").
ADVERBS = frozenset(
    "really also just actually currently now still usually generally mostly totally absolutely definitely truly "
    "honestly personally quite especially particularly recently finally officially already only mainly primarily "
    "typically normally certainly genuinely seriously strongly always often sometimes occasionally rarely never "
    "even kinda basically literally simply no longer almost hardly barely seldom nearly".split()
)
MODALS = frozenset("can could will would shall should may might must can't couldn't won't wouldn't shouldn't "
                   "mustn't cannot didn't wasn't weren't".split())
# Verbs after "I"/"we" and what they become after "the user" ("we were told" -> "the user was told").
_IRREGULAR_PRESENT = {"am": "is", "'m": "is", "are": "is", "be": "is", "have": "has", "do": "does", "go": "goes",
                      "don't": "doesn't", "haven't": "hasn't", "aren't": "isn't", "'ve": "has", "'re": "is",
                      "were": "was", "weren't": "wasn't"}
IRREGULAR_PAST = frozenset(
    "was were had did went got made took saw came left bought sold said told thought knew gave found felt kept "
    "lost met paid put ran sent spent stood taught understood won wrote broke chose drove ate fell flew forgot "
    "grew heard hid hit held hurt lay led lent let meant rode rang rose sang sat slept spoke stole swam threw "
    "woke wore quit read been began became brought built caught cut dealt drew dug fought fed hung".split()
)


def is_past_participle(word: str) -> bool:
    """"worked", "moved" (but not "need", "feed", "proceed")."""
    return word.endswith("ed") and not word.endswith("eed")


def third_person_verb(verb: str) -> str:
    lower = verb.lower()
    if lower in _IRREGULAR_PRESENT:
        return _IRREGULAR_PRESENT[lower]
    if lower in MODALS or lower in IRREGULAR_PAST or is_past_participle(lower) or not lower.isalpha():
        return verb
    if lower.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(lower) > 2 and lower.endswith("y") and lower[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


@dataclass(frozen=True)
class Person:
    """How to name the user in a sentence ("the user"), and the name known for them.

    Memories say "the user" rather than the user's name: they belong to one user already, and a name written
    into every memory would stay behind in all of them when the name changes ("my surname is now Okafor").
    """

    known: str | None = None  # the user's name as far as this batch knows it, for rules that build on it

    label: ClassVar[str] = "the user"
    possessive: ClassVar[str] = "the user's"

    @staticmethod
    def starting(text: str) -> str:
        """`text` opening a sentence, "the user" capitalised."""
        return "T" + text[1:] if text.startswith("the user") else text

    def sentence(self, rest: str) -> str:
        return self.starting(f"{self.label} {rest}")


# An email address, a web address or a domain is one token, kept as it is: "x@proton.me" is no "me".
# So is a word that starts with a digit ("30i", "4kW"): its letters are no "I"; and a hyphenated word ("a
# pay-as-you-go SIM" is no "pay-as-the assistant-goes").
_TOKEN = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|(?:https?://)?[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?:/[^\s,;]*)?"
                    r"|\d+[A-Za-z]\w*|[A-Za-z]+(?:-[A-Za-z]+)+|[A-Za-z]+(?:'[A-Za-z]+)?|\s+|.", re.S)
_WORD_TOKEN = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")
_SUBJECT_CONTRACTIONS = {"i'm": "is", "i've": "has", "i'll": "will", "you're": "is", "you've": "has",
                         "you'll": "will"}
_PLURAL_CONTRACTIONS = {"i'm": "are", "i've": "have", "i'll": "will"}
_WE_CONTRACTIONS = {"we're": ("is", "are"), "we've": ("has", "have"), "we'll": ("will", "will")}
_ARTICLES = frozenset(("the", "a", "an"))
# Verbs that share the user's subject after "and"/"but"/"or": "I work nights and need texts" -> "... and needs texts".
_COORDINATED_VERBS = frozenset("want need like love hate prefer use have live work get go pay miss make take keep run "
                               "own rent speak travel call check read write send buy spend eat drink drive ride play "
                               "watch stream care handle manage look visit".split())
_OTHER_SUBJECTS = frozenset("he she it they you there this that who which".split())
_PLURAL_PAST = {"was": "were", "wasn't": "weren't", "am": "are"}
_HAD_AFTER = frozenset("been had gone done seen already never just got".split())
# After these words "you" is a subject ("when you explain"), so its verb agrees with "the assistant".
_SUBORDINATORS = frozenset("when if that because as while unless until once and but how whenever where so".split())


def rewrite_first_person(text: str, person: Person, *, named: bool = False) -> str:
    """`text` (a user's clause) in the third person.

    The first mention of the user is "the user"; later mentions become "they"/"their"/"them" so a sentence
    does not repeat it. "we"/"our"/"us" count as the user, speaking for their household or organisation
    ("our wedding", "we're on the Team plan"); "US" the country stays ("support from the US team"). "you" (the
    assistant) becomes "the assistant".
    """
    shouting = text.isupper()
    mid_sentence = named  # the caller has named the user already, so this text continues a sentence
    tokens = _TOKEN.findall(text)
    out: list[str] = []
    conjugate = False  # the next verb-looking word follows a third-person subject
    plural = False  # the next verb follows "they" ("... before they travel", "they were")
    user_subject = False  # the user is the subject of the current verb phrase (in the singular)
    previous_word = ""
    index = 0
    while index < len(tokens):
        token = tokens[index]
        lower = token.lower()
        index += 1
        if not token.strip() or not token[0].isalpha() or not _WORD_TOKEN.fullmatch(token):
            out.append(token)
            continue
        replacement = token
        if lower in ("i", "i'm", "i've", "i'll", "we", "we're", "we've", "we'll") or lower in _OTHER_SUBJECTS:
            user_subject = not named and lower not in _OTHER_SUBJECTS
        if lower == "i" and named:
            replacement, plural = "they", True
        elif lower == "i":
            replacement, conjugate, named = person.label, True, True
        elif lower in ("i'm", "i've", "i'll"):
            verb = _PLURAL_CONTRACTIONS[lower] if named else _SUBJECT_CONTRACTIONS[lower]
            replacement, named = f"{'they' if named else person.label} {verb}", True
        elif lower == "i'd":
            following = _next_word(tokens, index)
            replacement = f"{'they' if named else person.label} {'had' if following in _HAD_AFTER else 'would'}"
            named = True
        elif lower in ("my", "mine", "our", "ours"):
            # "our" is the user's household ("our wedding"): the user's, like "my".
            replacement = ("their" if lower in ("my", "our") else "theirs") if named else person.possessive
            named = True
        elif lower == "us" and _country_us(token, tokens, index, previous_word, shouting):
            pass
        elif lower in ("me", "us"):
            replacement, named = ("them" if named else person.label), True
        elif lower == "we" and named:
            replacement, plural = "they", True
        elif lower == "we":
            replacement, conjugate, named = person.label, True, True
        elif lower in _WE_CONTRACTIONS:
            singular, plural_verb = _WE_CONTRACTIONS[lower]
            replacement = f"they {plural_verb}" if named else f"{person.label} {singular}"
            named = True
        elif lower == "we'd":
            following = _next_word(tokens, index)
            replacement = f"{'they' if named else person.label} {'had' if following in _HAD_AFTER else 'would'}"
            named = True
        elif lower == "myself":
            replacement = "themselves"
        elif lower == "you":
            replacement = "the assistant"
            conjugate = previous_word in _SUBORDINATORS or not previous_word
        elif lower in ("you're", "you've", "you'll"):
            replacement = f"the assistant {_SUBJECT_CONTRACTIONS[lower]}"
        elif lower in ("your", "yours"):
            replacement = "the assistant's"
        elif lower == "yourself":
            replacement = "itself"
        elif user_subject and previous_word in ("and", "but", "or") and lower in _COORDINATED_VERBS:
            replacement = third_person_verb(token)
        elif conjugate and lower not in ADVERBS:
            replacement, conjugate = third_person_verb(token), False
        elif plural and lower not in ADVERBS:
            replacement, plural = _PLURAL_PAST.get(lower, token), False
        previous_word = lower
        out.append(replacement)
    return "".join(out) if mid_sentence else person.starting("".join(out))


_SECOND_PERSON = {"you're": "is", "you've": "has", "you'll": "will", "you'd": "would"}
_ASSISTANT_WORDS = {"i": "the assistant", "me": "the assistant", "my": "the assistant's", "i've": "the assistant has",
                    "i'm": "the assistant is", "i'll": "the assistant will", "we": "support", "us": "support",
                    "our": "the", "we've": "support has", "we're": "support is", "we'll": "support will"}


def rewrite_second_person(text: str, person: Person) -> str:
    """`text` (an assistant's or agent's sentence) with "you"/"your" naming the user and "I"/"we" the assistant."""
    tokens = _TOKEN.findall(text)
    out: list[str] = []
    conjugate = False
    previous_word = ""
    for token in tokens:
        lower = token.lower()
        if not token.strip() or not token[0].isalpha() or not _WORD_TOKEN.fullmatch(token):
            out.append(token)
            continue
        replacement = token
        if lower == "you":
            replacement = person.label
            conjugate = previous_word in _SUBORDINATORS or not previous_word
        elif lower in _SECOND_PERSON:
            replacement = f"{person.label} {_SECOND_PERSON[lower]}"
        elif lower in ("your", "yours"):
            replacement = person.possessive
        elif lower == "yourself":
            replacement = person.label
        elif lower in _ASSISTANT_WORDS:
            replacement = _ASSISTANT_WORDS[lower]
            conjugate = lower in ("i", "we")
        elif conjugate:
            if lower not in ADVERBS:
                replacement, conjugate = third_person_verb(token), False
        previous_word = lower
        out.append(replacement)
    return person.starting("".join(out))


def _country_us(token: str, tokens: list[str], index: int, previous_word: str, shouting: bool) -> bool:
    """"US" the country rather than "us" the user: written in capitals in a message that is not all capitals,
    or after an article ("the us team"), or before a hyphen ("us-based")."""
    if token == "US" and not shouting:
        return True
    following = tokens[index] if index < len(tokens) else ""
    return previous_word in _ARTICLES or following == "-"


def _next_word(tokens: list[str], index: int) -> str:
    for token in tokens[index:]:
        if token.strip():
            return token.lower()
    return ""
