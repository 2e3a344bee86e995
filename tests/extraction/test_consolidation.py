import pytest
from django.db import connection, transaction

from apps.conversations.services import MessageInput, messages_ingest
from apps.core.actors import Actor
from apps.extraction.consolidation import consolidate
from apps.extraction.extractors.base import Candidate
from apps.extraction.models import ExtractionJob
from apps.memories.models import Memory, MemoryRevision
from apps.memories.normalise import content_hash
from apps.memories.services import MemoryInput, memory_approve, memory_create

ACTOR = Actor.system("extraction")


@pytest.fixture
def session(tenant_a, configure_store):
    configure_store(tenant_a.store, extraction_config={"enabled": False})
    result = messages_ingest(
        store=tenant_a.store, session_external_id="s-1", user_id="alice", agent_id="bot",
        messages=[MessageInput(role="user", content=f"message {i}") for i in range(4)],
    )
    return result.session


@pytest.fixture
def job(session):
    return ExtractionJob.objects.create(
        store=session.store, session=session, from_seq=0, to_seq=4, trigger="flush", extractor="rules",
        status="running",
    )


def _run(session, job, *candidates):
    return consolidate(store=session.store, session=session, job=job, candidates=list(candidates), actor=ACTOR)


def fact(content, seqs=(1,), **fields):
    return Candidate(content=content, memory_type=fields.pop("memory_type", "fact"), confidence=0.9,
                     source_seqs=list(seqs), **fields)


def test_new_fact_is_added_with_provenance_and_history(session, job):
    counts = _run(session, job, fact("Alice lives in Paris", seqs=[1, 2], subject="location"))
    assert (counts.added, counts.updated, counts.deleted, counts.unchanged) == (1, 0, 0, 0)
    memory = Memory.objects.get()
    assert (memory.source, memory.status, memory.user_id, memory.agent_id, memory.session_id) == (
        "extraction", "active", "alice", "bot", "s-1")
    assert memory.metadata["subject"] == "location"
    assert memory.provenance == {"sources": [{"session_id": "s-1", "job_id": str(job.pk), "message_seqs": [1, 2]}]}
    revision = MemoryRevision.objects.get(memory=memory)
    assert revision.action == "create" and revision.actor_label == "extraction"
    assert revision.context["job_id"] == str(job.pk) and revision.context["message_seqs"] == [1, 2]


def test_repeated_fact_adds_provenance_not_a_row(session, job):
    _run(session, job, fact("Alice lives in Paris", seqs=[1]))
    counts = _run(session, job, fact("alice lives in Paris.", seqs=[3]))
    assert (counts.added, counts.unchanged) == (0, 1)
    memory = Memory.objects.get()
    assert [source["message_seqs"] for source in memory.provenance["sources"]] == [[1], [3]]
    assert list(MemoryRevision.objects.filter(memory=memory).values_list("action", flat=True)) == ["create", "update"]


ALLERGY = "Alice is allergic to peanuts"
CLOSE = "Alice is badly allergic to peanuts"  # other words, a near vector
FAR = "Alice is allergic to cats"  # the next-closest wording, another fact
NEAR_DUPLICATE = 0.87


def _cosine(store, a, b):
    left, right = store.embedder.embed([a, b])
    return sum(x * y for x, y in zip(left, right, strict=True))


@pytest.fixture
def near_duplicate_threshold(session, settings):
    # The wordings differ after normalisation, so only the vector comparison can relate them.
    assert len({content_hash(text) for text in (ALLERGY, CLOSE, FAR)}) == 3
    assert _cosine(session.store, ALLERGY, CLOSE) > NEAR_DUPLICATE > _cosine(session.store, ALLERGY, FAR)
    settings.EXTRACTION_NEAR_DUPLICATE_SIMILARITY = NEAR_DUPLICATE


