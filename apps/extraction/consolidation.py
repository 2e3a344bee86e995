"""Turn extractor candidates into store changes: skip duplicates, supersede old values, honour retractions.

Runs inside the job's transaction; every decision that changes a memory writes a MemoryRevision
(through apps.memories.services) naming the job and the message seqs it came from.
"""

from dataclasses import dataclass

from django.conf import settings

from apps.core.actors import Actor
from apps.extraction.extractors.base import Candidate
from apps.memories.models import Memory, MemoryStore
from apps.memories.normalise import content_hash
from apps.memories.selectors import SearchQuery, memory_search
from apps.memories.services import (
    MemoryInput,
    memory_add_provenance,
    memory_create,
    memory_invalidate,
    memory_supersede,
)


@dataclass
class ConsolidationCounts:
    added: int = 0
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0


def _live_memories(store: MemoryStore, user_id: str):
    return Memory.objects.filter(store=store, user_id=user_id, status=Memory.Status.ACTIVE)


def _same_subject(store, user_id, subject: str) -> list[Memory]:
    return list(_live_memories(store, user_id).filter(metadata__subject=subject))


def _near_duplicate(store, user_id, candidate: Candidate) -> Memory | None:
    """An active memory saying the same thing: same normalised text, or a vector this close.

    A candidate with a subject that already has a different value is a new value, however similar the
    wording ("Alice likes tea" / "Alice doesn't like tea anymore"): only an exact repeat is a duplicate.
    """
    exact = _live_memories(store, user_id).filter(content_hash=content_hash(candidate.content)).first()
    if exact:
        return exact
    if candidate.subject and _live_memories(store, user_id).filter(metadata__subject=candidate.subject).exists():
        return None
    hits = memory_search(
        store=store,
        search=SearchQuery(query=candidate.content, mode="vector", user_id=user_id, limit=1,
                           memory_types=(candidate.memory_type,)),
    )
    if hits and hits[0].similarity is not None and hits[0].similarity >= settings.EXTRACTION_NEAR_DUPLICATE_SIMILARITY:
        return hits[0].memory
    return None


def consolidate(*, store: MemoryStore, session, job, candidates: list[Candidate], actor: Actor) -> ConsolidationCounts:
    counts = ConsolidationCounts()
    user_id = session.user_id
    for candidate in candidates:
        source = {"session_id": session.external_id, "job_id": str(job.pk), "message_seqs": candidate.source_seqs}
        context = {"job_id": str(job.pk), "session_id": session.external_id, "message_seqs": candidate.source_seqs,
                   "extractor": job.extractor}
        reason = f"extracted from messages {candidate.source_seqs} of session {session.external_id}"

        if candidate.action == "delete":
            targets = _targets(store, user_id, candidate)
            for memory in targets:
                memory_invalidate(memory=memory, actor=actor, reason=f"retracted in {reason}", context=context)
            counts.deleted += len(targets)
            counts.unchanged += not targets
            continue

        duplicate = _near_duplicate(store, user_id, candidate)
        if duplicate is not None:
            memory_add_provenance(memory=duplicate, source=source, actor=actor, context=context)
            counts.unchanged += 1
            continue

        replaced = _targets(store, user_id, candidate) if candidate.action == "update" or candidate.subject else []
        needs_review = store.review_policy == MemoryStore.ReviewPolicy.REVIEW
        metadata = dict(candidate.metadata)
        if candidate.subject:
            metadata["subject"] = candidate.subject
        if needs_review and replaced:
            # Reviewed stores retire the old value only when a person approves the new one.
            metadata["supersedes"] = str(replaced[0].pk)
        result = memory_create(
            store=store,
            item=MemoryInput(
                user_id=user_id,
                agent_id=session.agent_id,
                session_id=session.external_id,
                content=candidate.content,
                memory_type=candidate.memory_type,
                metadata=metadata,
                tags=list(candidate.tags),
                confidence=max(0.0, min(1.0, float(candidate.confidence))),
                status=Memory.Status.PENDING_REVIEW if needs_review else Memory.Status.ACTIVE,
                source=Memory.Source.EXTRACTION,
                provenance={"sources": [source]},
            ),
            actor=actor,
            reason=reason,
            context=context,
        )
        if result.duplicate:  # the same content is already pending review
            counts.unchanged += 1
            continue
        if replaced and not needs_review:
            for old in replaced:
                memory_supersede(old=old, new=result.memory, actor=actor, reason=f"new value {reason}", context=context)
            counts.updated += 1
        else:
            counts.added += 1
    return counts


def _targets(store, user_id, candidate: Candidate) -> list[Memory]:
    if candidate.target_memory_id:
        target = _live_memories(store, user_id).filter(pk=candidate.target_memory_id).first()
        return [target] if target else []
    if candidate.subject:
        return _same_subject(store, user_id, candidate.subject)
    return []
