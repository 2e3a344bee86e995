"""Sessions in the admin: transcript, working state, checkpoints and event log, read-only.

Staff with the tenant's admin role can terminate a session or restore a checkpoint (from the list,
or with the button on the checkpoint's page); both go through the same services as the API. The
session page shows the latest rows of each part and links to the full lists, which are admins of
their own (read-only, scoped like the session).
"""

import time
from collections import Counter

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.text import Truncator

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
from apps.core.admin import LatestRowsInline
from apps.core.errors import ApplicationError
from apps.tenancy.admin_base import ReadOnlyTenantAdmin

ADMIN_TERMINATE_WAIT_SECONDS = 5.0


class ReadOnlyInline(LatestRowsInline):
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
    latest_first = ["-seq"]
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
    latest_first = ["-updated_at", "-id"]
    verbose_name_plural = "Working memory"

    def get_queryset(self, request):
        return super().get_queryset(request).live()


class ScratchpadInline(ReadOnlyInline):
    model = ScratchpadEntry
    fields = ["seq", "content", "created_at"]
    readonly_fields = fields
    ordering = ["seq"]
    latest_first = ["-seq"]
    verbose_name_plural = "Scratchpad"


class CheckpointInline(ReadOnlyInline):
    model = Checkpoint
    fields = ["created_at", "description", "kind", "message_seq", "working_memory_items", "has_task_state",
              "scratchpad_entries", "expires_at", "created_by"]
    readonly_fields = fields
    ordering = ["-created_at", "-id"]
    latest_first = ordering
    show_change_link = True
    verbose_name_plural = "Checkpoints"

    def get_queryset(self, request):
        return super().get_queryset(request).live().defer("snapshot")


class EventInline(ReadOnlyInline):
    model = SessionEvent
    fields = ["created_at", "event", "from_status", "to_status", "checkpoint_id", "actor_label", "duration_ms",
              "data"]
    readonly_fields = fields
    ordering = ["id"]
    latest_first = ["-id"]
    verbose_name_plural = "Event log"


@admin.register(Session)
class SessionAdmin(ReadOnlyTenantAdmin):
    tenant_path = "store__tenant"
    own_history = (SessionEvent, "session")
    list_display = ["external_id", "store", "user_id", "agent_id", "status", "message_count", "extracted_seq",
                    "last_activity_at"]
    list_filter = ["status", "store"]
    search_fields = ["external_id", "user_id", "agent_id"]
    list_select_related = ["store__tenant"]
    readonly_fields = [*(field.name for field in Session._meta.fields), "related_lists"]
    inlines = [TaskStateInline, WorkingMemoryInline, ScratchpadInline, CheckpointInline, EventInline, TranscriptInline]
    actions = ["terminate_sessions"]

    @admin.action(description="Terminate selected sessions (final extraction, episode memory)", permissions=["act"])
    def terminate_sessions(self, request, queryset):
        actor = Actor.for_user(request.user)
        # One wait for the whole action, not per session: the request must answer in seconds.
        deadline = time.monotonic() + ADMIN_TERMINATE_WAIT_SECONDS

        def terminate(session):
            options = services.TerminateOptions(wait_seconds=max(0.0, deadline - time.monotonic()))
            services.session_terminate(session=session, actor=actor, options=options)

        self.act_on_selected(request, queryset, terminate, done="Terminated session(s): {count}.",
                             label=lambda session: session.external_id)


