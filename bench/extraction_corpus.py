"""The extraction quality corpus (bench/data/extraction/, format in its README.md): loading, checking, scoring.

Plain Python with no Django and no other bench module, so tests can load it alone. `load_corpus` refuses a
bad file with a message naming the file and the conversation; `score` compares one conversation's items
with the memories the server holds for its user after extraction.
"""

import json
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

PARTS = ("dev", "held_out")
ROLES = ("user", "assistant")
ITEM_KINDS = ("expect", "forbid", "superseded", "forgotten", "allow")
CONVERSATION_KEYS = {"id", "user", "started_at", "messages", *ITEM_KINDS}
MESSAGE_KEYS = {"role", "text", "session", "at"}
# Messages without `at` follow the previous one by this much (the README's rule).
MESSAGE_GAP = timedelta(minutes=1)
# The server refuses message times further ahead of its clock than this.
FUTURE_TOLERANCE = timedelta(minutes=5)


class CorpusError(ValueError):
    """A corpus file that does not follow the format; the message names the file and the conversation."""


def normalised(text: str) -> str:
    """What matching compares: the casefolded letters and digits, so "+33 6 12" matches "33612"."""
    return "".join(ch for ch in text.casefold() if ch.isalnum())


@dataclass(frozen=True)
class Item:
    """One line of expect/forbid/…: substrings that must all be in the same memory."""

    parts: tuple[str, ...]

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(map(normalised, self.parts))

    def __str__(self) -> str:
        return " + ".join(repr(part) for part in self.parts)


@dataclass(frozen=True)
class CorpusMessage:
    role: str
    text: str
    session: int
    at: datetime  # when it was sent: its `at`, else the previous message's time + MESSAGE_GAP


@dataclass(frozen=True)
class Conversation:
    id: str
    part: str
    domain: str
    user: str
    started_at: datetime
    messages: tuple[CorpusMessage, ...]
    expect: tuple[Item, ...]
    forbid: tuple[Item, ...]
    superseded: tuple[Item, ...]
    forgotten: tuple[Item, ...]
    allow: tuple[Item, ...]
    path: Path

    def said_only_in_last_session(self, item: "Item") -> bool:
        """Whether every message holding `item` belongs to the conversation's last session."""
        last = max(message.session for message in self.messages)
        return all(message.session == last for message in self.messages
                   if all(key in normalised(message.text) for key in item.keys))

    def sessions(self) -> list[tuple[int, list[CorpusMessage]]]:
        """(session number, its messages) in order."""
        grouped: dict[int, list[CorpusMessage]] = {}
        for message in self.messages:
            grouped.setdefault(message.session, []).append(message)
        return sorted(grouped.items())


# --- Loading ----------------------------------------------------------------------------------------


def _time(value, where: str) -> datetime:
    if not isinstance(value, str):
        raise CorpusError(f"{where} must be an ISO 8601 time string, e.g. 2026-03-14T09:30:00Z")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise CorpusError(f"{where} is not an ISO 8601 time: {value!r}") from None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def _items(raw, where: str) -> tuple[Item, ...]:
    if not isinstance(raw, list):
        raise CorpusError(f"{where} must be a list")
    items = []
    for index, entry in enumerate(raw):
        parts = [entry] if isinstance(entry, str) else entry
        if not isinstance(parts, list) or not parts or not all(isinstance(part, str) for part in parts):
            raise CorpusError(f"{where}[{index}] must be a string or a non-empty list of strings: {entry!r}")
        empty = [part for part in parts if not normalised(part)]
        if empty:
            # Reduced to nothing it would match every memory.
            raise CorpusError(f"{where}[{index}] has no letters or digits: {empty[0]!r}")
        items.append(Item(tuple(parts)))
    return tuple(items)


