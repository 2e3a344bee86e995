"""Context assembly: one ready-to-inject block of what an agent should know, within a token budget.

Token counts are estimated as ceil(characters / 4) over the rendered text (markup included), the
usual rule of thumb for English with BPE tokenizers; the block's estimate never exceeds the budget.
The budget is split between the requested kinds by their shares; each kind fills its share with its
candidates best first, then whatever is left is offered to the candidates that did not fit, kind by
kind in the order of KINDS. Candidates:
- working_state (needs session_id): the task state, then working-memory keys ranked by the words
  they share with the query (most recently updated first among equals), then scratchpad notes,
  newest first;
- facts (facts and preferences), episodes, procedures: the user's active memories of those types,
  ranked by the store's search (hybrid by default) against the query; the best 20 (more for large
  budgets, up to 100) per kind are candidates.
"""

import json
import math
import re
from dataclasses import dataclass, field
from xml.sax.saxutils import escape

from apps.conversations.models import ScratchpadEntry, Session, TaskState, WorkingMemoryItem
from apps.core.errors import ConflictError
from apps.memories.models import Memory, MemoryStore
from apps.memories.search import SearchQuery, memory_query_vector, memory_search
from apps.memories.store_settings import search_settings_for

CHARS_PER_TOKEN = 4
KINDS = ("working_state", "facts", "episodes", "procedures")
DEFAULT_SHARES = {"working_state": 0.3, "facts": 0.4, "episodes": 0.2, "procedures": 0.1}
MEMORY_TYPES = {
    "facts": (Memory.Type.FACT, Memory.Type.PREFERENCE),
    "episodes": (Memory.Type.EPISODE,),
    "procedures": (Memory.Type.PROCEDURE,),
}
FORMATS = ("xml", "markdown", "json")
MARKDOWN_HEADINGS = {
    "working_state": "Current working state",
    "facts": "Known facts and preferences",
    "episodes": "Past episodes",
    "procedures": "Procedures",
}
MIN_MEMORY_CANDIDATES = 20  # per kind; those that do not fit are reported as left out
MAX_MEMORY_CANDIDATES = 100
SCRATCHPAD_CANDIDATES = 20

# XML 1.0 forbids most control characters even when escaped; they become U+FFFD.
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_WORDS = re.compile(r"\w+")


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@dataclass
class Candidate:
    id: str
    kind: str
    source: str  # memory | working_memory | task_state | scratchpad
    type: str  # fact | preference | episode | procedure | key_value | task | note
    text: str
    score: float | None = None


@dataclass
class AssembledContext:
    context: str
    format: str
    token_budget: int
    tokens_estimated: int
    included: list[dict] = field(default_factory=list)
    left_out: list[dict] = field(default_factory=list)
    kinds: dict = field(default_factory=dict)


# --- Candidates -------------------------------------------------------------------------------------


def _words(text: str) -> set[str]:
    return {word.lower() for word in _WORDS.findall(text)}


def _task_text(task: TaskState) -> str:
    steps = f", step {task.current_step} of {task.total_steps}" if task.total_steps else ""
    description = task.description or "(no description)"
    return f"Current task: {description} (status {task.status}{steps}, {task.progress:.0f}% done)"


def _working_state_candidates(session: Session, query: str) -> list[Candidate]:
    candidates = []
    task = TaskState.objects.filter(session=session).first()
    if task is not None:
        candidates.append(Candidate(id="task_state", kind="working_state", source="task_state", type="task",
                                    text=_task_text(task), score=1.0))
    query_words = _words(query)
    ranked = []
    for item in WorkingMemoryItem.objects.filter(session=session).live().order_by("-updated_at", "key"):
        value = item.value if isinstance(item.value, str) else json.dumps(item.value, ensure_ascii=False)
        text = f"{item.key}: {value}"
        words = _words(text)
        overlap = len(query_words & words) / len(query_words) if query_words else 0.0
        ranked.append(Candidate(id=f"working_memory:{item.key}", kind="working_state", source="working_memory",
                                type="key_value", text=text, score=round(overlap, 4)))
    ranked.sort(key=lambda candidate: -candidate.score)  # stable: recency among equal scores
    candidates.extend(ranked)
    notes = ScratchpadEntry.objects.filter(session=session).order_by("-seq")[:SCRATCHPAD_CANDIDATES]
    candidates.extend(
        Candidate(id=f"scratchpad:{note.seq}", kind="working_state", source="scratchpad", type="note",
                  text=note.content, score=None)
        for note in notes
    )
    return candidates


def _memory_candidates(store: MemoryStore, *, kind: str, query: str, user_id: str, limit: int,
                       query_vector) -> list[Candidate]:
    mode = search_settings_for(store).mode
    hits = memory_search(
        store=store,
        search=SearchQuery(query=query, mode=mode, limit=limit, user_id=user_id, memory_types=MEMORY_TYPES[kind]),
        query_vector=query_vector,
    )
    return [
        Candidate(id=str(hit.memory.pk), kind=kind, source="memory", type=hit.memory.memory_type,
                  text=hit.memory.content, score=round(hit.score, 6))
        for hit in hits
    ]


# --- Rendering --------------------------------------------------------------------------------------


def _xml_text(text: str) -> str:
    return escape(_XML_INVALID.sub("\ufffd", text), {'"': "&quot;", "'": "&apos;"})


