"""Checkpoints, lifecycle transitions and the session event log."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.response import Response

from apps.conversations import selectors, services
from apps.conversations.api.sessions import SessionScopedView
from apps.conversations.serializers.lifecycle import (
    CheckpointCreateInput,
    CheckpointCreateOutput,
    CheckpointDetailOutput,
    CheckpointOutput,
    CheckpointRestoreInput,
    LifecycleOutput,
    PauseInput,
    ResumeInput,
    SessionEventOutput,
    SpawnInput,
    TerminateInput,
    lifecycle_body,
)
from apps.conversations.serializers.sessions import SessionOutput
from apps.core.api import validated
from apps.core.pagination import NewestFirstCursorPagination, ordered_by
from apps.memories.api import READ, WRITE

EventsInOrder = ordered_by("id")


# --- Checkpoints ------------------------------------------------------------------------------------


class CheckpointListApi(SessionScopedView):
    required_scopes = {"GET": READ, "POST": WRITE}

    @extend_schema(
        parameters=[OpenApiParameter("cursor", str), OpenApiParameter("page_size", int)],
        responses=CheckpointOutput(many=True),
        summary="List the session's checkpoints, newest first (without snapshots)",
    )
    def get(self, request, store_name, session_id):
        session = self.get_session()
        paginator = NewestFirstCursorPagination()
        page = paginator.paginate_queryset(selectors.checkpoint_list(session=session), request, view=self)
        for checkpoint in page:
            checkpoint.session = session
        return paginator.get_paginated_response(CheckpointOutput(page, many=True).data)

    @extend_schema(request=CheckpointCreateInput, responses={201: CheckpointCreateOutput},
                   summary="Snapshot the session's working state")
    def post(self, request, store_name, session_id):
        session = self.get_session()
        data = validated(CheckpointCreateInput, request.data)
        result = services.checkpoint_create(
            session=session, description=data["description"], ttl_seconds=data.get("ttl_seconds"), actor=self.actor
        )
        result.checkpoint.pruned = result.pruned
        return Response(CheckpointCreateOutput(result.checkpoint).data, status=status.HTTP_201_CREATED)


class CheckpointScopedView(SessionScopedView):
    def get_checkpoint(self):
        return selectors.checkpoint_get(session=self.get_session(), checkpoint_id=self.kwargs["checkpoint_id"])


class CheckpointDetailApi(CheckpointScopedView):
    required_scopes = {"GET": READ, "DELETE": WRITE}

    @extend_schema(responses=CheckpointDetailOutput, summary="Get a checkpoint with its snapshot")
    def get(self, request, store_name, session_id, checkpoint_id):
        return Response(CheckpointDetailOutput(self.get_checkpoint()).data)

    @extend_schema(request=None, responses={200: None}, summary="Delete a checkpoint")
    def delete(self, request, store_name, session_id, checkpoint_id):
        services.checkpoint_delete(checkpoint=self.get_checkpoint())
        return Response({"deleted": True, "id": str(checkpoint_id)})


class CheckpointRestoreApi(CheckpointScopedView):
    required_scopes = {"POST": WRITE}

    @extend_schema(request=CheckpointRestoreInput, responses=LifecycleOutput,
                   summary="Replace the session's working state with the checkpoint's (the checkpoint stays)")
    def post(self, request, store_name, session_id, checkpoint_id):
        checkpoint = self.get_checkpoint()
        data = validated(CheckpointRestoreInput, request.data)
        result = services.checkpoint_restore(checkpoint=checkpoint, clear_current=data["clear_current"],
                                             actor=self.actor)
        return Response({"success": True, "event": "restore", "duration_ms": result.duration_ms,
                         "data": {**result.as_data(), "session": SessionOutput(result.session).data}})


# --- Lifecycle --------------------------------------------------------------------------------------


class SessionSpawnApi(SessionScopedView):
    required_scopes = {"POST": WRITE}

    @extend_schema(request=SpawnInput, responses={200: LifecycleOutput, 201: LifecycleOutput},
                   summary="Start a session (201) or reactivate a paused one, with optional initial working state")
    def post(self, request, store_name, session_id):
        store = self.get_store()
        data = validated(SpawnInput, request.data)
        task_state = data["task_state"]
        result = services.session_spawn(
            store=store,
            external_id=self.new_session_id(),
            user_id=data.get("user_id"),
            agent_id=data["agent_id"],
            metadata=data["metadata"],
            working_memory=[services.WorkingMemoryWrite(**item) for item in data["working_memory"]],
            task_state=services.TaskStateInput(**task_state) if task_state is not None else None,
            actor=self.actor,
        )
        code = status.HTTP_201_CREATED if result.data["created"] else status.HTTP_200_OK
        return Response(lifecycle_body(result), status=code)


class SessionPauseApi(SessionScopedView):
    required_scopes = {"POST": WRITE}

    @extend_schema(request=PauseInput, responses=LifecycleOutput,
                   summary="Pause an active session, taking an automatic checkpoint")
    def post(self, request, store_name, session_id):
        session = self.get_session()
        data = validated(PauseInput, request.data)
        result = services.session_pause(session=session, description=data["description"], actor=self.actor)
        return Response(lifecycle_body(result))


class SessionResumeApi(SessionScopedView):
    required_scopes = {"POST": WRITE}

    @extend_schema(request=ResumeInput, responses=LifecycleOutput,
                   summary="Resume a paused session from a checkpoint (the latest unless one is named)")
    def post(self, request, store_name, session_id):
        session = self.get_session()
        data = validated(ResumeInput, request.data)
        result = services.session_resume(
            session=session, checkpoint_id=data["checkpoint_id"], clear_current=data["clear_current"], actor=self.actor
        )
        return Response(lifecycle_body(result))


class SessionTerminateApi(SessionScopedView):
    required_scopes = {"POST": WRITE}

    @extend_schema(request=TerminateInput, responses=LifecycleOutput,
                   summary="End a session: final extraction, an episode memory, status terminated")
    def post(self, request, store_name, session_id):
        session = self.get_session()
        data = validated(TerminateInput, request.data)
        options = services.TerminateOptions(
            outcome=data["outcome"],
            task=data["task"],
            lessons=data["lessons"],
            key_facts=data["key_facts"],
            clear_working_memory=data["clear_working_memory"],
            wait_seconds=data["wait"],
        )
        return Response(lifecycle_body(services.session_terminate(session=session, options=options, actor=self.actor)))


class SessionEventListApi(SessionScopedView):
    required_scopes = {"GET": READ}

    @extend_schema(
        parameters=[OpenApiParameter("cursor", str), OpenApiParameter("page_size", int)],
        responses=SessionEventOutput(many=True),
        summary="The session's event log (spawn, pause, resume, terminate, restore), oldest first",
    )
    def get(self, request, store_name, session_id):
        paginator = EventsInOrder()
        events = selectors.session_event_list(session=self.get_session())
        page = paginator.paginate_queryset(events, request, view=self)
        return paginator.get_paginated_response(SessionEventOutput(page, many=True).data)
