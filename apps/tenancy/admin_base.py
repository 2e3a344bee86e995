"""Tenant scoping for the admin of every tenant-owned model (the access rule is described in
apps.tenancy.admin).

TenantScopedAdmin limits to the user's tenants everything a page can show or accept: the rows, the
choices of every relation filter in list_filter (a store filter must not list another tenant's
"acme/main"), the choices of foreign-key form fields (which also validate raw-id and autocomplete
input; the lookups themselves open the related model's admin, scoped the same way). Each related
model's path to its tenant is the `tenant_path` of its own admin, so a relation to a model without a
tenant-scoped admin is refused: by the system checks for list_filter, raw_id_fields and
autocomplete_fields, and when the page is built otherwise. tests/test_admin_registry.py walks the
registry and holds every admin of a tenant-owned model to this.
"""

from django.contrib import admin, messages
from django.contrib.admin.utils import NotRelationField, get_fields_from_path, unquote
from django.core import checks
from django.core.exceptions import FieldDoesNotExist, ImproperlyConfigured, PermissionDenied
from django.http import HttpResponseRedirect
from django.utils.html import format_html_join

from apps.core.admin import ServiceFormAdmin, changelist_url
from apps.core.errors import ApplicationError
from apps.tenancy.models import Membership, Tenant
from apps.tenancy.selectors import tenants_for_user

# An action that refuses many objects for the same reason names a few of them, not all.
REFUSED_NAMES_SHOWN = 5


def member_tenant_ids(request, role: str | None = None) -> set:
    """Ids of the tenants the request's user belongs to (with `role`, if given); cached per request."""
    cache = request.__dict__.setdefault("_memoryhub_tenant_ids", {})
    if role not in cache:
        cache[role] = set(tenants_for_user(request.user, role=role).values_list("pk", flat=True))
    return cache[role]


def tenant_path_of(admin_site, model) -> str:
    """The ORM path from `model` to its Tenant, as its tenant-scoped admin declares it."""
    if model is Tenant:
        return "pk"
    model_admin = admin_site._registry.get(model)
    if not isinstance(model_admin, TenantScopedAdmin):
        raise ImproperlyConfigured(
            f"{model._meta.label} has no tenant-scoped admin, so its rows cannot be limited to the user's tenants."
        )
    return model_admin.tenant_path


def rows_of_tenants(admin_site, model, tenants):
    """`model`'s rows that belong to `tenants`, with the relations on the way read in the same query
    (labels such as a store's "acme/main" name its tenant)."""
    path = tenant_path_of(admin_site, model)
    rows = model._default_manager.filter(**{f"{path}__in": tenants})
    return rows if path == "pk" else rows.select_related(path)


class TenantScopedRelatedFilter(admin.RelatedFieldListFilter):
    """A relation filter whose choices are the related rows of the user's tenants, labels included."""

    def field_choices(self, field, request, model_admin):
        rows = rows_of_tenants(model_admin.admin_site, field.related_model, tenants_for_user(request.user))
        ordering = self.field_admin_ordering(field, request, model_admin)
        if ordering:
            rows = rows.order_by(*ordering)
        value_attname = field.target_field.attname
        return [(getattr(row, value_attname), str(row)) for row in rows]


