from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.conversations.content import KNOWN_BLOCKS
from apps.conversations.models import Message, Session
from apps.conversations.services.messages import MESSAGE_TIME_SKEW
from apps.core.api import QuerySerializer
from apps.core.fields import IdentifierField, MetadataField, StorableJSONField, StrictIntegerField


@extend_schema_field({
    "oneOf": [
        {"type": "string"},
        {"type": "array", "minItems": 1, "items": {
            "type": "object", "minProperties": 1, "maxProperties": 1, "additionalProperties": {},
            "description": f"One content block, named by its only key: {', '.join(KNOWN_BLOCKS)}.",
        }},
    ],
})
class MessageContentField(StorableJSONField):
    """A string or a non-empty list of content blocks (checked when the messages are ingested)."""


class MessageInput(serializers.Serializer):
    role = serializers.ChoiceField(choices=Message.Role.choices)
    content = MessageContentField(help_text="A string, or content blocks: [{'text': ...}, {'toolUse': {...}}]")
    seq = StrictIntegerField(required=False, min_value=0, max_value=2**31 - 1, allow_null=True,
                             help_text="Client sequence number within run_id; repeats are ignored.")
    metadata = MetadataField(required=False, default=dict)
    created_at = serializers.DateTimeField(
        required=False, allow_null=True, default=None,
        help_text="When the message was sent (ISO 8601; UTC if no offset); default: when it arrives. Relative "
                  "dates in it are resolved against this time. At most "
                  f"{MESSAGE_TIME_SKEW.total_seconds() / 60:g} minutes ahead of the server's clock.",
    )


class IngestInput(serializers.Serializer):
    user_id = IdentifierField()
    agent_id = IdentifierField(required=False, allow_blank=True, default="")
    run_id = IdentifierField(required=False, allow_blank=True, default="")
    metadata = MetadataField(required=False, default=dict)
    messages = MessageInput(many=True, allow_empty=False)


class SessionListQuery(QuerySerializer):
    user_id = IdentifierField(required=False)
    agent_id = IdentifierField(required=False)
    status = serializers.ChoiceField(choices=Session.Status.choices, required=False)


class SessionOutput(serializers.Serializer):
    session_id = serializers.CharField(source="external_id")
    store = serializers.CharField(source="store.name")
    user_id = serializers.CharField()
    agent_id = serializers.CharField()
    status = serializers.CharField()
    metadata = serializers.JSONField()
    message_count = serializers.IntegerField()
    last_seq = serializers.IntegerField()
    extracted_seq = serializers.IntegerField()
    last_activity_at = serializers.DateTimeField()
    created_at = serializers.DateTimeField()
    ended_at = serializers.DateTimeField(allow_null=True)
    episode_memory_id = serializers.UUIDField(allow_null=True)


class SessionDeleteOutput(serializers.Serializer):
    deleted = serializers.BooleanField()
    session_id = serializers.CharField()
    messages = serializers.IntegerField(help_text="Messages deleted with the session.")


class MessageOutput(serializers.Serializer):
    seq = serializers.IntegerField()
    role = serializers.CharField()
    content = serializers.JSONField()
    text = serializers.CharField()
    run_id = serializers.CharField(source="client_run_id")
    client_seq = serializers.IntegerField(allow_null=True)
    metadata = serializers.JSONField()
    created_at = serializers.DateTimeField()


class IngestOutput(serializers.Serializer):
    accepted = serializers.IntegerField()
    duplicates = serializers.IntegerField()
    seqs = serializers.ListField(
        child=serializers.IntegerField(),
        help_text="The session seq of each message sent, in the order sent; a repeat of a (run_id, seq) already "
                  "stored has the seq it was stored with.",
    )
    session = SessionOutput()
    extraction_job = serializers.UUIDField(allow_null=True)


class UserEraseOutput(serializers.Serializer):
    user_id = serializers.CharField()
    memories = serializers.IntegerField()
    revisions = serializers.IntegerField()
    sessions = serializers.IntegerField(help_text="With their messages, working state, checkpoints and jobs.")
    messages = serializers.IntegerField()
