"""Every API operation as a `Call`: method, path, body, retry rule and the parser of the answer.

The sync and async clients both build their requests here, so the two cannot drift apart.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

from memoryhub_client._transport import Call, path
from memoryhub_client.models import (
    ApiKeyInfo,
    Checkpoint,
    ContextResult,
    FlushResult,
    IngestResult,
    Job,
    LifecycleResult,
    Memory,
    MemoryWriteResult,
    Message,
    Page,
    Revision,
    ScratchpadAppendResult,
    ScratchpadEntry,
    SearchHit,
    Session,
    SessionEvent,
    Store,
    TaskState,
    Webhook,
    WebhookDelivery,
    WorkingMemoryItem,
)

# The server's default wait of terminate (TERMINATE_EXTRACTION_WAIT_SECONDS) is 30 s and a request may ask
# for up to 60: when the caller does not say, leave room for the longest.
MAX_SERVER_WAIT_SECONDS = 60.0


def compact(**values: Any) -> dict[str, Any]:
    """The values that were given (not None): the server applies its own defaults to the rest."""
    return {name: value for name, value in values.items() if value is not None}


def _results(parser):
    return lambda body: [parser(item) for item in body["results"]]


def _page(parser):
    return lambda body: Page.from_json(body, parser)


def _as_dict(body: Any) -> dict:
    return body if isinstance(body, dict) else {}


def _store(store: str, *rest: Any) -> str:
    return path("stores", store, *rest)


def _session(store: str, session_id: str, *rest: Any) -> str:
    return path("stores", store, "sessions", session_id, *rest)


def _list_params(cursor: str | None, page_size: int | None, filters: Mapping[str, Any]) -> dict[str, Any]:
    params = dict(filters)
    metadata = params.pop("metadata", None) or {}
    for key, value in metadata.items():
        params[f"metadata.{key}"] = value
    return {**params, **compact(cursor=cursor, page_size=page_size)}


# --- Stores -----------------------------------------------------------------------------------------


def key_info() -> Call[ApiKeyInfo]:
    return Call("GET", "key", ApiKeyInfo.from_json)


def store_list() -> Call[list[Store]]:
    return Call("GET", "stores", _results(Store.from_json))


def store_get(name: str) -> Call[Store]:
    return Call("GET", _store(name), Store.from_json)


def store_create(name: str, fields: Mapping[str, Any], idempotency_key: str | None) -> Call[Store]:
    return Call("POST", "stores", Store.from_json, body={"name": name, **fields}, idempotency_key=idempotency_key)


def store_update(name: str, changes: Mapping[str, Any], idempotency_key: str | None) -> Call[Store]:
    return Call("PATCH", _store(name), Store.from_json, body=dict(changes), idempotency_key=idempotency_key)


def store_delete(name: str) -> Call[dict]:
    return Call("DELETE", _store(name), _as_dict)


# --- Memories ---------------------------------------------------------------------------------------


def memory_add(store: str, item: Mapping[str, Any]) -> Call[MemoryWriteResult]:
    # Safe to repeat: the server answers known content of the user with the existing memory.
    return Call("POST", _store(store, "memories"), MemoryWriteResult.from_json, body=dict(item), retry=True)


def memory_item(
    *,
    user_id: str,
    content: str,
    memory_type: str = "fact",
    metadata: Mapping[str, Any] | None = None,
    tags: Iterable[str] | None = None,
    agent_id: str | None = None,
    session_id: str | None = None,
    importance: float | None = None,
    confidence: float | None = None,
    expires_at: Any = None,
    **fields: Any,
) -> dict[str, Any]:
    return {
        "user_id": user_id,
        "content": content,
        "memory_type": memory_type,
        **compact(
            metadata=dict(metadata) if metadata is not None else None,
            tags=list(tags) if tags is not None else None,
            agent_id=agent_id,
            session_id=session_id,
            importance=importance,
            confidence=confidence,
            expires_at=expires_at,
        ),
        **fields,
    }


def memory_bulk_add(store: str, items: Iterable[Mapping[str, Any]]) -> Call[list[MemoryWriteResult]]:
    body = {"memories": [dict(item) for item in items]}
    return Call("POST", _store(store, "memories", "bulk"), _results(MemoryWriteResult.from_json), body=body,
                retry=True)


def memory_list(store: str, cursor: str | None, page_size: int | None, filters: Mapping[str, Any]) -> Call[Page[Memory]]:
    return Call("GET", _store(store, "memories"), _page(Memory.from_json),
                params=_list_params(cursor, page_size, filters))


def memory_get(store: str, memory_id: Any) -> Call[Memory]:
    return Call("GET", _store(store, "memories", memory_id), Memory.from_json)


def memory_update(store: str, memory_id: Any, reason: str | None, changes: Mapping[str, Any],
                  idempotency_key: str | None) -> Call[Memory]:
    body = {**changes, **compact(reason=reason)}
    return Call("PATCH", _store(store, "memories", memory_id), Memory.from_json, body=body,
                idempotency_key=idempotency_key)


def memory_delete(store: str, memory_id: Any, hard: bool, reason: str | None) -> Call[dict]:
    params = {"hard": True} if hard else compact(reason=reason)
    return Call("DELETE", _store(store, "memories", memory_id), _as_dict, params=params)


def memory_history(store: str, memory_id: Any) -> Call[list[Revision]]:
    return Call("GET", _store(store, "memories", memory_id, "history"), _results(Revision.from_json))


def search(
    store: str,
    query: str,
    *,
    user_id: str | None,
    agent_id: str | None,
    session_id: str | None,
    limit: int | None,
    mode: str | None,
    min_score: float | None,
    memory_types: Iterable[str] | None,
    metadata: Mapping[str, Any] | None,
    tags: Iterable[str] | None,
    include_pending: bool,
    include_superseded: bool = False,
    valid_at: Any = None,
    created_after: Any = None,
    created_before: Any = None,
    explain: bool = False,
) -> Call[list[SearchHit]]:
    body = {
        "query": query,
        **compact(
            user_id=user_id,
            agent_id=agent_id,
            session_id=session_id,
            limit=limit,
            mode=mode,
            min_score=min_score,
            memory_types=list(memory_types) if memory_types is not None else None,
            metadata=dict(metadata) if metadata is not None else None,
            tags=list(tags) if tags is not None else None,
            valid_at=valid_at,
            created_after=created_after,
            created_before=created_before,
        ),
    }
    for flag, value in (("include_pending", include_pending), ("include_superseded", include_superseded),
                        ("explain", explain)):
        if value:
            body[flag] = True
    return Call("POST", _store(store, "search"), _results(SearchHit.from_json), body=body, retry=True)


def user_erase(store: str, user_id: str) -> Call[dict]:
    # Safe to repeat as it is (a second erase finds nothing), and the server keeps no response naming the
    # user, so it takes no Idempotency-Key.
    return Call("DELETE", _store(store, "users", user_id), _as_dict, retry=True)


def user_export(store: str, user_id: str) -> Call[dict]:
    return Call("GET", _store(store, "user-export", user_id), _as_dict)


# --- Sessions and messages --------------------------------------------------------------------------


def session_list(store: str, cursor: str | None, page_size: int | None,
                 filters: Mapping[str, Any]) -> Call[Page[Session]]:
    return Call("GET", _store(store, "sessions"), _page(Session.from_json),
                params=_list_params(cursor, page_size, filters))


def session_get(store: str, session_id: str) -> Call[Session]:
    return Call("GET", _session(store, session_id), Session.from_json)


def session_delete(store: str, session_id: str) -> Call[dict]:
    return Call("DELETE", _session(store, session_id), _as_dict)


def messages_add(store: str, session_id: str, *, user_id: str, messages: list[dict], run_id: str, agent_id: str,
                 metadata: Mapping[str, Any] | None) -> Call[IngestResult]:
    body = {
        "user_id": user_id,
        "agent_id": agent_id,
        "run_id": run_id,
        "messages": messages,
        **compact(metadata=dict(metadata) if metadata is not None else None),
    }
    # With a run_id every message carries a seq, and the server stores a repeated (run_id, seq) once.
    return Call("POST", _session(store, session_id, "messages"), IngestResult.from_json, body=body,
                retry=bool(run_id))


class RunSequences:
    """The seqs a client fills in for messages sent with a run_id but without a seq.

    Counted per (store, session, run_id) from 0, continuing after any seq given explicitly, so successive
    batches of one run never reuse a number (a reused (run_id, seq) would be dropped as a repeat). To retry a
    batch yourself, from another client or process, give every message its seq.
    """

    MAX_RUNS = 10_000  # remembered runs; the oldest are forgotten (a long-lived client sees many runs)

    def __init__(self) -> None:
        self._next: dict[tuple[str, str, str], int] = {}
        self._lock = threading.Lock()

    def fill(self, store: str, session_id: str, run_id: str, messages: Iterable[Mapping[str, Any]]) -> list[dict]:
        filled = [dict(message) for message in messages]
        if not run_id:
            return filled
        key = (store, session_id, run_id)
        with self._lock:
            next_seq = self._next.get(key, 0)
            for message in filled:
                if message.get("seq") is None:
                    message["seq"] = next_seq
                if isinstance(message["seq"], int):
                    next_seq = max(next_seq, message["seq"] + 1)
            self._next.pop(key, None)
            self._next[key] = next_seq  # (re)inserted last: dicts keep insertion order
            while len(self._next) > self.MAX_RUNS:
                del self._next[next(iter(self._next))]
        return filled


def messages_list(store: str, session_id: str, cursor: str | None, page_size: int | None) -> Call[Page[Message]]:
    return Call("GET", _session(store, session_id, "messages"), _page(Message.from_json),
                params=compact(cursor=cursor, page_size=page_size))


def session_flush(store: str, session_id: str, wait: float, since_seq: int | None = None) -> Call[FlushResult]:
    # Repeating a flush is harmless: a session has at most one open extraction job.
    return Call("POST", _session(store, session_id, "flush"), FlushResult.from_json,
                params=compact(wait=wait, since_seq=since_seq), retry=True, extra_timeout=float(wait))


def session_events(store: str, session_id: str, cursor: str | None) -> Call[Page[SessionEvent]]:
    return Call("GET", _session(store, session_id, "events"), _page(SessionEvent.from_json),
                params=compact(cursor=cursor))


# --- Jobs -------------------------------------------------------------------------------------------


def job_list(cursor: str | None, page_size: int | None, filters: Mapping[str, Any]) -> Call[Page[Job]]:
    return Call("GET", "jobs", _page(Job.from_json), params=_list_params(cursor, page_size, filters))


def job_get(job_id: Any) -> Call[Job]:
    return Call("GET", path("jobs", job_id), Job.from_json)


def job_retry(job_id: Any, idempotency_key: str | None) -> Call[Job]:
    return Call("POST", path("jobs", job_id, "retry"), Job.from_json, idempotency_key=idempotency_key)


# --- Webhooks ---------------------------------------------------------------------------------------


def _webhook(store: str, webhook_id: Any, *rest: Any) -> str:
    return path("stores", store, "webhooks", webhook_id, *rest)


def webhook_list(store: str) -> Call[list[Webhook]]:
    return Call("GET", _store(store, "webhooks"), _results(Webhook.from_json))


def webhook_get(store: str, webhook_id: Any) -> Call[Webhook]:
    return Call("GET", _webhook(store, webhook_id), Webhook.from_json)


def webhook_create(store: str, url: str, event_types: Iterable[str] | None, description: str,
                   idempotency_key: str | None) -> Call[Webhook]:
    body = {"url": url, "description": description,
            **compact(event_types=list(event_types) if event_types is not None else None)}
    return Call("POST", _store(store, "webhooks"), Webhook.from_json, body=body, idempotency_key=idempotency_key)


def webhook_update(store: str, webhook_id: Any, changes: Mapping[str, Any],
                   idempotency_key: str | None) -> Call[Webhook]:
    return Call("PATCH", _webhook(store, webhook_id), Webhook.from_json, body=dict(changes),
                idempotency_key=idempotency_key)


def webhook_delete(store: str, webhook_id: Any) -> Call[dict]:
    return Call("DELETE", _webhook(store, webhook_id), _as_dict)


def webhook_rotate_secret(store: str, webhook_id: Any, idempotency_key: str | None) -> Call[Webhook]:
    # Not safe to repeat by nature (each rotation mints a secret): the Idempotency-Key, given or minted, makes
    # a retry answer with the secret of the first attempt instead of replacing it with a third.
    return Call("POST", _webhook(store, webhook_id, "rotate-secret"), Webhook.from_json,
                idempotency_key=idempotency_key)


def webhook_send_test(store: str, webhook_id: Any, idempotency_key: str | None) -> Call[WebhookDelivery]:
    return Call("POST", _webhook(store, webhook_id, "test"), WebhookDelivery.from_json,
                idempotency_key=idempotency_key)


def webhook_delivery_list(store: str, webhook_id: Any, status: str | None, cursor: str | None,
                          page_size: int | None) -> Call[Page[WebhookDelivery]]:
    return Call("GET", _webhook(store, webhook_id, "deliveries"), _page(WebhookDelivery.from_json),
                params=compact(status=status, cursor=cursor, page_size=page_size))


def webhook_delivery_retry(store: str, webhook_id: Any, delivery_id: Any,
                           idempotency_key: str | None) -> Call[WebhookDelivery]:
    return Call("POST", _webhook(store, webhook_id, "deliveries", delivery_id, "retry"), WebhookDelivery.from_json,
                idempotency_key=idempotency_key)


# --- Working memory, task state, scratchpad ---------------------------------------------------------


def working_memory_list(store: str, session_id: str, prefix: str | None,
                        cursor: str | None) -> Call[Page[WorkingMemoryItem]]:
    return Call("GET", _session(store, session_id, "working-memory"), _page(WorkingMemoryItem.from_json),
                params=compact(prefix=prefix, cursor=cursor))


def working_memory_get(store: str, session_id: str, key: str) -> Call[WorkingMemoryItem]:
    return Call("GET", _session(store, session_id, "working-memory", key), WorkingMemoryItem.from_json)


def working_memory_put(store: str, session_id: str, key: str, value: Any, ttl_seconds: int | None,
                       if_version: int | None) -> Call[WorkingMemoryItem]:
    body = {"value": value, **compact(ttl_seconds=ttl_seconds, if_version=if_version)}
    return Call("PUT", _session(store, session_id, "working-memory", key), WorkingMemoryItem.from_json, body=body)


def working_memory_delete(store: str, session_id: str, key: str) -> Call[dict]:
    return Call("DELETE", _session(store, session_id, "working-memory", key), _as_dict)


def working_memory_clear(store: str, session_id: str) -> Call[int]:
    return Call("DELETE", _session(store, session_id, "working-memory"), lambda body: int(body["deleted"]))


def task_state_get(store: str, session_id: str) -> Call[TaskState]:
    return Call("GET", _session(store, session_id, "task-state"), TaskState.from_json)


def task_state_put(store: str, session_id: str, fields: Mapping[str, Any]) -> Call[TaskState]:
    return Call("PUT", _session(store, session_id, "task-state"), TaskState.from_json, body=dict(fields))


def task_state_patch(store: str, session_id: str, changes: Mapping[str, Any],
                     idempotency_key: str | None) -> Call[TaskState]:
    return Call("PATCH", _session(store, session_id, "task-state"), TaskState.from_json, body=dict(changes),
                idempotency_key=idempotency_key)


def task_state_delete(store: str, session_id: str) -> Call[dict]:
    return Call("DELETE", _session(store, session_id, "task-state"), _as_dict)


def scratchpad_list(store: str, session_id: str, cursor: str | None) -> Call[Page[ScratchpadEntry]]:
    return Call("GET", _session(store, session_id, "scratchpad"), _page(ScratchpadEntry.from_json),
                params=compact(cursor=cursor))


def scratchpad_append(store: str, session_id: str, content: str, metadata: Mapping[str, Any] | None,
                      idempotency_key: str | None) -> Call[ScratchpadAppendResult]:
    body = {"content": content, **compact(metadata=dict(metadata) if metadata is not None else None)}
    return Call("POST", _session(store, session_id, "scratchpad"), ScratchpadAppendResult.from_json, body=body,
                idempotency_key=idempotency_key)


def scratchpad_clear(store: str, session_id: str) -> Call[int]:
    return Call("DELETE", _session(store, session_id, "scratchpad"), lambda body: int(body["deleted"]))


# --- Checkpoints and lifecycle ----------------------------------------------------------------------


def checkpoint_create(store: str, session_id: str, description: str, ttl_seconds: int | None,
                      idempotency_key: str | None) -> Call[Checkpoint]:
    body = {"description": description, **compact(ttl_seconds=ttl_seconds)}
    return Call("POST", _session(store, session_id, "checkpoints"), Checkpoint.from_json, body=body,
                idempotency_key=idempotency_key)


def checkpoint_list(store: str, session_id: str, cursor: str | None) -> Call[Page[Checkpoint]]:
    return Call("GET", _session(store, session_id, "checkpoints"), _page(Checkpoint.from_json),
                params=compact(cursor=cursor))


def checkpoint_get(store: str, session_id: str, checkpoint_id: Any) -> Call[Checkpoint]:
    return Call("GET", _session(store, session_id, "checkpoints", checkpoint_id), Checkpoint.from_json)


def checkpoint_restore(store: str, session_id: str, checkpoint_id: Any, clear_current: bool,
                       idempotency_key: str | None) -> Call[LifecycleResult]:
    return Call("POST", _session(store, session_id, "checkpoints", checkpoint_id, "restore"),
                LifecycleResult.from_json, body={"clear_current": clear_current}, idempotency_key=idempotency_key)


def checkpoint_delete(store: str, session_id: str, checkpoint_id: Any) -> Call[dict]:
    return Call("DELETE", _session(store, session_id, "checkpoints", checkpoint_id), _as_dict)


def _working_memory_items(working_memory: Any) -> list[dict] | None:
    """Spawn's initial working memory: a list of {key, value, ttl_seconds?} items, or a {key: value} dict."""
    if working_memory is None:
        return None
    if isinstance(working_memory, Mapping):
        return [{"key": key, "value": value} for key, value in working_memory.items()]
    return [dict(item) for item in working_memory]


