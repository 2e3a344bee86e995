"""Admin plumbing shared by every app: forms and admins that save through services, inlines that
show only the latest rows, and the admin site's own settings."""

import copy

from django import forms
from django.contrib import admin
from django.contrib.contenttypes.models import ContentType
from django.db import router, transaction
from django.forms.models import BaseInlineFormSet
from django.urls import NoReverseMatch, reverse, reverse_lazy
from django.utils.functional import cached_property
from django.utils.http import urlencode

from apps.core.actors import Actor
from apps.core.errors import ApplicationError

# "View site" opens the API's browsable docs: the service has no site of its own to view.
admin.site.site_url = reverse_lazy("docs")


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
            # Rendering reads the model's content type, which after set_rollback no query may fetch: read (and
            # cache) it first, or the first failed submission of a process answers 500.
            ContentType.objects.get_for_model(self.model, for_concrete_model=False)
            # The submission failed (the form or an inline is invalid): undo what a service wrote.
            transaction.set_rollback(True, using=router.db_for_write(self.model))
        return super().render_change_form(request, context, *args, **kwargs)


# --- Inlines that show only the latest rows --------------------------------------------------------


class LatestRowsFormSet(BaseInlineFormSet):
    """The parent's latest `row_limit` rows (by `latest_first`), shown in the inline's own order."""

    row_limit = 50
    latest_first = ("-pk",)
    full_list_url = None  # set by LatestRowsInline.get_formset

    def get_queryset(self):
        if not hasattr(self, "_queryset"):
            rows = super().get_queryset()
            latest = rows.order_by(*self.latest_first).values("pk")[: self.row_limit]
            self._queryset = rows.filter(pk__in=latest)
        return self._queryset

    @cached_property
    def rows_total(self) -> int:
        shown = len(self.get_queryset())
        return shown if shown < self.row_limit else self.queryset.count()

    @property
    def rows_hidden(self) -> bool:
        return self.rows_total > len(self.get_queryset())


class LatestRowsInline(admin.TabularInline):
    """A tabular inline of at most `row_limit` rows, the latest by `latest_first`, with a link to the
    full list (the inline model's changelist, filtered to the parent) when its admin is registered.
    A page of a session with a 1,000-message transcript would otherwise render every message."""

    formset = LatestRowsFormSet
    template = "admin/edit_inline/tabular_latest.html"
    row_limit = 50
    latest_first = ("-pk",)

    def get_formset(self, request, obj=None, **kwargs):
        formset = super().get_formset(request, obj, **kwargs)  # a fresh class per call
        formset.row_limit = self.row_limit
        formset.latest_first = self.latest_first
        formset.full_list_url = self.full_list_url(request, obj, formset.fk)
        return formset

    def full_list_url(self, request, obj, fk) -> str | None:
        model_admin = self.admin_site._registry.get(self.model)
        if obj is None or model_admin is None or not model_admin.has_view_permission(request):
            return None
        return changelist_url(self.admin_site, fk, obj)


def changelist_url(admin_site, fk, obj) -> str | None:
    """The admin list of the rows whose foreign key `fk` points at `obj`, or None if that model has no list."""
    opts = fk.model._meta
    try:
        url = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist", current_app=admin_site.name)
    except NoReverseMatch:
        return None
    return f"{url}?{urlencode({f'{fk.name}__{fk.target_field.name}__exact': obj.pk})}"