class _Renderer:
    """Renders entries in one format; `piece` gives the exact text an entry adds, so costs are exact."""

    def __init__(self, fmt: str):
        self.format = fmt

    def wrapper(self) -> tuple[str, str]:
        return {"xml": ("<memory>\n", "</memory>"), "markdown": ("# Memory\n", ""), "json": ('{"memory":[', "]}")}[
            self.format
        ]

    def heading(self, kind: str) -> str:
        return f"\n## {MARKDOWN_HEADINGS[kind]}\n" if self.format == "markdown" else ""

    def piece(self, candidate: Candidate) -> str:
        if self.format == "xml":
            return (f'<entry source="{_xml_text(candidate.source)}" type="{_xml_text(candidate.type)}">'
                    f"{_xml_text(candidate.text)}</entry>\n")
        if self.format == "markdown":
            text = " ".join(candidate.text.split())  # one line per entry
            return f"- {text}\n" if candidate.source == "memory" else f"- ({candidate.type}) {text}\n"
        # json: a comma before every entry is counted (one more than needed) to keep costs per entry.
        return "," + json.dumps(
            {"source": candidate.source, "type": candidate.type, "text": candidate.text}, ensure_ascii=False
        )

    def render(self, chosen: dict[str, list[Candidate]]) -> str:
        start, end = self.wrapper()
        parts = [start]
        for kind in KINDS:
            if chosen.get(kind):
                parts.append(self.heading(kind))
                parts.extend(self.piece(candidate) for candidate in chosen[kind])
        parts.append(end)
        text = "".join(parts)
        return text.replace('[,{', '[{', 1) if self.format == "json" else text


# --- Assembly ---------------------------------------------------------------------------------------


def _shares(kinds: list[str], shares: dict | None) -> dict[str, float]:
    weights = {kind: (shares or DEFAULT_SHARES).get(kind, DEFAULT_SHARES[kind]) for kind in kinds}
    total = sum(weights.values())
    if total <= 0:
        return {kind: 1 / len(kinds) for kind in kinds}
    return {kind: weight / total for kind, weight in weights.items()}


def context_assemble(
    *,
    store: MemoryStore,
    query: str,
    user_id: str,
    session: Session | None = None,
    token_budget: int = 2000,
    kinds: list[str] | None = None,
    fmt: str = "xml",
    shares: dict | None = None,
) -> AssembledContext:
    """Build the context block for `user_id` (and `session`) within `token_budget` estimated tokens."""
    kinds = [kind for kind in KINDS if kind in (kinds or KINDS)]
    if session is not None and session.user_id != user_id:
        raise ConflictError(
            f"Session {session.external_id!r} belongs to another user_id.",
            code="session_user_mismatch",
            details={"user_id": [f"This session's user_id is {session.user_id!r}."]},
        )
    renderer = _Renderer(fmt)
    start, end = renderer.wrapper()
    char_budget = token_budget * CHARS_PER_TOKEN
    available = char_budget - len(start) - len(end)
    split = _shares(kinds, shares)

    query_vector = None
    candidates: dict[str, list[Candidate]] = {}
    for kind in kinds:
        if kind == "working_state":
            candidates[kind] = _working_state_candidates(session, query) if session is not None else []
            continue
        if query_vector is None and search_settings_for(store).mode != "keyword":
            query_vector = memory_query_vector(store=store, query=query)
        limit = max(MIN_MEMORY_CANDIDATES, min(MAX_MEMORY_CANDIDATES, int(available * split[kind]) // 40))
        candidates[kind] = _memory_candidates(store, kind=kind, query=query, user_id=user_id, limit=limit,
                                              query_vector=query_vector)

    chosen: dict[str, list[Candidate]] = {kind: [] for kind in kinds}
    used = {kind: 0 for kind in kinds}
    total_used = 0

    def cost(candidate: Candidate) -> int:
        heading = renderer.heading(candidate.kind) if not chosen[candidate.kind] else ""
        return len(heading) + len(renderer.piece(candidate))

    def take(candidate: Candidate, size: int) -> None:
        nonlocal total_used
        chosen[candidate.kind].append(candidate)
        used[candidate.kind] += size
        total_used += size

    waiting = []
    for kind in kinds:  # first pass: each kind within its share
        allowance = int(available * split[kind])
        for candidate in candidates[kind]:
            size = cost(candidate)
            if used[kind] + size <= allowance:
                take(candidate, size)
            else:
                waiting.append(candidate)
    left_out = []
    for candidate in waiting:  # second pass: what the other kinds did not use
        size = cost(candidate)
        if total_used + size <= available:
            take(candidate, size)
        else:
            left_out.append(candidate)
    for kind in kinds:  # keep each kind's entries in rank order after the second pass
        order = {id(candidate): index for index, candidate in enumerate(candidates[kind])}
        chosen[kind].sort(key=lambda candidate: order[id(candidate)])

    text = renderer.render(chosen)
    tokens = estimate_tokens(text)

    def describe(candidate: Candidate) -> dict:
        return {"id": candidate.id, "kind": candidate.kind, "source": candidate.source, "type": candidate.type,
                "score": candidate.score, "tokens": estimate_tokens(renderer.piece(candidate))}

    return AssembledContext(
        context=text,
        format=fmt,
        token_budget=token_budget,
        tokens_estimated=tokens,
        included=[describe(candidate) for kind in kinds for candidate in chosen[kind]],
        left_out=[describe(candidate) for candidate in left_out],
        kinds={
            kind: {
                "share": round(split[kind], 4),
                "budget_tokens": int(available * split[kind]) // CHARS_PER_TOKEN,
                "used_tokens": math.ceil(used[kind] / CHARS_PER_TOKEN),
                "included": len(chosen[kind]),
                "left_out": sum(1 for candidate in left_out if candidate.kind == kind),
            }
            for kind in kinds
        },
    )
