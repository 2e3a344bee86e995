from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers as drf_serializers
from rest_framework import status
from rest_framework.response import Response

from apps.conversations import selectors, services
from apps.conversations.serializers.sessions import (
    IngestInput,
    IngestOutput,
    MessageOutput,
    SessionListQuery,
    SessionOutput,
)
from apps.core.api import validated
from apps.core.errors import PayloadTooLargeError
from apps.core.pagination import NewestFirstCursorPagination, ordered_by
from apps.memories.api import READ, WRITE, StoreScopedView

SeqOrder = ordered_by("seq")


class SessionScopedView(StoreScopedView):
    def new_session_id(self) -> str:
        """The session id of the URL, for a request that may create the session."""
        session_id = self.kwargs["session_id"]
        if len(session_id) > 255:
            raise drf_serializers.ValidationError({"session_id": ["At most 255 characters."]})
        return session_id

    def get_session(self):
        return selectors.session_get(store=self.get_store(), external_id=self.kwargs["session_id"])


class MessageIngestApi(SessionScopedView):
    required_scopes = {"GET": READ, "POST": WRITE}

    @extend_schema(
        request=IngestInput,
        responses={202: IngestOutput},
        summary="Send conversation messages (extraction happens later, in the background)",
    )
    def post(self, request, store_name, session_id):
        store = self.get_store()
        items = request.data.get("messages") if isinstance(request.data, dict) else None
        limit = settings.MEMORYHUB_MAX_MESSAGES_PER_BATCH
        if isinstance(items, list) and len(items) > limit:
            raise PayloadTooLargeError(f"{len(items)} messages in one request; the limit is {limit}.",
                                       code="batch_too_large")
        data = validated(IngestInput, request.data)
        result = services.messages_ingest(
            store=store,
            session_external_id=self.new_session_id(),
            user_id=data["user_id"],
            agent_id=data["agent_id"],
            run_id=data["run_id"],
            metadata=data["metadata"],
            messages=[services.MessageInput(**message) for message in data["messages"]],
        )
        body = {
            "accepted": result.accepted,
            "duplicates": result.duplicates,
            "session": SessionOutput(result.session).data,
            "extraction_job": str(result.extraction_job.pk) if result.extraction_job else None,
        }
        return Response(body, status=status.HTTP_202_ACCEPTED)

    @extend_schema(
        parameters=[OpenApiParameter("cursor", str), OpenApiParameter("page_size", int)],
        responses=MessageOutput(many=True),
        summary="List a session's messages in order",
    )
    def get(self, request, store_name, session_id):
        session = self.get_session()
        paginator = SeqOrder()
        page = paginator.paginate_queryset(selectors.message_list(session=session), request, view=self)
        return paginator.get_paginated_response(MessageOutput(page, many=True).data)


class SessionListApi(StoreScopedView):
    required_scopes = {"GET": READ}

    @extend_schema(parameters=[SessionListQuery], responses=SessionOutput(many=True), summary="List sessions")
    def get(self, request, store_name):
        store = self.get_store()
        query = validated(SessionListQuery, request.query_params)
        paginator = NewestFirstCursorPagination()
        page = paginator.paginate_queryset(selectors.session_list(store=store, **query), request, view=self)
        for session in page:
            session.store = store
        return paginator.get_paginated_response(SessionOutput(page, many=True).data)


class SessionDetailApi(SessionScopedView):
    required_scopes = {"GET": READ, "DELETE": WRITE}

    @extend_schema(responses=SessionOutput, summary="Get a session")
    def get(self, request, store_name, session_id):
        return Response(SessionOutput(self.get_session()).data)

    @extend_schema(responses={200: None}, summary="Delete a session and its messages")
    def delete(self, request, store_name, session_id):
        counts = services.session_delete(session=self.get_session())
        return Response({"deleted": True, "session_id": session_id, **counts})
