"""Admin for stores, memories and history: tenant scoping, actions and edits that write revisions."""

import json
import re

import pytest
from django.contrib.contenttypes.models import ContentType
from django.urls import reverse

from apps.core.actors import Actor
from apps.core.errors import ConflictError
from apps.memories.models import Memory, MemoryStore
from apps.memories.normalise import content_hash
from apps.memories.services import memory_approve, memory_delete, memory_supersede, memory_update, store_create
from apps.tenancy.models import Membership
from apps.tenancy.services import membership_set


def _logged_in(client, user):
    client.force_login(user)
    return client


def _revision_inline(memory, count=None):
    count = memory.revisions.count() if count is None else count
    return {
        "revisions-TOTAL_FORMS": str(count),
        "revisions-INITIAL_FORMS": str(count),
        "revisions-MIN_NUM_FORMS": "0",
        "revisions-MAX_NUM_FORMS": "1000",
    }


def _memory_form(memory, **changes):
    data = {
        "content": memory.content,
        "memory_type": memory.memory_type,
        "status": memory.status,
        "metadata": json.dumps(memory.metadata),
        "tags": ",".join(memory.tags),
        "importance": str(memory.importance),
        "confidence": str(memory.confidence),
        **_revision_inline(memory),
    }
    data.update(changes)
    return data


def _act(client, action, *memories):
    return client.post(
        reverse("admin:memories_memory_changelist"),
        {"action": action, "_selected_action": [str(memory.pk) for memory in memories]},
    )


@pytest.mark.parametrize("model", ["memorystore", "memory", "memoryrevision"])
def test_superuser_sees_every_memories_changelist(admin_client, tenant_a, tenant_b, add_memory, model):
    memories = [add_memory(tenant_a.store, "Acme likes tea"), add_memory(tenant_b.store, "Globex likes coffee")]
    rows = {
        "memorystore": [tenant_a.store, tenant_b.store],
        "memory": memories,
        "memoryrevision": [memory.revisions.get() for memory in memories],
    }[model]

    response = admin_client.get(reverse(f"admin:memories_{model}_changelist"))

    assert response.status_code == 200
    for row in rows:
        assert reverse(f"admin:memories_{model}_change", args=[row.pk]) in response.text


def test_superuser_sees_add_pages_and_the_history_on_a_memory_page(admin_client, tenant_a, add_memory):
    memory = add_memory(tenant_a.store, "Alice prefers window seats")

    change_page = admin_client.get(reverse("admin:memories_memory_change", args=[memory.pk]))

    assert admin_client.get(reverse("admin:memories_memory_add")).status_code == 200
    assert admin_client.get(reverse("admin:memories_memorystore_add")).status_code == 200
    assert change_page.status_code == 200
    compact = re.sub(r"\s+", "", change_page.text)
    assert 'id="revisions-heading"' in change_page.text
    assert '<tdclass="field-action"><p>Created</p></td>' in compact
    assert '<tdclass="field-actor_label"><p>test</p></td>' in compact  # Actor.system("test") made it


def test_staff_see_only_memories_of_their_tenants(client, tenant_a, tenant_b, add_memory):
    add_memory(tenant_a.store, "Acme likes tea")
    foreign = add_memory(tenant_b.store, "Globex likes coffee")
    _logged_in(client, tenant_a.reviewer)

    memories = client.get(reverse("admin:memories_memory_changelist"))
    revisions = client.get(reverse("admin:memories_memoryrevision_changelist"))
    stores = client.get(reverse("admin:memories_memorystore_changelist"))
    foreign_page = client.get(reverse("admin:memories_memory_change", args=[foreign.pk]))
    foreign_store = client.get(reverse("admin:memories_memorystore_change", args=[tenant_b.store.pk]))

    for page in (memories, revisions, stores):
        assert page.status_code == 200
        assert "globex" not in page.text.lower()  # neither rows nor filter choices
    assert "Acme likes tea" in memories.text
    assert "Acme likes tea" in revisions.text
    assert reverse("admin:memories_memorystore_change", args=[tenant_a.store.pk]) in stores.text
    assert foreign_page.status_code == 302
    assert foreign_store.status_code == 302


def test_staff_without_membership_cannot_open_the_memories_admin(client, tenant_a, outsider):
    _logged_in(client, outsider)

    for model in ("memorystore", "memory", "memoryrevision"):
        assert client.get(reverse(f"admin:memories_{model}_changelist")).status_code == 403