def _messages(raw, started_at: datetime, where: str) -> tuple[CorpusMessage, ...]:
    if not isinstance(raw, list) or not raw:
        raise CorpusError(f"{where}: messages must be a non-empty list")
    messages, previous_at, previous_session = [], None, 1
    for index, message in enumerate(raw):
        at = f"{where}: messages[{index}]"
        if not isinstance(message, dict):
            raise CorpusError(f"{at} must be an object")
        unknown = sorted(set(message) - MESSAGE_KEYS)
        if unknown:
            raise CorpusError(f"{at} has unknown keys {unknown}; allowed: {sorted(MESSAGE_KEYS)}")
        if message.get("role") not in ROLES:
            raise CorpusError(f"{at}.role must be one of {', '.join(ROLES)}, not {message.get('role')!r}")
        if not isinstance(message.get("text"), str) or not message["text"].strip():
            raise CorpusError(f"{at}.text must be a non-empty string")
        session = message.get("session", 1)
        if isinstance(session, bool) or not isinstance(session, int) or session < 1:
            raise CorpusError(f"{at}.session must be an integer from 1, not {session!r}")
        if session < previous_session:
            raise CorpusError(f"{at}.session is {session} after a message of session {previous_session}: "
                              "sessions are posted in order, so their messages must be too")
        if "at" in message:
            sent = _time(message["at"], f"{at}.at")
        else:
            sent = started_at if previous_at is None else previous_at + MESSAGE_GAP
        messages.append(CorpusMessage(role=message["role"], text=message["text"], session=session, at=sent))
        previous_at, previous_session = sent, session
    return tuple(messages)


def _conversation(raw, *, part: str, domain: str, path: Path, index: int) -> Conversation:
    where = f"{path}: conversations[{index}]"
    if not isinstance(raw, dict):
        raise CorpusError(f"{where} must be an object")
    if not isinstance(raw.get("id"), str) or not raw["id"].strip():
        raise CorpusError(f"{where} needs an `id` (a non-empty string)")
    where = f"{path}: conversation {raw['id']!r}"
    missing = sorted({"id", "user", "started_at", "messages", "expect"} - set(raw))
    if missing:
        raise CorpusError(f"{where} lacks {missing}")
    unknown = sorted(set(raw) - CONVERSATION_KEYS)
    if unknown:
        raise CorpusError(f"{where} has unknown keys {unknown}; allowed: {sorted(CONVERSATION_KEYS)}")
    if not isinstance(raw["user"], str) or not raw["user"].strip():
        raise CorpusError(f"{where}: user must be a non-empty string")
    started_at = _time(raw["started_at"], f"{where}: started_at")
    messages = _messages(raw["messages"], started_at, where)
    items = {kind: _items(raw.get(kind, []), f"{where}: {kind}") for kind in ITEM_KINDS}
    said = normalised(" ".join(message.text for message in messages))
    for item in items["forgotten"]:
        # The README's rule: a value can only be forgotten after it was stated.
        if not all(key in said for key in item.keys):
            raise CorpusError(f"{where}: forgotten item {item} is never said in the conversation")
    return Conversation(id=raw["id"], part=part, domain=domain, user=raw["user"], started_at=started_at,
                        messages=messages, path=path, **items)


def load_file(path: Path, *, part: str) -> list[Conversation]:
    """The conversations of one `<part>/<domain>.json`, checked; CorpusError names what is wrong and where."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CorpusError(f"{path}: not readable JSON: {exc}") from None
    if not isinstance(raw, dict) or set(raw) != {"domain", "conversations"}:
        raise CorpusError(f"{path}: must be an object with exactly the keys 'domain' and 'conversations'")
    domain = raw["domain"]
    if domain != path.stem:
        raise CorpusError(f"{path}: domain is {domain!r}; the file of a domain is <part>/<domain>.json")
    if not isinstance(raw["conversations"], list) or not raw["conversations"]:
        raise CorpusError(f"{path}: conversations must be a non-empty list")
    return [_conversation(item, part=part, domain=domain, path=path, index=index)
            for index, item in enumerate(raw["conversations"])]


def load_corpus(root: Path, *, parts=PARTS) -> list[Conversation]:
    """Every conversation of `parts` under `root`, in part, file and file order; ids and users unique."""
    conversations: list[Conversation] = []
    for part in parts:
        for path in sorted((root / part).glob("*.json")):
            conversations += load_file(path, part=part)
    for attribute in ("id", "user"):
        seen: dict[str, Conversation] = {}
        for conversation in conversations:
            value = getattr(conversation, attribute)
            if value in seen:
                raise CorpusError(f"{conversation.path}: conversation {conversation.id!r}: {attribute} {value!r} "
                                  f"is also the {attribute} of conversation {seen[value].id!r} in {seen[value].path}")
            seen[value] = conversation
    return conversations


def not_yet_sendable(conversations, *, now: datetime | None = None) -> list[Conversation]:
    """Conversations with a message sent later than the server accepts now (a corpus written ahead of time)."""
    latest = (now or datetime.now(UTC)) + FUTURE_TOLERANCE
    return [c for c in conversations if max(message.at for message in c.messages) > latest]


# --- Scoring ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StoredMemory:
    """A memory as the list API gave it, with what matching compares."""

    id: str
    content: str
    status: str
    source: str
    date: str = ""  # metadata.date: the ISO date a relative date was resolved to, if any
    rule: str = ""  # metadata.rule: which rule of the rules extractor wrote it (for finding what went wrong)
    subject: str = ""  # metadata.subject: the replaceable fact it holds (what a new value of it supersedes)
    edited: bool = False  # changed since it was made: its history may hold a detail since cut out of it
    earlier: tuple[str, ...] = ()  # the contents it had before its edits (from its history, for edited ones)

    @classmethod
    def from_api(cls, body: dict) -> "StoredMemory":
        metadata = body.get("metadata") or {}
        date, rule, subject = metadata.get("date"), metadata.get("rule"), metadata.get("subject")
        return cls(id=body["id"], content=body["content"], status=body["status"], source=body["source"],
                   date=date if isinstance(date, str) else "", rule=rule if isinstance(rule, str) else "",
                   subject=subject if isinstance(subject, str) else "",
                   edited=body.get("updated_at", "") != body.get("created_at", ""))

    def held_before(self, item: Item) -> bool:
        """Every part of `item` was in one of this memory's earlier contents: a detail since cut out of it."""
        return any(all(key in normalised(content) for key in item.keys) for content in self.earlier)

    @property
    def active(self) -> bool:
        return self.status == "active"

    def holds(self, item: Item) -> bool:
        """Every part of `item` is in this memory: its content, or the date it resolved."""
        texts = (normalised(self.content), normalised(self.date))
        return all(any(key in text for text in texts) for key in item.keys)

    def leftover(self, item: Item) -> int:
        """How much of the content is not `item`: the memory that states an item leaves least."""
        content = normalised(self.content)
        return len(content) - sum(len(key) for key in item.keys if key in content)

    def __str__(self) -> str:
        date = f" [date {self.date}]" if self.date else ""
        return f"{self.status}: {self.content!r}{date}"


