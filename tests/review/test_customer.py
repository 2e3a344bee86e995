"""The customer page: everything about one customer, search by meaning, edits, history, and forget."""

from apps.conversations.models import Message, Session
from apps.conversations.services import working_memory_put
from apps.memories.models import Memory, MemoryRevision
from apps.tenancy.models import IdempotencyRecord
from tests.review.conftest import conversation, pending, snapshot

JSON = {"HTTP_ACCEPT": "application/json"}


def test_lookup_opens_an_exact_id_and_lists_ids_by_prefix(review_world, browsers, add_memory):
    add_memory(review_world.store, "Likes jazz", user_id="alicia")
    exact = browsers.reviewer.get("/review/customers/?q=alice")
    assert exact.status_code == 302 and exact["Location"] == "/review/customers/alice/"
    prefix = browsers.reviewer.get("/review/customers/?q=ali")
    assert prefix.context["matches"] == ["alice", "alicia"]
    assert browsers.other_admin.get("/review/customers/?q=ali").context["matches"] == []


def test_the_page_holds_memories_by_status_and_type_sessions_working_state_and_jobs(review_world, browsers):
    working_memory_put(session=review_world.session, key="cart", value={"items": 2})
    response = browsers.reviewer.get("/review/customers/alice/")
    body = response.content.decode()
    groups = [(m.status, m.memory_type, m.content) for m in response.context["memories"]]
    assert groups == [("pending_review", "fact", "Lives in Paris"), ("active", "fact", "Lives in Berlin"),
                      ("deleted", "fact", "Has a cat named Tom")]
    assert response.context["counts"].by_status == {"pending_review": 1, "active": 1, "deleted": 1}
    assert [s.external_id for s in response.context["sessions"]] == ["s-1"]
    assert 'data-testid="working-state"' in body and "cart" in body
    assert "the rules extractor crashed" in body  # the failed job
    # From a memory to the message it came from.
    assert f"/review/stores/{review_world.store.pk}/sessions/s-1/?at=1#m-1" in body


def test_search_by_meaning_uses_the_stores_hybrid_search_for_this_customer_only(review_world, browsers, add_memory):
    add_memory(review_world.store, "Allergic to latex gloves")
    add_memory(review_world.store, "Allergic to latex", user_id="bob")
    response = browsers.reviewer.get("/review/customers/alice/?q=latex+allergy")
    hits = response.context["hits"]
    assert hits[0].memory.content == "Allergic to latex gloves"
    assert {hit.memory.user_id for hit in hits} == {"alice"}
    # Pending memories are found too (a reviewer looks for them).
    assert "Lives in Paris" in [hit.memory.content for hit in browsers.reviewer.get(
        "/review/customers/alice/?q=Paris").context["hits"]]


def test_add_edit_delete_restore_each_write_an_attributed_revision(review_world, browsers, tenant_a):
    reviewer = browsers.reviewer
    added = reviewer.post("/review/memories/add/", {"store": str(review_world.store.pk), "user_id": "alice",
                                                    "content": "Prefers email", "memory_type": "preference"})
    memory = Memory.objects.get(store=review_world.store, content="Prefers email")
    assert added.status_code == 302 and added["Location"] == f"/review/customers/alice/?memory={memory.pk}#memory-{memory.pk}"
    assert (memory.status, memory.source, memory.memory_type) == ("active", "admin", "preference")
    reviewer.post(f"/review/memories/{memory.pk}/edit/", {"content": "Prefers email over phone",
                                                          "memory_type": "preference", "reason": "more precise"})
    reviewer.post(f"/review/memories/{memory.pk}/delete/", {"reason": "asked us to"})
    reviewer.post(f"/review/memories/{memory.pk}/restore/", {})
    revisions = list(MemoryRevision.objects.filter(memory=memory).order_by("id"))
    assert [r.action for r in revisions] == ["create", "update", "delete", "restore"]
    assert {r.actor_label for r in revisions} == {tenant_a.reviewer.get_username()}
    assert revisions[1].reason == "more precise" and revisions[2].reason == "asked us to"
    assert Memory.objects.get(pk=memory.pk).status == "active"


