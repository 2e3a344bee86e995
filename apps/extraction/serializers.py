from rest_framework import serializers

from apps.conversations.serializers.sessions import SessionOutput
from apps.core.api import QuerySerializer
from apps.core.fields import FiniteFloatField, IdentifierField, iso_datetime
from apps.extraction.models import ExtractionJob


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


class MemoryChangeOutput(serializers.Serializer):
    memory_id = serializers.UUIDField()
    action = serializers.CharField()
    status = serializers.CharField()
    content = serializers.CharField()
    job_id = serializers.UUIDField()
    message_seqs = serializers.ListField(child=serializers.IntegerField())


class JobListQuery(QuerySerializer):
    store = serializers.SlugField(required=False)
    session_id = IdentifierField(required=False)
    status = serializers.ChoiceField(choices=ExtractionJob.Status.choices, required=False)


class FlushQuery(QuerySerializer):
    wait = FiniteFloatField(required=False, default=10.0, min_value=0, max_value=60,
                            help_text="Seconds to wait for the extraction (default 10, at most 60).")


class FlushOutput(serializers.Serializer):
    complete = serializers.BooleanField(help_text="Every message of the session has been extracted.")
    session = SessionOutput()
    jobs = JobOutput(many=True)
    changes = MemoryChangeOutput(many=True)
