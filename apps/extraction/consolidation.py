"""Turn extractor candidates into store changes: skip duplicates, supersede old values, honour retractions.

Runs inside the job's transaction; every decision that changes a memory writes a MemoryRevision
(through apps.memories.services) naming the job and the message seqs it came from.
"""

import re
import uuid
from dataclasses import dataclass

from django.conf import settings
from django.db import connection
from django.db.models import Q

from apps.core.actors import Actor
from apps.core.embeddings import vector_literal
from apps.core.errors import ConflictError
from apps.extraction.extractors.base import (
    NAMED_VALUE_SUBJECTS,
    Candidate,
    covers,
    names_retracted_value,
    names_value,
    replace_named_value,
    retracted_subjects,
)
from apps.extraction.extractors.rules.changes import Retired, names_old_value, restated_without
from apps.extraction.extractors.rules.text import names_topic
from apps.extraction.redaction import (
    detail_values,
    emails_named_after,
    is_contact_detail,
    mentions_person,
    names_contact,
    names_person,
    without_employer,
    without_topic,
    without_value,
)
from apps.memories.models import Memory, MemoryStore
from apps.memories.normalise import content_hash
from apps.memories.services import (
    MemoryInput,
    memory_add_provenance,
    memory_bulk_create,
    memory_create,
    memory_invalidate,
    memory_supersede,
    memory_update,
)

# Identifiers that belong to one device: they go when the device they were said with is replaced.
DEVICE_IDENTIFIER_KINDS = ("plate", "serial", "imei")


@dataclass
class ConsolidationCounts:
    added: int = 0
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0


def _replaced_names(candidate: Candidate) -> list[str]:
    """The organisations and products a new value replaces by name ("we switched from Slack to Teams", "I've left
    Halden & Moss, I'm at Yorkshire Water now"), whose free-form notes it supersedes too."""
    if candidate.action == "delete":
        return []
    metadata = candidate.metadata or {}
    names = [str(value) for value in metadata.get("replaces_mentions", [])]
    if metadata.get("replaces") and metadata.get("family") in NAMED_VALUE_SUBJECTS:
        names.append(str(metadata["replaces"]))
    return names


def _retired_values(candidate: Candidate) -> list[Retired]:
    """Old values the change a candidate states names as replaced ("Tuesdays instead of Wednesdays"), with what
    replaces them, for the free-form notes naming them (apps/extraction/extractors/rules/changes.py)."""
    if candidate.action == "delete":
        return []
    retired = []
    for pair in (candidate.metadata or {}).get("retires", []):
        if isinstance(pair, (list, tuple)) and len(pair) == 2 and isinstance(pair[0], str) and pair[0]:
            retired.append(Retired(pair[0], str(pair[1]) if pair[1] else None))
    return retired


def _live_memories(store: MemoryStore, user_id: str):
    return Memory.objects.filter(store=store, user_id=user_id, status=Memory.Status.ACTIVE)


