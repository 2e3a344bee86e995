"""The shape of a user's data export, for the OpenAPI schema: the view writes the document itself, record by
record (apps.portability.selectors), and tests/portability/test_user_export.py holds the two together."""

from rest_framework import serializers

from apps.conversations.serializers.working_state import TaskStateOutput
from apps.memories.serializers import RevisionOutput


class MemoryRecordOutput(serializers.Serializer):
    type = serializers.CharField(help_text='"memory"')
    id = serializers.UUIDField()
    user_id = serializers.CharField()
    agent_id = serializers.CharField()
    session_id = serializers.CharField()
    content = serializers.CharField()
    memory_type = serializers.CharField()
    metadata = serializers.JSONField()
    tags = serializers.ListField(child=serializers.CharField())
    importance = serializers.FloatField()
    confidence = serializers.FloatField()
    status = serializers.CharField(help_text="Every status: active, pending_review, rejected, superseded, deleted.")
    source = serializers.CharField()
    provenance = serializers.JSONField(help_text="Where the memory came from: messages, extractor, model.")
    valid_from = serializers.DateTimeField()
    valid_to = serializers.DateTimeField(allow_null=True)
    expires_at = serializers.DateTimeField(allow_null=True)
    superseded_by = serializers.UUIDField(allow_null=True)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    revisions = RevisionOutput(many=True, help_text="The memory's history, oldest first.")


class WorkingMemoryRecordOutput(serializers.Serializer):
    key = serializers.CharField()
    value = serializers.JSONField()
    version = serializers.IntegerField()
    expires_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class ScratchpadRecordOutput(serializers.Serializer):
    seq = serializers.IntegerField()
    content = serializers.CharField()
    metadata = serializers.JSONField()
    created_at = serializers.DateTimeField()


class CheckpointRecordOutput(serializers.Serializer):
    id = serializers.UUIDField()
    description = serializers.CharField()
    kind = serializers.CharField()
    snapshot = serializers.JSONField()
    message_seq = serializers.IntegerField()
    extracted_seq = serializers.IntegerField()
    working_memory_items = serializers.IntegerField()
    scratchpad_entries = serializers.IntegerField()
    has_task_state = serializers.BooleanField()
    size_bytes = serializers.IntegerField()
    expires_at = serializers.DateTimeField(allow_null=True)
    created_by = serializers.CharField()
    created_at = serializers.DateTimeField()


class SessionEventRecordOutput(serializers.Serializer):
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


class MessageRecordOutput(serializers.Serializer):
    type = serializers.CharField(help_text='"message"')
    session_id = serializers.CharField()
    seq = serializers.IntegerField()
    role = serializers.CharField()
    content = serializers.JSONField(help_text="A string or content blocks, as sent.")
    text = serializers.CharField()
    run_id = serializers.CharField()
    client_seq = serializers.IntegerField(allow_null=True)
    metadata = serializers.JSONField()
    created_at = serializers.DateTimeField()


class SessionRecordOutput(serializers.Serializer):
    type = serializers.CharField(help_text='"session"')
    id = serializers.UUIDField()
    session_id = serializers.CharField()
    user_id = serializers.CharField()
    agent_id = serializers.CharField()
    status = serializers.CharField()
    metadata = serializers.JSONField()
    message_count = serializers.IntegerField()
    last_seq = serializers.IntegerField()
    extracted_seq = serializers.IntegerField()
    scratchpad_seq = serializers.IntegerField()
    working_memory_version = serializers.IntegerField()
    last_activity_at = serializers.DateTimeField()
    ended_at = serializers.DateTimeField(allow_null=True)
    episode_memory_id = serializers.UUIDField(allow_null=True)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    working_memory = WorkingMemoryRecordOutput(many=True, help_text="Live keys (expired ones are no longer held).")
    task_state = TaskStateOutput(allow_null=True)
    scratchpad = ScratchpadRecordOutput(many=True)
    checkpoints = CheckpointRecordOutput(many=True)
    events = SessionEventRecordOutput(many=True, help_text="The lifecycle log.")
    messages = MessageRecordOutput(many=True, help_text="The transcript in seq order.")


class ExtractionJobRecordOutput(serializers.Serializer):
    id = serializers.UUIDField()
    session_id = serializers.CharField()
    from_seq = serializers.IntegerField()
    to_seq = serializers.IntegerField()
    status = serializers.CharField()
    trigger = serializers.CharField()
    extractor = serializers.CharField()
    attempts = serializers.IntegerField()
    error = serializers.CharField()
    fallback_reason = serializers.CharField()
    added = serializers.IntegerField()
    updated = serializers.IntegerField()
    deleted = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


class WebhookDeliveryRecordOutput(serializers.Serializer):
    id = serializers.UUIDField()
    url = serializers.CharField(help_text="The receiver the user's data was sent to.")
    event_id = serializers.CharField()
    event_type = serializers.CharField()
    status = serializers.CharField()
    attempts = serializers.IntegerField()
    payload = serializers.JSONField(help_text="What was sent.")
    created_at = serializers.DateTimeField()
    delivered_at = serializers.DateTimeField(allow_null=True)


class UserExportCountsOutput(serializers.Serializer):
    memories = serializers.IntegerField()
    sessions = serializers.IntegerField()
    messages = serializers.IntegerField()
    extraction_jobs = serializers.IntegerField()
    webhook_deliveries = serializers.IntegerField()


class UserExportOutput(serializers.Serializer):
    format = serializers.CharField(help_text='"memoryhub-user-export"')
    version = serializers.IntegerField()
    exported_at = serializers.DateTimeField()
    store = serializers.CharField()
    user_id = serializers.CharField()
    memories = MemoryRecordOutput(many=True)
    sessions = SessionRecordOutput(many=True)
    extraction_jobs = ExtractionJobRecordOutput(many=True)
    webhook_deliveries = WebhookDeliveryRecordOutput(many=True)
    counts = UserExportCountsOutput()
