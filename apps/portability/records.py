"""The records of an export, as JSON-ready dicts: one shape for a store's JSON Lines and a user's document.

Times are ISO 8601 UTC (as the API renders them), ids strings; a memory's history and a session's working
state travel inside their record, messages as records of their own (a session may hold thousands).
"""

import json

from apps.core.fields import iso_datetime

FORMAT_VERSION = 1
STORE_EXPORT_FORMAT = "memoryhub-store-export"
USER_EXPORT_FORMAT = "memoryhub-user-export"

# The store settings an export carries and an import recreates a missing store from.
STORE_FIELDS = (
    "name", "description", "embedding_provider", "embedding_model", "embedding_dimension", "review_policy",
    "search_defaults", "max_content_length", "extraction_config", "working_memory_config",
)


def dumps(value) -> str:
    """Compact JSON, non-ASCII text as it is (a file of French memories stays readable)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _id(value) -> str | None:
    return str(value) if value is not None else None


def store_record(store) -> dict:
    return {"id": str(store.pk), **{name: getattr(store, name) for name in STORE_FIELDS},
            "created_at": iso_datetime(store.created_at)}


def revision_record(revision) -> dict:
    return {
        "id": revision.pk,
        "action": revision.action,
        "changed_fields": list(revision.changed_fields),
        "before": revision.before,
        "after": revision.after,
        "actor_type": revision.actor_type,
        "actor_id": revision.actor_id,
        "actor_label": revision.actor_label,
        "reason": revision.reason,
        "context": revision.context,
        "created_at": iso_datetime(revision.created_at),
    }


def memory_record(memory, revisions) -> dict:
    return {
        "type": "memory",
        "id": str(memory.pk),
        "user_id": memory.user_id,
        "agent_id": memory.agent_id,
        "session_id": memory.session_id,
        "content": memory.content,
        "memory_type": memory.memory_type,
        "metadata": memory.metadata,
        "tags": list(memory.tags),
        "importance": memory.importance,
        "confidence": memory.confidence,
        "status": memory.status,
        "source": memory.source,
        "provenance": memory.provenance,
        "valid_from": iso_datetime(memory.valid_from),
        "valid_to": iso_datetime(memory.valid_to),
        "expires_at": iso_datetime(memory.expires_at),
        "superseded_by": _id(memory.superseded_by_id),
        "created_at": iso_datetime(memory.created_at),
        "updated_at": iso_datetime(memory.updated_at),
        "revisions": [revision_record(revision) for revision in revisions],
    }


def working_memory_record(item) -> dict:
    return {"key": item.key, "value": item.value, "version": item.version, "expires_at": iso_datetime(item.expires_at),
            "created_at": iso_datetime(item.created_at), "updated_at": iso_datetime(item.updated_at)}


def task_state_record(task) -> dict | None:
    if task is None:
        return None
    return {
        "description": task.description, "current_step": task.current_step, "total_steps": task.total_steps,
        "progress": task.progress, "status": task.status, "metadata": task.metadata,
        "started_at": iso_datetime(task.started_at), "updated_at": iso_datetime(task.updated_at),
        "finished_at": iso_datetime(task.finished_at),
    }


def scratchpad_record(entry) -> dict:
    return {"seq": entry.seq, "content": entry.content, "metadata": entry.metadata,
            "created_at": iso_datetime(entry.created_at)}


def checkpoint_record(checkpoint) -> dict:
    return {
        "id": str(checkpoint.pk), "description": checkpoint.description, "kind": checkpoint.kind,
        "snapshot": checkpoint.snapshot, "message_seq": checkpoint.message_seq,
        "extracted_seq": checkpoint.extracted_seq, "working_memory_items": checkpoint.working_memory_items,
        "scratchpad_entries": checkpoint.scratchpad_entries, "has_task_state": checkpoint.has_task_state,
        "size_bytes": checkpoint.size_bytes, "expires_at": iso_datetime(checkpoint.expires_at),
        "created_by": checkpoint.created_by, "created_at": iso_datetime(checkpoint.created_at),
    }


def session_event_record(event) -> dict:
    return {
        "event": event.event, "from_status": event.from_status, "to_status": event.to_status,
        "checkpoint_id": _id(event.checkpoint_id), "data": event.data, "duration_ms": event.duration_ms,
        "actor_type": event.actor_type, "actor_id": event.actor_id, "actor_label": event.actor_label,
        "created_at": iso_datetime(event.created_at),
    }


def session_record(session, *, working_memory, task_state, scratchpad, checkpoints, events) -> dict:
    """A session with its working state, checkpoints and lifecycle log (its messages are records of their own)."""
    return {
        "type": "session",
        "id": str(session.pk),
        "session_id": session.external_id,
        "user_id": session.user_id,
        "agent_id": session.agent_id,
        "status": session.status,
        "metadata": session.metadata,
        "message_count": session.message_count,
        "last_seq": session.last_seq,
        "extracted_seq": session.extracted_seq,
        "scratchpad_seq": session.scratchpad_seq,
        "working_memory_version": session.working_memory_version,
        "last_activity_at": iso_datetime(session.last_activity_at),
        "ended_at": iso_datetime(session.ended_at),
        "episode_memory_id": _id(session.episode_memory_id),
        "created_at": iso_datetime(session.created_at),
        "updated_at": iso_datetime(session.updated_at),
        "working_memory": [working_memory_record(item) for item in working_memory],
        "task_state": task_state_record(task_state),
        "scratchpad": [scratchpad_record(entry) for entry in scratchpad],
        "checkpoints": [checkpoint_record(checkpoint) for checkpoint in checkpoints],
        "events": [session_event_record(event) for event in events],
    }


def message_record(message, session_id: str) -> dict:
    return {
        "type": "message",
        "session_id": session_id,
        "seq": message.seq,
        "role": message.role,
        "content": message.content,
        "text": message.text,
        "run_id": message.client_run_id,
        "client_seq": message.client_seq,
        "metadata": message.metadata,
        "created_at": iso_datetime(message.created_at),
    }


def extraction_job_record(job, session_id: str) -> dict:
    return {
        "id": str(job.pk), "session_id": session_id, "from_seq": job.from_seq, "to_seq": job.to_seq,
        "status": job.status, "trigger": job.trigger, "extractor": job.extractor, "attempts": job.attempts,
        "error": job.error, "fallback_reason": job.fallback_reason, "added": job.added, "updated": job.updated,
        "deleted": job.deleted, "unchanged": job.unchanged, "created_at": iso_datetime(job.created_at),
        "started_at": iso_datetime(job.started_at), "finished_at": iso_datetime(job.finished_at),
    }


def webhook_delivery_record(delivery) -> dict:
    """What was sent to whom: a disclosure of the user's data to a receiver outside memoryhub."""
    return {
        "id": str(delivery.pk), "url": delivery.webhook.url, "event_id": delivery.event_id,
        "event_type": delivery.event_type, "status": delivery.status, "attempts": delivery.attempts,
        "payload": delivery.payload, "created_at": iso_datetime(delivery.created_at),
        "delivered_at": iso_datetime(delivery.delivered_at),
    }