class _LiveMemories:
    """The user's active memories a batch of candidates can touch, loaded in one query and kept
    current as consolidation adds, supersedes and invalidates (instead of a query per candidate)."""

    def __init__(self, store: MemoryStore, user_id: str, candidates: list[Candidate]):
        self.store, self.user_id = store, user_id
        target_ids = []
        for candidate in candidates:
            try:
                target_ids.append(uuid.UUID(str(candidate.target_memory_id)))
            except ValueError:
                pass
        relevant = (
            Q(content_hash__in={content_hash(candidate.content) for candidate in candidates})
            | Q(metadata__subject__in=sorted({c.subject for c in candidates if c.subject}))
            | Q(pk__in=target_ids)
        )
        for value in sorted({str(c.metadata.get("value")) for c in candidates
                             if c.action == "delete" and not c.subject and c.metadata.get("value")}):
            relevant |= Q(content__icontains=value)  # "remove mei@x.sg": whatever memory holds the value
        named = {str(c.metadata.get("value")) for c in candidates
                 if c.action == "delete" and c.subject in NAMED_VALUE_SUBJECTS and c.metadata.get("value")}
        named |= {str(value) for c in candidates for value in _replaced_names(c)}
        for value in sorted(named):
            relevant |= Q(content__contains=value)  # "I've left Halden & Moss": the notes that name it
        for person in sorted({str(c.metadata.get("person")) for c in candidates
                              if c.action == "delete" and c.metadata.get("person")}):
            for name in person.split():  # "Beatriz" in "beatriz.nogueira@...", "pryce" in "g.pryce@..."
                if len(name) >= 3:
                    relevant |= Q(content__icontains=name)
            relevant |= Q(metadata__subject__startswith=f"contact:{person}")  # "my assistant": "The user's PA, ..."
        for value in sorted({retired.old for c in candidates for retired in _retired_values(c)}):
            relevant |= Q(content__icontains=re.split(r"[\s$€£¥]+", value.strip("$€£¥"))[0])  # read exactly below
        for topic in [c.metadata["topic"] for c in candidates if c.action == "delete" and c.metadata.get("topic")]:
            relevant |= Q(*[Q(content__icontains=word) for word in topic])  # "the note about he lost his job"
        for retracted in sorted({c.subject for c in candidates if c.subject and c.action == "delete"}):
            for kin in retracted_subjects(retracted):
                relevant |= Q(metadata__subject=kin) | Q(metadata__subject__startswith=f"{kin}:")
        # Embedded once here, for the near-duplicate check, and reused when a candidate is written.
        self.vectors: dict[str, list[float]] = {}
        self.batch_seqs: dict = {}  # memory id -> the message seqs of this batch it was written from
        self.nearest = self._nearest_active(
            [candidate for candidate in candidates if candidate.action != "delete"]
        )
        nearest_ids = [memory_id for memory_id, _ in self.nearest.values()]
        self.memories = {}
        for memory in _live_memories(store, user_id).filter(relevant | Q(pk__in=nearest_ids)).defer(
            "embedding", "search_vector"
        ):
            memory.store = store  # the writes below read memory.store
            self.memories[memory.pk] = memory

    def _nearest_active(self, candidates: list[Candidate]) -> dict[int, tuple]:
        """For each candidate (by id()), the user's closest active memory of the same type and its cosine
        similarity, for all candidates in one statement (a LATERAL nearest-neighbour per candidate)."""
        if not candidates:
            return {}
        store = self.store
        vectors = store.embedder.embed([candidate.content for candidate in candidates])
        self.vectors = dict(zip((candidate.content for candidate in candidates), vectors, strict=True))
        dimension = int(store.embedding_dimension)  # one of SUPPORTED_DIMENSIONS, from the database
        with connection.cursor() as cursor:
            cursor.execute(
                f"""
                SELECT c.position, n.id, 1 - n.distance
                FROM unnest(%(vectors)s::text[], %(types)s::text[]) WITH ORDINALITY AS c(vector, memory_type, position)
                CROSS JOIN LATERAL (
                    SELECT id, distance
                    FROM (
                        -- Exact: OFFSET 0 keeps the HNSW index (approximate, see apps/memories/search.py)
                        -- from serving the sort, so a duplicate is never missed.
                        SELECT m.id, m.embedding::vector({dimension}) <=> c.vector::vector({dimension}) AS distance
                        FROM memories_memory m
                        WHERE m.store_id = %(store)s AND m.user_id = %(user)s AND m.status = 'active'
                          AND m.memory_type = c.memory_type AND m.embedding_dimension = {dimension}
                          AND (m.expires_at IS NULL OR m.expires_at > now())
                        OFFSET 0
                    ) scoped
                    ORDER BY distance, id
                    LIMIT 1
                ) n
                """,
                {
                    "vectors": [vector_literal(vector) for vector in vectors],
                    "types": [candidate.memory_type for candidate in candidates],
                    "store": store.pk,
                    "user": self.user_id,
                },
            )
            rows = cursor.fetchall()
        return {id(candidates[position - 1]): (memory_id, similarity) for position, memory_id, similarity in rows}

    def with_hash(self, digest: str) -> Memory | None:
        return next((memory for memory in self.memories.values() if memory.content_hash == digest), None)

    def with_subject(self, subject: str) -> list[Memory]:
        return [memory for memory in self.memories.values() if (memory.metadata or {}).get("subject") == subject]

    def forgotten(self, candidate: Candidate) -> tuple[list[Memory], list[tuple[Memory, str]]]:
        """What a delete takes away: memories to retract as a whole, and memories that keep what else they say
        with the forgotten detail cut out of them (apps/extraction/redaction.py)."""
        metadata = candidate.metadata or {}
        person, detail = metadata.get("person"), metadata.get("detail")
        naming = [memory for memory in self.memories.values()
                  if names_retracted_value(candidate, memory.content, (memory.metadata or {}).get("subject"))]
        if topic := metadata.get("topic"):  # "remove the note about he lost his job": the notes about it
            # "the note about my surgery": a free-form note holding the word; a detail with a subject is not a note
            notes_only = bool(metadata.get("notes_only"))
            naming += [memory for memory in self.memories.values()
                       if names_topic(memory.content, topic, least=1 if notes_only else 2) and memory not in naming
                       and not (notes_only and (memory.metadata or {}).get("subject"))]
            if not metadata.get("cut"):
                return naming, []
            # "that code, please delete it": the parts of a note naming it go, what else it says stays
            cut = [(memory, left) for memory in naming if (left := without_topic(memory.content, topic))]
            return [memory for memory in naming if memory not in {kept for kept, _ in cut}], cut
        if person and not detail and person[:1].isupper():  # "take Alex off the account": the notes naming Alex too
            naming += [memory for memory in self.memories.values()
                       if names_person(memory.content, person) and memory not in naming]
        if candidate.target_memory_id or candidate.subject or not (metadata.get("value") or person and detail):
            targets = self.targets(candidate)
            return targets + [memory for memory in naming if memory not in targets], []
        whole: list[Memory] = []
        cut: list[tuple[Memory, str]] = []

        def take(memory: Memory, values: list[str]) -> None:
            content = memory.content
            for value in values:
                content = without_value(content, value) if content else None
            # a detail with a subject of its own goes whole; an address is cut out of the contact holding it
            if not content or memory.metadata.get("subject") and detail != "address":
                whole.append(memory)
            elif content != memory.content:
                cut.append((memory, content))

        value = str(metadata.get("value") or "")
        for memory in list(self.memories.values()):
            named = emails_named_after(memory.content, person) if person and not detail else []
            if detail is None and (person and names_contact(memory.content, memory.metadata.get("subject"), person)
                                   or not person and value and (
                    value.casefold() in memory.content.casefold())):
                if person or not is_contact_detail(value):
                    whole.append(memory)  # a person, an order number: the memory is about them
                else:
                    take(memory, [value])  # "forget 070-412 33 90": the number goes, the rest of a note stays
            elif named:
                take(memory, named)  # "remove Gareth Pryce's details": his address too, wherever it is
            elif detail and mentions_person(memory.content, person):
                subject = memory.metadata.get("subject") or ""
                if subject.startswith("contact:") and subject.endswith(f":{detail}"):
                    whole.append(memory)  # "my wife's mobile is ...": that detail's own memory
                elif values := detail_values(memory.content, detail):
                    take(memory, values)  # "her mobile number": out of a note that also holds her email
        return whole, cut

    def naming_anywhere(self, values: list[str]) -> list[Memory]:
        """The user's active memories, of any subject, that name one of `values`: read from the database, as the
        batch's own set holds only what its candidates were expected to touch."""
        named = Q()
        for value in values:
            named |= Q(content__contains=value)
        found = []
        for memory in _live_memories(self.store, self.user_id).filter(named).defer("embedding", "search_vector"):
            memory = self.memories.get(memory.pk, memory)
            memory.store = self.store
            if any(names_value(memory.content, value) for value in values):
                found.append(memory)
        return found

    def identifying(self, replaced: list[Memory], new: Memory) -> list[Memory]:
        """The number plates and serial numbers of a device the user no longer has ("I sold the Insignia, I've got
        an Ioniq 6 now"): active identifiers of a device's kind whose value its replaced memory names and its new
        one does not. A customer may have several vehicles, so a plate is never replaced by another plate alone."""
        gone = [memory for memory in replaced if str((memory.metadata or {}).get("subject", "")).startswith("device:")]
        if not gone:
            return []
        found = []
        for memory in _live_memories(self.store, self.user_id).filter(
                metadata__kind__in=DEVICE_IDENTIFIER_KINDS).defer("embedding", "search_vector"):
            value = str((memory.metadata or {}).get("identifier") or "")
            if value and value not in new.content and any(value in old.content for old in gone):
                memory.store = self.store
                found.append(self.memories.get(memory.pk, memory))
        return found

    def retiring(self, candidate: Candidate) -> list[tuple[Memory, str | None]]:
        """Free-form notes naming an old value the candidate's change replaces, said before it (never a note of the
        same message, which says the change itself), each with its wording as things now stand when it says more
        than the old value (changes.restated_without), else None: it goes as a whole."""
        retired = _retired_values(candidate)
        if not retired:
            return []
        seqs = set(candidate.source_seqs)
        found = []
        for memory in list(self.memories.values()):
            if (memory.metadata or {}).get("subject") or seqs & set(self.batch_seqs.get(memory.pk, ())):
                continue
            named = [each for each in retired if names_old_value(memory.content, each.old)]
            if not named:
                continue
            content = memory.content
            for each in named:
                content = restated_without(content, each) if content else None
            found.append((memory, content))
        return found

    def naming(self, values: list[str]) -> list[Memory]:
        """Free-form memories that name one of `values` (an organisation or product the user has replaced)."""
        return [memory for memory in self.memories.values() if not (memory.metadata or {}).get("subject")
                and any(names_value(memory.content, str(value)) for value in values)]

    def targets(self, candidate: Candidate) -> list[Memory]:
        if candidate.target_memory_id:
            target = next((m for m in self.memories.values() if str(m.pk) == str(candidate.target_memory_id)), None)
            return [target] if target else []
        if not candidate.subject:
            value = str((candidate.metadata or {}).get("value") or "").casefold()
            if candidate.action == "delete" and value:
                return [memory for memory in self.memories.values() if value in memory.content.casefold()]
            return []
        if candidate.action != "delete":
            return self.with_subject(candidate.subject)
        reached = [memory for memory in self.memories.values()
                   if covers(candidate.subject, (memory.metadata or {}).get("subject"))]
        value = str((candidate.metadata or {}).get("value") or "").casefold()
        if value:  # "we don't use Slack anymore" reaches "tool:slack", never "tool:jira"
            reached = [memory for memory in reached if memory.metadata.get("subject") == candidate.subject
                       or value in memory.content.casefold()]
        if reached and (candidate.metadata or {}).get("old"):
            # "the old number has been removed" after the new one was given: the one that replaced another is the new
            replacements = set(Memory.objects.filter(superseded_by__in=[m.pk for m in reached]).values_list(
                "superseded_by", flat=True))
            reached = [memory for memory in reached if memory.pk not in replacements]
        qualifier = (candidate.metadata or {}).get("qualifier")
        if qualifier:  # "forget my work number": the work number when it is known apart from the others
            named = [memory for memory in reached if (memory.metadata or {}).get("subject", "").endswith(f":{qualifier}")
                     or qualifier in memory.content.casefold()]
            return named or reached
        return reached

    def near_duplicate(self, candidate: Candidate) -> Memory | None:
        """An active memory saying the same thing: same normalised text, or a vector this close.

        A candidate with a subject that already has a different value is a new value, however similar
        the wording ("Alice likes tea" / "Alice doesn't like tea anymore"): only an exact repeat is a
        duplicate. An update is never a duplicate of the memory it updates ("120 people, not 80" is that memory's
        text with one value changed, as close as wordings get).
        """
        exact = self.with_hash(content_hash(candidate.content))
        if exact or (candidate.subject and self.with_subject(candidate.subject)):
            return exact
        nearest = self.nearest.get(id(candidate))
        if nearest is None:
            return None
        memory_id, similarity = nearest
        if similarity < settings.EXTRACTION_NEAR_DUPLICATE_SIMILARITY or (
                candidate.action == "update" and str(memory_id) == str(candidate.target_memory_id)):
            return None
        return self.memories.get(memory_id)  # loaded with the others; gone once superseded or invalidated

    def added(self, memory: Memory, seqs: list[int] = ()) -> None:
        if memory.status == Memory.Status.ACTIVE:
            self.memories[memory.pk] = memory
            if seqs:
                self.batch_seqs[memory.pk] = tuple(seqs)

    def gone(self, memory: Memory) -> None:
        self.memories.pop(memory.pk, None)


