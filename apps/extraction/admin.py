"""Extraction jobs in the admin: watch them, and retry failed ones through the service."""

from django.contrib import admin

from apps.core.errors import ApplicationError
from apps.extraction.models import ExtractionJob
from apps.extraction.services import extraction_job_retry
from apps.tenancy.admin_base import ReadOnlyTenantAdmin


@admin.register(ExtractionJob)
class ExtractionJobAdmin(ReadOnlyTenantAdmin):
    tenant_path = "store__tenant"
    list_display = [
        "created_at", "store", "session", "from_seq", "to_seq", "status", "trigger", "extractor", "attempts",
        "added", "updated", "deleted", "unchanged", "duration_ms",
    ]
    list_filter = ["status", "trigger", "extractor", "store"]
    search_fields = ["=id", "session__external_id", "session__user_id", "error"]
    list_select_related = ["store", "session"]
    readonly_fields = [field.name for field in ExtractionJob._meta.fields]
    actions = ["retry_failed"]

    @admin.action(description="Retry selected failed jobs")
    def retry_failed(self, request, queryset):
        retried, refused = 0, []
        for job in self.editable_queryset(request, queryset):
            try:
                extraction_job_retry(job=job)
                retried += 1
            except ApplicationError as exc:
                refused.append(f"{job.pk}: {exc.message}")
        self.report(request, f"Retried {retried} job(s)." if retried else None, refused)
