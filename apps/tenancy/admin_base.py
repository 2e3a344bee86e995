"""Tenant scoping for the admin of every tenant-owned model (the access rule is described in
apps.tenancy.admin)."""

from django.contrib import messages

from apps.core.admin import ServiceFormAdmin
from apps.tenancy.models import Membership, Tenant
from apps.tenancy.selectors import tenants_for_user


def member_tenant_ids(request, role: str | None = None) -> set:
    """Ids of the tenants the request's user belongs to (with `role`, if given); cached per request."""
    cache = request.__dict__.setdefault("_memoryhub_tenant_ids", {})
    if role not in cache:
        cache[role] = set(tenants_for_user(request.user, role=role).values_list("pk", flat=True))
    return cache[role]


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