def consolidate(*, store: MemoryStore, session, job, candidates: list[Candidate], actor: Actor) -> ConsolidationCounts:
    counts = ConsolidationCounts()
    user_id = session.user_id
    live = _LiveMemories(store, user_id, candidates)
    # Plain additions are written together in one bulk create at the end (or earlier, before a
    # candidate that could replace or retract one of them), instead of one write per candidate. A
    # retraction reaches more than its own subject (typed variants, kin subjects, a memory holding the
    # value), so every delete comes after the additions before it.
    pending: list[tuple[Candidate, MemoryInput, tuple[str, dict]]] = []

    def write_pending() -> None:
        if not pending:
            return
        # Each was looked for among the user's active memories loaded above, in this transaction (near_duplicate).
        results = memory_bulk_create(
            store=store, items=[item for _, item, _ in pending], actor=actor, item_notes=[note for *_, note in pending],
            vectors=live.vectors, checked_new=True,
        )
        for (candidate, _, _), result in zip(pending, results, strict=True):
            if result.duplicate:
                counts.unchanged += 1
            else:
                counts.added += 1
                live.added(result.memory, candidate.source_seqs)
        pending.clear()

    for candidate in candidates:
        if candidate.action == "delete" or _replaced_names(candidate) or _retired_values(candidate) or (
            candidate.subject and any(waiting.subject == candidate.subject for waiting, _, _ in pending)
        ):
            write_pending()
        source = {"session_id": session.external_id, "job_id": str(job.pk), "message_seqs": candidate.source_seqs}
        context = {"job_id": str(job.pk), "session_id": session.external_id, "message_seqs": candidate.source_seqs,
                   "extractor": job.extractor}
        reason = f"extracted from messages {candidate.source_seqs} of session {session.external_id}"

        if candidate.action == "delete":
            targets, cuts = live.forgotten(candidate)
            for memory in targets:
                memory_invalidate(memory=memory, actor=actor, reason=f"retracted in {reason}", context=context)
                live.gone(memory)
            for memory, content in cuts:
                live.gone(memory)
                try:
                    live.added(memory_update(memory=memory, changes={"content": content}, actor=actor,
                                             reason=f"forgotten detail removed in {reason}", context=context))
                except ConflictError:  # what is left is another memory's content already: this one goes
                    memory_invalidate(memory=memory, actor=actor, reason=f"retracted in {reason}", context=context)
            counts.deleted += len(targets)
            counts.updated += len(cuts)
            counts.unchanged += not (targets or cuts)
            if candidate.subject == "employer" and (left := (candidate.metadata or {}).get("value")):
                counts.updated += _restate_titles(live, [str(left)], actor=actor, reason=reason, context=context,
                                                  source=source)
            continue

        duplicate = live.near_duplicate(candidate)
        if duplicate is not None:
            live.added(memory_add_provenance(memory=duplicate, source=source, actor=actor, context=context))
            counts.unchanged += 1
            continue

        replaced = live.targets(candidate) if candidate.action == "update" or candidate.subject else []
        # "I've left Halden & Moss, I'm at Yorkshire Water now": the new employer also replaces the notes naming the old
        replaced += [memory for memory in live.naming(_replaced_names(candidate)) if memory not in replaced]
        # "could Zara do Tuesdays instead of Wednesdays?": the notes naming Wednesdays are said again with Tuesdays,
        # or give way to this one
        retiring = [(memory, content) for memory, content in live.retiring(candidate) if memory not in replaced]
        replaced += [memory for memory, content in retiring if content is None]
        restating = [(memory, content) for memory, content in retiring if content is not None]
        needs_review = store.review_policy == MemoryStore.ReviewPolicy.REVIEW
        metadata = dict(candidate.metadata)
        metadata.pop("replaces_mentions", None)  # said in the revision's supersede, not a fact about the memory
        metadata.pop("renamed", None)
        metadata.pop("retires", None)
        if candidate.subject:
            metadata["subject"] = candidate.subject
        if needs_review and replaced:
            # Reviewed stores retire the old value only when a person approves the new one.
            metadata["supersedes"] = str(replaced[0].pk)
        item = MemoryInput(
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
        )
        for memory, content in restating if not needs_review else ():
            _restate(live, memory, content, dict(memory.metadata), actor=actor, context=context, source=source,
                     reason=f"a value named in it was replaced, {reason}")
            counts.updated += 1
        if not replaced or needs_review:
            pending.append((candidate, item, (reason, context)))
            continue
        result = memory_create(store=store, item=item, actor=actor, reason=reason, context=context,
                               vectors=live.vectors)
        if result.duplicate:
            counts.unchanged += 1
            continue
        live.added(result.memory, candidate.source_seqs)
        for old in replaced:
            memory_supersede(old=old, new=result.memory, actor=actor, reason=f"new value {reason}", context=context)
            live.gone(old)
        for old in live.identifying(replaced, result.memory):
            memory_supersede(old=old, new=result.memory, actor=actor,
                             reason=f"identified a device replaced in {reason}", context=context)
            live.gone(old)
        counts.updated += 1
        if candidate.subject == "employer" and not candidate.metadata.get("renamed"):
            left = [str(old.metadata["value"]) for old in replaced
                    if old.metadata.get("subject") == "employer" and old.metadata.get("value")]
            counts.updated += _restate_titles(live, left, actor=actor, reason=reason, context=context, source=source)
        if candidate.metadata.get("renamed"):
            counts.updated += _restate_renamed(
                live, renamed=[old for old in replaced if old.metadata.get("value")], new=result.memory,
                actor=actor, reason=reason, context=context, source=source,
            )
    write_pending()
    return counts