def test_near_duplicate_by_vector_similarity(session, job, near_duplicate_threshold):
    _run(session, job, fact(ALLERGY, seqs=[1]))
    original = Memory.objects.get()

    counts = _run(session, job, fact(CLOSE, seqs=[3]))
    assert (counts.added, counts.updated, counts.deleted, counts.unchanged) == (0, 0, 0, 1)
    memory = Memory.objects.get()
    assert memory.pk == original.pk and memory.content == ALLERGY and memory.status == "active"
    assert [source["message_seqs"] for source in memory.provenance["sources"]] == [[1], [3]]
    revisions = list(MemoryRevision.objects.filter(memory=memory).order_by("id"))
    assert [revision.action for revision in revisions] == ["create", "update"]
    assert revisions[-1].changed_fields == ["provenance"] and revisions[-1].context["message_seqs"] == [3]

    counts = _run(session, job, fact(FAR, seqs=[4]))
    assert (counts.added, counts.unchanged) == (1, 0)
    assert sorted(Memory.objects.values_list("content", flat=True)) == sorted([ALLERGY, FAR])


def test_near_duplicate_is_found_whatever_the_vector_index_would_return(session, job, near_duplicate_threshold):
    """The narrowest HNSW scan, with the planner pushed towards it, would find none of alice's memories among
    others' memories that crowd the query's neighbourhood: the duplicate check compares with each of them."""
    _run(session, job, fact(ALLERGY, seqs=[1]))
    for index in range(40):
        memory_create(store=session.store, item=MemoryInput(user_id=f"other{index}", content=f"{CLOSE} {index}"),
                      actor=ACTOR)
    with transaction.atomic(), connection.cursor() as cursor:
        for setting in ("hnsw.iterative_scan = off", "hnsw.ef_search = 1", "enable_seqscan = off",
                        "enable_bitmapscan = off", "enable_sort = off"):
            cursor.execute(f"SET LOCAL {setting}")
        counts = _run(session, job, fact(CLOSE, seqs=[3]))
    assert (counts.added, counts.unchanged) == (0, 1)
    assert list(Memory.objects.filter(user_id="alice").values_list("content", flat=True)) == [ALLERGY]


def test_candidate_near_a_memory_the_job_superseded_is_not_absorbed_into_it(session, job, near_duplicate_threshold):
    _run(session, job, fact(ALLERGY, seqs=[1]))
    old = Memory.objects.get()
    counts = _run(
        session, job,
        fact("Alice is allergic to peanuts and shellfish", seqs=[3], action="update", target_memory_id=str(old.pk)),
        fact(CLOSE, seqs=[4]),  # nearest to the value the first candidate just retired
    )
    assert (counts.added, counts.updated, counts.unchanged) == (1, 1, 0)
    old.refresh_from_db()
    assert old.status == "superseded"
    assert [source["message_seqs"] for source in old.provenance["sources"]] == [[1]]
    created, retired = MemoryRevision.objects.filter(memory=old).order_by("id")  # nothing after the supersede
    assert (created.action, retired.action, retired.after["status"]) == ("create", "supersede", "superseded")
    assert "provenance" not in retired.changed_fields
    close = Memory.objects.get(content=CLOSE)
    assert close.status == "active" and close.provenance["sources"][0]["message_seqs"] == [4]


def test_new_value_of_a_subject_supersedes_the_old_one(session, job):
    _run(session, job, fact("Alice lives in Paris", subject="location"))
    counts = _run(session, job, fact("Alice lives in Berlin", seqs=[3], subject="location"))
    assert (counts.added, counts.updated) == (0, 1)
    old = Memory.objects.get(content="Alice lives in Paris")
    new = Memory.objects.get(content="Alice lives in Berlin")
    assert old.status == "superseded" and old.valid_to is not None and old.superseded_by_id == new.pk
    assert new.status == "active"
    superseded = MemoryRevision.objects.filter(memory=old).order_by("id").last()
    assert (superseded.action, superseded.after["status"]) == ("supersede", "superseded")
    assert superseded.after["superseded_by_id"] == str(new.pk) and superseded.context["message_seqs"] == [3]
    hits = session.store.memories.filter(status="active").values_list("content", flat=True)
    assert list(hits) == ["Alice lives in Berlin"]