@pytest.mark.parametrize(
    ("action", "initial_status", "final_status", "revision_action"),
    [
        ("approve", "pending_review", "active", "status_change"),
        ("reject", "pending_review", "rejected", "status_change"),
        ("soft_delete", "active", "deleted", "delete"),
        ("restore", "deleted", "active", "restore"),
    ],
)
def test_actions_change_status_and_write_one_revision_by_the_staff_user(
    client, tenant_a, add_memory, action, initial_status, final_status, revision_action
):
    created_status = "active" if initial_status == "deleted" else initial_status
    memory = add_memory(tenant_a.store, "Alice is vegetarian", status=created_status)
    if initial_status == "deleted":
        memory_delete(memory=memory, actor=Actor.system("test"))
    revisions_before = set(memory.revisions.values_list("pk", flat=True))
    _logged_in(client, tenant_a.admin)

    response = _act(client, action, memory)

    assert response.status_code == 302
    memory.refresh_from_db()
    assert memory.status == final_status
    new_revisions = memory.revisions.exclude(pk__in=revisions_before)
    assert new_revisions.count() == 1
    revision = new_revisions.get()
    assert revision.action == revision_action
    assert revision.actor_type == "user"
    assert revision.actor_label == "acme-admin"
    assert revision.actor_id == str(tenant_a.admin.pk)
    assert revision.before["status"] == initial_status
    assert revision.after["status"] == final_status


def test_reviewers_approve_but_cannot_soft_delete(client, tenant_a, add_memory):
    pending = add_memory(tenant_a.store, "Alice lives in Lyon", status="pending_review")
    active = add_memory(tenant_a.store, "Alice has a cat")
    _logged_in(client, tenant_a.reviewer)

    changelist = client.get(reverse("admin:memories_memory_changelist"))
    _act(client, "approve", pending)
    _act(client, "soft_delete", active)

    assert 'value="approve"' in changelist.text and 'value="soft_delete"' not in changelist.text
    pending.refresh_from_db()
    active.refresh_from_db()
    assert pending.status == "active"
    assert pending.revisions.filter(actor_label="acme-reviewer").count() == 1
    assert active.status == "active"
    assert active.revisions.count() == 1  # only the create


def test_actions_skip_memories_of_other_tenants_and_other_statuses(client, tenant_a, tenant_b, add_memory):
    foreign = add_memory(tenant_b.store, "Bob likes jazz", status="pending_review")
    active = add_memory(tenant_a.store, "Alice likes jazz")
    _logged_in(client, tenant_a.admin)

    _act(client, "approve", foreign, active)

    foreign.refresh_from_db()
    assert foreign.status == "pending_review"
    assert foreign.revisions.count() == 1
    assert active.revisions.count() == 1  # already active: approving is not applicable


def test_editing_a_memory_goes_through_memory_update_and_records_before_and_after(client, tenant_a, add_memory):
    memory = add_memory(tenant_a.store, "Alice works at Initech", tags=["work"])
    _logged_in(client, tenant_a.admin)

    response = client.post(
        reverse("admin:memories_memory_change", args=[memory.pk]),
        _memory_form(memory, content="Alice works at Globex", tags="work,job", importance="0.9", metadata='{"k": 1}'),
    )

    assert response.status_code == 302
    memory.refresh_from_db()
    assert memory.content == "Alice works at Globex"
    assert memory.content_hash == content_hash("Alice works at Globex")  # re-hashed (and re-embedded) by the service
    assert (memory.tags, memory.importance, memory.metadata) == (["work", "job"], 0.9, {"k": 1})
    revision = memory.revisions.order_by("-id").first()
    assert revision.action == "update"
    assert (revision.actor_type, revision.actor_label) == ("user", "acme-admin")
    assert revision.before["content"] == "Alice works at Initech"
    assert revision.after["content"] == "Alice works at Globex"
    assert set(revision.changed_fields) == {"content", "tags", "importance", "metadata"}
    assert memory.revisions.count() == 2


def test_an_unchanged_submission_writes_no_revision(client, tenant_a, add_memory):
    memory = add_memory(tenant_a.store, "Alice reads sci-fi")
    _logged_in(client, tenant_a.admin)

    response = client.post(reverse("admin:memories_memory_change", args=[memory.pk]), _memory_form(memory))

    assert response.status_code == 302
    assert memory.revisions.count() == 1


