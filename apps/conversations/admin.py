"""Sessions in the admin: transcript, working state, checkpoints and event log, read-only.

Staff with the tenant's admin role can terminate a session or restore a checkpoint; both go
through the same services as the API.
"""

import time

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from apps.conversations import services
from apps.conversations.models import (
    Checkpoint,
    Message,
    ScratchpadEntry,
    Session,
    SessionEvent,
    TaskState,
    WorkingMemoryItem,
)
from apps.core.actors import Actor
from apps.core.errors import ApplicationError
from apps.tenancy.admin_base import ReadOnlyTenantAdmin

ADMIN_TERMINATE_WAIT_SECONDS = 5.0


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = False

    def has_view_permission(self, request, obj=None):
        return True  # the parent admin already decided, by tenant membership, who sees the session

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class TranscriptInline(ReadOnlyInline):
    model = Message
    fields = ["seq", "role", "text", "client_run_id", "client_seq", "created_at"]
    readonly_fields = fields
    ordering = ["seq"]
    verbose_name_plural = "Transcript"


class TaskStateInline(ReadOnlyInline):
    model = TaskState
    fields = ["description", "status", "current_step", "total_steps", "progress", "metadata", "started_at",
              "updated_at", "finished_at"]
    readonly_fields = fields
    verbose_name_plural = "Task state"


class WorkingMemoryInline(ReadOnlyInline):
    model = WorkingMemoryItem
    fields = ["key", "value", "version", "size_bytes", "expires_at", "updated_at"]
    readonly_fields = fields
    ordering = ["key"]
    verbose_name_plural = "Working memory"

    def get_queryset(self, request):
        return super().get_queryset(request).live()


class ScratchpadInline(ReadOnlyInline):
    model = ScratchpadEntry
    fields = ["seq", "content", "created_at"]
    readonly_fields = fields
    ordering = ["seq"]
    verbose_name_plural = "Scratchpad"


class CheckpointInline(ReadOnlyInline):
    model = Checkpoint
    fields = ["created_at", "description", "kind", "message_seq", "working_memory_items", "has_task_state",
              "scratchpad_entries", "expires_at", "created_by"]
    readonly_fields = fields
    ordering = ["-created_at"]
    show_change_link = True
    verbose_name_plural = "Checkpoints (restore one from its page)"

    def get_queryset(self, request):
        return super().get_queryset(request).live().defer("snapshot")


class EventInline(ReadOnlyInline):
    model = SessionEvent
    fields = ["created_at", "event", "from_status", "to_status", "checkpoint_id", "actor_label", "duration_ms",
              "data"]
    readonly_fields = fields
    ordering = ["id"]
    verbose_name_plural = "Event log"


@admin.register(Session)
class SessionAdmin(ReadOnlyTenantAdmin):
    tenant_path = "store__tenant"
    list_display = ["external_id", "store", "user_id", "agent_id", "status", "message_count", "extracted_seq",
                    "last_activity_at"]
    list_filter = ["status", "store"]
    search_fields = ["external_id", "user_id", "agent_id"]
    list_select_related = ["store"]
    readonly_fields = [*(field.name for field in Session._meta.fields), "extraction_jobs"]
    inlines = [TaskStateInline, WorkingMemoryInline, ScratchpadInline, CheckpointInline, EventInline, TranscriptInline]
    actions = ["terminate_sessions"]

    @admin.display(description="Extraction jobs")
    def extraction_jobs(self, session):
        # A link, not an inline: the jobs are the extraction app's, and conversations stands below it.
        url = reverse("admin:extraction_extractionjob_changelist") + f"?session__id__exact={session.pk}"
        return format_html('<a href="{}">{} extraction job(s) of this session</a>', url,
                           session.extraction_jobs.count())

    @admin.action(description="Terminate selected sessions (final extraction, episode memory)")
    def terminate_sessions(self, request, queryset):
        done, refused = 0, []
        actor = Actor.for_user(request.user)
        # One wait for the whole action, not per session: the request must answer in seconds.
        deadline = time.monotonic() + ADMIN_TERMINATE_WAIT_SECONDS
        for session in self.editable_queryset(request, queryset).select_related("store"):
            options = services.TerminateOptions(wait_seconds=max(0.0, deadline - time.monotonic()))
            try:
                services.session_terminate(session=session, actor=actor, options=options)
                done += 1
            except ApplicationError as exc:
                refused.append(f"{session.external_id}: {exc.message}")
        self.report(request, f"Terminated session(s): {done}." if done else None, refused)


@admin.register(Checkpoint)
class CheckpointAdmin(ReadOnlyTenantAdmin):
    tenant_path = "session__store__tenant"
    list_display = ["created_at", "session", "description", "kind", "message_seq", "working_memory_items",
                    "has_task_state", "scratchpad_entries", "expires_at"]
    list_filter = ["kind", "session__store"]
    search_fields = ["=id", "session__external_id", "session__user_id", "description"]
    list_select_related = ["session", "session__store"]
    readonly_fields = [field.name for field in Checkpoint._meta.fields]
    actions = ["restore_checkpoints"]

    @admin.action(description="Restore selected checkpoint into its session (replaces its working state)")
    def restore_checkpoints(self, request, queryset):
        done, refused = 0, []
        chosen = list(self.editable_queryset(request, queryset).select_related("session", "session__store"))
        per_session = {}
        for checkpoint in chosen:
            per_session.setdefault(checkpoint.session_id, []).append(checkpoint)
        actor = Actor.for_user(request.user)
        for checkpoints in per_session.values():
            if len(checkpoints) > 1:
                refused.append(f"{checkpoints[0].session.external_id}: choose one checkpoint per session.")
                continue
            try:
                services.checkpoint_restore(checkpoint=checkpoints[0], actor=actor)
                done += 1
            except ApplicationError as exc:
                refused.append(f"{checkpoints[0].session.external_id}: {exc.message}")
        self.report(request, f"Restored checkpoint(s): {done}." if done else None, refused)