def test_retraction_invalidates_matching_memories(session, job):
    _run(session, job, fact("Alice's phone number is +33 6 12 34 56 78", subject="phone", metadata={"pii": True}))
    counts = _run(session, job, fact("Forget Alice's phone number", seqs=[4], subject="phone", action="delete"))
    assert (counts.deleted, counts.added) == (1, 0)
    phone = Memory.objects.get()
    assert phone.status == "deleted" and phone.valid_to is not None
    revision = MemoryRevision.objects.filter(memory=phone).order_by("id").last()
    assert revision.action == "delete" and "retracted" in revision.reason
    nothing = _run(session, job, fact("Forget Alice's email", subject="email", action="delete"))
    assert (nothing.deleted, nothing.unchanged) == (0, 1)


def test_model_decided_update_and_delete_by_target_id(session, job):
    _run(session, job, fact("Alice prefers email"), fact("Alice has a dog"))
    email = Memory.objects.get(content="Alice prefers email")
    dog = Memory.objects.get(content="Alice has a dog")
    counts = _run(
        session, job,
        fact("Alice prefers phone calls", action="update", target_memory_id=str(email.pk)),
        fact("Alice no longer has a dog", action="delete", target_memory_id=str(dog.pk)),
        fact("Bob's memory", action="delete", target_memory_id="00000000-0000-0000-0000-000000000000"),
    )
    assert (counts.updated, counts.deleted, counts.unchanged) == (1, 1, 1)
    email.refresh_from_db()
    dog.refresh_from_db()
    assert email.status == "superseded" and dog.status == "deleted"


def test_review_policy_holds_memories_and_supersedes_on_approval(session, job, tenant_a, configure_store):
    _run(session, job, fact("Alice lives in Paris", subject="location"))
    configure_store(session.store, review_policy="review")
    session.store.refresh_from_db()
    counts = _run(session, job, fact("Alice lives in Berlin", subject="location"))
    assert counts.added == 1
    berlin = Memory.objects.get(content="Alice lives in Berlin")
    paris = Memory.objects.get(content="Alice lives in Paris")
    assert berlin.status == "pending_review" and paris.status == "active"
    search = tenant_a.client("read").post("/api/v1/stores/main/search", {"query": "Berlin"}, format="json")
    assert all(hit["memory"]["content"] != "Alice lives in Berlin" for hit in search.json()["results"])
    memory_approve(memory=berlin, actor=Actor.system("reviewer"))
    paris.refresh_from_db()
    berlin.refresh_from_db()
    assert berlin.status == "active" and paris.status == "superseded" and paris.superseded_by_id == berlin.pk
    # The approval retired the old value: a supersede in its history, too.
    assert list(paris.revisions.order_by("id").values_list("action", flat=True)) == ["create", "supersede"]


def test_similar_wording_with_the_same_subject_is_a_new_value_not_a_duplicate(session, job, settings):
    settings.EXTRACTION_NEAR_DUPLICATE_SIMILARITY = 0.5  # even a loose threshold must not swallow it
    _run(session, job, fact("Alice likes tea", subject="preference:tea", memory_type="preference"))
    counts = _run(session, job, fact("Alice doesn't like tea anymore", subject="preference:tea", memory_type="preference"))
    assert counts.updated == 1
    assert Memory.objects.get(content="Alice likes tea").status == "superseded"
    assert Memory.objects.get(content="Alice doesn't like tea anymore").status == "active"


@pytest.mark.parametrize(
    ("added", "retraction"),
    [
        # A typed variant: a retraction of "phone" covers "phone:work".
        (fact("Alice's work phone is +33 1 23 45 67 89", subject="phone:work", metadata={"pii": True}),
         fact("Forget Alice's phone number", seqs=[2], subject="phone", action="delete")),
        # A kin subject: a retraction of "address" reaches "location".
        (fact("Alice lives in Lyon", subject="location"),
         fact("Forget Alice's address", seqs=[2], subject="address", action="delete")),
        # A plain value: no subject, the value names what goes.
        (fact("Alice's email is alice@example.com", metadata={"pii": True}),
         fact("Forget alice@example.com", seqs=[2], action="delete", metadata={"value": "alice@example.com"})),
    ],
    ids=["typed-variant", "kin-subject", "plain-value"],
)
def test_retraction_reaches_an_addition_of_the_same_batch(session, job, added, retraction):
    counts = _run(session, job, added, retraction)

    assert (counts.added, counts.deleted, counts.unchanged) == (1, 1, 0)
    memory = Memory.objects.get()
    assert memory.content == added.content and memory.status == "deleted"
    assert list(memory.revisions.order_by("id").values_list("action", flat=True)) == ["create", "delete"]