def test_an_edit_the_service_refuses_is_a_form_error_and_writes_nothing(client, tenant_a, add_memory):
    add_memory(tenant_a.store, "Alice likes tea")
    memory = add_memory(tenant_a.store, "Alice likes coffee")
    _logged_in(client, tenant_a.admin)

    response = client.post(
        reverse("admin:memories_memory_change", args=[memory.pk]), _memory_form(memory, content="alice likes TEA")
    )

    assert response.status_code == 200
    assert "already has this content" in response.text
    memory.refresh_from_db()
    assert memory.content == "Alice likes coffee"
    assert memory.revisions.count() == 1


def test_metadata_must_be_a_json_object(client, tenant_a, add_memory):
    memory = add_memory(tenant_a.store, "Alice owns a bike")
    _logged_in(client, tenant_a.admin)

    response = client.post(
        reverse("admin:memories_memory_change", args=[memory.pk]), _memory_form(memory, metadata="[1]")
    )

    assert response.status_code == 200
    assert "Must be a JSON object" in response.text
    assert memory.revisions.count() == 1


def test_reviewers_cannot_edit_memories(client, tenant_a, add_memory):
    memory = add_memory(tenant_a.store, "Alice runs marathons")
    _logged_in(client, tenant_a.reviewer)

    page = client.get(reverse("admin:memories_memory_change", args=[memory.pk]))
    response = client.post(
        reverse("admin:memories_memory_change", args=[memory.pk]), _memory_form(memory, content="Alice walks")
    )

    assert page.status_code == 200 and 'name="content"' not in page.text  # read-only view
    assert response.status_code == 403
    memory.refresh_from_db()
    assert memory.content == "Alice runs marathons"


def test_the_memory_page_never_shows_vectors_or_hashes(admin_client, tenant_a, add_memory):
    memory = add_memory(tenant_a.store, "Alice speaks Portuguese")
    memory.refresh_from_db()

    page = admin_client.get(reverse("admin:memories_memory_change", args=[memory.pk])).text

    assert "Alice speaks Portuguese" in page
    assert memory.content_hash not in page
    for field in ("embedding", "content_hash", "search_vector"):
        assert f"field-{field} " not in page and f"field-{field}\"" not in page and f'name="{field}"' not in page


def test_adding_a_memory_goes_through_memory_create_as_the_staff_user(client, tenant_a):
    _logged_in(client, tenant_a.admin)

    response = client.post(
        reverse("admin:memories_memory_add"),
        {
            "store": tenant_a.store.pk,
            "user_id": "alice",
            "agent_id": "",
            "session_id": "",
            "content": "Alice is allergic to peanuts",
            "memory_type": "fact",
            "status": "active",
            "metadata": "{}",
            "tags": "health",
            "importance": "0.8",
            "confidence": "1",
        },
    )

    assert response.status_code == 302
    memory = Memory.objects.get(content="Alice is allergic to peanuts")
    assert (memory.store_id, memory.source, memory.tags) == (tenant_a.store.pk, "admin", ["health"])
    assert memory.embedding is not None and len(memory.embedding) == tenant_a.store.embedding_dimension
    assert memory.content_hash == content_hash("Alice is allergic to peanuts")
    revision = memory.revisions.get()
    assert (revision.action, revision.actor_type, revision.actor_label) == ("create", "user", "acme-admin")


def test_memories_cannot_be_added_to_another_tenants_store(client, tenant_a, tenant_b):
    _logged_in(client, tenant_a.admin)

    add_page = client.get(reverse("admin:memories_memory_add"))
    response = client.post(
        reverse("admin:memories_memory_add"),
        {
            "store": tenant_b.store.pk,
            "user_id": "alice",
            "content": "planted",
            "memory_type": "fact",
            "status": "active",
            "metadata": "{}",
            "importance": "0.5",
            "confidence": "1",
        },
    )

    assert "globex" not in add_page.text.lower()
    assert response.status_code == 200
    assert "Select a valid choice" in response.text
    assert not Memory.objects.filter(content="planted").exists()


