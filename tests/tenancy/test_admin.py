"""Admin for tenants, memberships and API keys: scoping, service-backed saves, keys shown once."""

import re

import pytest
from django.urls import reverse

from apps.tenancy.models import ApiKey, Membership, Tenant
from apps.tenancy.selectors import api_key_authenticate, api_key_hash
from apps.tenancy.services import membership_set

RAW_KEY = re.compile(r"mh_[0-9a-f]{8}_[A-Za-z0-9_-]{32}")


def _logged_in(client, user):
    client.force_login(user)
    return client


def _key(tenant, scope):
    return ApiKey.objects.get(tenant=tenant, name=f"{tenant.slug}-{scope}")


@pytest.mark.parametrize("model", ["tenant", "membership", "apikey"])
def test_superuser_sees_every_tenancy_changelist_and_add_page(admin_client, tenant_a, tenant_b, model):
    changelist = admin_client.get(reverse(f"admin:tenancy_{model}_changelist"))
    add = admin_client.get(reverse(f"admin:tenancy_{model}_add"))

    assert changelist.status_code == 200
    assert add.status_code == 200
    assert "Acme" in changelist.text and "Globex" in changelist.text


def test_staff_without_membership_gets_no_tenancy_admin(client, tenant_a, outsider):
    _logged_in(client, outsider)

    index = client.get(reverse("admin:index"))
    assert index.status_code == 200
    assert reverse("admin:tenancy_apikey_changelist") not in index.text
    for model in ("tenant", "membership", "apikey"):
        assert client.get(reverse(f"admin:tenancy_{model}_changelist")).status_code == 403


def test_staff_sees_only_keys_of_their_tenants(client, tenant_a, tenant_b):
    _logged_in(client, tenant_a.reviewer)
    foreign_key = _key(tenant_b.tenant, "read")

    changelist = client.get(reverse("admin:tenancy_apikey_changelist"))
    foreign_page = client.get(reverse("admin:tenancy_apikey_change", args=[foreign_key.pk]))

    assert changelist.status_code == 200
    assert _key(tenant_a.tenant, "read").prefix in changelist.text
    assert foreign_key.prefix not in changelist.text
    assert "Globex" not in changelist.text  # not even in the tenant filter
    assert foreign_page.status_code == 302
    assert foreign_page.url == reverse("admin:index")
    own_page = client.get(reverse("admin:tenancy_apikey_change", args=[_key(tenant_a.tenant, "read").pk]))
    assert own_page.status_code == 200 and 'name="_save"' not in own_page.text  # view only


def test_staff_see_only_their_tenants_and_memberships(client, tenant_a, tenant_b):
    _logged_in(client, tenant_a.admin)

    tenants = client.get(reverse("admin:tenancy_tenant_changelist"))
    memberships = client.get(reverse("admin:tenancy_membership_changelist"))
    foreign_tenant = client.get(reverse("admin:tenancy_tenant_change", args=[tenant_b.tenant.pk]))

    assert "Acme" in tenants.text and "Globex" not in tenants.text
    assert "acme-reviewer" in memberships.text and "globex-reviewer" not in memberships.text
    assert foreign_tenant.status_code == 302


def test_adding_an_api_key_shows_the_raw_key_once_and_stores_only_its_hash(client, tenant_a):
    _logged_in(client, tenant_a.admin)

    response = client.post(
        reverse("admin:tenancy_apikey_add"),
        {"tenant": tenant_a.tenant.pk, "name": "ci", "scopes": ["read", "write"], "store_names": "main, notes"},
    )

    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    raw_keys = set(RAW_KEY.findall(response.text))
    assert len(raw_keys) == 1
    raw_key = raw_keys.pop()
    issued = ApiKey.objects.get(tenant=tenant_a.tenant, name="ci")
    assert issued.key_hash == api_key_hash(raw_key)
    assert raw_key not in [str(value) for value in issued.__dict__.values()]
    assert issued.scopes == ["read", "write"]
    assert issued.store_names == ["main", "notes"]
    assert issued.created_by == tenant_a.admin
    authenticated = api_key_authenticate(raw_key=raw_key)
    assert authenticated is not None and authenticated.pk == issued.pk

    change_page = client.get(reverse("admin:tenancy_apikey_change", args=[issued.pk]))
    changelist = client.get(reverse("admin:tenancy_apikey_changelist"))
    for page in (change_page, changelist):
        assert page.status_code == 200
        assert raw_key not in page.text
        assert issued.key_hash not in page.text


def test_api_key_tenant_choices_exclude_tenants_the_user_does_not_administer(client, tenant_a, tenant_b):
    _logged_in(client, tenant_a.admin)

    add_page = client.get(reverse("admin:tenancy_apikey_add"))
    response = client.post(
        reverse("admin:tenancy_apikey_add"),
        {"tenant": tenant_b.tenant.pk, "name": "sneaky", "scopes": ["admin"], "store_names": ""},
    )

    assert "Acme" in add_page.text and "Globex" not in add_page.text
    assert response.status_code == 200
    assert "Select a valid choice" in response.text
    assert RAW_KEY.search(response.text) is None
    assert not ApiKey.objects.filter(name="sneaky").exists()


