"""Fixtures of the review console's tests: logged-in browsers of each role, and pending memories with the
conversation they came from (made through the services, as extraction makes them)."""

from dataclasses import dataclass

import pytest
from django.test import Client

from apps.conversations.services import MessageInput, messages_ingest
from apps.core.actors import Actor
from apps.memories.models import Memory
from apps.memories.services import MemoryInput, memory_create

EXTRACTION = Actor.system("extraction")


def browser(user=None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def conversation(store, session_id: str, texts: list[str], user_id: str = "alice"):
    """A session of `user_id` with `texts` as alternating user/assistant messages (seq 1, 2, ...)."""
    messages = [MessageInput(role="user" if index % 2 == 0 else "assistant", content=text)
                for index, text in enumerate(texts)]
    return messages_ingest(store=store, session_external_id=session_id, user_id=user_id, messages=messages).session


def pending(store, content: str, user_id: str = "alice", *, session=None, seqs=(), job_id=None, **fields) -> Memory:
    """A memory held for review, from messages `seqs` of `session` when given."""
    provenance, context = {}, {}
    if session is not None:
        source = {"session_id": session.external_id, "message_seqs": list(seqs)}
        if job_id:
            source["job_id"] = str(job_id)
        provenance, context = {"sources": [source]}, dict(source)
    item = MemoryInput(user_id=user_id, content=content, status=Memory.Status.PENDING_REVIEW,
                       source=Memory.Source.EXTRACTION if session is not None else Memory.Source.API,
                       provenance=provenance, session_id=session.external_id if session is not None else "",
                       **fields)
    return memory_create(store=store, item=item, actor=EXTRACTION, context=context).memory


@dataclass
class Browsers:
    admin: Client
    reviewer: Client
    other_admin: Client  # tenant_b's admin
    outsider: Client  # staff of no tenant
    anonymous: Client


@pytest.fixture
def browsers(tenant_a, tenant_b, outsider) -> Browsers:
    return Browsers(admin=browser(tenant_a.admin), reviewer=browser(tenant_a.reviewer),
                    other_admin=browser(tenant_b.admin), outsider=browser(outsider), anonymous=browser())


@pytest.fixture
def quiet_stores(tenant_a, tenant_b, configure_store):
    """Extraction off in both stores: conversations are stored, no job runs."""
    for world in (tenant_a, tenant_b):
        configure_store(world.store, extraction_config={"enabled": False})


def snapshot(store) -> dict:
    """Every row of `store` that a refused action must leave as it was."""
    from apps.conversations.models import Message, Session
    from apps.extraction.models import ExtractionJob
    from apps.memories.models import MemoryRevision

    memory_fields = [f.attname for f in Memory._meta.concrete_fields if f.attname not in ("embedding", "search_vector")]
    return {
        "memories": list(Memory.objects.filter(store=store).order_by("pk").values(*memory_fields)),
        "revisions": list(MemoryRevision.objects.filter(store=store).order_by("pk").values()),
        "sessions": list(Session.objects.filter(store=store).order_by("pk").values()),
        "messages": list(Message.objects.filter(session__store=store).order_by("pk").values()),
        "jobs": list(ExtractionJob.objects.filter(store=store).order_by("pk").values()),
    }


@dataclass
class ReviewWorld:
    """tenant_a's store with a conversation of alice, a pending memory from it, an active one, a deleted one,
    and a failed extraction job."""

    world: object
    session: object
    pending: Memory
    active: Memory
    deleted: Memory
    job: object

    @property
    def store(self):
        return self.world.store


@pytest.fixture
def review_world(tenant_a, quiet_stores, add_memory) -> ReviewWorld:
    from apps.extraction.models import ExtractionJob
    from apps.memories.services import memory_delete

    store = tenant_a.store
    session = conversation(store, "s-1", ["I moved to Paris last month", "Great, noted.", "I'm allergic to latex"])
    active = add_memory(store, "Lives in Berlin", metadata={"subject": "location"})
    job = ExtractionJob.objects.create(store=store, session=session, from_seq=0, to_seq=3, trigger="turns",
                                       extractor="rules", status="failed", attempts=3,
                                       error="RuntimeError: the rules extractor crashed")
    memory = pending(store, "Lives in Paris", session=session, seqs=[1], job_id=job.pk,
                     metadata={"subject": "location", "supersedes": str(active.pk)}, confidence=0.8)
    deleted = add_memory(store, "Has a cat named Tom")
    deleted = memory_delete(memory=deleted, actor=EXTRACTION, reason="test setup")
    return ReviewWorld(world=tenant_a, session=session, pending=memory, active=active, deleted=deleted, job=job)
