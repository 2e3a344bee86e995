"""Every admin of a tenant-owned model, found by walking the admin registry: a staff user of one tenant
sees all of their tenants' rows and nothing of another tenant in any list, filter or lookup, and a list
costs the same number of queries however many rows it shows. A new admin is held to this without a new
test."""

import re
from collections import Counter

import pytest
from django.contrib import admin
from django.contrib.admin.utils import get_fields_from_path
from django.core import checks
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from apps.memories.services import store_create
from apps.tenancy.admin_base import TenantScopedAdmin
from apps.tenancy.models import ApiKey, Tenant
from tests.admin_rows import add_admin_rows


def _path_to_tenant(model, depth: int = 4) -> str | None:
    """The shortest chain of foreign keys from `model` to Tenant ("pk" for Tenant itself), or None."""
    if model is Tenant:
        return "pk"
    frontier = [(model, [])]
    for _ in range(depth):
        reached = []
        for current, path in frontier:
            for field in current._meta.concrete_fields:
                if field.is_relation and (field.many_to_one or field.one_to_one):
                    if field.related_model is Tenant:
                        return "__".join([*path, field.name])
                    reached.append((field.related_model, [*path, field.name]))
        frontier = reached
    return None


def _label(model) -> str:
    return model._meta.label


TENANT_OWNED = sorted((model for model in admin.site._registry if _path_to_tenant(model)), key=_label)


def _rows_of(model, tenants):
    path = _path_to_tenant(model)
    return model._default_manager.filter(**{f"{path}__in": tenants})


def _ids_of(model, tenants) -> set[str]:
    return {str(pk) for pk in _rows_of(model, tenants).values_list("pk", flat=True)}


def _tenants_of(user):
    return Tenant.objects.filter(memberships__user=user)


def _changelist_url(model) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")


@pytest.fixture
def both_tenants_with_rows(tenant_a, tenant_b):
    """Each tenant with two stores and sessions in both, so that relation filters have choices to show."""
    for world in (tenant_a, tenant_b):
        notes = store_create(tenant=world.tenant, name="notes", embedding_provider="hash")
        add_admin_rows(world, 2, stores=[world.store, notes])
    return tenant_a, tenant_b


def test_the_walk_finds_the_tenant_owned_admins():
    assert {_label(model) for model in TENANT_OWNED} >= {
        "tenancy.Tenant", "tenancy.ApiKey", "memories.MemoryStore", "memories.Memory", "memories.MemoryRevision",
        "conversations.Session", "conversations.Checkpoint", "extraction.ExtractionJob",
    }  # fmt: skip


@pytest.mark.parametrize("model", TENANT_OWNED, ids=_label)
def test_every_tenant_owned_model_has_a_tenant_scoped_admin(model):
    model_admin = admin.site._registry[model]

    assert isinstance(model_admin, TenantScopedAdmin)
    if model_admin.tenant_path == "pk":
        assert model is Tenant
    else:
        assert get_fields_from_path(model, model_admin.tenant_path)[-1].related_model is Tenant


@pytest.mark.parametrize("model", TENANT_OWNED, ids=_label)
def test_lists_and_their_filters_show_the_users_tenants_and_nothing_of_another(client, both_tenants_with_rows, model):
    tenant_a, tenant_b = both_tenants_with_rows
    own_tenants = _tenants_of(tenant_b.admin)  # globex and the tenants add_admin_rows made for its admin
    client.force_login(tenant_b.admin)

    response = client.get(_changelist_url(model))

    assert response.status_code == 200
    changelist = response.context["cl"]
    own = _ids_of(model, own_tenants)
    assert changelist.result_count == len(own) > 0
    assert {str(row.pk) for row in changelist.result_list} == own
    for spec in changelist.filter_specs:
        choices = list(getattr(spec, "lookup_choices", []))
        field = getattr(spec, "field", None)
        if field is not None and field.is_relation:  # e.g. "By store": globex/main, globex/notes, ...
            related = _rows_of(field.related_model, own_tenants)
            assert sorted((str(value), str(label)) for value, label in choices) == sorted(
                (str(row.pk), str(row)) for row in related
            ), spec.title
        for choice in choices:
            label = choice[1] if isinstance(choice, tuple) else choice
            assert "acme" not in str(label).lower(), f"{spec.title}: {choices}"
    assert "acme" not in response.text.lower()  # rows, filter labels ("acme/main") and anything else


@pytest.mark.parametrize("model", TENANT_OWNED, ids=_label)
def test_autocomplete_offers_nothing_of_another_tenant(client, both_tenants_with_rows, model):
    tenant_a, tenant_b = both_tenants_with_rows
    client.force_login(tenant_b.admin)
    relations = [field for field in model._meta.concrete_fields
                 if field.is_relation and field.related_model in admin.site._registry]  # fmt: skip

    for field in relations:
        response = client.get(
            reverse("admin:autocomplete"),
            {"app_label": model._meta.app_label, "model_name": model._meta.model_name, "field_name": field.name},
        )
        if response.status_code != 200:
            assert response.status_code in (403, 404)
            continue
        offered = {result["id"] for result in response.json()["results"]}
        assert not offered & _ids_of(field.related_model, [tenant_a.tenant.pk]), field.name
        assert "acme" not in response.text.lower(), field.name


def _shape(sql: str) -> str:
    return re.sub(r"'[^']*'|\b\d+\b", "?", sql)


def _queries(client, url) -> tuple[int, list[str]]:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200
    return response.context["cl"].result_count, [query["sql"] for query in captured.captured_queries]


@pytest.mark.parametrize("model", TENANT_OWNED, ids=_label)
def test_a_list_costs_the_same_queries_for_few_and_many_rows(client, tenant_b, model):
    stores = [tenant_b.store, store_create(tenant=tenant_b.tenant, name="notes", embedding_provider="hash")]
    add_admin_rows(tenant_b, 2, stores=stores)
    client.force_login(tenant_b.admin)
    url = _changelist_url(model)
    client.get(url)  # fills the per-process caches (content types and the like)

    few_rows, few = _queries(client, url)
    add_admin_rows(tenant_b, 10, stores=stores)
    many_rows, many = _queries(client, url)

    assert many_rows > few_rows
    extra = Counter(map(_shape, many)) - Counter(map(_shape, few))
    assert len(many) == len(few), "\n".join(extra)


def test_a_relation_filter_without_a_path_to_a_tenant_fails_the_system_checks():
    class CreatorFilterAdmin(TenantScopedAdmin):
        list_filter = ["created_by"]  # a user account has no tenant: its choices cannot be scoped

    errors = CreatorFilterAdmin(ApiKey, admin.site).check()

    assert [error.id for error in errors] == ["memoryhub.E001"]


def test_the_registered_admins_pass_the_system_checks():
    errors = checks.run_checks(tags=[checks.Tags.admin])

    assert [error for error in errors if error.id.startswith("memoryhub.")] == []
