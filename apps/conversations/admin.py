"""Sessions in the admin: read-only, with the transcript and the session's extraction jobs."""

from django.contrib import admin

from apps.conversations.models import Message, Session
from apps.core.admin import TenantScopedAdmin
from apps.extraction.models import ExtractionJob


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


class JobInline(ReadOnlyInline):
    model = ExtractionJob
    fields = ["created_at", "from_seq", "to_seq", "status", "trigger", "attempts", "added", "updated", "deleted",
              "error"]
    readonly_fields = fields
    ordering = ["-created_at"]
    verbose_name_plural = "Extraction jobs"


@admin.register(Session)
class SessionAdmin(TenantScopedAdmin):
    tenant_path = "store__tenant"
    list_display = ["external_id", "store", "user_id", "agent_id", "status", "message_count", "extracted_seq",
                    "last_activity_at"]
    list_filter = ["status", "store"]
    search_fields = ["external_id", "user_id", "agent_id"]
    list_select_related = ["store"]
    readonly_fields = [field.name for field in Session._meta.fields]
    inlines = [TranscriptInline, JobInline]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