def test_a_duplicate_consolidation_did_not_see_is_still_caught_by_the_write(session, job, tenant_a):
    # A pending memory is live but not among the active ones consolidation compares against: the bulk write skips
    # its own look (checked_new), the unique index stops the insert, and the retry returns the existing row.
    pending = memory_create(
        store=session.store, item=MemoryInput(user_id="alice", content="Alice plays chess", status="pending_review"),
        actor=ACTOR,
    ).memory

    counts = _run(session, job, fact("Alice plays chess"))

    assert (counts.added, counts.unchanged) == (0, 1)
    assert Memory.objects.filter(store=session.store, content="Alice plays chess").count() == 1
    assert Memory.objects.get(pk=pending.pk).status == "pending_review"


def test_a_replaced_device_takes_its_number_plate_and_serial_along(session, job):
    _run(session, job,
         fact("Alice's car is a 2019 Vauxhall Insignia, reg LM19 XRT, serial VX-448812", subject="device:vehicle"),
         fact("Alice's vehicle registration is LM19 XRT", subject="identifier:plate:LM19 XRT",
              metadata={"kind": "plate", "identifier": "LM19 XRT"}),
         fact("Alice has serial number VX-448812", subject="identifier:serial:VX-448812",
              metadata={"kind": "serial", "identifier": "VX-448812"}),
         fact("Alice's van's registration is KV68 PNZ", subject="identifier:plate:KV68 PNZ",
              metadata={"kind": "plate", "identifier": "KV68 PNZ"}))

    _run(session, job, fact("Alice's car is a Hyundai Ioniq 6, reg LP24 WHA", seqs=[3], subject="device:vehicle"),
         fact("Alice's vehicle registration is LP24 WHA", seqs=[3], subject="identifier:plate:LP24 WHA",
              metadata={"kind": "plate", "identifier": "LP24 WHA"}))

    new_car = Memory.objects.get(content__startswith="Alice's car is a Hyundai")
    for gone in ("LM19 XRT", "VX-448812", "Insignia"):
        olds = Memory.objects.filter(content__contains=gone)
        assert olds and {(old.status, old.superseded_by_id) for old in olds} == {("superseded", new_car.pk)}
    # the van was never said with the car: another vehicle's plate stays
    active = set(Memory.objects.filter(status="active").values_list("content", flat=True))
    assert active == {"Alice's van's registration is KV68 PNZ", new_car.content,
                      "Alice's vehicle registration is LP24 WHA"}
    assert MemoryRevision.objects.filter(memory__content__contains="VX-448812", action="supersede").exists()


def test_a_device_restated_with_its_plate_keeps_the_plate(session, job):
    _run(session, job, fact("Alice's car is a Vauxhall Insignia, reg LM19 XRT", subject="device:vehicle"),
         fact("Alice's vehicle registration is LM19 XRT", subject="identifier:plate:LM19 XRT",
              metadata={"kind": "plate", "identifier": "LM19 XRT"}))

    _run(session, job, fact("Alice's car is a grey Vauxhall Insignia estate, reg LM19 XRT", seqs=[3],
                            subject="device:vehicle"))

    assert Memory.objects.get(content="Alice's vehicle registration is LM19 XRT").status == "active"


def test_a_thing_forgotten_by_name_takes_the_memories_naming_it_and_no_other(session, job):
    _run(session, job, fact("Alice's cards: the Amex ending 2006 is for personal stays"),
         fact("Alice is on the Premium plan", subject="plan"),
         fact("Alice has the Premium add-on"))

    counts = _run(session, job, fact("The assistant removed the Premium add-on", seqs=[3], action="delete",
                                     metadata={"value": "Premium add-on"}),
                  fact("Alice asked to forget the Amex", seqs=[3], action="delete", metadata={"value": "Amex"}))

    assert counts.deleted == 2
    status = dict(Memory.objects.values_list("content", "status"))
    assert status == {"Alice's cards: the Amex ending 2006 is for personal stays": "deleted",
                      "Alice has the Premium add-on": "deleted", "Alice is on the Premium plan": "active"}
    assert MemoryRevision.objects.filter(memory__content__contains="Amex", action="delete").exists()