def test_memories_cannot_be_hard_deleted_through_the_admin(admin_client, tenant_a, add_memory):
    memory = add_memory(tenant_a.store, "Alice collects stamps")

    response = admin_client.post(reverse("admin:memories_memory_delete", args=[memory.pk]), {"post": "yes"})

    assert response.status_code == 403
    assert Memory.objects.filter(pk=memory.pk).exists()


def test_creating_a_store_goes_through_store_create(admin_client, tenant_a):
    response = admin_client.post(
        reverse("admin:memories_memorystore_add"),
        {
            "tenant": tenant_a.tenant.pk,
            "name": "notes",
            "description": "",
            "embedding_provider": "hash",
            "embedding_model": "",
            "embedding_dimension": "",
            "review_policy": "review",
            "search_defaults": '{"limit": 5}',
            "max_content_length": "",
        },
    )

    assert response.status_code == 302
    store = MemoryStore.objects.get(tenant=tenant_a.tenant, name="notes")
    # Defaults filled in by the service, not by the form.
    assert (store.embedding_model, store.embedding_dimension) == ("hash-ngram-v1", 384)
    assert store.max_content_length == 8192
    assert store.search_defaults == {"limit": 5}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"embedding_provider": "local", "embedding_dimension": "256"}, "384-dimensional"),
        ({"search_defaults": '{"mode": "fuzzy"}'}, "search_defaults.mode"),
        ({"name": "main"}, "already exists"),
    ],
)
def test_store_settings_the_service_refuses_are_form_errors(admin_client, tenant_a, changes, message):
    data = {
        "tenant": tenant_a.tenant.pk,
        "name": "other",
        "embedding_provider": "hash",
        "review_policy": "auto",
        "search_defaults": "{}",
        **changes,
    }

    response = admin_client.post(reverse("admin:memories_memorystore_add"), data)

    assert response.status_code == 200
    assert message in response.text
    assert MemoryStore.objects.filter(tenant=tenant_a.tenant).count() == 1


def test_the_first_refused_submission_of_a_process_is_a_form_error_not_a_500(admin_client, tenant_a):
    ContentType.objects.clear_cache()  # as in a new web process: rendering the form must not query after the rollback
    data = {"tenant": tenant_a.tenant.pk, "name": tenant_a.store.name, "embedding_provider": "hash",
            "review_policy": "auto", "search_defaults": "{}"}

    response = admin_client.post(reverse("admin:memories_memorystore_add"), data)

    assert response.status_code == 200
    assert "already exists" in response.text


def test_a_stores_embedder_is_read_only_after_creation(client, tenant_a):
    _logged_in(client, tenant_a.admin)
    store = tenant_a.store

    response = client.post(
        reverse("admin:memories_memorystore_change", args=[store.pk]),
        {
            "description": "Everything about customers",
            "review_policy": "review",
            "search_defaults": "{}",
            "max_content_length": "4000",
            "embedding_provider": "openai",
            "embedding_model": "other-model",
            "embedding_dimension": "1536",
            "name": "renamed",
        },
    )

    assert response.status_code == 302
    store.refresh_from_db()
    assert store.description == "Everything about customers"
    assert (store.review_policy, store.max_content_length) == ("review", 4000)
    assert (store.name, store.embedding_provider, store.embedding_model, store.embedding_dimension) == (
        "main",
        "hash",
        "hash-ngram-v1",
        384,
    )


def test_reviewers_cannot_create_or_change_stores(client, tenant_a):
    _logged_in(client, tenant_a.reviewer)

    add = client.get(reverse("admin:memories_memorystore_add"))
    change = client.post(
        reverse("admin:memories_memorystore_change", args=[tenant_a.store.pk]),
        {"description": "mine", "review_policy": "auto", "search_defaults": "{}", "max_content_length": "100"},
    )

    assert add.status_code == 403
    assert change.status_code == 403
    tenant_a.store.refresh_from_db()
    assert tenant_a.store.description == ""


