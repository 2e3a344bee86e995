from rest_framework import serializers

from apps.conversations.serializers.sessions import SessionOutput
from apps.core.api import QuerySerializer
from apps.core.fields import FiniteFloatField, IdentifierField, StrictIntegerField, iso_datetime
from apps.extraction.models import ExtractionJob
from apps.extraction.selectors import FLUSH_JOB_LIMIT
from apps.memories.models import MemoryRevision


class JobOutput(serializers.Serializer):
    id = serializers.UUIDField()
    store = serializers.CharField()
    session_id = serializers.CharField()
    from_seq = serializers.IntegerField()
    to_seq = serializers.IntegerField()
    status = serializers.ChoiceField(choices=ExtractionJob.Status.choices)
    trigger = serializers.CharField()
    extractor = serializers.CharField(help_text="The extractor that ran: rules or llm (auto is resolved when the job "
                                                "is scheduled); rules after a fallback.")
    fallback_reason = serializers.CharField(
        help_text="Why the job ran the rules extractor instead of the model (the store's "
                  "extraction_config.fallback_to_rules): the model's error on the last attempt; empty otherwise."
    )
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
                "from_seq", "to_seq", "status", "trigger", "extractor", "fallback_reason", "attempts", "max_attempts",
                "error",
                "added", "updated", "deleted", "unchanged", "duration_ms",
            )},
            **{name: iso_datetime(getattr(job, name)) for name in ("run_after", "started_at", "finished_at", "created_at")},
        }


class MemoryChangeOutput(serializers.Serializer):
    memory_id = serializers.UUIDField()
    action = serializers.ChoiceField(
        choices=MemoryRevision.Action.choices,
        help_text="What the job did to the memory: `create`, `update` (an edit, e.g. one more source for a "
                  "repeated fact), `supersede` (retired in favour of a newer value), `delete` (retracted).",
    )
    status = serializers.CharField(help_text="The memory's status after the change.")
    content = serializers.CharField()
    superseded_by = serializers.UUIDField(
        allow_null=True, help_text="For a `supersede`: the memory that replaced this one; otherwise null."
    )
    job_id = serializers.UUIDField()
    message_seqs = serializers.ListField(
        child=serializers.IntegerField(), help_text="The seqs of the messages the change came from."
    )


class JobListQuery(QuerySerializer):
    store = serializers.SlugField(required=False)
    session_id = IdentifierField(required=False)
    status = serializers.ChoiceField(choices=ExtractionJob.Status.choices, required=False)


class FlushQuery(QuerySerializer):
    wait = FiniteFloatField(required=False, default=10.0, min_value=0, max_value=60,
                            help_text="Seconds to wait for the extraction (default 10, at most 60).")
    since_seq = StrictIntegerField(
        required=False, default=0, min_value=0, max_value=2**31 - 1,
        help_text="Report on the messages with a seq above this one (default 0: the whole session). The "
                  "messages answer gives the seq of each message sent (`seqs`): one below the first of them "
                  "reports on that batch.",
    )


class FlushOutput(serializers.Serializer):
    complete = serializers.BooleanField(help_text="Every message of the session has been extracted.")
    session = SessionOutput()
    jobs = JobOutput(many=True, help_text=(
        "The jobs that cover a message with a seq above `since_seq`, whether they ran during this flush or "
        f"before, in any status: the newest {FLUSH_JOB_LIMIT} of them, oldest first."
    ))
    more_jobs = serializers.BooleanField(help_text=(
        f"More than {FLUSH_JOB_LIMIT} jobs cover those messages and the older ones were left out: a larger "
        "`since_seq`, or GET /jobs?session_id=, shows them."
    ))
    changes = MemoryChangeOutput(many=True, help_text="Every memory change the reported jobs made, in order.")
