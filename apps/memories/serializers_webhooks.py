from rest_framework import serializers

from apps.core.api import QuerySerializer
from apps.core.fields import CleanCharField
from apps.memories.events import EventType
from apps.memories.models import WebhookDelivery
from apps.memories.services.webhook_delivery import MAX_URL_LENGTH


def _event_types_field(**kwargs) -> serializers.ListField:
    return serializers.ListField(
        child=serializers.ChoiceField(choices=EventType.ALL),
        max_length=len(EventType.ALL),
        help_text="The event types to send; empty: every type, including types added later.",
        **kwargs,
    )


class WebhookCreateInput(serializers.Serializer):
    url = CleanCharField(
        max_length=MAX_URL_LENGTH,
        help_text="http or https; its host must be (or resolve to) a public address unless the server allows "
                  "private ones.",
    )
    event_types = _event_types_field(required=False, default=list)
    description = CleanCharField(required=False, allow_blank=True, max_length=2000, default="")


class WebhookUpdateInput(serializers.Serializer):
    url = CleanCharField(required=False, max_length=MAX_URL_LENGTH)
    event_types = _event_types_field(required=False)
    description = CleanCharField(required=False, allow_blank=True, max_length=2000)
    is_active = serializers.BooleanField(
        required=False, help_text="false disables the webhook; true enables it again and resets its failure count."
    )

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError("Send at least one field to change.")
        return attrs


class WebhookOutput(serializers.Serializer):
    id = serializers.UUIDField()
    store = serializers.CharField(source="store.name")
    url = serializers.CharField()
    description = serializers.CharField()
    event_types = serializers.ListField(
        child=serializers.CharField(), help_text="The event types it receives; empty: every type."
    )
    is_active = serializers.BooleanField()
    disabled_at = serializers.DateTimeField(allow_null=True)
    disabled_reason = serializers.CharField(
        help_text="Why it was disabled: by an administrator, or after repeated failed deliveries (with the last "
                  "error); empty while active."
    )
    consecutive_failures = serializers.IntegerField(
        help_text="Deliveries that failed on every attempt since the last success."
    )
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class WebhookWithSecretOutput(WebhookOutput):
    secret = serializers.CharField(
        help_text="The signing secret: shown when the webhook is created and when the secret is rotated, never "
                  "otherwise."
    )


class WebhookListOutput(serializers.Serializer):
    results = WebhookOutput(many=True)


class WebhookDeleteOutput(serializers.Serializer):
    deleted = serializers.BooleanField()
    id = serializers.UUIDField()


class WebhookDeliveryOutput(serializers.Serializer):
    id = serializers.UUIDField(help_text="Sent as the Memoryhub-Delivery header.")
    webhook_id = serializers.UUIDField()
    event_id = serializers.CharField(help_text="The event's id (`id` in the body): the same for every webhook.")
    event_type = serializers.CharField()
    user_id = serializers.CharField(help_text="The user whose data the payload holds; empty if none.")
    status = serializers.ChoiceField(
        choices=WebhookDelivery.Status.choices,
        help_text="queued (waiting for its next attempt, or being sent), succeeded, or failed (every attempt).",
    )
    attempts = serializers.IntegerField()
    next_attempt_at = serializers.DateTimeField(allow_null=True, help_text="While queued: when the next attempt is due.")
    response_status = serializers.IntegerField(allow_null=True, help_text="The HTTP status of the last answer.")
    last_error = serializers.CharField(help_text="What went wrong on the last attempt, in words; empty on success.")
    duration_ms = serializers.IntegerField(allow_null=True)
    delivered_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()
    payload = serializers.JSONField(help_text="The JSON body sent.")


class WebhookDeliveryListQuery(QuerySerializer):
    status = serializers.ChoiceField(choices=WebhookDelivery.Status.choices, required=False)
