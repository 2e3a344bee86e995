"""What every rule receives (the clause's message, how to name the user) and how it builds a candidate."""

import re
from dataclasses import dataclass
from datetime import date

from apps.extraction.extractors.base import Candidate
from apps.extraction.extractors.rules.person import Person
from apps.extraction.extractors.rules.text import clean_content

HEDGED_FACTOR = 0.75  # "I think I'm allergic to shellfish"
MAX_CONTENT_CHARS = 500  # a pasted wall of text after "Summary:" is cut at a word boundary, not stored whole


@dataclass(frozen=True)
class RuleContext:
    seq: int
    role: str
    person: Person
    reference: date | None  # the message's date, for resolving "next Friday"
    hedged: bool = False
    opening: bool = False  # the first sentence of its message ("Hi, this is Alice")
    lowercase: bool = False  # the message is typed all in lowercase, so a name may be too ("i'm jon snow")
    sentence: str = ""  # the sentence the clause is from ("Please call, the number is ..." is about calling)
    # The user's people the conversation has named, (relation, name): "Leo is allergic to penicillin" is about one;
    # the last of them is the one a "he"/"she" opening a clause of the same message may mean.
    people: tuple[tuple[str, str], ...] = ()
    last_named: tuple[str, str | None] | None = None

    def candidate(
        self,
        content: str,
        *,
        memory_type: str = "fact",
        confidence: float,
        rule: str,
        subject: str | None = None,
        tags: tuple[str, ...] = (),
        metadata: dict | None = None,
        action: str = "add",
    ) -> Candidate:
        if self.hedged:
            confidence *= HEDGED_FACTOR
        content = clean_content(content)
        if len(content) > MAX_CONTENT_CHARS:
            content = content[:MAX_CONTENT_CHARS].rsplit(" ", 1)[0].rstrip(" ,;:") + "\u2026"
        return Candidate(
            content=content,
            memory_type=memory_type,
            confidence=round(min(1.0, max(0.0, confidence)), 2),
            source_seqs=[self.seq],
            action=action,
            subject=subject,
            tags=list(tags),
            metadata={**(metadata or {}), "rule": rule},
        )


def adverbs(words: str) -> str:
    """A regex fragment for any run of the given words between a subject and its verb ("I really do like")."""
    return r"(?:\s+(?:" + "|".join(re.escape(word).replace(r"\ ", r"\s+") for word in words.split(",")) + r"))*"


SUBJECT_ADVERBS = adverbs(
    "really,also,just,actually,currently,now,still,usually,generally,mostly,totally,absolutely,definitely,truly,"
    "honestly,personally,quite,especially,particularly,recently,finally,officially,already,only,mainly,primarily,"
    "typically,normally,certainly,genuinely,seriously,strongly,kinda,kind of,sort of,very much,much,do,originally,"
    "happily,proudly,sometimes,often,even,rather,very,a bit,a little,pretty,fairly,somewhat,extremely,slightly"
)
