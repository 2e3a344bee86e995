from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from apps.conversations.api.sessions import SessionScopedView
from apps.core.api import validated
from apps.core.pagination import NewestFirstCursorPagination
from apps.extraction import selectors, services
from apps.extraction.serializers import FlushOutput, FlushQuery, JobListQuery, JobOutput
from apps.tenancy.api_base import ApiView


class JobListApi(ApiView):
    required_scopes = {"GET": "read"}

    @extend_schema(
        parameters=[JobListQuery, OpenApiParameter("cursor", str), OpenApiParameter("page_size", int)],
        responses=JobOutput(many=True),
        summary="List extraction jobs",
    )
    def get(self, request):
        query = validated(JobListQuery, request.query_params)
        jobs = selectors.job_list(
            api_key=request.auth,
            store_name=query.get("store"),
            session_id=query.get("session_id"),
            status=query.get("status"),
        )
        paginator = NewestFirstCursorPagination()
        page = paginator.paginate_queryset(jobs, request, view=self)
        return paginator.get_paginated_response(JobOutput(page, many=True).data)


class JobDetailApi(ApiView):
    required_scopes = {"GET": "read"}

    @extend_schema(responses=JobOutput, summary="Get an extraction job")
    def get(self, request, job_id):
        return Response(JobOutput(selectors.job_get(api_key=request.auth, job_id=job_id)).data)


class JobRetryApi(ApiView):
    required_scopes = {"POST": "write"}

    @extend_schema(request=None, responses=JobOutput, summary="Retry a failed extraction job")
    def post(self, request, job_id):
        job = services.extraction_job_retry(job=selectors.job_get(api_key=request.auth, job_id=job_id))
        return Response(JobOutput(selectors.job_get(api_key=request.auth, job_id=job.pk)).data)


class SessionFlushApi(SessionScopedView):
    required_scopes = {"POST": "write"}

    @extend_schema(
        parameters=[FlushQuery],
        request=None,
        responses=FlushOutput,
        summary="Extract everything not yet extracted and wait for it",
    )
    def post(self, request, store_name, session_id):
        session = self.get_session()
        wait = validated(FlushQuery, request.query_params)["wait"]
        jobs, complete = services.extraction_flush_and_wait(session=session, wait_seconds=wait)
        body = {
            "complete": complete,
            "session": session,
            "jobs": jobs,
            "changes": selectors.job_changes(session=session, job_ids=[job.pk for job in jobs]),
        }
        return Response(FlushOutput(body).data)
