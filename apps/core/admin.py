"""Admin plumbing shared by every app: forms and admins that save through services."""

import copy

from django import forms
from django.contrib import admin
from django.db import router, transaction

from apps.core.actors import Actor
from apps.core.errors import ApplicationError


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