@admin.register(Checkpoint)
class CheckpointAdmin(ReadOnlyTenantAdmin):
    tenant_path = "session__store__tenant"
    list_display = ["created_at", "session", "description", "kind", "message_seq", "working_memory_items",
                    "has_task_state", "scratchpad_entries", "expires_at"]
    list_filter = ["kind", "session__store"]
    search_fields = ["=id", "session__external_id", "session__user_id", "description"]
    readonly_fields = [field.name for field in Checkpoint._meta.fields]
    actions = ["restore_checkpoints"]
    restore_template = "admin/conversations/checkpoint/restore.html"

    def get_queryset(self, request):
        # For the list (store labels name their tenant) and the pages (the session, and the tenant
        # that permissions are checked against). Here rather than in list_select_related, which the
        # changelist ignores once this selects any.
        return super().get_queryset(request).select_related("session__store__tenant")

    def get_urls(self):
        restore = path("<path:object_id>/restore/", self.admin_site.admin_view(self.restore_view),
                       name="conversations_checkpoint_restore")
        return [restore, *super().get_urls()]

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None and self.has_act_permission(request, obj):
            context["restore_url"] = reverse("admin:conversations_checkpoint_restore", args=[obj.pk],
                                             current_app=self.admin_site.name)
        return super().render_change_form(request, context, add, change, form_url, obj)

    def restore_view(self, request, object_id):
        """GET: what a restore replaces, and a button; POST: the restore, then the session's page."""
        checkpoint = self.get_object(request, unquote(object_id))
        if checkpoint is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        if not self.has_act_permission(request, checkpoint):
            raise PermissionDenied
        session = checkpoint.session
        if request.method == "POST":
            try:
                services.checkpoint_restore(checkpoint=checkpoint, actor=Actor.for_user(request.user))
            except ApplicationError as exc:
                self.message_user(request, f"Not restored: {exc.message}", messages.ERROR)
            else:
                self.message_user(request, f"Restored “{checkpoint}” into session {session.external_id}.",
                                  messages.SUCCESS)
            return HttpResponseRedirect(reverse("admin:conversations_session_change", args=[session.pk],
                                                current_app=self.admin_site.name))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "Restore this checkpoint?",
            "subtitle": Truncator(str(checkpoint)).chars(80),
            "checkpoint": checkpoint,
            "session": session,
            "restore_url": request.path,
        }
        return TemplateResponse(request, self.restore_template, context)

    @admin.action(description="Restore selected checkpoint into its session (replaces its working state)",
                  permissions=["act"])
    def restore_checkpoints(self, request, queryset):
        actor = Actor.for_user(request.user)
        per_session = Counter(queryset.values_list("session_id", flat=True))

        def restore(checkpoint):
            if per_session[checkpoint.session_id] > 1:
                raise ApplicationError("choose one checkpoint per session.")
            services.checkpoint_restore(checkpoint=checkpoint, actor=actor)

        self.act_on_selected(request, queryset, restore, done="Restored checkpoint(s): {count}.",
                             label=lambda checkpoint: checkpoint.session.external_id)


# --- The full lists behind the session page's capped inlines ------------------------------------


class SessionPartAdmin(ReadOnlyTenantAdmin):
    """Rows of a session, listed and viewed only; the session page links here filtered to itself."""

    tenant_path = "session__store__tenant"
    list_select_related = ["session"]
    search_fields = ["=session__external_id"]
    ordering = ["session_id", "id"]  # by the session's id, not its ordering: no join to sort


@admin.register(Message)
class MessageAdmin(SessionPartAdmin):
    list_display = ["session", "seq", "role", "short_text", "client_run_id", "client_seq", "created_at"]
    list_display_links = ["seq"]
    list_filter = ["role"]
    ordering = ["session_id", "seq"]

    @admin.display(description="text")
    def short_text(self, message):
        return Truncator(message.text).chars(120)


@admin.register(SessionEvent)
class SessionEventAdmin(SessionPartAdmin):
    list_display = ["created_at", "session", "event", "from_status", "to_status", "actor_label", "duration_ms"]
    list_display_links = ["created_at"]
    list_filter = ["event"]


@admin.register(ScratchpadEntry)
class ScratchpadEntryAdmin(SessionPartAdmin):
    list_display = ["session", "seq", "short_content", "created_at"]
    list_display_links = ["seq"]
    ordering = ["session_id", "seq"]

    @admin.display(description="content")
    def short_content(self, entry):
        return Truncator(entry.content).chars(120)


@admin.register(WorkingMemoryItem)
class WorkingMemoryItemAdmin(SessionPartAdmin):
    list_display = ["session", "key", "version", "size_bytes", "expires_at", "updated_at"]
    list_display_links = ["key"]
    ordering = ["session_id", "key"]

    def get_queryset(self, request):
        return super().get_queryset(request).live()
