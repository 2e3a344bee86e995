"""Working memory, task state and scratchpad of a session."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.response import Response

from apps.conversations import selectors, services
from apps.conversations.api.sessions import SeqOrder, SessionScopedView
from apps.conversations.serializers.working_state import (
    ScratchpadAppendInput,
    ScratchpadAppendOutput,
    ScratchpadEntryOutput,
    TaskStateOutput,
    TaskStatePatchInput,
    TaskStatePutInput,
    WorkingMemoryItemOutput,
    WorkingMemoryListQuery,
    WorkingMemoryPutInput,
)
from apps.core.api import validated
from apps.core.pagination import ordered_by
from apps.memories.api import READ, WRITE

KeysInOrder = ordered_by("key")


class WorkingMemoryApi(SessionScopedView):
    required_scopes = {"GET": READ, "DELETE": WRITE}

    @extend_schema(
        parameters=[WorkingMemoryListQuery, OpenApiParameter("cursor", str), OpenApiParameter("page_size", int)],
        responses=WorkingMemoryItemOutput(many=True),
        summary="List the session's working-memory keys (expired ones are not shown)",
    )
    def get(self, request, store_name, session_id):
        query = validated(WorkingMemoryListQuery, request.query_params)
        items = selectors.working_memory_list(session=self.get_session(), prefix=query.get("prefix"))
        paginator = KeysInOrder()
        page = paginator.paginate_queryset(items, request, view=self)
        return paginator.get_paginated_response(WorkingMemoryItemOutput(page, many=True).data)

    @extend_schema(request=None, responses={200: None}, operation_id="stores_sessions_working_memory_clear",
                   summary="Delete every working-memory key of the session")
    def delete(self, request, store_name, session_id):
        deleted = services.working_memory_clear(session=self.get_session())
        return Response({"deleted": deleted})


class WorkingMemoryKeyApi(SessionScopedView):
    required_scopes = {"GET": READ, "PUT": WRITE, "DELETE": WRITE}

    @extend_schema(responses=WorkingMemoryItemOutput, summary="Read one working-memory key")
    def get(self, request, store_name, session_id, key):
        item = selectors.working_memory_get(session=self.get_session(), key=key)
        return Response(WorkingMemoryItemOutput(item).data)

    @extend_schema(
        request=WorkingMemoryPutInput,
        responses={200: WorkingMemoryItemOutput, 201: WorkingMemoryItemOutput},
        summary="Set a working-memory key (201 when new), optionally with a TTL or a compare-and-set version",
    )
    def put(self, request, store_name, session_id, key):
        session = self.get_session()
        data = validated(WorkingMemoryPutInput, request.data)
        item, created = services.working_memory_put(
            session=session, key=key, value=data["value"], ttl_seconds=data.get("ttl_seconds"),
            if_version=data.get("if_version"),
        )
        return Response(
            WorkingMemoryItemOutput(item).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
        )

    @extend_schema(request=None, responses={200: None}, summary="Delete one working-memory key")
    def delete(self, request, store_name, session_id, key):
        services.working_memory_delete(session=self.get_session(), key=key)
        return Response({"deleted": True, "key": key})


class TaskStateApi(SessionScopedView):
    required_scopes = {"GET": READ, "PUT": WRITE, "PATCH": WRITE, "DELETE": WRITE}

    @extend_schema(responses=TaskStateOutput, summary="Read the session's task state")
    def get(self, request, store_name, session_id):
        return Response(TaskStateOutput(selectors.task_state_get(session=self.get_session())).data)

    @extend_schema(request=TaskStatePutInput, responses=TaskStateOutput, summary="Set the session's task state")
    def put(self, request, store_name, session_id):
        session = self.get_session()
        data = validated(TaskStatePutInput, request.data)
        task = services.task_state_put(session=session, data=services.TaskStateInput(**data))
        return Response(TaskStateOutput(task).data)

    @extend_schema(request=TaskStatePatchInput, responses=TaskStateOutput,
                   summary="Update part of the task state (progress, current step, status...)")
    def patch(self, request, store_name, session_id):
        session = self.get_session()
        changes = validated(TaskStatePatchInput, request.data)
        return Response(TaskStateOutput(services.task_state_patch(session=session, changes=dict(changes))).data)

    @extend_schema(request=None, responses={200: None}, summary="Delete the session's task state")
    def delete(self, request, store_name, session_id):
        services.task_state_delete(session=self.get_session())
        return Response({"deleted": True})


class ScratchpadApi(SessionScopedView):
    required_scopes = {"GET": READ, "POST": WRITE, "DELETE": WRITE}

    @extend_schema(
        parameters=[OpenApiParameter("cursor", str), OpenApiParameter("page_size", int)],
        responses=ScratchpadEntryOutput(many=True),
        summary="List scratchpad entries, oldest first",
    )
    def get(self, request, store_name, session_id):
        paginator = SeqOrder()
        page = paginator.paginate_queryset(selectors.scratchpad_list(session=self.get_session()), request, view=self)
        return paginator.get_paginated_response(ScratchpadEntryOutput(page, many=True).data)

    @extend_schema(request=ScratchpadAppendInput, responses={201: ScratchpadAppendOutput},
                   summary="Append a reasoning entry (the oldest are dropped beyond the limit)")
    def post(self, request, store_name, session_id):
        session = self.get_session()
        data = validated(ScratchpadAppendInput, request.data)
        result = services.scratchpad_append(session=session, content=data["content"], metadata=data["metadata"])
        return Response(ScratchpadAppendOutput(result).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={200: None}, summary="Delete every scratchpad entry")
    def delete(self, request, store_name, session_id):
        return Response({"deleted": services.scratchpad_clear(session=self.get_session())})
