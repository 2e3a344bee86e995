from django.conf import settings
from django.db.models import F, Min, Q
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone

from apps.core.errors import NotFoundError
from apps.core.health import CheckResult
from apps.extraction.extractors.base import ConversationMessage, ExistingMemory
from apps.extraction.extractors.rules.corrections import may_correct
from apps.extraction.models import ExtractionJob
from apps.memories.models import Memory, MemoryRevision, MemoryStore
from apps.memories.search import SearchQuery, memory_search
from apps.memories.selectors import store_list

KEYED_MEMORY_LIMIT = 100
SEARCHED_MEMORY_LIMIT = 10
FREE_FORM_MEMORY_LIMIT = 50


def related_memories(
    *, store: MemoryStore, user_id: str, messages: list[ConversationMessage], search: bool = True
) -> tuple[list[ExistingMemory], str | None]:
    """Active memories of the user an extractor should see, and the user's known name.

    Those with a subject (name, location, preferences...) are what new facts most often replace;
    with `search`, a search with the user's words adds the nearest free-form ones (a model can relate
    them; the rules extractor matches on subjects only and skips the search).
    """
    keyed = list(
        Memory.objects.filter(store=store, user_id=user_id, status=Memory.Status.ACTIVE, metadata__has_key="subject")
        .only("id", "content", "memory_type", "metadata")
        .order_by("-created_at")[:KEYED_MEMORY_LIMIT]
    )
    found = {memory.pk: memory for memory in keyed}
    user_text = " ".join(message.text for message in messages if message.role == "user")[:2000]
    if not search and may_correct(user_text):
        # The rules read no similarity: the latest free-form memories are the ones a correction ("it's 120 people
        # now, not 80") most often reaches; read only for a batch that may correct something.
        free_form = (Memory.objects.filter(store=store, user_id=user_id, status=Memory.Status.ACTIVE)
                     .exclude(metadata__has_key="subject").only("id", "content", "memory_type", "metadata")
                     .order_by("-created_at")[:FREE_FORM_MEMORY_LIMIT])
        found |= {memory.pk: memory for memory in free_form}
    elif search and user_text.strip():
        hits = memory_search(
            store=store, search=SearchQuery(query=user_text, user_id=user_id, limit=SEARCHED_MEMORY_LIMIT)
        )
        for hit in hits:
            found.setdefault(hit.memory.pk, hit.memory)
    existing = [
        ExistingMemory(
            id=str(memory.pk),
            content=memory.content,
            memory_type=memory.memory_type,
            subject=(memory.metadata or {}).get("subject"),
        )
        for memory in found.values()
    ]
    names = [memory for memory in keyed if (memory.metadata or {}).get("subject") == "name"]
    user_name = names[0].metadata.get("value") if names and names[0].metadata.get("value") else None
    return existing, user_name


def job_list(*, api_key, store_name=None, session_id=None, status=None):
    jobs = ExtractionJob.objects.filter(store__in=store_list(api_key=api_key)).select_related("store", "session")
    if store_name:
        jobs = jobs.filter(store__name=store_name)
    if session_id:
        jobs = jobs.filter(session__external_id=session_id)
    if status:
        jobs = jobs.filter(status=status)
    return jobs


def job_get(*, api_key, job_id):
    job = job_list(api_key=api_key).filter(pk=job_id).first()
    if job is None:
        raise NotFoundError(f"Extraction job {job_id} not found.", code="job_not_found")
    return job


FLUSH_JOB_LIMIT = 50


def session_jobs_covering(
    *, session, since_seq: int = 0, limit: int = FLUSH_JOB_LIMIT
) -> tuple[list[ExtractionJob], bool]:
    """The newest `limit` jobs of a session that cover a message with seq > `since_seq`, whenever they ran,
    oldest first; and whether older ones were left out.

    A job covers the messages (from_seq, to_seq]; one that found its range extracted already (from_seq
    == to_seq) covered none. The jobs get the caller's session and its store instead of a join for each.
    """
    newest = list(
        ExtractionJob.objects.filter(session=session, to_seq__gt=since_seq, from_seq__lt=F("to_seq"))
        .order_by("-to_seq", "-created_at")[: limit + 1]
    )
    for job in newest:
        job.session, job.store = session, session.store
    return newest[:limit][::-1], len(newest) > limit


def job_changes(*, session, job_ids) -> list[dict]:
    """The memory changes the given jobs of a session made, from the revisions they wrote, in order.

    A supersede names the memory that replaced the old one (`superseded_by`), from the revision itself.
    """
    if not job_ids:
        return []
    # The store and user narrow the scan to the revision_store_user index (context has no index).
    revisions = MemoryRevision.objects.filter(
        store_id=session.store_id, user_id=session.user_id, context__job_id__in=[str(job_id) for job_id in job_ids]
    ).order_by("id")
    return [
        {
            "memory_id": revision.memory_id,
            "action": revision.action,
            "status": (revision.after or {}).get("status", ""),
            "content": (revision.after or {}).get("content", ""),
            "superseded_by": (
                (revision.after or {}).get("superseded_by_id")
                if revision.action == MemoryRevision.Action.SUPERSEDE else None
            ),
            "job_id": revision.context["job_id"],
            "message_seqs": revision.context.get("message_seqs", []),
        }
        for revision in revisions
    ]


def extraction_queue_lag_seconds() -> float:
    """How long the oldest job due to run has waited for a worker (since it was created, or since its retry came
    due); 0 when none waits."""
    now = timezone.now()
    waiting_since = ExtractionJob.objects.filter(
        Q(run_after__isnull=True) | Q(run_after__lte=now), status=ExtractionJob.Status.QUEUED
    ).aggregate(oldest=Min(Greatest("created_at", Coalesce("run_after", "created_at"))))["oldest"]
    return max((now - waiting_since).total_seconds(), 0.0) if waiting_since else 0.0


def extraction_queue_readiness() -> CheckResult:
    """/readyz's queue check: the lag is below READINESS_MAX_QUEUE_LAG_SECONDS (0: not checked)."""
    limit = settings.READINESS_MAX_QUEUE_LAG_SECONDS
    lag = extraction_queue_lag_seconds()
    return CheckResult(not limit or lag <= limit, {"lag_seconds": round(lag, 1), "max_lag_seconds": limit or None})
