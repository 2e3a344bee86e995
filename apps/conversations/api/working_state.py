"""Working memory, task state and scratchpad of a session."""

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response

from apps.conversations import selectors, services
from apps.conversations.api.sessions import SeqOrder, SessionScopedView
from apps.conversations.serializers.working_state import (
    ScratchpadAppendInput,
    ScratchpadAppendOutput,
    ScratchpadClearOutput,
    ScratchpadEntryOutput,
    TaskStateDeleteOutput,
    TaskStateOutput,
    TaskStatePatchInput,
    TaskStatePutInput,
    WorkingMemoryClearOutput,
    WorkingMemoryDeleteOutput,
    WorkingMemoryItemOutput,
    WorkingMemoryListQuery,
    WorkingMemoryPutInput,
)
from apps.core.pagination import ordered_by
from apps.memories.api import READ, WRITE

KeysInOrder = ordered_by("key")

READ_ONLY_WHEN_TERMINATED = "A terminated session's working state is read-only (409)."


class WorkingMemoryApi(SessionScopedView):
    required_scopes = {"GET": READ, "DELETE": WRITE}
    query_serializers = {"GET": WorkingMemoryListQuery}
    paginators = {"GET": KeysInOrder}

    @extend_schema(
        responses=WorkingMemoryItemOutput(many=True),
        summary="List the session's working-memory keys (expired ones are not shown)",
        description="The session's live working-memory items in key order, one page at a time, optionally only "
                    "the keys that start with `prefix`; each with its value, version stamp and expiry.",
    )
    def get(self, request, store_name, session_id):
        items = selectors.working_memory_list(session=self.get_session(), prefix=self.query().get("prefix"))
        return self.paginated_response(items, lambda page: WorkingMemoryItemOutput(page, many=True).data)

    @extend_schema(
        responses=WorkingMemoryClearOutput,
        operation_id="stores_sessions_working_memory_clear",
        summary="Delete every working-memory key of the session",
        description=f"Delete every working-memory key of the session and answer with how many live keys there "
                    f"were. The task state and the scratchpad stay. {READ_ONLY_WHEN_TERMINATED}",
    )
    def delete(self, request, store_name, session_id):
        deleted = services.working_memory_clear(session=self.get_session())
        return Response({"deleted": deleted})


class WorkingMemoryKeyApi(SessionScopedView):
    required_scopes = {"GET": READ, "PUT": WRITE, "DELETE": WRITE}
    body_serializers = {"PUT": WorkingMemoryPutInput}

    @extend_schema(
        responses=WorkingMemoryItemOutput,
        summary="Read one working-memory key",
        description="One working-memory item: its JSON value, its version stamp (for a compare-and-set write) "
                    "and its expiry. A missing or expired key is a 404.",
    )
    def get(self, request, store_name, session_id, key):
        item = selectors.working_memory_get(session=self.get_session(), key=key)
        return Response(WorkingMemoryItemOutput(item).data)

    @extend_schema(
        responses={200: WorkingMemoryItemOutput, 201: WorkingMemoryItemOutput},
        summary="Set a working-memory key (201 when new), optionally with a TTL or a compare-and-set version",
        description="Create (201) or replace (200) one key with any JSON value, optionally expiring after "
                    "`ttl_seconds`. With `if_version` the write happens only if the key is at that version (0: "
                    "it must not exist), else a 409. A full working memory is a 409, a value over the store's "
                    f"size limit a 413. {READ_ONLY_WHEN_TERMINATED}",
    )
    def put(self, request, store_name, session_id, key):
        session = self.get_session()
        data = self.body()
        item, created = services.working_memory_put(
            session=session, key=key, value=data["value"], ttl_seconds=data.get("ttl_seconds"),
            if_version=data.get("if_version"),
        )
        return Response(
            WorkingMemoryItemOutput(item).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
        )

    @extend_schema(
        responses=WorkingMemoryDeleteOutput,
        summary="Delete one working-memory key",
        description=f"Delete one working-memory key; a missing or expired key is a 404. {READ_ONLY_WHEN_TERMINATED}",
    )
    def delete(self, request, store_name, session_id, key):
        services.working_memory_delete(session=self.get_session(), key=key)
        return Response({"deleted": True, "key": key})


