"""Extraction jobs in the admin: watch them, and retry failed ones through the service."""

from django.contrib import admin

from apps.extraction.models import ExtractionJob
from apps.extraction.services import extraction_job_retry
from apps.tenancy.admin_base import ReadOnlyTenantAdmin


@admin.register(ExtractionJob)
class ExtractionJobAdmin(ReadOnlyTenantAdmin):
    tenant_path = "store__tenant"
    list_display = [
        "created_at", "store", "session", "from_seq", "to_seq", "status", "trigger", "extractor", "fell_back",
        "attempts", "added", "updated", "deleted", "unchanged", "duration_ms",
    ]
    list_filter = ["status", "trigger", "extractor", "store"]
    search_fields = ["=id", "session__external_id", "session__user_id", "error", "fallback_reason"]
    readonly_fields = [field.name for field in ExtractionJob._meta.fields]
    actions = ["retry_failed"]

    def get_queryset(self, request):
        # For the list (store labels name their tenant) and for a job's name (its session's external id).
        # Here rather than in list_select_related, which the changelist ignores once this selects any.
        return super().get_queryset(request).select_related("store__tenant", "session")

    @admin.display(boolean=True, description="fell back to rules")
    def fell_back(self, job):
        return bool(job.fallback_reason)

    @admin.action(description="Retry selected failed jobs", permissions=["act"])
    def retry_failed(self, request, queryset):
        self.act_on_selected(request, queryset, lambda job: extraction_job_retry(job=job), done="Retried {count} job(s).")