class TenantScopedAdmin(ServiceFormAdmin):
    """Limits rows, permissions, filters and foreign-key choices to the user's tenants (see module docstring)."""

    tenant_path = "tenant"  # ORM path from the model to its Tenant, through foreign keys
    edit_role = Membership.Role.ADMIN  # the role needed to add and change, and to run service actions
    # memoryhub's own history of an object, which the "History" button opens instead of Django's log:
    # (the model of the history rows, the name of their foreign key to this model).
    own_history: tuple | None = None
    # A filtered list must not count every row of the user's tenants (a message list filtered to one session
    # would count every message): Django then shows "Show all" instead of the unfiltered total.
    show_full_result_count = False

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        return queryset.filter(**{f"{self.tenant_path}__in": tenants_for_user(request.user)})

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

    def has_act_permission(self, request, obj=None):
        """Service actions (terminate, restore, retry): `edit_role` in the object's tenant, or in any."""
        return self._allowed(request, obj, self.edit_role)

    # --- Relations: filters and form choices --------------------------------------------------------

    def _relation_filter(self, entry):
        """`entry` of list_filter, with a tenant-scoped filter in place of Django's for a relation."""
        if isinstance(entry, str):
            field_path, filter_class = entry, None
        elif isinstance(entry, (list, tuple)):
            field_path, filter_class = entry
        else:
            return entry  # a SimpleListFilter: its lookups() decide (and tests/test_admin_registry.py checks them)
        field = get_fields_from_path(self.model, field_path)[-1]
        if field.is_relation and (filter_class is None or issubclass(filter_class, admin.RelatedFieldListFilter)):
            return field_path, TenantScopedRelatedFilter
        return entry

    def get_list_filter(self, request):
        return [self._relation_filter(entry) for entry in super().get_list_filter(request)]

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if "queryset" not in kwargs:
            tenants = tenants_for_user(request.user, role=self.edit_role)
            kwargs["queryset"] = rows_of_tenants(self.admin_site, db_field.related_model, tenants)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        if "queryset" not in kwargs:
            tenants = tenants_for_user(request.user, role=self.edit_role)
            kwargs["queryset"] = rows_of_tenants(self.admin_site, db_field.related_model, tenants)
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def check(self, **kwargs):
        errors = super().check(**kwargs)
        relations = [entry if isinstance(entry, str) else entry[0]
                     for entry in self.list_filter if isinstance(entry, (str, list, tuple))]  # fmt: skip
        for field_path in [*relations, *self.raw_id_fields, *self.autocomplete_fields]:
            try:
                field = get_fields_from_path(self.model, field_path)[-1]
                if field.is_relation:
                    tenant_path_of(self.admin_site, field.related_model)
            except (FieldDoesNotExist, NotRelationField):
                continue  # Django's own checks report it
            except ImproperlyConfigured as exc:
                errors.append(checks.Error(f"{field_path}: {exc}", obj=self.__class__, id="memoryhub.E001"))
        return errors

    # --- Actions ------------------------------------------------------------------------------------

    def act_on_selected(self, request, queryset, act, *, done: str, label=str, needs_edit_role: bool = True) -> int:
        """Call `act(obj)` for each selected object, then report how many were done and why the rest were not.

        `act` calls a service; an ApplicationError it raises refuses that object only. An object of a
        tenant where the user lacks `edit_role` is refused without a call, unless `needs_edit_role` is
        False (the selection is already limited to the user's tenants). `done` may use {count}.
        """
        *relations, _ = self.tenant_path.split("__")
        if relations:
            queryset = queryset.select_related("__".join(relations))
        count, refused = 0, {}
        for obj in queryset:
            try:
                if needs_edit_role and not self.has_act_permission(request, obj):
                    raise ApplicationError(f"this needs the {self.edit_role} role in its tenant.")
                act(obj)
            except ApplicationError as exc:
                refused.setdefault(exc.message, []).append(label(obj))
            else:
                count += 1
        if count:
            self.message_user(request, done.format(count=count), messages.SUCCESS)
        for reason, names in refused.items():  # one warning per reason
            more = f" and {len(names) - REFUSED_NAMES_SHOWN} more" if len(names) > REFUSED_NAMES_SHOWN else ""
            self.message_user(request, f"{', '.join(names[:REFUSED_NAMES_SHOWN])}{more}: {reason}", messages.WARNING)
        return count

    # --- History ------------------------------------------------------------------------------------

    def history_view(self, request, object_id, extra_context=None):
        if self.own_history is None:
            return super().history_view(request, object_id, extra_context)
        obj = self.get_object(request, unquote(object_id))
        if obj is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        if not self.has_view_or_change_permission(request, obj):
            raise PermissionDenied
        history_model, foreign_key = self.own_history
        return HttpResponseRedirect(changelist_url(self.admin_site, history_model._meta.get_field(foreign_key), obj))

    # --- Related lists ------------------------------------------------------------------------------

    @admin.display(description="Related lists")
    def related_lists(self, obj):
        """Links to the lists of rows pointing at `obj` that other admins show (a session's extraction jobs),
        for a page to name what refers to it without knowing the apps above its own."""
        links = []
        for relation in self.opts.related_objects:
            model = relation.related_model
            if model in self.admin_site._registry and relation.one_to_many:
                url = changelist_url(self.admin_site, relation.field, obj)
                count = model._default_manager.filter(**{relation.field.name: obj}).count()
                if url:
                    links.append((url, count, model._meta.verbose_name_plural))
        return format_html_join(", ", '<a href="{}">{} {}</a>', links) or "-"


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
