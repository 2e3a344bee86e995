"""Writes of the conversations app: message ingest, working state, checkpoints and the lifecycle."""

from apps.conversations.services.checkpoints import (
    CheckpointCreateResult,
    RestoreResult,
    checkpoint_create,
    checkpoint_delete,
    checkpoint_purge_expired,
    checkpoint_restore,
)
from apps.conversations.services.erase import user_erase
from apps.conversations.services.lifecycle import (
    LifecycleResult,
    TerminateOptions,
    session_pause,
    session_resume,
    session_spawn,
    session_terminate,
)
from apps.conversations.services.messages import IngestResult, MessageInput, messages_ingest, session_delete
from apps.conversations.services.working_state import (
    ScratchpadAppendResult,
    TaskStateInput,
    WorkingMemoryWrite,
    scratchpad_append,
    scratchpad_clear,
    task_state_delete,
    task_state_patch,
    task_state_put,
    working_memory_clear,
    working_memory_delete,
    working_memory_purge_expired,
    working_memory_put,
)

__all__ = [
    "CheckpointCreateResult",
    "IngestResult",
    "LifecycleResult",
    "MessageInput",
    "RestoreResult",
    "ScratchpadAppendResult",
    "TaskStateInput",
    "TerminateOptions",
    "WorkingMemoryWrite",
    "checkpoint_create",
    "checkpoint_delete",
    "checkpoint_purge_expired",
    "checkpoint_restore",
    "messages_ingest",
    "scratchpad_append",
    "scratchpad_clear",
    "session_delete",
    "session_pause",
    "session_resume",
    "session_spawn",
    "session_terminate",
    "task_state_delete",
    "task_state_patch",
    "task_state_put",
    "user_erase",
    "working_memory_clear",
    "working_memory_delete",
    "working_memory_purge_expired",
    "working_memory_put",
]
