"""Everything the console holds about one customer (a user_id) across the stores the reviewer may see."""

from dataclasses import dataclass, field

from django.core.paginator import Page, Paginator
from django.db.models import Case, Count, IntegerField, OuterRef, Q, QuerySet, Subquery, Value, When
from django.db.models.functions import Coalesce

from apps.conversations.models import ScratchpadEntry, Session, WorkingMemoryItem
from apps.extraction.models import ExtractionJob
from apps.memories.models import Memory
from apps.memories.search import SearchHit, SearchQuery, memory_search
from apps.memories.store_settings import search_settings_for
from apps.review.access import ConsoleAccess

MEMORIES_PER_PAGE = 100
SESSIONS_SHOWN = 50
JOBS_SHOWN = 20
LOOKUP_LIMIT = 50
WORKING_ITEMS_SHOWN = 50  # per open session
SEARCH_LIMIT = 20

STATUS_ORDER = [Memory.Status.PENDING_REVIEW, Memory.Status.ACTIVE, Memory.Status.REJECTED,
                Memory.Status.SUPERSEDED, Memory.Status.DELETED]
TYPE_ORDER = [Memory.Type.FACT, Memory.Type.PREFERENCE, Memory.Type.EPISODE, Memory.Type.PROCEDURE]
OPEN_SESSION_STATUSES = (Session.Status.ACTIVE, Session.Status.PAUSED)


def customer_lookup(access: ConsoleAccess, query: str) -> list[str]:
    """Customer ids equal to `query` or starting with it, among the memories and sessions of visible stores."""
    if not access.stores or not query:
        return []
    found = set()
    for model in (Memory, Session):
        found.update(
            model.objects.filter(store_id__in=access.store_ids, user_id__startswith=query)
            .order_by("user_id").values_list("user_id", flat=True).distinct()[:LOOKUP_LIMIT]
        )
    return sorted(found)[:LOOKUP_LIMIT]


def _ranked(memories: QuerySet[Memory]) -> QuerySet[Memory]:
    return memories.annotate(
        status_rank=Case(*[When(status=s, then=Value(i)) for i, s in enumerate(STATUS_ORDER)],
                         default=Value(len(STATUS_ORDER)), output_field=IntegerField()),
        type_rank=Case(*[When(memory_type=t, then=Value(i)) for i, t in enumerate(TYPE_ORDER)],
                       default=Value(len(TYPE_ORDER)), output_field=IntegerField()),
    )


def customer_memories(access: ConsoleAccess, user_id: str, *, status: str | None = None) -> QuerySet[Memory]:
    """The customer's memories grouped by status, then type, newest first within a group."""
    memories = access.memories().filter(user_id=user_id)
    if status:
        memories = memories.filter(status=status)
    return _ranked(memories).order_by("status_rank", "type_rank", "-created_at", "-id")


def page_number_of(memories: QuerySet[Memory], memory: Memory, per_page: int = MEMORIES_PER_PAGE) -> int | None:
    """The page of `memories` (as customer_memories orders them) that holds `memory`, or None."""
    target = memories.filter(pk=memory.pk).values("status_rank", "type_rank", "created_at", "id").first()
    if target is None:
        return None
    s, t, c, i = target["status_rank"], target["type_rank"], target["created_at"], target["id"]
    before = memories.filter(
        Q(status_rank__lt=s) | Q(status_rank=s, type_rank__lt=t) | Q(status_rank=s, type_rank=t, created_at__gt=c)
        | Q(status_rank=s, type_rank=t, created_at=c, id__gt=i)
    ).count()
    return before // per_page + 1


@dataclass
class MemoryCounts:
    total: int = 0
    by_status: dict = field(default_factory=dict)  # status -> count
    by_status_type: dict = field(default_factory=dict)  # (status, type) -> count
    store_ids: set = field(default_factory=set)


def customer_memory_counts(access: ConsoleAccess, user_id: str) -> MemoryCounts:
    counts = MemoryCounts()
    if not access.stores:
        return counts
    rows = (
        Memory.objects.filter(store_id__in=access.store_ids, user_id=user_id)
        .values_list("store_id", "status", "memory_type").annotate(n=Count("id")).order_by()
    )
    for store_id, status, memory_type, n in rows:
        counts.total += n
        counts.by_status[status] = counts.by_status.get(status, 0) + n
        counts.by_status_type[(status, memory_type)] = counts.by_status_type.get((status, memory_type), 0) + n
        counts.store_ids.add(store_id)
    return counts


def paginate(queryset, number, per_page: int) -> Page:
    return Paginator(queryset, per_page).get_page(number)


@dataclass
class WorkingState:
    items: list[WorkingMemoryItem]
    more_items: bool


def customer_sessions(access: ConsoleAccess, user_id: str) -> list[Session]:
    """The customer's newest sessions, each with its task state and scratchpad count (one query)."""
    if not access.stores:
        return []
    scratchpad = (
        ScratchpadEntry.objects.filter(session=OuterRef("pk")).order_by().values("session")
        .annotate(n=Count("id")).values("n")
    )
    sessions = (
        Session.objects.filter(store_id__in=access.store_ids, user_id=user_id)
        .select_related("task_state")
        .annotate(scratchpad_count=Coalesce(Subquery(scratchpad, output_field=IntegerField()), 0))
        .order_by("-last_activity_at")[:SESSIONS_SHOWN]
    )
    return access.attach_stores(sessions)


def working_state_of(sessions: list[Session]) -> dict:
    """session pk -> WorkingState for the open sessions among `sessions` (one query)."""
    open_ids = [session.pk for session in sessions if session.status in OPEN_SESSION_STATUSES]
    states = {pk: WorkingState(items=[], more_items=False) for pk in open_ids}
    if not open_ids:
        return states
    for item in WorkingMemoryItem.objects.filter(session_id__in=open_ids).live().order_by("session_id", "key"):
        state = states[item.session_id]
        if len(state.items) < WORKING_ITEMS_SHOWN:
            state.items.append(item)
        else:
            state.more_items = True
    return states


def customer_jobs(access: ConsoleAccess, user_id: str) -> list[ExtractionJob]:
    if not access.stores:
        return []
    jobs = (
        ExtractionJob.objects.filter(store_id__in=access.store_ids, session__user_id=user_id)
        .select_related("session").order_by("-created_at")[:JOBS_SHOWN]
    )
    return access.attach_stores(jobs)


def customer_search(access: ConsoleAccess, user_id: str, query: str, *, store_ids) -> list[SearchHit]:
    """The API's hybrid search (apps.memories.search) among the customer's memories, pending and superseded
    ones included, in each visible store holding them; hits of all stores, best first."""
    hits: list[SearchHit] = []
    for store in access.stores:
        if store.pk not in store_ids:
            continue
        defaults = search_settings_for(store)
        search = SearchQuery(query=query, mode=defaults.mode, limit=SEARCH_LIMIT, user_id=user_id,
                             include_pending=True, include_superseded=True)
        for hit in memory_search(store=store, search=search):
            hit.memory.store = store
            hits.append(hit)
    hits.sort(key=lambda hit: hit.score, reverse=True)
    return hits[:SEARCH_LIMIT]
