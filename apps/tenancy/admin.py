"""Admin for tenants, memberships and API keys, and the tenant scoping the memories admin shares.

Who may do what. Admin access comes from Membership rows, not from Django's model permissions, so
granting a staff user access is one membership and there is nothing else to keep in sync:

- superusers: everything below that anyone may do, in every tenant;
- staff with any membership (reviewer or admin) in a tenant: view that tenant, its memberships,
  API keys, stores, memories and memory history, and approve or reject its memories;
- staff with the admin role in a tenant, in addition: issue, rename, re-scope to other stores and
  revoke its API keys; create and edit its stores; add and edit its memories, soft delete and
  restore them;
- only superusers create or rename tenants, set their limits (requests per minute, quotas: apps.tenancy.limits)
  and add, change or remove memberships;
- no one deletes through the admin: API keys are revoked, memories are soft deleted, memory
  revisions are read-only for everyone, and stores and tenants are deleted through the API.

Staff without a membership get an empty admin index and a 403 on every page; another tenant's
object is simply not found. Foreign-key choices (tenant, store) list only the tenants in which the
user holds the role the form needs.

Writes. Every add and change form saves through a service: ServiceModelForm calls it at the end of
form validation, so a service's ApplicationError (a duplicate, a bad embedding setting) becomes a
form error rather than a 500, and ServiceFormAdmin.save_model has nothing left to do. A POST that
re-renders the form rolls back the admin's transaction, so nothing a service wrote survives a
submission that failed as a whole (an invalid inline, say). The raw secret of a new API key is
rendered once, in the response to the POST that issued it, and is never stored or put in a message.
"""


from django import forms
from django.contrib import admin, messages
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import get_user_model
from django.contrib.postgres.forms import SimpleArrayField
from django.template.response import TemplateResponse
from django.utils.cache import add_never_cache_headers

from apps.core.admin import ServiceModelForm
from apps.core.errors import ApplicationError
from apps.tenancy.admin_base import SuperuserManagedAdmin, TenantScopedAdmin
from apps.tenancy.authentication import LockoutAwareLoginForm
from apps.tenancy.models import TENANT_LIMIT_FIELDS, ApiKey, Membership, Tenant
from apps.tenancy.services import (
    api_key_issue,
    api_key_revoke,
    api_key_update,
    membership_remove,
    membership_set,
    tenant_create,
    tenant_limits_set,
    tenant_update,
)


class StaffAdminLoginForm(LockoutAwareLoginForm, AdminAuthenticationForm):
    """The admin's login, saying so when the login lockout refuses it (settings.LOGIN_FAILURE_LIMIT)."""


admin.site.login_form = StaffAdminLoginForm


def _staff_users():
    return get_user_model().objects.filter(is_staff=True, is_active=True).order_by("username")


# --- Tenants and memberships ----------------------------------------------------------------------------


class TenantForm(ServiceModelForm):
    class Meta:
        model = Tenant
        fields = ["name", "slug", *TENANT_LIMIT_FIELDS]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "slug" in self.fields:
            self.fields["slug"].required = False
            self.fields["slug"].help_text = "Leave blank to derive it from the name. Fixed once created."

    def run_service(self):
        if self.unchanged is None:
            tenant = tenant_create(name=self.cleaned_data["name"], slug=self.cleaned_data.get("slug") or None)
        else:
            tenant = tenant_update(tenant=self.unchanged, name=self.cleaned_data["name"])
        limits = {name: self.cleaned_data[name] for name in TENANT_LIMIT_FIELDS if name in self.cleaned_data}
        return tenant_limits_set(tenant=tenant, limits=limits)


class MembershipInline(admin.TabularInline):
    model = Membership
    fields = ["user", "role"]
    extra = 0

    def has_view_permission(self, request, obj=None):
        return True  # the tenant page itself is already scoped

    def has_add_permission(self, request, obj=None):
        return request.user.is_superuser

    def has_change_permission(self, request, obj=None):
        return request.user.is_superuser

    def has_delete_permission(self, request, obj=None):
        return request.user.is_superuser

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "user":
            kwargs["queryset"] = _staff_users()
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


@admin.register(Tenant)
class TenantAdmin(SuperuserManagedAdmin):
    form = TenantForm
    tenant_path = "pk"
    list_display = ["name", "slug", "created_at"]
    search_fields = ["name", "slug"]
    inlines = [MembershipInline]

    def tenant_id_of(self, obj):
        return obj.pk

    def get_readonly_fields(self, request, obj=None):
        return ["slug", "created_at"] if obj else []

    def get_fieldsets(self, request, obj=None):
        limits = ("Limits", {
            "fields": TENANT_LIMIT_FIELDS,
            "description": "Requests per minute count per API key; quotas count for the whole tenant. Blank: the "
                           "server's default (settings); 0: no limit.",
        })
        return [(None, {"fields": ["name", "slug", "created_at"] if obj else ["name", "slug"]}), limits]

    def save_formset(self, request, form, formset, change):
        formset.save(commit=False)  # collects new, changed and deleted rows without writing
        tenant = form.instance
        for membership in formset.deleted_objects:
            membership_remove(membership=membership)
        for membership, changed_fields in formset.changed_objects:
            if "user" in changed_fields:
                # The row now names another user; deleting it by pk removes the previous user's membership.
                membership_remove(membership=membership)
            membership_set(tenant=tenant, user=membership.user, role=membership.role)
        for membership in formset.new_objects:
            membership_set(tenant=tenant, user=membership.user, role=membership.role)


