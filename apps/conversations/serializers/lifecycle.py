from rest_framework import serializers

from apps.conversations.serializers.sessions import SessionOutput
from apps.conversations.serializers.working_state import TaskStatePutInput, TtlField, WorkingMemoryItemInput
from apps.conversations.services.lifecycle import Outcome
from apps.core.fields import CleanCharField, FiniteFloatField, IdentifierField, MetadataField

# --- Checkpoints ------------------------------------------------------------------------------------


class CheckpointCreateInput(serializers.Serializer):
    description = CleanCharField(required=False, allow_blank=True, max_length=2000, default="")
    ttl_seconds = TtlField(help_text="Seconds until the checkpoint expires; 0: never; absent: the store's default.")


class CheckpointRestoreInput(serializers.Serializer):
    clear_current = serializers.BooleanField(
        required=False, default=True,
        help_text="Replace the whole working state (default). False: merge the snapshot's keys into the current ones.",
    )


class CheckpointCountsOutput(serializers.Serializer):
    working_memory = serializers.IntegerField(source="working_memory_items")
    task_state = serializers.BooleanField(source="has_task_state")
    scratchpad = serializers.IntegerField(source="scratchpad_entries")


class CheckpointOutput(serializers.Serializer):
    id = serializers.UUIDField()
    session_id = serializers.CharField(source="session.external_id")
    description = serializers.CharField()
    kind = serializers.CharField()
    message_seq = serializers.IntegerField(help_text="The session's last message seq when it was taken.")
    extracted_seq = serializers.IntegerField()
    counts = CheckpointCountsOutput(source="*")
    size_bytes = serializers.IntegerField()
    expires_at = serializers.DateTimeField(allow_null=True)
    created_by = serializers.CharField()
    created_at = serializers.DateTimeField()


class CheckpointDetailOutput(CheckpointOutput):
    snapshot = serializers.JSONField(help_text="working_memory (items), task_state, scratchpad (entries).")


class CheckpointCreateOutput(CheckpointOutput):
    pruned = serializers.ListField(
        child=serializers.UUIDField(), help_text="Automatic checkpoints removed to stay within the cap."
    )


class CheckpointDeleteOutput(serializers.Serializer):
    deleted = serializers.BooleanField()
    id = serializers.UUIDField()


# --- Lifecycle --------------------------------------------------------------------------------------


class SpawnInput(serializers.Serializer):
    user_id = IdentifierField(required=False, help_text="Required when the session is new.")
    agent_id = IdentifierField(required=False, allow_blank=True, default="")
    metadata = MetadataField(required=False, default=dict)
    working_memory = WorkingMemoryItemInput(many=True, required=False, default=list)
    task_state = TaskStatePutInput(required=False, allow_null=True, default=None)

    def validate_working_memory(self, items):
        keys = [item["key"] for item in items]
        repeated = sorted({key for key in keys if keys.count(key) > 1})
        if repeated:
            raise serializers.ValidationError(f"Keys given more than once: {', '.join(repeated)}.")
        return items


class PauseInput(serializers.Serializer):
    description = CleanCharField(required=False, allow_blank=True, max_length=2000, default="")


class ResumeInput(serializers.Serializer):
    checkpoint_id = serializers.UUIDField(required=False, allow_null=True, default=None,
                                          help_text="Absent: the latest checkpoint.")
    clear_current = serializers.BooleanField(required=False, default=True)


class TerminateInput(serializers.Serializer):
    outcome = serializers.ChoiceField(
        choices=Outcome.CHOICES, required=False, allow_null=True, default=None,
        help_text="Absent: from the task state (completed → success, failed/cancelled → failure, else partial).",
    )
    task = CleanCharField(required=False, allow_blank=True, max_length=2000, default="",
                          help_text="What the session was about; absent: the task state's description.")
    lessons = serializers.ListField(child=CleanCharField(max_length=1000), required=False, default=list,
                                    max_length=50)
    key_facts = serializers.ListField(child=CleanCharField(max_length=1000), required=False, default=list,
                                      max_length=50)
    clear_working_memory = serializers.BooleanField(
        required=False, default=False, help_text="Also delete working memory, task state and scratchpad."
    )
    wait = FiniteFloatField(required=False, allow_null=True, default=None, min_value=0, max_value=60,
                            help_text="Seconds to wait for the final extraction (default 30).")


class LifecycleOutput(serializers.Serializer):
    success = serializers.BooleanField()
    event = serializers.CharField()
    duration_ms = serializers.IntegerField()
    data = serializers.DictField(help_text="Counts and ids of what the transition did, plus the session.")


def lifecycle_body(result) -> dict:
    return {
        "success": True,
        "event": result.event,
        "duration_ms": result.duration_ms,
        "data": {**result.data, "session": SessionOutput(result.session).data},
    }


class SessionEventOutput(serializers.Serializer):
    id = serializers.IntegerField()
    event = serializers.CharField()
    from_status = serializers.CharField()
    to_status = serializers.CharField()
    checkpoint_id = serializers.UUIDField(allow_null=True)
    data = serializers.JSONField()
    duration_ms = serializers.IntegerField()
    actor_type = serializers.CharField()
    actor_id = serializers.CharField()
    actor_label = serializers.CharField()
    created_at = serializers.DateTimeField()