def session_spawn(store: str, session_id: str, *, user_id: str | None, agent_id: str,
                  metadata: Mapping[str, Any] | None, working_memory: Any, task_state: Mapping[str, Any] | None,
                  idempotency_key: str | None) -> Call[LifecycleResult]:
    body = {
        "agent_id": agent_id,
        **compact(
            user_id=user_id,
            metadata=dict(metadata) if metadata is not None else None,
            working_memory=_working_memory_items(working_memory),
            task_state=dict(task_state) if task_state is not None else None,
        ),
    }
    return Call("POST", _session(store, session_id, "spawn"), LifecycleResult.from_json, body=body,
                idempotency_key=idempotency_key)


def session_pause(store: str, session_id: str, description: str,
                  idempotency_key: str | None) -> Call[LifecycleResult]:
    return Call("POST", _session(store, session_id, "pause"), LifecycleResult.from_json,
                body={"description": description}, idempotency_key=idempotency_key)


def session_resume(store: str, session_id: str, checkpoint_id: Any, clear_current: bool,
                   idempotency_key: str | None) -> Call[LifecycleResult]:
    body = {"clear_current": clear_current, **compact(checkpoint_id=checkpoint_id)}
    return Call("POST", _session(store, session_id, "resume"), LifecycleResult.from_json, body=body,
                idempotency_key=idempotency_key)


