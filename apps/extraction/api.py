from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from apps.conversations.api.sessions import SessionScopedView
from apps.core.pagination import NewestFirstCursorPagination
from apps.extraction import selectors, services
from apps.extraction.serializers import FlushOutput, FlushQuery, JobListQuery, JobOutput
from apps.tenancy.api_base import ApiView


class JobListApi(ApiView):
    required_scopes = {"GET": "read"}
    query_serializers = {"GET": JobListQuery}
    paginators = {"GET": NewestFirstCursorPagination}

    @extend_schema(
        responses=JobOutput(many=True),
        summary="List extraction jobs",
        description="The extraction jobs of the stores the key may use, newest first, one page at a time, "
                    "optionally of one store, one session or in one status: the message range each covers, its "
                    "attempts, error and how many memories it added, updated or deleted.",
    )
    def get(self, request):
        query = self.query()
        jobs = selectors.job_list(
            api_key=request.auth,
            store_name=query.get("store"),
            session_id=query.get("session_id"),
            status=query.get("status"),
        )
        return self.paginated_response(jobs, lambda page: JobOutput(page, many=True).data)


class JobDetailApi(ApiView):
    required_scopes = {"GET": "read"}

    @extend_schema(
        responses=JobOutput,
        summary="Get an extraction job",
        description="One extraction job: its status (queued, running, succeeded, failed), the message range, "
                    "attempts and last error, timings and the counts of memory changes it made.",
    )
    def get(self, request, job_id):
        return Response(JobOutput(selectors.job_get(api_key=request.auth, job_id=job_id)).data)


class JobRetryApi(ApiView):
    required_scopes = {"POST": "write"}

    @extend_schema(
        responses=JobOutput,
        summary="Retry a failed extraction job",
        description="Queue a failed extraction job again with a fresh set of attempts; it takes no request body. "
                    "A job that has not failed is a 409.",
    )
    def post(self, request, job_id):
        job = services.extraction_job_retry(job=selectors.job_get(api_key=request.auth, job_id=job_id))
        return Response(JobOutput(selectors.job_get(api_key=request.auth, job_id=job.pk)).data)


class SessionFlushApi(SessionScopedView):
    required_scopes = {"POST": "write"}
    throttle_scopes = {"POST": "flushes"}
    query_serializers = {"POST": FlushQuery}

    @extend_schema(
        responses=FlushOutput,
        summary="Extract everything not yet extracted, wait for it, and report what the extraction did",
        description="Schedule the extraction of every message of the session not yet extracted and wait up to "
                    "`wait` seconds for it; it takes no request body. The answer says whether everything is "
                    "extracted (`complete`) and reports on the messages with a seq above `since_seq` (default 0: "
                    "the whole session): every job that covers one of them, whether it ran during this flush or "
                    "earlier, in any status (the newest "
                    f"{selectors.FLUSH_JOB_LIMIT}, oldest first; `more_jobs` says older ones were left out), with "
                    "every memory change those jobs made (`create`, `update`, `supersede` naming the memory that "
                    "replaced the old one, `delete`). A flush after the background extraction already ran "
                    "therefore shows what it did. A 400 names a bad `wait` or `since_seq`. A 409 "
                    "`extractor_not_ready` when the store's extractor cannot run on this server (an llm extractor "
                    "with no model configured): the message says what to configure.",
    )
    def post(self, request, store_name, session_id):
        session = self.get_session()
        query = self.query()
        _, complete = services.extraction_flush_and_wait(session=session, wait_seconds=query["wait"])
        jobs, more_jobs = selectors.session_jobs_covering(session=session, since_seq=query["since_seq"])
        body = {
            "complete": complete,
            "session": session,
            "jobs": jobs,
            "more_jobs": more_jobs,
            "changes": selectors.job_changes(session=session, job_ids=[job.pk for job in jobs]),
        }
        return Response(FlushOutput(body).data)