class MembershipForm(ServiceModelForm):
    class Meta:
        model = Membership
        fields = ["tenant", "user", "role"]

    def run_service(self):
        if self.unchanged is None:
            tenant, user = self.cleaned_data["tenant"], self.cleaned_data["user"]
        else:
            tenant, user = self.unchanged.tenant, self.unchanged.user
        return membership_set(tenant=tenant, user=user, role=self.cleaned_data["role"])


@admin.register(Membership)
class MembershipAdmin(SuperuserManagedAdmin):
    form = MembershipForm
    list_display = ["user", "tenant", "role", "created_at"]
    list_filter = ["role", "tenant"]
    search_fields = ["user__username", "tenant__name", "tenant__slug"]
    list_select_related = ["user", "tenant"]

    def get_readonly_fields(self, request, obj=None):
        return ["tenant", "user"] if obj else []

    def has_delete_permission(self, request, obj=None):
        return request.user.is_superuser

    def delete_model(self, request, obj):
        membership_remove(membership=obj)

    def delete_queryset(self, request, queryset):
        for membership in queryset:
            membership_remove(membership=membership)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "user":
            kwargs["queryset"] = _staff_users()
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


# --- API keys ---------------------------------------------------------------------------------------------


def _store_names_field() -> SimpleArrayField:
    return SimpleArrayField(
        forms.SlugField(max_length=100),
        required=False,
        help_text="Comma-separated store names the key may use; leave blank for every store of the tenant.",
    )


class ApiKeyIssueForm(ServiceModelForm):
    scopes = forms.MultipleChoiceField(
        choices=ApiKey.Scope.choices,
        widget=forms.CheckboxSelectMultiple,
        help_text="Write includes read; admin includes both.",
    )
    store_names = _store_names_field()

    class Meta:
        model = ApiKey
        fields = ["tenant", "name", "scopes", "store_names"]

    raw_key = None

    def run_service(self):
        issued = api_key_issue(
            tenant=self.cleaned_data["tenant"],
            name=self.cleaned_data["name"],
            scopes=self.cleaned_data["scopes"],
            store_names=self.cleaned_data["store_names"],
            created_by=self.request_user,
        )
        self.raw_key = issued.raw_key
        return issued.api_key


class ApiKeyChangeForm(ServiceModelForm):
    store_names = _store_names_field()

    class Meta:
        model = ApiKey
        fields = ["name", "store_names"]

    def run_service(self):
        return api_key_update(
            api_key=self.unchanged, name=self.cleaned_data["name"], store_names=self.cleaned_data["store_names"]
        )


class RevokedFilter(admin.SimpleListFilter):
    title = "revoked"
    parameter_name = "revoked"

    def lookups(self, request, model_admin):
        return [("yes", "Revoked"), ("no", "Active")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(revoked_at__isnull=False)
        if self.value() == "no":
            return queryset.filter(revoked_at__isnull=True)
        return queryset


@admin.register(ApiKey)
class ApiKeyAdmin(TenantScopedAdmin):
    add_form = ApiKeyIssueForm
    form = ApiKeyChangeForm
    list_display = ["name", "tenant", "prefix", "scopes", "store_names", "last_used_at", "revoked"]
    list_filter = ["tenant", RevokedFilter]
    list_select_related = ["tenant"]
    search_fields = ["name", "prefix"]
    actions = ["revoke"]
    issued_template = "admin/tenancy/apikey/issued.html"

    # key_hash is in none of these lists, so it is never rendered, not even read-only.
    def get_fields(self, request, obj=None):
        if obj is None:
            return ["tenant", "name", "scopes", "store_names"]
        return [
            "name", "store_names", "tenant", "prefix", "scopes",
            "created_by", "created_at", "last_used_at", "revoked_at",
        ]  # fmt: skip

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return []
        return ["tenant", "prefix", "scopes", "created_by", "created_at", "last_used_at", "revoked_at"]

    def has_change_permission(self, request, obj=None):
        # A revoked key stays revoked and needs no more edits.
        return super().has_change_permission(request, obj) and not (obj is not None and obj.is_revoked)

    @admin.display(boolean=True, description="revoked", ordering="revoked_at")
    def revoked(self, obj):
        return obj.is_revoked

    def save_model(self, request, obj, form, change):
        # Held on this in-memory object only, for response_add to show once.
        obj.raw_key_once = getattr(form, "raw_key", None)

    def response_add(self, request, obj, post_url_continue=None):
        raw_key = getattr(obj, "raw_key_once", None)
        if not raw_key:
            return super().response_add(request, obj, post_url_continue)
        self.message_user(request, f"API key “{obj.name}” issued.", messages.SUCCESS)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "API key issued",
            "api_key": obj,
            "raw_key": raw_key,
        }
        response = TemplateResponse(request, self.issued_template, context)
        add_never_cache_headers(response)  # the page holds a secret: no browser or proxy copy
        return response

    @admin.action(description="Revoke selected API keys", permissions=["change"])
    def revoke(self, request, queryset):
        def revoke(api_key):
            if api_key.is_revoked:
                raise ApplicationError("already revoked.")
            api_key_revoke(api_key=api_key)

        self.act_on_selected(request, queryset, revoke, done="Revoked {count} API key(s).")
