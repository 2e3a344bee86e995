"""Checkpoints, lifecycle transitions and the session event log."""

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response

from apps.conversations import selectors, services
from apps.conversations.api.sessions import SessionScopedView
from apps.conversations.serializers.lifecycle import (
    CheckpointCreateInput,
    CheckpointCreateOutput,
    CheckpointDeleteOutput,
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
from apps.core.pagination import NewestFirstCursorPagination, ordered_by
from apps.memories.api import READ, WRITE

EventsInOrder = ordered_by("id")


# --- Checkpoints ------------------------------------------------------------------------------------


def checkpoint_answer(result: services.CheckpointCreateResult) -> dict:
    """What taking a checkpoint answers (CheckpointCreateOutput), here and from the MCP tool checkpoint."""
    result.checkpoint.pruned = result.pruned
    return CheckpointCreateOutput(result.checkpoint).data


class CheckpointListApi(SessionScopedView):
    required_scopes = {"GET": READ, "POST": WRITE}
    body_serializers = {"POST": CheckpointCreateInput}
    paginators = {"GET": NewestFirstCursorPagination}

    @extend_schema(
        responses=CheckpointOutput(many=True),
        summary="List the session's checkpoints, newest first (without snapshots)",
        description="The session's unexpired checkpoints, newest first, one page at a time: manual ones and the "
                    "automatic ones taken by pause, each with what it holds (counts, size) and when it expires, "
                    "without the snapshot itself.",
    )
    def get(self, request, store_name, session_id):
        session = self.get_session()

        def render(page):
            for checkpoint in page:
                checkpoint.session = session
            return CheckpointOutput(page, many=True).data

        return self.paginated_response(selectors.checkpoint_list(session=session), render)

    @extend_schema(
        responses={201: CheckpointCreateOutput},
        summary="Snapshot the session's working state",
        description="Take a manual checkpoint: a snapshot of the working memory, task state, scratchpad and "
                    "message high-water mark, expiring after `ttl_seconds` (default: the store's, 7 days; 0: "
                    "never). At the store's `max_checkpoints` a manual checkpoint is refused with a 409; a "
                    "terminated session's state is read-only (409).",
    )
    def post(self, request, store_name, session_id):
        session = self.get_session()
        data = self.body()
        result = services.checkpoint_create(
            session=session, description=data["description"], ttl_seconds=data.get("ttl_seconds"), actor=self.actor
        )
        return Response(checkpoint_answer(result), status=status.HTTP_201_CREATED)


def restore_answer(result: services.RestoreResult) -> dict:
    """What a restore answers (LifecycleOutput), here and from the MCP tool restore."""
    return {"success": True, "event": "restore", "duration_ms": result.duration_ms,
            "data": {**result.as_data(), "session": SessionOutput(result.session).data}}


class CheckpointScopedView(SessionScopedView):
    def get_checkpoint(self):
        return selectors.checkpoint_get(session=self.get_session(), checkpoint_id=self.kwargs["checkpoint_id"])


class CheckpointDetailApi(CheckpointScopedView):
    required_scopes = {"GET": READ, "DELETE": WRITE}

    @extend_schema(
        responses=CheckpointDetailOutput,
        summary="Get a checkpoint with its snapshot",
        description="One unexpired checkpoint with its snapshot: the working-memory items, the task state and "
                    "the scratchpad entries as they were when it was taken.",
    )
    def get(self, request, store_name, session_id, checkpoint_id):
        return Response(CheckpointDetailOutput(self.get_checkpoint()).data)

    @extend_schema(
        responses=CheckpointDeleteOutput,
        summary="Delete a checkpoint",
        description="Delete one checkpoint. Allowed for terminated sessions too: deleting is how old state is "
                    "cleaned up.",
    )
    def delete(self, request, store_name, session_id, checkpoint_id):
        services.checkpoint_delete(checkpoint=self.get_checkpoint())
        return Response({"deleted": True, "id": str(checkpoint_id)})


class CheckpointRestoreApi(CheckpointScopedView):
    required_scopes = {"POST": WRITE}
    body_serializers = {"POST": CheckpointRestoreInput}

    @extend_schema(
        responses=LifecycleOutput,
        summary="Replace the session's working state with the checkpoint's (the checkpoint stays)",
        description="Restore a checkpoint atomically: by default the working memory, task state and scratchpad "
                    "are replaced by the snapshot's; with `clear_current: false` the snapshot's keys are merged "
                    "into the current ones. The checkpoint stays, and the restore is written to the event log. "
                    "A terminated session's state is read-only (409).",
    )
    def post(self, request, store_name, session_id, checkpoint_id):
        checkpoint = self.get_checkpoint()
        data = self.body()
        result = services.checkpoint_restore(checkpoint=checkpoint, clear_current=data["clear_current"],
                                             actor=self.actor)
        return Response(restore_answer(result))


# --- Lifecycle --------------------------------------------------------------------------------------


class SessionSpawnApi(SessionScopedView):
    required_scopes = {"POST": WRITE}
    body_serializers = {"POST": SpawnInput}

    @extend_schema(
        responses={200: LifecycleOutput, 201: LifecycleOutput},
        summary="Start a session (201) or reactivate a paused one, with optional initial working state",
        description="Create the session (201; `user_id` is then required) or reactivate a paused one (200), "
                    "with optional working-memory items, task state and metadata, all or nothing. Spawning an "
                    "active or terminated session, or one of another user, is a 409.",
    )
    def post(self, request, store_name, session_id):
        store = self.get_store()
        data = self.body()
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
    body_serializers = {"POST": PauseInput}

    @extend_schema(
        responses=LifecycleOutput,
        summary="Pause an active session, taking an automatic checkpoint",
        description="Pause an active session: an automatic checkpoint of its working state is taken (at the "
                    "checkpoint cap the oldest automatic one is replaced) and its id returned. A session that is "
                    "not active is a 409 naming its status.",
    )
    def post(self, request, store_name, session_id):
        session = self.get_session()
        data = self.body()
        result = services.session_pause(session=session, description=data["description"], actor=self.actor)
        return Response(lifecycle_body(result))


class SessionResumeApi(SessionScopedView):
    required_scopes = {"POST": WRITE}
    body_serializers = {"POST": ResumeInput}

    @extend_schema(
        responses=LifecycleOutput,
        summary="Resume a paused session from a checkpoint (the latest unless one is named)",
        description="Make a paused session active again, restoring `checkpoint_id` or else the latest checkpoint "
                    "taken since the pause (if there is none, the working state is left as it is), replacing "
                    "the working state unless `clear_current` is false. A session that is not paused is a 409.",
    )
    def post(self, request, store_name, session_id):
        session = self.get_session()
        data = self.body()
        result = services.session_resume(
            session=session, checkpoint_id=data["checkpoint_id"], clear_current=data["clear_current"], actor=self.actor
        )
        return Response(lifecycle_body(result))


class SessionTerminateApi(SessionScopedView):
    required_scopes = {"POST": WRITE}
    throttle_scopes = {"POST": "flushes"}
    body_serializers = {"POST": TerminateInput}

    @extend_schema(
        responses=LifecycleOutput,
        summary="End a session: final extraction, an episode memory, status terminated",
        description="End an active or paused session: no new messages are accepted, the final extraction runs "
                    "(waiting up to `wait` seconds), one episode memory records the task, its outcome, lessons "
                    "and key facts, and the working state is optionally cleared. A second terminate is a 409 "
                    "naming the episode.",
    )
    def post(self, request, store_name, session_id):
        session = self.get_session()
        data = self.body()
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
    paginators = {"GET": EventsInOrder}

    @extend_schema(
        responses=SessionEventOutput(many=True),
        summary="The session's event log (spawn, pause, resume, terminate, restore), oldest first",
        description="Every lifecycle event of the session, oldest first, one page at a time: the transition "
                    "(from and to status), the checkpoint involved, what it did, how long it took and who did it.",
    )
    def get(self, request, store_name, session_id):
        events = selectors.session_event_list(session=self.get_session())
        return self.paginated_response(events, lambda page: SessionEventOutput(page, many=True).data)