def test_revisions_cannot_be_added_changed_or_deleted_through_the_admin(admin_client, tenant_a, add_memory):
    memory = add_memory(tenant_a.store, "Alice drives an EV")
    revision = memory.revisions.get()
    change_url = reverse("admin:memories_memoryrevision_change", args=[revision.pk])

    view = admin_client.get(change_url)
    changelist = admin_client.get(reverse("admin:memories_memoryrevision_changelist"))
    change = admin_client.post(change_url, {"action": "delete", "reason": "rewritten", "actor_label": "nobody"})
    delete = admin_client.post(reverse("admin:memories_memoryrevision_delete", args=[revision.pk]), {"post": "yes"})
    bulk_delete = admin_client.post(
        reverse("admin:memories_memoryrevision_changelist"),
        {"action": "delete_selected", "_selected_action": [revision.pk], "post": "yes"},
    )
    add = admin_client.get(reverse("admin:memories_memoryrevision_add"))

    assert view.status_code == 200 and 'name="_save"' not in view.text
    assert 'value="delete_selected"' not in changelist.text
    assert change.status_code == 403
    assert delete.status_code == 403
    assert bulk_delete.status_code == 200  # unavailable action: the list again, nothing done
    assert add.status_code == 403
    revision.refresh_from_db()
    assert (revision.action, revision.reason, revision.actor_label) == ("create", "", "test")


def test_revision_list_filters_by_action_and_actor_type(admin_client, tenant_a, tenant_a_edit):
    by_user = admin_client.get(reverse("admin:memories_memoryrevision_changelist"), {"actor_type": "user"})
    creates = admin_client.get(reverse("admin:memories_memoryrevision_changelist"), {"action": "create"})

    assert by_user.status_code == 200 and creates.status_code == 200
    assert "Edited by staff" in by_user.text and "Untouched memory" not in by_user.text
    assert "Untouched memory" in creates.text and "Edited by staff" in creates.text  # both were created


def test_a_supersede_shows_as_superseded_in_the_revision_list_and_its_filter(admin_client, tenant_a, add_memory):
    old = add_memory(tenant_a.store, "Alice lives in Paris")
    memory_supersede(old=old, new=add_memory(tenant_a.store, "Alice lives in Berlin"), actor=Actor.system("test"))
    revisions = reverse("admin:memories_memoryrevision_changelist")

    supersedes = admin_client.get(revisions, {"action": "supersede"})
    history = admin_client.get(revisions, {"memory__id__exact": str(old.pk)})

    assert supersedes.status_code == 200
    assert [revision.memory_id for revision in supersedes.context["cl"].result_list] == [old.pk]
    assert "?action=supersede" in supersedes.text  # the action filter offers it
    assert re.findall(r'<td class="field-action">([^<]*)</td>', history.text) == ["Superseded", "Created"]


@pytest.fixture
def tenant_a_edit(tenant_a, add_memory):
    add_memory(tenant_a.store, "Untouched memory")
    edited = add_memory(tenant_a.store, "Edited by nobody")
    memory_update(memory=edited, changes={"content": "Edited by staff"}, actor=Actor.for_user(tenant_a.admin))


def test_roles_apply_per_tenant(client, tenant_a, tenant_b, add_memory):
    # acme-admin is only a reviewer in Globex: may review Globex memories there, not edit or delete them.
    membership_set(tenant=tenant_b.tenant, user=tenant_a.admin, role=Membership.Role.REVIEWER)
    pending = add_memory(tenant_b.store, "Bob speaks Dutch", status="pending_review")
    active = add_memory(tenant_b.store, "Bob plays chess")
    _logged_in(client, tenant_a.admin)

    _act(client, "approve", pending)
    _act(client, "soft_delete", active)
    edit = client.post(
        reverse("admin:memories_memory_change", args=[active.pk]), _memory_form(active, content="Bob plays go")
    )
    add = client.post(
        reverse("admin:memories_memory_add"),
        {"store": tenant_b.store.pk, "user_id": "bob", "content": "planted", "memory_type": "fact",
         "status": "active", "metadata": "{}", "importance": "0.5", "confidence": "1"},
    )  # fmt: skip

    pending.refresh_from_db()
    active.refresh_from_db()
    assert pending.status == "active"
    assert (active.status, active.content) == ("active", "Bob plays chess")
    assert active.revisions.count() == 1
    assert edit.status_code == 403
    assert add.status_code == 200 and not Memory.objects.filter(content="planted").exists()


def test_memory_list_filters_by_store_of_own_tenants_only(client, tenant_a, tenant_b, add_memory):
    other_store = store_create(tenant=tenant_a.tenant, name="notes", embedding_provider="hash")
    add_memory(tenant_a.store, "In the main store")
    add_memory(other_store, "In the notes store")
    _logged_in(client, tenant_a.reviewer)

    filtered = client.get(reverse("admin:memories_memory_changelist"), {"store__id__exact": str(other_store.pk)})

    assert filtered.status_code == 200
    assert "In the notes store" in filtered.text and "In the main store" not in filtered.text
    assert "acme/notes" in filtered.text and "globex/main" not in filtered.text  # the filter's choices


