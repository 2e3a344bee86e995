"""The review queue: pending memories, and for a page of them, in a fixed number of queries, the
messages they came from and the nearest memories the same customer already has."""

from collections import defaultdict
from dataclasses import dataclass, field

from django.db import connection
from django.db.models import CharField, F, Q, QuerySet
from django.db.models.expressions import RawSQL
from django.db.models.functions import Coalesce, Left

from apps.conversations.models import Message
from apps.memories.models import Memory
from apps.review.access import ConsoleAccess

# Cosine similarity from which a neighbour is probably the same memory said again, and from which it is
# close enough to perhaps say the opposite (a new city, a changed preference). Hints for the reviewer.
DUPLICATE_SIMILARITY = 0.92
CONFLICT_SIMILARITY = 0.75
NEIGHBOURS_PER_CARD = 3
# A card quotes at most this many source messages, each cut to this many characters.
SOURCES_PER_CARD = 3
SOURCE_EXCERPT_CHARS = 600

# The extractor that produced a memory: its first source's job's (rules or llm), else how it was added
# (api, admin, import). The job id is cast only when it looks like a uuid: provenance may come from clients.
_JOB_EXTRACTOR_SQL = """(
    SELECT j.extractor FROM extraction_extractionjob j
    WHERE j.id = CASE WHEN ("memories_memory"."provenance" #>> '{sources,0,job_id}') ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
                      THEN ("memories_memory"."provenance" #>> '{sources,0,job_id}')::uuid END
)"""
EXTRACTOR_CHOICES = [
    ("rules", "Rules extractor"), ("llm", "LLM extractor"),
    *[(value, f"Added by {label}") for value, label in Memory.Source.choices if value != Memory.Source.EXTRACTION],
]


@dataclass(frozen=True)
class QueueFilters:
    store_id: object | None = None
    user_id: str | None = None
    memory_type: str | None = None
    extractor: str | None = None
    min_confidence: float | None = None


def with_extractor(memories: QuerySet[Memory]) -> QuerySet[Memory]:
    return memories.annotate(extractor=Coalesce(RawSQL(_JOB_EXTRACTOR_SQL, [], output_field=CharField()), F("source")))


def pending_count(access: ConsoleAccess) -> int:
    """Pending memories in every store the user may see: the badge on every page."""
    if not access.stores:
        return 0
    return Memory.objects.filter(store_id__in=access.store_ids, status=Memory.Status.PENDING_REVIEW).count()


def queue_memories(access: ConsoleAccess, filters: QueueFilters) -> QuerySet[Memory]:
    """Pending memories of the visible stores matching `filters`, newest first."""
    memories = access.memories().filter(status=Memory.Status.PENDING_REVIEW)
    if filters.store_id is not None:
        memories = memories.filter(store_id=access.store(filters.store_id).pk)
    if filters.user_id:
        memories = memories.filter(user_id=filters.user_id)
    if filters.memory_type:
        memories = memories.filter(memory_type=filters.memory_type)
    if filters.min_confidence is not None:
        memories = memories.filter(confidence__gte=filters.min_confidence)
    memories = with_extractor(memories)
    if filters.extractor:
        memories = memories.filter(extractor=filters.extractor)
    return memories.order_by("-created_at", "-id")


# --- What each card shows besides the memory ------------------------------------------------------


@dataclass(frozen=True)
class SourceMessage:
    store_id: object
    session_id: str  # the session's external id
    seq: int
    role: str
    excerpt: str
    truncated: bool
    found: bool = True


@dataclass(frozen=True)
class Neighbour:
    id: object
    content: str
    memory_type: str
    status: str
    similarity: float | None
    relation: str  # "duplicate" | "conflict" | "related" | "supersedes"

    @property
    def relation_label(self) -> str:
        return {"duplicate": "likely duplicate", "conflict": "possible conflict", "related": "related",
                "supersedes": "would supersede"}[self.relation]


@dataclass
class CardDetails:
    sources: list[SourceMessage] = field(default_factory=list)
    neighbours: list[Neighbour] = field(default_factory=list)
    supersedes: Neighbour | None = None
    more_sources: int = 0


def source_refs(memory: Memory) -> list[tuple[str, int]]:
    """(session external id, message seq) of each message a memory was taken from, in order, once each."""
    refs = []
    for source in (memory.provenance or {}).get("sources") or []:
        if not isinstance(source, dict) or not isinstance(source.get("session_id"), str):
            continue
        for seq in source.get("message_seqs") or []:
            if isinstance(seq, int) and not isinstance(seq, bool) and (source["session_id"], seq) not in refs:
                refs.append((source["session_id"], seq))
    return refs


def card_details(memories: list[Memory]) -> dict:
    """memory id -> CardDetails for a page of memories: two queries, whatever the page's size."""
    details = {memory.pk: CardDetails() for memory in memories}
    _attach_sources(memories, details)
    _attach_neighbours(memories, details)
    return details


