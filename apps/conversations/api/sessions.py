from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import serializers as drf_serializers
from rest_framework import status
from rest_framework.response import Response

from apps.conversations import selectors, services
from apps.conversations.serializers.sessions import (
    IngestInput,
    IngestOutput,
    MessageOutput,
    SessionDeleteOutput,
    SessionListQuery,
    SessionOutput,
)
from apps.conversations.services.messages import MESSAGE_TIME_SKEW
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


def ingest_answer(result: services.IngestResult) -> dict:
    """What a message ingest answers (IngestOutput), here and from the MCP tool add_memory with infer."""
    return {
        "accepted": result.accepted,
        "duplicates": result.duplicates,
        "seqs": result.seqs,
        "session": SessionOutput(result.session).data,
        "extraction_job": str(result.extraction_job.pk) if result.extraction_job else None,
    }


class MessageIngestApi(SessionScopedView):
    required_scopes = {"GET": READ, "POST": WRITE}
    body_serializers = {"POST": IngestInput}
    paginators = {"GET": SeqOrder}

    @extend_schema(
        responses={202: IngestOutput},
        summary="Send conversation messages (extraction happens later, in the background)",
        description="Append messages to a session's transcript, creating the session on first use, and answer "
                    "at once (202): durable facts are extracted in the background when the store's trigger is "
                    "due. A message repeated with the same `run_id` and `seq` is stored once, so a retried batch "
                    "is safe. `seqs` gives the session seq of each message sent, in order (a repeat's is the seq "
                    "it was stored with): a flush with `since_seq` one below the first reports on this batch. A "
                    "message's optional `created_at` says when it was sent (default: when it arrives): extraction "
                    "resolves relative dates (\"next Friday\") against it, so an imported old conversation keeps "
                    f"its dates. A time more than {MESSAGE_TIME_SKEW.total_seconds() / 60:g} minutes in the future "
                    "is a 400 naming the message; the times of "
                    "a batch need not be in order (`seq` is the transcript's order). The session's "
                    "`last_activity_at`, which idle extraction waits on, is always the arrival time. A session of "
                    "another user or a terminated one is a 409; a batch over the limit, a 413.",
    )
    def post(self, request, store_name, session_id):
        store = self.get_store()
        items = request.data.get("messages") if isinstance(request.data, dict) else None
        limit = settings.MEMORYHUB_MAX_MESSAGES_PER_BATCH
        if isinstance(items, list) and len(items) > limit:
            raise PayloadTooLargeError(f"{len(items)} messages in one request; the limit is {limit}.",
                                       code="batch_too_large")
        data = self.body()
        result = services.messages_ingest(
            store=store,
            session_external_id=self.new_session_id(),
            user_id=data["user_id"],
            agent_id=data["agent_id"],
            run_id=data["run_id"],
            metadata=data["metadata"],
            messages=[services.MessageInput(**message) for message in data["messages"]],
        )
        return Response(ingest_answer(result), status=status.HTTP_202_ACCEPTED)

    @extend_schema(
        responses=MessageOutput(many=True),
        summary="List a session's messages in order",
        description="The session's transcript in `seq` order, one page at a time: each message with its role, "
                    "its content as sent (text or content blocks), the plain text extracted from it and the "
                    "client's `run_id` and `seq`.",
    )
    def get(self, request, store_name, session_id):
        session = self.get_session()
        return self.paginated_response(selectors.message_list(session=session),
                                       lambda page: MessageOutput(page, many=True).data)


class SessionListApi(StoreScopedView):
    required_scopes = {"GET": READ}
    query_serializers = {"GET": SessionListQuery}
    paginators = {"GET": NewestFirstCursorPagination}

    @extend_schema(
        responses=SessionOutput(many=True),
        summary="List sessions",
        description="The store's sessions, newest first, one page at a time, optionally only those of one user, "
                    "one agent or in one status, each with its message count and extraction progress.",
    )
    def get(self, request, store_name):
        store = self.get_store()
        sessions = selectors.session_list(store=store, **self.query())

        def render(page):
            for session in page:
                session.store = store
            return SessionOutput(page, many=True).data

        return self.paginated_response(sessions, render)


class SessionDetailApi(SessionScopedView):
    required_scopes = {"GET": READ, "DELETE": WRITE}

    @extend_schema(
        responses=SessionOutput,
        summary="Get a session",
        description="One session: its user and agent, status (active, paused or terminated), message count, the "
                    "last message seq and how far extraction has got, and the episode memory written when it "
                    "was terminated.",
    )
    def get(self, request, store_name, session_id):
        return Response(SessionOutput(self.get_session()).data)

    @extend_schema(
        responses=SessionDeleteOutput,
        summary="Delete a session and its messages",
        description="Delete a session for good with its messages, working state, checkpoints, event log and "
                    "extraction jobs. Memories already extracted from it stay. Answers with the number of "
                    "messages deleted.",
    )
    def delete(self, request, store_name, session_id):
        counts = services.session_delete(session=self.get_session())
        return Response({"deleted": True, "session_id": session_id, **counts})