@dataclass
class Score:
    """One conversation's result; the lists hold what went wrong, for --verbose and --json."""

    conversation: Conversation
    memories: list[StoredMemory]
    expect_found: int = 0
    missed: list[Item] = field(default_factory=list)
    forbidden_hits: list[tuple[Item, StoredMemory]] = field(default_factory=list)
    created: int = 0
    junk: list[StoredMemory] = field(default_factory=list)
    junk_by_any_match: int = 0  # the looser count: created memories that hold no item at all
    superseded_ok: int = 0
    supersede_failures: list[tuple[Item, str]] = field(default_factory=list)
    wrongly_superseded: list[tuple[Item, StoredMemory]] = field(default_factory=list)
    forgotten_ok: int = 0
    forget_failures: list[tuple[Item, str]] = field(default_factory=list)

    @property
    def misses(self) -> int:
        return (len(self.missed) + len(self.forbidden_hits) + len(self.junk) + len(self.supersede_failures)
                + len(self.wrongly_superseded) + len(self.forget_failures))

    def as_json(self) -> dict:
        c = self.conversation
        return {
            "id": c.id, "part": c.part, "domain": c.domain, "user": c.user,
            "expect": len(c.expect), "expect_found": self.expect_found, "missed": [list(i.parts) for i in self.missed],
            "forbidden_hits": [{"item": list(i.parts), "memory": m.content, "rule": m.rule}
                               for i, m in self.forbidden_hits],
            "created": self.created, "junk": [m.content for m in self.junk], "junk_rules": [m.rule for m in self.junk],
            "junk_by_any_match": self.junk_by_any_match,
            "superseded": len(c.superseded), "superseded_ok": self.superseded_ok,
            "supersede_failures": [{"item": list(i.parts), "why": why} for i, why in self.supersede_failures],
            "wrongly_superseded": [{"item": list(i.parts), "memory": m.content, "status": m.status, "rule": m.rule}
                                   for i, m in self.wrongly_superseded],
            "forgotten": len(c.forgotten), "forgotten_ok": self.forgotten_ok,
            "forget_failures": [{"item": list(i.parts), "why": why} for i, why in self.forget_failures],
            "memories": [{"content": m.content, "status": m.status, "source": m.source, "date": m.date, "rule": m.rule,
                          "subject": m.subject}
                         for m in self.memories],
        }


