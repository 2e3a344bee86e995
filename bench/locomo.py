"""LoCoMo for retrieval: conversations whose every turn becomes one memory, questions whose evidence names turns,
and the recall@k and hit@k of what a search returned (bench/retrieval.py).

The format is LoCoMo's (Maharana et al., ACL 2024, snap-research/locomo `data/locomo10.json`): a list of samples,
each with `sample_id`, `conversation` (`speaker_a`, `speaker_b`, `session_<n>` lists of turns `{speaker, dia_id,
text}`, `session_<n>_date_time`) and `qa` (`question`, `answer`, `evidence` list of dia_ids, `category`: 1 multi-hop,
2 temporal, 3 open-domain, 4 single-hop, 5 adversarial). A file that breaks it stops the run with a message naming
the sample and what is wrong. Evidence as the original writes it by mistake ("D8:6; D9:17", "D:11:26", "D30:05")
is split and normalised; an id that names no turn of its conversation is dropped and counted.
"""

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}  # 5, adversarial: nothing to find
KS = (1, 5, 10, 20)
_SESSION = re.compile(r"session_(\d+)")
_DIA_ID = re.compile(r"D:?(\d+):(\d+)")
_DATE = re.compile(r"(\d{1,2}) ([A-Za-z]+),? (\d{4})")  # "1:56 pm on 8 May, 2023"


class DataError(ValueError):
    """The file is not in LoCoMo's format; the message names the sample and what is wrong."""


@dataclass(frozen=True)
class Turn:
    dia_id: str  # normalised, "D3:12"
    session: int
    date: str  # "8 May 2023", or the file's text when it is not a date like that
    speaker: str
    text: str
    caption: str = ""  # the shared photo's caption (`blip_caption`), if any

    def content(self, *, captions: bool = False) -> str:
        """The memory: "[8 May 2023] Caroline: …", with "[shares a photo of …]" after it if asked."""
        prefix = f"[{self.date}] " if self.date else ""
        photo = f" [shares {self.caption}]" if captions and self.caption else ""
        return f"{prefix}{self.speaker}: {self.text}{photo}"


@dataclass(frozen=True)
class Question:
    conversation: str  # the sample id, also the memories' user_id
    number: int  # its place in the sample's `qa`, from 0
    question: str
    answer: str
    category: int
    evidence: tuple[str, ...]  # normalised dia_ids, each naming a turn of the conversation


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[Question]

    @property
    def sessions(self) -> int:
        return len({turn.session for turn in self.turns})


@dataclass
class Dataset:
    path: Path
    conversations: list[Conversation]
    rewritten: list[str] = field(default_factory=list)  # evidence strings split or normalised, as written
    unknown: list[str] = field(default_factory=list)  # "conv-26 D40:1": evidence naming no turn, dropped
    # questions not asked: category 5, no evidence, evidence only outside the turns kept by narrowing
    left_out: dict[str, int] = field(default_factory=dict)

    @property
    def questions(self) -> list[Question]:
        return [question for conversation in self.conversations for question in conversation.questions]

    @property
    def turns(self) -> int:
        return sum(len(conversation.turns) for conversation in self.conversations)


def normalise_dia_id(text: str) -> str:
    """"D:11:26" and "D30:05" as "D11:26" and "D30:5"; anything else as it is, stripped."""
    match = _DIA_ID.fullmatch(text.strip())
    return f"D{int(match[1])}:{int(match[2])}" if match else text.strip()


def split_evidence(text: str) -> list[str]:
    """One evidence string, which may hold several ids ("D8:6; D9:17"), as normalised ids."""
    return [normalise_dia_id(part) for part in re.split(r"[;,\s]+", text) if part.strip()]


def session_date(text: str) -> str:
    """ "1:56 pm on 8 May, 2023" as "8 May 2023"; another form as it is."""
    match = _DATE.search(text)
    return f"{int(match[1])} {match[2]} {match[3]}" if match else text.strip()


def load(path: Path, *, conversations: int = 0, sessions: int = 0, questions: int = 0) -> Dataset:
    """The file's samples, narrowed to the first `conversations`, the first `sessions` of each and the first
    `questions` asked (0: all); a question whose evidence is not all in the kept turns is left out."""
    try:
        samples = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise DataError(f"{path}: {error}") from None
    if not isinstance(samples, list) or not all(isinstance(sample, dict) for sample in samples):
        raise DataError(f"{path}: not a list of samples (objects)")
    data = Dataset(path=Path(path), conversations=[])
    for sample in samples[:conversations] if conversations else samples:
        data.conversations.append(_conversation(sample, data, sessions=sessions))
    if questions:
        kept = 0
        for conversation in data.conversations:
            asked = conversation.questions[: max(0, questions - kept)]
            _count(data, "beyond --questions", len(conversation.questions) - len(asked))
            conversation.questions, kept = asked, kept + len(asked)
    return data


