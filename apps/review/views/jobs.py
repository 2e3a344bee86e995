"""Extraction jobs, their retry, and the overview of the stores."""

from django.core.exceptions import PermissionDenied

from apps.extraction.models import ExtractionJob
from apps.extraction.services import extraction_job_retry, extraction_job_retry_problem
from apps.memories.models import Memory
from apps.review.forms import JobFilterForm
from apps.review.selectors import jobs as selectors
from apps.review.selectors.customers import paginate
from apps.review.views.base import ActionView, ConsoleView


def job_rows(access, jobs) -> list[dict]:
    rows = []
    for job in jobs:
        can_retry = access.can_retry_jobs(job.store)
        rows.append({
            "job": job,
            "error": selectors.plain_error(job.error),
            "can_retry": can_retry,
            "retry_problem": (extraction_job_retry_problem(job=job)
                              if can_retry and job.status == ExtractionJob.Status.FAILED else None),
        })
    return rows


class JobsView(ConsoleView):
    template_name = "review/jobs.html"
    nav = "jobs"

    def get(self, request):
        form = JobFilterForm(request.GET)
        form.is_valid()
        store_id = form.cleaned_data.get("store")
        if store_id is not None and store_id not in self.access.store_ids:
            store_id = None
        jobs = selectors.job_list(self.access, status=form.cleaned_data.get("status") or None, store_id=store_id)
        page = paginate(jobs, request.GET.get("page"), selectors.JOBS_PER_PAGE)
        query = request.GET.copy()
        query.pop("page", None)
        return self.render_page({
            "title": "Extraction jobs",
            "filter_form": form,
            "page": page,
            "rows": job_rows(self.access, self.access.attach_stores(page.object_list)),
            "filter_query": query.urlencode(),
        })


class JobRetryView(ActionView):
    def post(self, request, job_id):
        job = selectors.job_for(self.access, job_id)
        if not self.access.can_retry_jobs(job.store):
            raise PermissionDenied("Retrying a job needs the admin role in its tenant.")
        job = extraction_job_retry(job=job)
        return self.done("Queued again.", data={"job": {"id": str(job.pk), "status": job.status}})


class OverviewView(ConsoleView):
    template_name = "review/overview.html"
    nav = "overview"

    def get(self, request):
        return self.render_page({
            "title": "Overview",
            "store_counts": selectors.memory_counts_by_store(self.access),
            "statuses": Memory.Status.choices,
            "job_stats": selectors.job_stats(self.access),
            "failures": job_rows(self.access, selectors.recent_failures(self.access)),
            "window_hours": int(selectors.OVERVIEW_WINDOW.total_seconds() // 3600),
        })