class TaskStateApi(SessionScopedView):
    required_scopes = {"GET": READ, "PUT": WRITE, "PATCH": WRITE, "DELETE": WRITE}
    body_serializers = {"PUT": TaskStatePutInput, "PATCH": TaskStatePatchInput}

    @extend_schema(
        responses=TaskStateOutput,
        summary="Read the session's task state",
        description="What the agent is working on in this session: description, current and total steps, "
                    "progress (0–100), status and metadata. A session without a task state is a 404.",
    )
    def get(self, request, store_name, session_id):
        return Response(TaskStateOutput(selectors.task_state_get(session=self.get_session())).data)

    @extend_schema(
        responses=TaskStateOutput,
        summary="Set the session's task state",
        description="Replace the session's task state with the one given (fields left out take their defaults); "
                    "progress is clamped to 0–100 and, when absent, derived from the steps. "
                    f"{READ_ONLY_WHEN_TERMINATED}",
    )
    def put(self, request, store_name, session_id):
        session = self.get_session()
        task = services.task_state_put(session=session, data=services.TaskStateInput(**self.body()))
        return Response(TaskStateOutput(task).data)

    @extend_schema(
        responses=TaskStateOutput,
        summary="Update part of the task state (progress, current step, status...)",
        description="Change only the fields given, typically the current step, progress or status; a session "
                    f"without a task state is a 404 (PUT one first). {READ_ONLY_WHEN_TERMINATED}",
    )
    def patch(self, request, store_name, session_id):
        session = self.get_session()
        task = services.task_state_patch(session=session, changes=dict(self.body()))
        return Response(TaskStateOutput(task).data)

    @extend_schema(
        responses=TaskStateDeleteOutput,
        summary="Delete the session's task state",
        description=f"Remove the session's task state; a session without one is a 404. {READ_ONLY_WHEN_TERMINATED}",
    )
    def delete(self, request, store_name, session_id):
        services.task_state_delete(session=self.get_session())
        return Response({"deleted": True})


class ScratchpadApi(SessionScopedView):
    required_scopes = {"GET": READ, "POST": WRITE, "DELETE": WRITE}
    body_serializers = {"POST": ScratchpadAppendInput}
    paginators = {"GET": SeqOrder}

    @extend_schema(
        responses=ScratchpadEntryOutput(many=True),
        summary="List scratchpad entries, oldest first",
        description="The agent's reasoning notes for this session, oldest first, one page at a time, each with "
                    "its number, text and metadata.",
    )
    def get(self, request, store_name, session_id):
        entries = selectors.scratchpad_list(session=self.get_session())
        return self.paginated_response(entries, lambda page: ScratchpadEntryOutput(page, many=True).data)

    @extend_schema(
        responses={201: ScratchpadAppendOutput},
        summary="Append a reasoning entry (the oldest are dropped beyond the limit)",
        description="Add a note to the session's scratchpad. Beyond the store's `scratchpad_max_entries` the "
                    "oldest notes are dropped, and the answer says how many; an entry longer than the server's "
                    f"limit is a 413. {READ_ONLY_WHEN_TERMINATED}",
    )
    def post(self, request, store_name, session_id):
        session = self.get_session()
        data = self.body()
        result = services.scratchpad_append(session=session, content=data["content"], metadata=data["metadata"])
        return Response(ScratchpadAppendOutput(result).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        responses=ScratchpadClearOutput,
        summary="Delete every scratchpad entry",
        description=f"Delete every note of the session's scratchpad and answer with how many there were. "
                    f"{READ_ONLY_WHEN_TERMINATED}",
    )
    def delete(self, request, store_name, session_id):
        return Response({"deleted": services.scratchpad_clear(session=self.get_session())})