def _conversation(sample: dict, data: Dataset, *, sessions: int) -> Conversation:
    sample_id = sample.get("sample_id")
    if not isinstance(sample_id, str) or not sample_id.strip():
        raise DataError(f"{data.path}: a sample without a sample_id")
    body, qa = sample.get("conversation"), sample.get("qa")
    if not isinstance(body, dict) or not isinstance(qa, list):
        raise DataError(f"{data.path}: sample {sample_id}: needs a `conversation` object and a `qa` list")
    numbers = sorted(int(match[1]) for key in body if (match := _SESSION.fullmatch(key)))
    if not numbers:
        raise DataError(f"{data.path}: sample {sample_id}: no session_<n> in its conversation")
    turns = []
    for number in numbers:
        date = body.get(f"session_{number}_date_time") or ""
        if not isinstance(body[f"session_{number}"], list) or not isinstance(date, str):
            raise DataError(f"{data.path}: sample {sample_id}: session_{number} is not a list of turns with a date")
        for place, turn in enumerate(body[f"session_{number}"]):
            fields = [turn.get(name) if isinstance(turn, dict) else None for name in ("dia_id", "speaker", "text")]
            if not all(isinstance(value, str) for value in fields):
                raise DataError(f"{data.path}: sample {sample_id}: turn {place} of session_{number} needs "
                                "dia_id, speaker and text strings")
            caption = turn.get("blip_caption")
            turns.append(Turn(dia_id=normalise_dia_id(fields[0]), session=number, date=session_date(date),
                              speaker=fields[1].strip(), text=fields[2].strip(),
                              caption=caption.strip() if isinstance(caption, str) else ""))
    every_turn = {turn.dia_id for turn in turns}
    if sessions:
        turns = [turn for turn in turns if turn.session in numbers[:sessions]]
    kept = {turn.dia_id for turn in turns}
    asked = []
    for number, item in enumerate(qa):
        if not isinstance(item, dict) or not isinstance(item.get("question"), str):
            raise DataError(f"{data.path}: sample {sample_id}: qa {number} has no question")
        category, written = item.get("category"), item.get("evidence") or []
        if not isinstance(category, int) or not isinstance(written, list) or \
                not all(isinstance(text, str) for text in written):
            raise DataError(f"{data.path}: sample {sample_id}: qa {number} needs an integer category and a list "
                            "of evidence strings")
        if category not in CATEGORIES:
            _count(data, f"category {category}", 1)
            continue
        evidence = []
        for text in written:
            ids = split_evidence(text)
            if ids != [text]:
                data.rewritten.append(text)
            for dia_id in ids:
                if dia_id not in every_turn:
                    data.unknown.append(f"{sample_id} {dia_id}")
                elif dia_id not in evidence:
                    evidence.append(dia_id)
        if not evidence:
            _count(data, "no evidence", 1)
        elif not kept.issuperset(evidence):
            _count(data, "evidence beyond --sessions", 1)
        else:
            answer = item.get("answer")
            asked.append(Question(conversation=sample_id, number=number, question=item["question"],
                                  answer="" if answer is None else str(answer), category=category,
                                  evidence=tuple(evidence)))
    return Conversation(sample_id=sample_id, turns=turns, questions=asked)


def _count(data: Dataset, why: str, n: int) -> None:
    if n:
        data.left_out[why] = data.left_out.get(why, 0) + n


# --- Scores -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Score:
    """One question's: recall@k = |evidence ∩ top-k dia_ids| / |evidence|; hit@k = any evidence in the top k."""

    recall: dict[int, float]
    hit: dict[int, bool]


def score(evidence: tuple[str, ...], retrieved: list[tuple[str, ...]], ks=KS) -> Score:
    """`retrieved`: each hit's dia_ids, best first (one, or more for a memory said twice word for word)."""
    wanted = set(evidence)
    recall, hit = {}, {}
    for k in ks:
        found = wanted.intersection(dia_id for ids in retrieved[:k] for dia_id in ids)
        recall[k] = len(found) / len(wanted)
        hit[k] = bool(found)
    return Score(recall=recall, hit=hit)


def mean(values) -> float:
    values = [float(value) for value in values]
    return sum(values) / len(values) if values else float("nan")