def score(conversation: Conversation, memories: list[StoredMemory]) -> Score:
    """How the memories of the conversation's user (every status, deleted included) meet its items."""
    result = Score(conversation, memories)
    active = [memory for memory in memories if memory.active]
    retired = [memory for memory in memories if memory.status in ("superseded", "deleted")]

    def first(pool, item):
        return next((memory for memory in pool if memory.holds(item)), None)

    for item in conversation.expect:
        if first(active, item):
            result.expect_found += 1
            continue
        result.missed.append(item)
        damaged = first(retired, item)
        if damaged:  # the extractor had it and then retired it: good data lost
            result.wrongly_superseded.append((item, damaged))
    for item in conversation.forbid:
        result.forbidden_hits += [(item, memory) for memory in active if memory.holds(item)]
    for item in conversation.superseded:
        still_active = first(active, item)
        if still_active:
            result.supersede_failures.append((item, f"still in an active memory: {still_active.content!r}"))
        elif first([memory for memory in memories if memory.status == "superseded"], item):
            result.superseded_ok += 1
        else:
            elsewhere = first(memories, item)
            result.supersede_failures.append(
                (item, f"in no superseded memory (only {elsewhere})" if elsewhere else "never stored")
            )
    for item in conversation.forgotten:
        # Honoured if a memory held the value and was retired or edited to leave it out, or if the value is said only
        # in the last session, so the request to forget it came in the same session (one extraction batch), which must
        # then store nothing of it. A value said in an earlier session and never stored proves no forget: the statement
        # was missed.
        still_active = first(active, item)
        if still_active:
            result.forget_failures.append((item, f"still in an active memory: {still_active.content!r}"))
        elif first(retired, item) or any(memory.held_before(item) for memory in memories):
            result.forgotten_ok += 1  # retired whole, or cut out of a note that keeps what else it says
        elif not first(memories, item) and conversation.said_only_in_last_session(item):
            result.forgotten_ok += 1
        else:
            elsewhere = first(memories, item)
            result.forget_failures.append(
                (item, f"in no deleted or superseded memory (only {elsewhere})" if elsewhere else "never stored")
            )
    wanted = (*conversation.expect, *conversation.allow, *conversation.superseded, *conversation.forgotten)
    created = [memory for memory in memories if memory.source == "extraction"]
    result.created = len(created)
    # The user's name, held by every memory that names its subject, would explain them all, mangled ones
    # too. So an item explains one memory: items held by fewest memories first, each takes the memory it
    # fills most among those not yet explained (a duplicate of an explained memory is junk as well).
    holders = [(item, [memory for memory in created if memory.holds(item)]) for item in wanted]
    explained: set[str] = set()
    for item, held_by in sorted(holders, key=lambda pair: len(pair[1])):
        open_holders = [memory for memory in held_by if memory.id not in explained]
        if open_holders:
            explained.add(min(open_holders, key=lambda memory: memory.leftover(item)).id)
    result.junk = [memory for memory in created if memory.id not in explained]
    result.junk_by_any_match = sum(1 for memory in created if not any(memory.holds(item) for item in wanted))
    return result


@dataclass
class Tally:
    """Scores added up (over a domain, a part or everything); the rates are over items, not conversations."""

    conversations: int = 0
    expect: int = 0
    expect_found: int = 0
    forbidden_hits: int = 0
    created: int = 0
    junk: int = 0
    junk_by_any_match: int = 0
    superseded: int = 0
    superseded_ok: int = 0
    wrongly_superseded: int = 0
    forgotten: int = 0
    forgotten_ok: int = 0

    def add(self, result: Score) -> None:
        c = result.conversation
        self.conversations += 1
        self.expect += len(c.expect)
        self.expect_found += result.expect_found
        self.forbidden_hits += len(result.forbidden_hits)
        self.created += result.created
        self.junk += len(result.junk)
        self.junk_by_any_match += result.junk_by_any_match
        self.superseded += len(c.superseded)
        self.superseded_ok += result.superseded_ok
        self.wrongly_superseded += len(result.wrongly_superseded)
        self.forgotten += len(c.forgotten)
        self.forgotten_ok += result.forgotten_ok

    @property
    def recall(self) -> float:
        return _ratio(self.expect_found, self.expect)

    @property
    def junk_share(self) -> float:
        return _ratio(self.junk, self.created)

    @property
    def supersede_correctness(self) -> float:
        return _ratio(self.superseded_ok, self.superseded)

    @property
    def forgets_honoured(self) -> float:
        return _ratio(self.forgotten_ok, self.forgotten)

    @property
    def junk_share_by_any_match(self) -> float:
        return _ratio(self.junk_by_any_match, self.created)


def _ratio(part: int, whole: int) -> float:
    return part / whole if whole else math.nan


def tally(results) -> Tally:
    total = Tally()
    for result in results:
        total.add(result)
    return total