def test_restoring_an_active_memory_is_refused(review_world, browsers):
    before = snapshot(review_world.store)
    response = browsers.reviewer.post(f"/review/memories/{review_world.active.pk}/restore/", **JSON)
    assert response.status_code == 409 and snapshot(review_world.store) == before


def test_adding_to_another_tenants_store_is_not_found(review_world, tenant_b, browsers):
    before = snapshot(tenant_b.store)
    response = browsers.reviewer.post("/review/memories/add/", {"store": str(tenant_b.store.pk), "user_id": "alice",
                                                                "content": "x", "memory_type": "fact"})
    assert response.status_code == 404 and snapshot(tenant_b.store) == before


def test_history_is_a_readable_diff_with_who_when_why_and_the_source_message(review_world, browsers):
    browsers.reviewer.post(f"/review/memories/{review_world.pending.pk}/edit-approve/",
                           {"content": "Lives in central Paris", "memory_type": "fact", "reason": "she said central"})
    response = browsers.reviewer.get(f"/review/memories/{review_world.pending.pk}/history/")
    body = response.content.decode()
    assert "<ins>central </ins>" in body  # the word diff
    assert "she said central" in body and "acme-reviewer" in body
    assert "extraction" in body  # who created it
    assert "Pending review" in body and "Active" in body  # the status change, field by field
    assert f"/review/stores/{review_world.store.pk}/sessions/s-1/?at=1#m-1" in body  # from which message


def test_the_customer_page_opens_on_the_page_holding_a_linked_memory(tenant_a, quiet_stores, browsers, add_memory):
    memories = [add_memory(tenant_a.store, f"Fact number {index}") for index in range(105)]
    target = memories[0]  # the oldest: last in the list, on page 2
    response = browsers.reviewer.get(f"/review/customers/alice/?memory={target.pk}")
    assert response.context["page"].number == 2 and target.pk in [m.pk for m in response.context["memories"]]


def test_forget_needs_the_typed_id_and_the_admin_role(review_world, browsers):
    before = snapshot(review_world.store)
    wrong = browsers.admin.post("/review/forget-customer/", {"user_id": "alice", "confirm": "Alice"}, **JSON)
    assert wrong.status_code == 400 and "confirm" in wrong.json()["error"]["details"]
    reviewer = browsers.reviewer.post("/review/forget-customer/", {"user_id": "alice", "confirm": "alice"})
    assert reviewer.status_code == 403
    assert snapshot(review_world.store) == before


def test_forget_erases_the_customer_in_the_admins_stores_only(review_world, tenant_b, browsers, add_memory):
    conversation(review_world.store, "s-2", ["hello again"])
    pending(review_world.store, "Is called Bob", user_id="bob")
    add_memory(tenant_b.store, "globex knows alice")
    IdempotencyRecord.objects.create(api_key_id=review_world.world.tenant.api_keys.first().pk, key="k1",
                                     request_hash="x", status_code=201, response_body={"content": "Lives in Paris"},
                                     user_ids=["alice"])
    response = browsers.admin.post("/review/forget-customer/", {"user_id": "alice", "confirm": "alice"}, follow=True)
    body = response.content.decode()
    assert "Forgot alice in 1 store(s): 3 memories, 4 revisions, 2 sessions, 4 messages." in body
    assert not Memory.objects.filter(store=review_world.store, user_id="alice").exists()
    assert not MemoryRevision.objects.filter(store=review_world.store, user_id="alice").exists()
    assert not Session.objects.filter(store=review_world.store, user_id="alice").exists()
    assert not Message.objects.filter(session__store=review_world.store, session__user_id="alice").exists()
    assert not IdempotencyRecord.objects.filter(user_ids__contains=["alice"]).exists()
    assert Memory.objects.filter(store=review_world.store, user_id="bob").exists()
    assert Memory.objects.filter(store=tenant_b.store, user_id="alice").exists()  # not this admin's tenant