def test_api_key_form_requires_a_scope(client, tenant_a):
    _logged_in(client, tenant_a.admin)

    response = client.post(
        reverse("admin:tenancy_apikey_add"), {"tenant": tenant_a.tenant.pk, "name": "no-scope", "store_names": ""}
    )

    assert response.status_code == 200
    assert not ApiKey.objects.filter(name="no-scope").exists()


def test_reviewer_may_view_but_not_issue_change_or_revoke_keys(client, tenant_a):
    _logged_in(client, tenant_a.reviewer)
    api_key = _key(tenant_a.tenant, "read")

    add = client.get(reverse("admin:tenancy_apikey_add"))
    change = client.post(reverse("admin:tenancy_apikey_change", args=[api_key.pk]), {"name": "renamed"})
    changelist = client.get(reverse("admin:tenancy_apikey_changelist"))
    revoke = client.post(
        reverse("admin:tenancy_apikey_changelist"), {"action": "revoke", "_selected_action": [api_key.pk]}
    )

    assert add.status_code == 403
    assert change.status_code == 403
    assert 'value="revoke"' not in changelist.text
    assert revoke.status_code == 200  # Django answers an unavailable action with the list again
    api_key.refresh_from_db()
    assert api_key.name == "acme-read"
    assert api_key.revoked_at is None
    assert api_key_authenticate(raw_key=tenant_a.keys["read"]) is not None


def test_revoke_action_makes_authentication_fail_and_ignores_other_tenants(client, tenant_a, tenant_b):
    _logged_in(client, tenant_a.admin)
    own, foreign = _key(tenant_a.tenant, "read"), _key(tenant_b.tenant, "read")
    assert api_key_authenticate(raw_key=tenant_a.keys["read"]) is not None

    response = client.post(
        reverse("admin:tenancy_apikey_changelist"), {"action": "revoke", "_selected_action": [own.pk, foreign.pk]}
    )

    assert response.status_code == 302
    own.refresh_from_db()
    foreign.refresh_from_db()
    assert own.revoked_at is not None
    assert api_key_authenticate(raw_key=tenant_a.keys["read"]) is None
    assert foreign.revoked_at is None
    assert api_key_authenticate(raw_key=tenant_b.keys["read"]) is not None
    assert api_key_authenticate(raw_key=tenant_a.keys["write"]) is not None


def test_editing_a_key_changes_only_its_name_and_stores(client, tenant_a, tenant_b):
    _logged_in(client, tenant_a.admin)
    api_key = _key(tenant_a.tenant, "read")
    key_hash, prefix = api_key.key_hash, api_key.prefix

    response = client.post(
        reverse("admin:tenancy_apikey_change", args=[api_key.pk]),
        {
            "name": "reporting",
            "store_names": "main",
            # Not editable; a crafted POST must not change them.
            "tenant": tenant_b.tenant.pk,
            "scopes": ["admin"],
            "key_hash": "0" * 64,
            "prefix": "mh_evil",
            "revoked_at": "",
        },
    )

    assert response.status_code == 302
    api_key.refresh_from_db()
    assert api_key.name == "reporting"
    assert api_key.store_names == ["main"]
    assert (api_key.tenant_id, api_key.scopes, api_key.key_hash, api_key.prefix) == (
        tenant_a.tenant.pk,
        ["read"],
        key_hash,
        prefix,
    )
    assert api_key_authenticate(raw_key=tenant_a.keys["read"]).pk == api_key.pk


def test_revoked_keys_are_read_only(admin_client, tenant_a):
    api_key = _key(tenant_a.tenant, "read")
    revoke = {"action": "revoke", "_selected_action": [api_key.pk]}
    assert admin_client.post(reverse("admin:tenancy_apikey_changelist"), revoke).status_code == 302

    response = admin_client.post(reverse("admin:tenancy_apikey_change", args=[api_key.pk]), {"name": "back"})

    assert response.status_code == 403
    api_key.refresh_from_db()
    assert api_key.name == "acme-read"


def test_api_keys_cannot_be_deleted_through_the_admin(admin_client, tenant_a):
    api_key = _key(tenant_a.tenant, "read")

    response = admin_client.post(reverse("admin:tenancy_apikey_delete", args=[api_key.pk]), {"post": "yes"})

    assert response.status_code == 403
    assert ApiKey.objects.filter(pk=api_key.pk).exists()


def _membership_inline(*rows, initial=0):
    data = {
        "memberships-TOTAL_FORMS": str(len(rows)),
        "memberships-INITIAL_FORMS": str(initial),
        "memberships-MIN_NUM_FORMS": "0",
        "memberships-MAX_NUM_FORMS": "1000",
    }
    for index, row in enumerate(rows):
        data.update({f"memberships-{index}-{name}": value for name, value in row.items()})
    return data


