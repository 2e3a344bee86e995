"""The review queue: cards with their evidence, filters, and the actions, with and without the page's script."""

import re

import pytest

from apps.extraction.models import ExtractionJob
from apps.memories.models import Memory, MemoryRevision
from tests.review.conftest import conversation, pending, snapshot

JSON = {"HTTP_ACCEPT": "application/json"}


def _cards(response) -> list[str]:
    return [card["memory"].content for card in response.context["cards"]]


def test_the_queue_shows_pending_memories_newest_first_with_their_evidence(review_world, browsers):
    newer = pending(review_world.store, "Allergic to latex", session=review_world.session, seqs=[3])
    response = browsers.reviewer.get("/review/")
    assert _cards(response) == ["Allergic to latex", "Lives in Paris"]
    body = response.content.decode()
    card = response.context["cards"][1]
    # The source message, quoted, with a link to it in the transcript (on the page that holds it).
    assert [source.excerpt for source in card["details"].sources] == ["I moved to Paris last month"]
    assert f"/review/stores/{review_world.store.pk}/sessions/s-1/?at=1#m-1" in body
    # What an approval would supersede, and the customer's nearest memories.
    assert card["details"].supersedes.content == "Lives in Berlin"
    assert "Would supersede" in body
    assert {n.content for n in response.context["cards"][0]["details"].neighbours} >= {"Lives in Paris"}
    assert re.search(r'data-testid="pending-count"[^>]*>2<', body)
    assert newer.pk


def test_neighbours_are_marked_duplicate_conflict_or_related(tenant_a, quiet_stores, add_memory, browsers):
    add_memory(tenant_a.store, "Lives in Berlin", metadata={"subject": "location"})
    add_memory(tenant_a.store, "Works at Yorkshire Water as an engineer")
    add_memory(tenant_a.store, "Owns a red bicycle")
    pending(tenant_a.store, "Works at Yorkshire Water as engineer")
    pending(tenant_a.store, "Lives in Madrid", metadata={"subject": "location"})
    cards = browsers.reviewer.get("/review/").context["cards"]
    relations = {card["memory"].content: {n.content: n.relation for n in card["details"].neighbours} for card in cards}
    assert relations["Works at Yorkshire Water as engineer"]["Works at Yorkshire Water as an engineer"] == "duplicate"
    assert relations["Lives in Madrid"]["Lives in Berlin"] == "conflict"  # the same subject, another value
    assert set(relations["Lives in Madrid"].values()) == {"conflict", "related"}  # three nearest; the rest unlike it


def test_the_queue_filters(review_world, tenant_a, browsers):
    store = review_world.store
    bob = conversation(store, "s-bob", ["Call me Robert"], user_id="bob")
    llm_job = ExtractionJob.objects.create(store=store, session=bob, from_seq=0, to_seq=1, trigger="turns",
                                           extractor="llm", status="succeeded")
    pending(store, "Is called Robert", user_id="bob", session=bob, seqs=[1], job_id=llm_job.pk, confidence=0.4)
    pending(store, "Prefers tea", memory_type="preference", confidence=0.95)

    def shown(query):
        return sorted(_cards(browsers.reviewer.get("/review/?" + query)))

    assert shown("customer=bob") == ["Is called Robert"]
    assert shown("customer=bo") == []  # exact
    assert shown("type=preference") == ["Prefers tea"]
    assert shown("extractor=llm") == ["Is called Robert"]
    assert shown("extractor=rules") == ["Lives in Paris"]
    assert shown("extractor=api") == ["Prefers tea"]
    assert shown("min_confidence=0.9") == ["Prefers tea"]
    assert shown(f"store={store.pk}&min_confidence=0.5") == ["Lives in Paris", "Prefers tea"]
    response = browsers.reviewer.get("/review/?min_confidence=0.5")
    assert response.context["matching_count"] == 2 and response.context["pending_count"] == 3


def test_a_filter_on_another_tenants_store_shows_nothing_of_it(review_world, tenant_b, browsers):
    pending(tenant_b.store, "globex pending")
    assert _cards(browsers.reviewer.get(f"/review/?store={tenant_b.store.pk}")) == ["Lives in Paris"]
    assert _cards(browsers.other_admin.get("/review/")) == ["globex pending"]