def _attach_sources(memories: list[Memory], details: dict) -> None:
    wanted: dict[tuple, set[int]] = defaultdict(set)
    per_memory = {}
    for memory in memories:
        refs = source_refs(memory)
        per_memory[memory.pk] = refs[:SOURCES_PER_CARD]
        details[memory.pk].more_sources = max(0, len(refs) - SOURCES_PER_CARD)
        for session_id, seq in per_memory[memory.pk]:
            wanted[(memory.store_id, session_id)].add(seq)
    if not wanted:
        return
    condition = Q()
    for (store_id, session_id), seqs in wanted.items():
        condition |= Q(session__store_id=store_id, session__external_id=session_id, seq__in=sorted(seqs))
    rows = (
        Message.objects.filter(condition)
        .annotate(excerpt=Left("text", SOURCE_EXCERPT_CHARS + 1))
        .values_list("session__store_id", "session__external_id", "seq", "role", "excerpt")
    )
    found = {(store_id, session_id, seq): (role, excerpt) for store_id, session_id, seq, role, excerpt in rows}
    for memory in memories:
        for session_id, seq in per_memory[memory.pk]:
            role, excerpt = found.get((memory.store_id, session_id, seq), ("", ""))
            details[memory.pk].sources.append(SourceMessage(
                store_id=memory.store_id, session_id=session_id, seq=seq, role=role,
                excerpt=excerpt[:SOURCE_EXCERPT_CHARS], truncated=len(excerpt) > SOURCE_EXCERPT_CHARS,
                found=(memory.store_id, session_id, seq) in found,
            ))


# For each memory of the page, in one statement: the customer's nearest live memories by cosine distance
# (exact: the scan is limited to one customer of one store by the memory_store_user_status index), and the
# memory that its approval would supersede (metadata.supersedes; cast only when it looks like a uuid).
_NEIGHBOURS_SQL = """
SELECT p.id, n.id, n.content, n.memory_type, n.status, n.similarity, n.subject, n.relation
FROM memories_memory p
CROSS JOIN LATERAL (
    (SELECT m.id, m.content, m.memory_type, m.status, 1 - (m.embedding <=> p.embedding) AS similarity,
            m.metadata ->> 'subject' AS subject, 'near' AS relation, m.created_at
     FROM memories_memory m
     WHERE m.store_id = p.store_id AND m.user_id = p.user_id AND m.status = ANY(%(live)s)
       AND m.id <> p.id AND m.embedding IS NOT NULL AND p.embedding IS NOT NULL
       AND m.embedding_dimension = p.embedding_dimension
     ORDER BY m.embedding <=> p.embedding, m.created_at DESC
     LIMIT %(limit)s)
    UNION ALL
    (SELECT s.id, s.content, s.memory_type, s.status,
            CASE WHEN s.embedding_dimension = p.embedding_dimension THEN 1 - (s.embedding <=> p.embedding) END,
            s.metadata ->> 'subject', 'supersedes', s.created_at
     FROM memories_memory s
     WHERE s.store_id = p.store_id
       AND s.id = CASE WHEN (p.metadata ->> 'supersedes') ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
                       THEN (p.metadata ->> 'supersedes')::uuid END)
) n
WHERE p.id = ANY(%(ids)s)
ORDER BY p.id, n.relation DESC, n.similarity DESC NULLS LAST
"""


def _attach_neighbours(memories: list[Memory], details: dict) -> None:
    if not memories:
        return
    subjects = {memory.pk: (memory.metadata or {}).get("subject") for memory in memories}
    with connection.cursor() as cursor:
        cursor.execute(_NEIGHBOURS_SQL, {
            "ids": [memory.pk for memory in memories], "limit": NEIGHBOURS_PER_CARD,
            "live": list(Memory.LIVE_STATUSES),
        })
        rows = cursor.fetchall()
    for memory_id, neighbour_id, content, memory_type, status, similarity, subject, relation in rows:
        card = details[memory_id]
        similarity = None if similarity is None else float(similarity)
        if relation == "supersedes":
            card.supersedes = Neighbour(neighbour_id, content, memory_type, status, similarity, "supersedes")
            continue
        same_subject = subject is not None and subject == subjects[memory_id]
        card.neighbours.append(Neighbour(neighbour_id, content, memory_type, status, similarity,
                                         _relation(similarity, same_subject=same_subject)))
    for card in details.values():
        if card.supersedes is not None:  # shown once, as what the approval would supersede
            card.neighbours = [n for n in card.neighbours if n.id != card.supersedes.id]


def _relation(similarity: float | None, *, same_subject: bool) -> str:
    if similarity is not None and similarity >= DUPLICATE_SIMILARITY:
        return "duplicate"
    if same_subject or (similarity is not None and similarity >= CONFLICT_SIMILARITY):
        return "conflict"
    return "related"
