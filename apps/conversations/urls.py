from django.urls import path

from apps.conversations.api import context, lifecycle, sessions, users, working_state

SESSION = "stores/<slug:store_name>/sessions/<identifier:session_id>"

urlpatterns = [
    # identifier_path: user ids may contain "/" (memories accept any user_id), and this is the last segment.
    path("stores/<slug:store_name>/users/<identifier_path:user_id>", users.UserEraseApi.as_view(), name="user-erase"),
    path("stores/<slug:store_name>/sessions", sessions.SessionListApi.as_view(), name="session-list"),
    path("stores/<slug:store_name>/context", context.ContextApi.as_view(), name="context"),
    path(SESSION, sessions.SessionDetailApi.as_view(), name="session-detail"),
    path(f"{SESSION}/messages", sessions.MessageIngestApi.as_view(), name="session-messages"),
    path(f"{SESSION}/working-memory", working_state.WorkingMemoryApi.as_view(), name="working-memory"),
    path(f"{SESSION}/working-memory/<path:key>", working_state.WorkingMemoryKeyApi.as_view(),
         name="working-memory-key"),
    path(f"{SESSION}/task-state", working_state.TaskStateApi.as_view(), name="task-state"),
    path(f"{SESSION}/scratchpad", working_state.ScratchpadApi.as_view(), name="scratchpad"),
    path(f"{SESSION}/checkpoints", lifecycle.CheckpointListApi.as_view(), name="checkpoint-list"),
    path(f"{SESSION}/checkpoints/<uuid:checkpoint_id>", lifecycle.CheckpointDetailApi.as_view(),
         name="checkpoint-detail"),
    path(f"{SESSION}/checkpoints/<uuid:checkpoint_id>/restore", lifecycle.CheckpointRestoreApi.as_view(),
         name="checkpoint-restore"),
    path(f"{SESSION}/spawn", lifecycle.SessionSpawnApi.as_view(), name="session-spawn"),
    path(f"{SESSION}/pause", lifecycle.SessionPauseApi.as_view(), name="session-pause"),
    path(f"{SESSION}/resume", lifecycle.SessionResumeApi.as_view(), name="session-resume"),
    path(f"{SESSION}/terminate", lifecycle.SessionTerminateApi.as_view(), name="session-terminate"),
    path(f"{SESSION}/events", lifecycle.SessionEventListApi.as_view(), name="session-events"),
]