def test_approve_without_script_redirects_back_with_the_filters(review_world, browsers, tenant_a):
    next_url = "/review/?customer=alice&type=fact"
    response = browsers.reviewer.post(f"/review/memories/{review_world.pending.pk}/approve/", {"next": next_url})
    assert response.status_code == 302 and response["Location"] == next_url
    memory = Memory.objects.get(pk=review_world.pending.pk)
    assert memory.status == "active"
    revision = MemoryRevision.objects.filter(memory=memory).latest("id")
    assert (revision.action, revision.actor_type, revision.actor_label) == (
        "status_change", "user", tenant_a.reviewer.get_username())
    # Approval retires what it supersedes, attributed to the same reviewer.
    old = Memory.objects.get(pk=review_world.active.pk)
    assert old.status == "superseded" and old.superseded_by_id == memory.pk
    assert MemoryRevision.objects.filter(memory=old).latest("id").actor_label == tenant_a.reviewer.get_username()


def test_next_must_be_a_console_page(review_world, browsers):
    response = browsers.reviewer.post(f"/review/memories/{review_world.pending.pk}/approve/",
                                      {"next": "https://evil.example/"})
    assert response["Location"] == "/review/"


def test_approve_with_script_answers_json_with_the_new_count(review_world, browsers):
    response = browsers.reviewer.post(f"/review/memories/{review_world.pending.pk}/approve/", **JSON)
    assert response.status_code == 200
    assert response.json()["ok"] is True and response.json()["pending_count"] == 0
    assert response.json()["memory"]["status"] == "active"


def test_approving_twice_is_a_conflict_that_changes_nothing(review_world, browsers):
    url = f"/review/memories/{review_world.pending.pk}/approve/"
    browsers.reviewer.post(url)
    before = snapshot(review_world.store)
    again = browsers.admin.post(url, **JSON)
    assert again.status_code == 409 and again.json()["error"]["code"] == "invalid_status"
    assert snapshot(review_world.store) == before
    no_script = browsers.admin.post(url, follow=True)
    assert "does not apply to a memory that is active" in no_script.content.decode()


def test_reject_needs_a_reason(review_world, browsers, tenant_a):
    url = f"/review/memories/{review_world.pending.pk}/reject/"
    refused = browsers.reviewer.post(url, {"reason": "  "}, **JSON)
    assert refused.status_code == 400 and "reason" in refused.json()["error"]["details"]
    assert Memory.objects.get(pk=review_world.pending.pk).status == "pending_review"
    done = browsers.reviewer.post(url, {"reason": "She moved to Lyon, not Paris"}, **JSON)
    assert done.status_code == 200
    revision = MemoryRevision.objects.filter(memory_id=review_world.pending.pk).latest("id")
    assert (revision.after["status"], revision.reason, revision.actor_label) == (
        "rejected", "She moved to Lyon, not Paris", tenant_a.reviewer.get_username())
    assert Memory.objects.get(pk=review_world.active.pk).status == "active"  # nothing superseded


def test_edit_then_approve_writes_both_revisions_in_one_go(review_world, browsers, tenant_a):
    response = browsers.reviewer.post(
        f"/review/memories/{review_world.pending.pk}/edit-approve/",
        {"content": "Lives in Paris, France", "memory_type": "fact", "reason": "added the country"}, **JSON)
    assert response.status_code == 200, response.content
    memory = Memory.objects.get(pk=review_world.pending.pk)
    assert (memory.content, memory.status) == ("Lives in Paris, France", "active")
    edit, approve = MemoryRevision.objects.filter(memory=memory).order_by("id")[1:3]
    assert (edit.action, edit.before["content"], edit.after["content"], edit.reason) == (
        "update", "Lives in Paris", "Lives in Paris, France", "added the country")
    assert (approve.action, approve.after["status"]) == ("status_change", "active")
    assert {edit.actor_label, approve.actor_label} == {tenant_a.reviewer.get_username()}


def test_edit_then_approve_is_all_or_nothing(review_world, browsers, add_memory):
    add_memory(review_world.store, "Allergic to latex")
    before = snapshot(review_world.store)
    response = browsers.reviewer.post(f"/review/memories/{review_world.pending.pk}/edit-approve/",
                                      {"content": "Allergic to latex", "memory_type": "fact"}, **JSON)
    assert response.status_code == 409 and response.json()["error"]["code"] == "duplicate_memory"
    assert snapshot(review_world.store) == before


