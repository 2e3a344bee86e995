"""Admin plumbing shared by every app: forms that save through services, and tenant scoping.

The access rule it implements is described in apps.tenancy.admin.
"""

import copy

from django import forms
from django.contrib import admin, messages
from django.db import router, transaction

from apps.core.actors import Actor
from apps.core.errors import ApplicationError
from apps.tenancy.models import Membership, Tenant
from apps.tenancy.selectors import tenants_for_user


def member_tenant_ids(request, role: str | None = None) -> set:
    """Ids of the tenants the request's user belongs to (with `role`, if given); cached per request."""
    cache = request.__dict__.setdefault("_memoryhub_tenant_ids", {})
    if role not in cache:
        cache[role] = set(tenants_for_user(request.user, role=role).values_list("pk", flat=True))
    return cache[role]


class ServiceModelForm(forms.ModelForm):
    """A ModelForm whose save is a service call, made once the form and model validation passed.

    Subclasses implement run_service() and return the saved object. `unchanged` is the edited
    object as loaded (validation applies the form's data to `instance`, and services compare
    against the stored values), None when adding.
    """

    request_user = None  # set on the class by ServiceFormAdmin.get_form

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.unchanged = None if self.instance._state.adding else copy.copy(self.instance)

    @property
    def actor(self) -> Actor:
        return Actor.for_user(self.request_user)

    def changed_values(self, names) -> dict:
        return {name: self.cleaned_data[name] for name in names if name in self.changed_data}

    def run_service(self):
        raise NotImplementedError

    def _post_clean(self):
        super()._post_clean()
        if self.errors:
            return
        try:
            saved = self.run_service()
        except ApplicationError as exc:
            field = next((name for name in exc.details if name in self.fields), None)
            self.add_error(field, exc.message)
            return
        _adopt(self.instance, saved)

    def save(self, commit=True):
        return self.instance  # run_service saved it

    def save_m2m(self):
        pass


def _adopt(target, source) -> None:
    """Make `target` (the admin's object) the row a service saved, so the admin logs and links to it."""
    if target is source:
        return
    for model_field in source._meta.concrete_fields:
        if model_field.attname in source.__dict__:  # skip deferred columns rather than load them
            setattr(target, model_field.attname, source.__dict__[model_field.attname])
    target._state.adding = False
    target._state.db = source._state.db


class ServiceFormAdmin(admin.ModelAdmin):
    """Saves through the form's service; `add_form` is used for the add page when set."""

    add_form = None

    def get_form(self, request, obj=None, **kwargs):
        if obj is None and self.add_form is not None:
            kwargs.setdefault("form", self.add_form)
        form = super().get_form(request, obj, **kwargs)  # a fresh class per call
        form.request_user = request.user
        return form

    def save_model(self, request, obj, form, change):
        """Nothing to do: the form's service call saved `obj` while validating."""

    def render_change_form(self, request, context, *args, **kwargs):
        if request.method == "POST":
            # The submission failed (the form or an inline is invalid): undo what a service wrote.
            transaction.set_rollback(True, using=router.db_for_write(self.model))
        return super().render_change_form(request, context, *args, **kwargs)


class TenantScopedAdmin(ServiceFormAdmin):
    """Limits rows, permissions and foreign-key choices to the user's tenants (see module docstring)."""

    tenant_path = "tenant"  # ORM path from the model to its Tenant
    edit_role = Membership.Role.ADMIN  # the role needed to add and change

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        return queryset.filter(**{f"{self.tenant_path}__in": tenants_for_user(request.user)})

    def editable_queryset(self, request, queryset):
        """The part of `queryset` the user holds `edit_role` for."""
        if request.user.is_superuser:
            return queryset
        return queryset.filter(**{f"{self.tenant_path}__in": tenants_for_user(request.user, role=self.edit_role)})

    def tenant_id_of(self, obj):
        *path, last = self.tenant_path.split("__")
        for name in path:
            obj = getattr(obj, name)
        return getattr(obj, f"{last}_id")

    def _allowed(self, request, obj, role) -> bool:
        if request.user.is_superuser:
            return True
        tenant_ids = member_tenant_ids(request, role)
        return bool(tenant_ids) if obj is None else self.tenant_id_of(obj) in tenant_ids

    def has_module_permission(self, request):
        return self._allowed(request, None, None)

    def has_view_permission(self, request, obj=None):
        return self._allowed(request, obj, None)

    def has_add_permission(self, request):
        return self._allowed(request, None, self.edit_role)

    def has_change_permission(self, request, obj=None):
        return self._allowed(request, obj, self.edit_role)

    def has_delete_permission(self, request, obj=None):
        return False

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.related_model is Tenant:
            kwargs["queryset"] = tenants_for_user(request.user, role=self.edit_role)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class SuperuserManagedAdmin(TenantScopedAdmin):
    """Members view; only superusers write."""

    def has_add_permission(self, request):
        return request.user.is_superuser

    def has_change_permission(self, request, obj=None):
        return request.user.is_superuser


class ReadOnlyTenantAdmin(TenantScopedAdmin):
    """Rows written only by services (through admin actions or the API); nobody edits them in a form."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def report(self, request, done_message: str | None, refused: list[str]) -> None:
        """An action's outcome: what was done (if anything), then one warning per refused object."""
        if done_message:
            self.message_user(request, done_message, messages.SUCCESS)
        for line in refused:
            self.message_user(request, line, messages.WARNING)
