"""apps.review.access, the one place that says what a staff user may see and do in the console."""

import uuid

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.http import Http404

from apps.memories.services import store_create
from apps.review.access import ConsoleAccess


def test_members_see_their_tenants_stores_and_admins_administer_them(tenant_a, tenant_b):
    admin = ConsoleAccess.for_user(tenant_a.admin)
    reviewer = ConsoleAccess.for_user(tenant_a.reviewer)
    assert [store.pk for store in admin.stores] == [tenant_a.store.pk]
    assert [store.pk for store in reviewer.stores] == [tenant_a.store.pk]
    assert admin.administers(tenant_a.store) and admin.is_admin_anywhere
    assert not reviewer.administers(tenant_a.store) and not reviewer.is_admin_anywhere
    assert reviewer.can_review(tenant_a.store)
    assert not reviewer.can_forget_customers(tenant_a.store) and not reviewer.can_manage_webhooks(tenant_a.store)
    assert not reviewer.can_retry_jobs(tenant_a.store)
    assert admin.can_forget_customers(tenant_a.store) and admin.can_retry_jobs(tenant_a.store)


def test_another_tenants_store_and_memory_are_not_found(tenant_a, tenant_b, add_memory):
    memory = add_memory(tenant_b.store, "globex secret")
    access = ConsoleAccess.for_user(tenant_a.admin)
    with pytest.raises(Http404):
        access.store(tenant_b.store.pk)
    with pytest.raises(Http404):
        access.memory(memory.pk)
    with pytest.raises(Http404):
        access.memory("not-a-uuid")
    assert not access.administers(tenant_b.store)
    with pytest.raises(PermissionDenied):
        access.require_admin(tenant_b.store)


def test_a_reviewer_is_refused_admin_work_on_a_store_they_see(tenant_a):
    with pytest.raises(PermissionDenied):
        ConsoleAccess.for_user(tenant_a.reviewer).require_admin(tenant_a.store)


def test_staff_of_no_tenant_see_nothing(tenant_a, outsider, add_memory):
    memory = add_memory(tenant_a.store, "acme fact")
    access = ConsoleAccess.for_user(outsider)
    assert access.stores == () and access.memories().count() == 0
    with pytest.raises(Http404):
        access.memory(memory.pk)


def test_non_staff_and_inactive_users_see_nothing(tenant_a):
    tenant_a.reviewer.is_staff = False
    assert ConsoleAccess.for_user(tenant_a.reviewer).stores == ()
    tenant_a.admin.is_active = False
    assert ConsoleAccess.for_user(tenant_a.admin).stores == ()


def test_superusers_see_and_administer_every_tenant(tenant_a, tenant_b):
    root = get_user_model().objects.create_superuser("root", password="pw-root-123!")
    access = ConsoleAccess.for_user(root)
    assert {store.pk for store in access.stores} == {tenant_a.store.pk, tenant_b.store.pk}
    assert all(access.administers(store) for store in access.stores)


def test_a_member_of_two_tenants_administers_only_where_admin(tenant_a, tenant_b):
    from apps.tenancy.services import membership_set

    membership_set(tenant=tenant_b.tenant, user=tenant_a.admin, role="reviewer")
    second = store_create(tenant=tenant_b.tenant, name="second", embedding_provider="hash")
    access = ConsoleAccess.for_user(tenant_a.admin)
    assert {store.pk for store in access.stores} == {tenant_a.store.pk, tenant_b.store.pk, second.pk}
    assert [store.pk for store in access.admin_stores] == [tenant_a.store.pk]


def test_the_stores_are_read_once(tenant_a, django_assert_num_queries):
    with django_assert_num_queries(1):
        access = ConsoleAccess.for_user(tenant_a.admin)
        assert access.administers(tenant_a.store) and access.store(tenant_a.store.pk).tenant.slug == "acme"
    assert access.store(str(tenant_a.store.pk)) is access.store(tenant_a.store.pk)
    with pytest.raises(Http404):
        access.store(uuid.uuid4())
