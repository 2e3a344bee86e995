"""The console's forms: they validate what a person typed; services decide what is allowed."""

from django import forms
from django.contrib.auth.forms import AuthenticationForm

from apps.core.identifiers import IdentifierFormField, normalise_identifier
from apps.extraction.models import ExtractionJob
from apps.memories.events import EventType
from apps.memories.models import Memory
from apps.review.selectors.queue import EXTRACTOR_CHOICES
from apps.tenancy.authentication import LockoutAwareLoginForm

TYPE_CHOICES = [("", "Any type"), *Memory.Type.choices]


class StaffLoginForm(LockoutAwareLoginForm, AuthenticationForm):
    """Django's login, for active staff users only (the console is for them, as the admin is), saying so when the
    login lockout refuses it (settings.LOGIN_FAILURE_LIMIT)."""

    def confirm_login_allowed(self, user):
        super().confirm_login_allowed(user)
        if not user.is_staff:
            raise forms.ValidationError(
                "This account is not a staff account; ask an administrator for access.", code="not_staff"
            )


class QueueFilterForm(forms.Form):
    store = forms.UUIDField(required=False)
    customer = IdentifierFormField(required=False, max_length=255)
    type = forms.ChoiceField(required=False, choices=TYPE_CHOICES)
    extractor = forms.ChoiceField(required=False, choices=[("", "Any extractor"), *EXTRACTOR_CHOICES])
    min_confidence = forms.FloatField(required=False, min_value=0, max_value=1)

    def __init__(self, *args, stores=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.store_choices = [(str(store.pk), str(store)) for store in stores]


class RejectForm(forms.Form):
    reason = forms.CharField(max_length=2000, strip=True,
                             error_messages={"required": "Say why the memory is rejected."})


class EditForm(forms.Form):
    content = forms.CharField(strip=False, widget=forms.Textarea)
    memory_type = forms.ChoiceField(choices=Memory.Type.choices)
    reason = forms.CharField(required=False, max_length=2000)

    def changes(self, memory: Memory) -> dict:
        data = self.cleaned_data
        return {name: data[name] for name in ("content", "memory_type") if data[name] != getattr(memory, name)}


class ReasonForm(forms.Form):
    reason = forms.CharField(required=False, max_length=2000)


class BulkForm(forms.Form):
    decision = forms.ChoiceField(choices=[("approve", "Approve"), ("reject", "Reject")])
    memory = forms.TypedMultipleChoiceField(coerce=str, error_messages={"required": "Select at least one memory."})
    reason = forms.CharField(required=False, max_length=2000)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # The ids are checked against what the user may see by the view; here only their form.
        self.fields["memory"].choices = [(value, value) for value in (self.data.getlist("memory") if self.data else [])]

    def clean(self):
        data = super().clean()
        if data.get("decision") == "reject" and not (data.get("reason") or "").strip():
            self.add_error("reason", "Say why the memories are rejected.")
        return data


class AddMemoryForm(forms.Form):
    store = forms.UUIDField()
    user_id = IdentifierFormField(max_length=255)
    content = forms.CharField(strip=False, widget=forms.Textarea)
    memory_type = forms.ChoiceField(choices=Memory.Type.choices)
    reason = forms.CharField(required=False, max_length=2000)


class ForgetForm(forms.Form):
    user_id = IdentifierFormField(max_length=255)
    confirm = forms.CharField(max_length=255, strip=False)

    def clean(self):
        data = super().clean()
        if "user_id" in data and normalise_identifier(data.get("confirm", "")) != data["user_id"]:
            self.add_error("confirm", "Type the customer's id exactly to confirm.")
        return data


class CustomerSearchForm(forms.Form):
    q = forms.CharField(required=False, max_length=500, strip=True)


class JobFilterForm(forms.Form):
    status = forms.ChoiceField(required=False, choices=[("", "Any status"), *ExtractionJob.Status.choices])
    store = forms.UUIDField(required=False)


class WebhookForm(forms.Form):
    url = forms.CharField(max_length=2000)
    event_types = forms.MultipleChoiceField(required=False, choices=[(name, name) for name in EventType.ALL],
                                            widget=forms.CheckboxSelectMultiple)
    description = forms.CharField(required=False, max_length=2000)