def test_a_note_forgotten_by_its_topic_takes_the_notes_holding_all_of_it(session, job):
    _run(session, job, fact("Alice's husband Karim lost his job in January"), fact("Alice has a new job at Tesco"),
         fact("Alice lost her card last week"))

    counts = _run(session, job, fact("Alice asked to forget the note about he lost his job", seqs=[3], action="delete",
                                     metadata={"topic": ["lost", "job"]}))

    assert counts.deleted == 1
    assert set(Memory.objects.filter(status="active").values_list("content", flat=True)) == {
        "Alice has a new job at Tesco", "Alice lost her card last week"}



def test_a_change_naming_the_old_value_says_the_notes_naming_it_again_with_the_new_one(session, job):
    _run(session, job, fact("Alice would like Mondays, Wednesdays and Thursdays, full days"),
         fact("Alice has lessons with Mr Okoye on Wednesdays at 7pm"),
         fact("Alice's pickups are on Wednesdays", subject="setting:pickups"),  # a subject: its own rules replace it
         fact("Alice has a standing order with Tesco"))

    counts = _run(session, job, fact("Alice asked for Tuesdays instead of Wednesdays", seqs=[3],
                                     metadata={"retires": [["Wednesdays", "Tuesdays"]]}))

    assert (counts.added, counts.updated) == (1, 2)
    status = dict(Memory.objects.values_list("content", "status"))
    assert status == {
        "Alice would like Mondays, Wednesdays and Thursdays, full days": "superseded",
        "Alice would like Mondays, Tuesdays and Thursdays, full days": "active",
        "Alice has lessons with Mr Okoye on Wednesdays at 7pm": "superseded",
        "Alice has lessons with Mr Okoye on Tuesdays at 7pm": "active",
        "Alice's pickups are on Wednesdays": "active",
        "Alice has a standing order with Tesco": "active",
        "Alice asked for Tuesdays instead of Wednesdays": "active",
    }
    old = Memory.objects.get(content__startswith="Alice would like Mondays, Wednesdays")
    assert old.superseded_by.content == "Alice would like Mondays, Tuesdays and Thursdays, full days"
    assert MemoryRevision.objects.filter(memory=old, action="supersede").exists()
    assert "retires" not in Memory.objects.get(content__startswith="Alice asked").metadata


def test_a_value_ended_with_nothing_in_its_place_leaves_its_list_or_goes_with_its_note(session, job):
    _run(session, job, fact("Noted: collections every Tuesday and Friday, with fragile handling"),
         fact("Alice's Friday pickup is at 4pm"))

    _run(session, job, fact("Alice's Friday pickups were a nuisance", seqs=[3]),  # the same message: the change itself
         fact("Alice is stopping the Friday pickups", seqs=[3], metadata={"retires": [["Friday", None]]}))

    status = dict(Memory.objects.values_list("content", "status"))
    assert status == {
        "Noted: collections every Tuesday and Friday, with fragile handling": "superseded",
        "Noted: collections every Tuesday, with fragile handling": "active",
        "Alice's Friday pickup is at 4pm": "superseded",
        "Alice is stopping the Friday pickups": "active",
        "Alice's Friday pickups were a nuisance": "active",
    }
    assert Memory.objects.get(content="Alice's Friday pickup is at 4pm").superseded_by.content == (
        "Alice is stopping the Friday pickups")


def test_forgetting_the_old_value_spares_the_value_that_replaced_it(session, job):
    _run(session, job, fact("Alice's mobile number is 07700 900 111", subject="phone"))
    _run(session, job, fact("Alice's mobile number is 07700 900 333", seqs=[2], subject="phone"))

    _run(session, job, fact("The assistant removed the old number", seqs=[3], subject="phone", action="delete",
                            metadata={"old": True}))

    assert dict(Memory.objects.values_list("content", "status")) == {
        "Alice's mobile number is 07700 900 111": "superseded", "Alice's mobile number is 07700 900 333": "active"}
