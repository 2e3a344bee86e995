from rest_framework import serializers

from apps.conversations.models import TaskState
from apps.conversations.services.working_state import MAX_KEY_LENGTH, MAX_TTL_SECONDS
from apps.core.api import QuerySerializer
from apps.core.fields import CleanCharField, FiniteFloatField, MetadataField, StorableJSONField, StrictIntegerField

# --- Working memory ---------------------------------------------------------------------------------


class NullableJSONField(StorableJSONField):
    """A required JSON value for which null is a value, not "missing"."""

    def __init__(self, **kwargs):
        kwargs.setdefault("allow_null", True)
        super().__init__(**kwargs)

    def validate_empty_values(self, data):
        if data is serializers.empty and self.required:
            self.fail("required")
        if data is None:
            return True, None
        return super().validate_empty_values(data)


class TtlField(StrictIntegerField):
    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        kwargs.setdefault("allow_null", True)
        kwargs.setdefault("min_value", 0)
        kwargs.setdefault("max_value", MAX_TTL_SECONDS)
        super().__init__(**kwargs)


class WorkingMemoryPutInput(serializers.Serializer):
    value = NullableJSONField(help_text="Any JSON value, up to the store's max_value_bytes as compact JSON.")
    ttl_seconds = TtlField(help_text="Seconds until the key expires; 0: never; absent/null: the store's default.")
    if_version = StrictIntegerField(
        required=False, min_value=0, help_text="Write only if the key is at this version (0: does not exist yet)."
    )


class WorkingMemoryItemInput(WorkingMemoryPutInput):
    key = CleanCharField(max_length=MAX_KEY_LENGTH, trim_whitespace=False)
    if_version = None


class WorkingMemoryItemOutput(serializers.Serializer):
    key = serializers.CharField()
    value = serializers.JSONField()
    version = serializers.IntegerField()
    size_bytes = serializers.IntegerField()
    expires_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class WorkingMemoryListQuery(QuerySerializer):
    prefix = CleanCharField(required=False, max_length=MAX_KEY_LENGTH, trim_whitespace=False)


class WorkingMemoryClearOutput(serializers.Serializer):
    deleted = serializers.IntegerField(help_text="Live keys deleted.")


class WorkingMemoryDeleteOutput(serializers.Serializer):
    deleted = serializers.BooleanField()
    key = serializers.CharField()


# --- Task state -------------------------------------------------------------------------------------


class ProgressField(FiniteFloatField):
    """A JSON number: "50" is refused like "NaN", not read as a number."""

    def to_internal_value(self, data):
        if not isinstance(data, int | float):
            raise serializers.ValidationError("A number is required.")
        return super().to_internal_value(data)


class TaskStatePutInput(serializers.Serializer):
    description = CleanCharField(required=False, allow_blank=True, max_length=10_000, default="")
    current_step = StrictIntegerField(required=False, min_value=0, max_value=2**31 - 1, default=0)
    total_steps = StrictIntegerField(required=False, min_value=0, max_value=2**31 - 1, allow_null=True, default=None)
    progress = ProgressField(
        required=False, allow_null=True, default=None,
        help_text="0–100; values outside are clamped. Absent: current_step / total_steps.",
    )
    status = serializers.ChoiceField(choices=TaskState.Status.choices, required=False,
                                     default=TaskState.Status.IN_PROGRESS)
    metadata = MetadataField(required=False, default=dict)


class TaskStatePatchInput(serializers.Serializer):
    description = CleanCharField(required=False, allow_blank=True, max_length=10_000)
    current_step = StrictIntegerField(required=False, min_value=0, max_value=2**31 - 1)
    total_steps = StrictIntegerField(required=False, min_value=0, max_value=2**31 - 1, allow_null=True)
    progress = ProgressField(required=False, help_text="0–100; values outside are clamped.")
    status = serializers.ChoiceField(choices=TaskState.Status.choices, required=False)
    metadata = MetadataField(required=False)

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError(
                f"Nothing to change; send at least one of {', '.join(self.fields)}."
            )
        return attrs


class TaskStateOutput(serializers.Serializer):
    description = serializers.CharField()
    current_step = serializers.IntegerField()
    total_steps = serializers.IntegerField(allow_null=True)
    progress = serializers.FloatField()
    status = serializers.CharField()
    metadata = serializers.JSONField()
    started_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)


class TaskStateDeleteOutput(serializers.Serializer):
    deleted = serializers.BooleanField()


# --- Scratchpad -------------------------------------------------------------------------------------


class ScratchpadAppendInput(serializers.Serializer):
    content = CleanCharField(trim_whitespace=False)
    metadata = MetadataField(required=False, default=dict)

    def validate_content(self, value):
        if not value.strip():
            raise serializers.ValidationError("Must not be blank.")
        return value


class ScratchpadEntryOutput(serializers.Serializer):
    seq = serializers.IntegerField()
    content = serializers.CharField()
    metadata = serializers.JSONField()
    created_at = serializers.DateTimeField()


class ScratchpadAppendOutput(serializers.Serializer):
    entry = ScratchpadEntryOutput()
    dropped = serializers.IntegerField(help_text="Oldest entries removed to stay within the limit.")
    entries = serializers.IntegerField(help_text="Entries kept, this one included.")
    limit = serializers.IntegerField()


class ScratchpadClearOutput(serializers.Serializer):
    deleted = serializers.IntegerField(help_text="Entries deleted.")