def _restate_titles(live: _LiveMemories, left: list[str], *, actor: Actor, reason: str, context: dict,
                    source: dict) -> int:
    """"I've left Oberon" / "I'm freelance now": the job title held at the employer the user has left stays true of
    them without it ("The user is a practice manager at Oberon Dental Group" -> "The user is a practice manager"), as
    a new memory superseding the old wording. Returns how many."""
    restated = 0
    for memory in list(live.memories.values()):
        if (memory.metadata or {}).get("subject") != "job_title":
            continue
        content = next((cut for organisation in left if (cut := without_employer(memory.content, organisation))), None)
        if content is None:
            continue
        # already known without the employer ("The user is a practice manager"): that memory replaces this wording
        _restate(live, memory, content, dict(memory.metadata), actor=actor, context=context, source=source,
                 reason=f"the user has left the employer named in it, {reason}")
        restated += 1
    return restated


def _restate(live: _LiveMemories, memory: Memory, content: str, metadata: dict, *, actor: Actor, context: dict,
             source: dict, reason: str) -> None:
    """`memory` said again as `content`: a new memory (or the one already saying it) that supersedes it."""
    item = MemoryInput(
        user_id=memory.user_id, agent_id=memory.agent_id, session_id=memory.session_id, content=content,
        memory_type=memory.memory_type, metadata=metadata, tags=list(memory.tags),
        importance=memory.importance, confidence=memory.confidence, status=Memory.Status.ACTIVE,
        source=memory.source, provenance={"sources": [*(memory.provenance or {}).get("sources", []), source]},
    )
    result = memory_create(store=live.store, item=item, actor=actor, context=context, reason=f"restated: {reason}")
    memory_supersede(old=memory, new=result.memory, actor=actor, context=context, reason=reason)
    live.gone(memory)
    live.added(result.memory)


def _restate_renamed(live: _LiveMemories, *, renamed: list[Memory], new: Memory, actor: Actor, reason: str,
                     context: dict, source: dict) -> int:
    """"Our company is now called Nuvola Labs SAS": the same organisation under a new name, so the user's other
    memories naming the old one ("The user is a CFO at Nuvola SAS") are restated with the new name, each
    superseding the old wording, instead of staying current under a name that is gone. Returns how many."""
    new_name = str(new.metadata.get("value") or "")
    old_names = [str(memory.metadata["value"]) for memory in renamed if str(memory.metadata["value"]) != new_name]
    if not new_name or not old_names:
        return 0
    restated = 0
    for memory in live.naming_anywhere(old_names):
        if memory.pk == new.pk:
            continue
        content = memory.content
        for old_name in old_names:
            content = replace_named_value(content, old_name, new_name)
        if content == memory.content:
            continue
        _restate(live, memory, content, {**memory.metadata, "renamed_from": old_names[0]}, actor=actor,
                 context=context, source=source, reason=f"the organisation was renamed, {reason}")
        restated += 1
    return restated
