from rest_framework import serializers

from apps.conversations.models import Message, Session
from apps.core.fields import CleanCharField, MetadataField, StrictIntegerField, iso_datetime
from apps.extraction.models import ExtractionJob


class MessageInput(serializers.Serializer):
    role = serializers.ChoiceField(choices=Message.Role.choices)
    content = serializers.JSONField(help_text="A string, or content blocks: [{'text': ...}, {'toolUse': {...}}]")
    seq = StrictIntegerField(required=False, min_value=0, max_value=2**31 - 1, allow_null=True,
                             help_text="Client sequence number within run_id; repeats are ignored.")
    metadata = MetadataField(required=False, default=dict)


class IngestInput(serializers.Serializer):
    user_id = CleanCharField(max_length=255)
    agent_id = CleanCharField(max_length=255, required=False, allow_blank=True, default="")
    run_id = CleanCharField(max_length=255, required=False, allow_blank=True, default="")
    metadata = MetadataField(required=False, default=dict)
    messages = MessageInput(many=True, allow_empty=False)


class SessionListQuery(serializers.Serializer):
    user_id = CleanCharField(max_length=255, required=False)
    agent_id = CleanCharField(max_length=255, required=False)
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


class MessageOutput(serializers.Serializer):
    seq = serializers.IntegerField()
    role = serializers.CharField()
    content = serializers.JSONField()
    text = serializers.CharField()
    run_id = serializers.CharField(source="client_run_id")
    client_seq = serializers.IntegerField(allow_null=True)
    metadata = serializers.JSONField()
    created_at = serializers.DateTimeField()


class JobOutput(serializers.Serializer):
    id = serializers.UUIDField()
    store = serializers.CharField()
    session_id = serializers.CharField()
    from_seq = serializers.IntegerField()
    to_seq = serializers.IntegerField()
    status = serializers.ChoiceField(choices=ExtractionJob.Status.choices)
    trigger = serializers.CharField()
    extractor = serializers.CharField()
    attempts = serializers.IntegerField()
    max_attempts = serializers.IntegerField()
    error = serializers.CharField()
    added = serializers.IntegerField()
    updated = serializers.IntegerField()
    deleted = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    run_after = serializers.DateTimeField(allow_null=True)
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    duration_ms = serializers.IntegerField(allow_null=True)
    created_at = serializers.DateTimeField()

    def to_representation(self, job):
        return {
            "id": str(job.pk),
            "store": job.store.name,
            "session_id": job.session.external_id,
            **{name: getattr(job, name) for name in (
                "from_seq", "to_seq", "status", "trigger", "extractor", "attempts", "max_attempts", "error",
                "added", "updated", "deleted", "unchanged", "duration_ms",
            )},
            **{name: iso_datetime(getattr(job, name)) for name in ("run_after", "started_at", "finished_at", "created_at")},
        }


class IngestOutput(serializers.Serializer):
    accepted = serializers.IntegerField()
    duplicates = serializers.IntegerField()
    session = SessionOutput()
    extraction_job = serializers.UUIDField(allow_null=True)


class MemoryChangeOutput(serializers.Serializer):
    memory_id = serializers.UUIDField()
    action = serializers.CharField()
    status = serializers.CharField()
    content = serializers.CharField()
    job_id = serializers.UUIDField()
    message_seqs = serializers.ListField(child=serializers.IntegerField())


class FlushOutput(serializers.Serializer):
    complete = serializers.BooleanField(help_text="Every message of the session has been extracted.")
    session = SessionOutput()
    jobs = JobOutput(many=True)
    changes = MemoryChangeOutput(many=True)


class JobListQuery(serializers.Serializer):
    store = serializers.SlugField(required=False)
    session_id = CleanCharField(max_length=255, required=False)
    status = serializers.ChoiceField(choices=ExtractionJob.Status.choices, required=False)
