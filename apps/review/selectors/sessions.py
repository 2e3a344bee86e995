"""A session's transcript, a page at a time, with the memories each message produced."""

from collections import defaultdict

from django.core.paginator import Paginator
from django.db.models import Q
from django.http import Http404

from apps.conversations.models import Message, Session
from apps.extraction.models import ExtractionJob
from apps.memories.models import Memory
from apps.review.access import ConsoleAccess
from apps.review.selectors.queue import source_refs

MESSAGES_PER_PAGE = 100
JOBS_SHOWN = 20


def session_for(access: ConsoleAccess, store_id, external_id: str) -> Session:
    """A session of a visible store; any other is not found."""
    store = access.store(store_id)
    session = Session.objects.filter(store=store, external_id=external_id).select_related("task_state").first()
    if session is None:
        raise Http404("No such session.")
    session.store = store
    return session


def transcript_page_number(session: Session, seq: int) -> int:
    """The page of the transcript that holds message `seq`."""
    before = Message.objects.filter(session=session, seq__lt=seq).count()
    return before // MESSAGES_PER_PAGE + 1


def transcript_page(session: Session, number):
    messages = Message.objects.filter(session=session).only(
        "id", "session_id", "seq", "role", "text", "created_at").order_by("seq")
    return Paginator(messages, MESSAGES_PER_PAGE).get_page(number)


def memories_by_message(session: Session, seqs: list[int]) -> dict[int, list[Memory]]:
    """seq -> the memories whose provenance names that message of this session (one query: the customer's
    memories of the store that came from this session)."""
    if not seqs:
        return {}
    wanted = set(seqs)
    memories = (
        Memory.objects.filter(store_id=session.store_id, user_id=session.user_id)
        .filter(Q(session_id=session.external_id) | Q(provenance__sources__contains=[{"session_id": session.external_id}]))
        .defer("embedding", "search_vector").order_by("created_at")
    )
    found: dict[int, list[Memory]] = defaultdict(list)
    for memory in memories:
        memory.store = session.store
        for session_id, seq in source_refs(memory):
            if session_id == session.external_id and seq in wanted and memory not in found[seq]:
                found[seq].append(memory)
    return dict(found)


def session_jobs(session: Session) -> list[ExtractionJob]:
    jobs = list(ExtractionJob.objects.filter(session=session).order_by("-created_at")[:JOBS_SHOWN])
    for job in jobs:
        job.session, job.store = session, session.store
    return jobs