def test_the_history_button_opens_the_memorys_own_revisions(client, tenant_a, add_memory):
    memory = add_memory(tenant_a.store, "Alice likes tea")
    memory_update(memory=memory, changes={"content": "Alice likes green tea"}, actor=Actor.for_user(tenant_a.admin))
    add_memory(tenant_a.store, "Bob likes coffee")
    _logged_in(client, tenant_a.reviewer)

    page = client.get(reverse("admin:memories_memory_change", args=[memory.pk]))
    history = client.get(reverse("admin:memories_memory_history", args=[memory.pk]), follow=True)

    assert f'href="{reverse("admin:memories_memory_history", args=[memory.pk])}"' in page.text
    revisions_url = f'{reverse("admin:memories_memoryrevision_changelist")}?memory__id__exact={memory.pk}'
    assert history.redirect_chain == [(revisions_url, 302)]
    revisions = history.context["cl"].result_list
    assert sorted(revision.action for revision in revisions) == ["create", "update"]
    assert {revision.memory_id for revision in revisions} == {memory.pk}


def test_other_tenants_get_no_history_of_a_memory(client, tenant_b, tenant_a, add_memory):
    memory = add_memory(tenant_a.store, "Alice likes tea")
    _logged_in(client, tenant_b.admin)

    response = client.get(reverse("admin:memories_memory_history", args=[memory.pk]))

    assert response.status_code == 302 and response.url == reverse("admin:index")


def test_memories_are_called_memories(client, tenant_a):
    _logged_in(client, tenant_a.reviewer)

    index = client.get(reverse("admin:index")).text

    assert Memory._meta.verbose_name_plural == "memories"
    assert ">Memories</a>" in index and "Memorys" not in index


def test_an_action_reports_what_it_did_and_each_reason_it_refused(client, tenant_a, tenant_b, add_memory):
    membership_set(tenant=tenant_b.tenant, user=tenant_a.admin, role=Membership.Role.REVIEWER)
    active = [add_memory(tenant_a.store, f"Alice fact {index}") for index in range(7)]
    deleted = add_memory(tenant_a.store, "Alice old fact")
    memory_delete(memory=deleted, actor=Actor.system("test"))
    foreign = add_memory(tenant_b.store, "Bob old fact")
    memory_delete(memory=foreign, actor=Actor.system("test"))
    _logged_in(client, tenant_a.admin)

    response = client.post(
        reverse("admin:memories_memory_changelist"),
        {"action": "restore", "_selected_action": [str(memory.pk) for memory in [*active, deleted, foreign]]},
        follow=True,
    )

    done, *warnings = [(message.level_tag, str(message)) for message in response.context["messages"]]
    assert done == ("success", "Restored 1 memory(ies).")
    assert len(warnings) == 2  # one per reason
    assert ("warning", "“Bob old fact”: this needs the admin role in its tenant.") in warnings
    (folded,) = [text for level, text in warnings if "Alice" in text]
    # Seven memories refused for one reason: five named, the others counted.
    assert re.fullmatch(r"(“Alice fact \d”, ){4}“Alice fact \d” and 2 more: This does not apply to a memory that is active\.",
                        folded)
    deleted.refresh_from_db()
    foreign.refresh_from_db()
    assert (deleted.status, foreign.status) == ("active", "deleted")


def test_approving_a_memory_deleted_meanwhile_does_not_bring_it_back(tenant_a, add_memory):
    # The admin's selection was read before an agent deleted the memory through the API.
    memory = add_memory(tenant_a.store, "Alice waits for review", status=Memory.Status.PENDING_REVIEW)
    stale = Memory.objects.get(pk=memory.pk)
    memory_delete(memory=memory, actor=Actor.system("api"))
    with pytest.raises(ConflictError) as refused:
        memory_approve(memory=stale, actor=Actor.system("admin"), from_statuses=(Memory.Status.PENDING_REVIEW,))
    assert refused.value.code == "invalid_status"
    assert Memory.objects.get(pk=memory.pk).status == Memory.Status.DELETED