def test_bulk_approve_and_reject(review_world, browsers, tenant_a):
    second = pending(review_world.store, "Allergic to latex", session=review_world.session, seqs=[3])
    third = pending(review_world.store, "Speaks French")
    refused = browsers.reviewer.post("/review/queue/bulk/", {"decision": "reject", "memory": [str(second.pk)]}, **JSON)
    assert refused.status_code == 400  # a rejection needs a reason
    response = browsers.reviewer.post(
        "/review/queue/bulk/", {"decision": "approve", "memory": [str(review_world.pending.pk), str(second.pk)]}, **JSON)
    assert response.status_code == 200 and sorted(response.json()["done"]) == sorted(
        [str(review_world.pending.pk), str(second.pk)])
    assert response.json()["pending_count"] == 1
    response = browsers.reviewer.post(
        "/review/queue/bulk/", {"decision": "reject", "reason": "not said", "memory": [str(third.pk), str(second.pk)]})
    assert response.status_code == 302
    assert Memory.objects.get(pk=third.pk).status == "rejected"
    assert Memory.objects.get(pk=second.pk).status == "active"  # already approved: refused alone
    labels = set(MemoryRevision.objects.filter(memory__in=[second, third], actor_type="user")
                 .values_list("actor_label", flat=True))
    assert labels == {tenant_a.reviewer.get_username()}


def test_bulk_with_one_foreign_memory_changes_nothing(review_world, tenant_b, browsers):
    foreign = pending(tenant_b.store, "globex pending")
    before_a, before_b = snapshot(review_world.store), snapshot(tenant_b.store)
    response = browsers.reviewer.post("/review/queue/bulk/", {
        "decision": "approve", "memory": [str(review_world.pending.pk), str(foreign.pk)]})
    assert response.status_code == 404
    assert (snapshot(review_world.store), snapshot(tenant_b.store)) == (before_a, before_b)


def test_the_card_fragment_is_the_pages_card_for_a_matching_pending_memory(review_world, browsers, tenant_b):
    url = f"/review/queue/cards/{review_world.pending.pk}/"
    response = browsers.reviewer.get(url + "?next=/review/%3Fcustomer%3Dalice")
    body = response.content.decode()
    assert response.status_code == 200 and body.lstrip().startswith("<article") and "<html" not in body
    assert f'data-memory-id="{review_world.pending.pk}"' in body and "I moved to Paris last month" in body
    assert 'name="next" value="/review/?customer=alice"' in body
    assert browsers.reviewer.get(url + "?customer=bob").status_code == 204  # not for this queue's filters
    assert browsers.reviewer.get(url + "?customer=alice&min_confidence=0.5").status_code == 200
    assert browsers.other_admin.get(url).status_code == 404
    browsers.reviewer.post(f"/review/memories/{review_world.pending.pk}/approve/")
    assert browsers.reviewer.get(url).status_code == 204  # no longer pending


def test_the_count_endpoint_follows_the_filters(review_world, browsers):
    pending(review_world.store, "Prefers tea", memory_type="preference")
    assert browsers.reviewer.get("/review/queue/count/").json() == {"pending_count": 2, "matching_count": 2}
    assert browsers.reviewer.get("/review/queue/count/?type=preference").json() == {
        "pending_count": 2, "matching_count": 1}
    assert browsers.outsider.get("/review/queue/count/").json() == {"pending_count": 0, "matching_count": 0}


def test_the_pending_badge_is_on_every_page(review_world, browsers):
    for url in ["/review/", "/review/overview/", "/review/jobs/", "/review/customers/alice/",
                f"/review/stores/{review_world.store.pk}/sessions/s-1/", f"/review/memories/{review_world.pending.pk}/"]:
        response = browsers.reviewer.get(url)
        assert response.context["pending_count"] == 1 and 'data-testid="pending-count"' in response.content.decode()


def test_the_queue_is_paginated(tenant_a, quiet_stores, browsers):
    for index in range(30):
        pending(tenant_a.store, f"Fact number {index}")
    first = browsers.reviewer.get("/review/")
    assert len(first.context["cards"]) == 25 and first.context["cards"][0]["memory"].content == "Fact number 29"
    second = browsers.reviewer.get("/review/?page=2")
    assert [card["memory"].content for card in second.context["cards"]] == [f"Fact number {i}" for i in range(4, -1, -1)]


@pytest.mark.parametrize("hook", ["approve", "edit", "edit-content", "edit-type", "edit-approve-submit", "reject",
                                  "reject-reason", "reject-submit", "select", "card-source", "source-link",
                                  "card-supersedes", "neighbour"])
def test_each_card_action_has_a_stable_hook(review_world, browsers, add_memory, hook):
    add_memory(review_world.store, "Speaks French")
    assert f'data-testid="{hook}"' in browsers.reviewer.get("/review/").content.decode()