def test_superuser_creates_a_tenant_with_members_through_the_services(admin_client, outsider):
    response = admin_client.post(
        reverse("admin:tenancy_tenant_add"),
        {"name": "Initech Labs", "slug": "", **_membership_inline({"user": outsider.pk, "role": "admin"})},
    )

    assert response.status_code == 302
    tenant = Tenant.objects.get(name="Initech Labs")
    assert tenant.slug == "initech-labs"  # derived by tenant_create
    assert Membership.objects.get(tenant=tenant, user=outsider).role == "admin"


def test_a_tenant_submission_with_an_invalid_inline_writes_nothing(admin_client, outsider):
    response = admin_client.post(
        reverse("admin:tenancy_tenant_add"),
        {"name": "Initech", "slug": "initech", **_membership_inline({"user": outsider.pk, "role": "owner"})},
    )

    assert response.status_code == 200
    assert "Select a valid choice" in response.text
    assert not Tenant.objects.filter(slug="initech").exists()


def test_membership_inline_changes_and_removals_go_through_the_services(admin_client, tenant_a, outsider):
    admin_membership = Membership.objects.get(tenant=tenant_a.tenant, user=tenant_a.admin)
    reviewer_membership = Membership.objects.get(tenant=tenant_a.tenant, user=tenant_a.reviewer)

    response = admin_client.post(
        reverse("admin:tenancy_tenant_change", args=[tenant_a.tenant.pk]),
        {
            "name": "Acme Corp",
            **_membership_inline(
                {"id": admin_membership.pk, "user": tenant_a.admin.pk, "role": "admin", "DELETE": "on"},
                {"id": reviewer_membership.pk, "user": outsider.pk, "role": "reviewer"},
                initial=2,
            ),
        },
    )

    assert response.status_code == 302
    tenant_a.tenant.refresh_from_db()
    assert tenant_a.tenant.name == "Acme Corp"
    assert tenant_a.tenant.slug == "acme"
    members = dict(Membership.objects.filter(tenant=tenant_a.tenant).values_list("user__username", "role"))
    assert members == {"outsider": "reviewer"}


def test_only_superusers_create_tenants_and_manage_memberships(client, tenant_a, outsider):
    _logged_in(client, tenant_a.admin)
    membership = Membership.objects.get(tenant=tenant_a.tenant, user=tenant_a.reviewer)

    assert client.get(reverse("admin:tenancy_tenant_add")).status_code == 403
    assert client.get(reverse("admin:tenancy_membership_add")).status_code == 403
    promote = client.post(reverse("admin:tenancy_membership_change", args=[membership.pk]), {"role": "admin"})
    rename = client.post(reverse("admin:tenancy_tenant_change", args=[tenant_a.tenant.pk]), {"name": "Mine"})

    assert promote.status_code == 403
    assert rename.status_code == 403
    membership.refresh_from_db()
    assert membership.role == "reviewer"


def test_superuser_changes_a_membership_role(admin_client, tenant_a):
    membership = Membership.objects.get(tenant=tenant_a.tenant, user=tenant_a.reviewer)

    response = admin_client.post(reverse("admin:tenancy_membership_change", args=[membership.pk]), {"role": "admin"})

    assert response.status_code == 302
    membership.refresh_from_db()
    assert membership.role == "admin"


def test_key_management_needs_the_admin_role_in_that_tenant(client, tenant_a, tenant_b):
    membership_set(tenant=tenant_b.tenant, user=tenant_a.admin, role=Membership.Role.REVIEWER)
    _logged_in(client, tenant_a.admin)
    foreign = _key(tenant_b.tenant, "read")

    changelist = client.get(reverse("admin:tenancy_apikey_changelist"))
    client.post(reverse("admin:tenancy_apikey_changelist"), {"action": "revoke", "_selected_action": [foreign.pk]})
    change = client.post(reverse("admin:tenancy_apikey_change", args=[foreign.pk]), {"name": "mine", "store_names": ""})

    assert foreign.prefix in changelist.text  # a reviewer there may see it
    assert change.status_code == 403
    foreign.refresh_from_db()
    assert (foreign.name, foreign.revoked_at) == ("globex-read", None)


def test_admin_login_page_renders_for_anonymous_visitors(db, client):
    response = client.get("/admin/login/")
    assert response.status_code == 200
    assert b"csrfmiddlewaretoken" in response.content
    # And an anonymous visitor is sent to log in rather than shown data.
    assert client.get("/admin/memories/memory/").status_code == 302


def test_api_keys_are_called_api_keys(client, tenant_a):
    _logged_in(client, tenant_a.admin)

    index = client.get(reverse("admin:index")).text
    changelist = client.get(reverse("admin:tenancy_apikey_changelist")).text

    assert (ApiKey._meta.verbose_name, ApiKey._meta.verbose_name_plural) == ("API key", "API keys")
    assert ">API keys</a>" in index and "Api key" not in index
    assert "Select API key to change" in changelist or "Select API key to view" in changelist


def test_view_site_leads_to_the_api_docs(client, tenant_a):
    _logged_in(client, tenant_a.admin)

    index = client.get(reverse("admin:index")).text

    assert f'<a href="{reverse("docs")}">View site</a>' in index
    assert client.get(reverse("docs")).status_code == 200