def session_terminate(store: str, session_id: str, *, outcome: str | None, task: str,
                      lessons: Iterable[str] | None, key_facts: Iterable[str] | None, clear_working_memory: bool,
                      wait: float | None, idempotency_key: str | None) -> Call[LifecycleResult]:
    body = {
        "task": task,
        "clear_working_memory": clear_working_memory,
        **compact(
            outcome=outcome,
            lessons=list(lessons) if lessons is not None else None,
            key_facts=list(key_facts) if key_facts is not None else None,
            wait=wait,
        ),
    }
    extra = float(wait) if wait is not None else MAX_SERVER_WAIT_SECONDS
    return Call("POST", _session(store, session_id, "terminate"), LifecycleResult.from_json, body=body,
                idempotency_key=idempotency_key, extra_timeout=extra)


# --- Context ----------------------------------------------------------------------------------------


def context(store: str, query: str, *, user_id: str, session_id: str | None, token_budget: int,
            kinds: Iterable[str] | None, format: str, shares: Mapping[str, float] | None) -> Call[ContextResult]:
    body = {
        "query": query,
        "user_id": user_id,
        "token_budget": token_budget,
        "format": format,
        **compact(
            session_id=session_id,
            kinds=list(kinds) if kinds is not None else None,
            shares=dict(shares) if shares is not None else None,
        ),
    }
    return Call("POST", _store(store, "context"), ContextResult.from_json, body=body, retry=True)
