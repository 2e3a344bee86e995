"""`AsyncMemoryHub`, the asynchronous client: the surface of `MemoryHub` with `async def`."""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from datetime import datetime
from typing import Any, TypeVar

import httpx

from memoryhub_client import _api
from memoryhub_client._transport import AsyncTransport, Call
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

T = TypeVar("T")


class _Resource:
    def __init__(self, transport: AsyncTransport, sequences: _api.RunSequences):
        self._transport = transport
        self._sequences = sequences

    async def _run(self, call: Call[T]) -> T:
        return await self._transport.run(call)

    async def _pages(self, call_for: Callable[[str | None], Call[Page[T]]]) -> AsyncIterator[T]:
        cursor = None
        while True:
            page = await self._run(call_for(cursor))
            for item in page.items:
                yield item
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    async def _all(self, call_for: Callable[[str | None], Call[Page[T]]]) -> list[T]:
        return [item async for item in self._pages(call_for)]


class Stores(_Resource):
    async def list(self) -> builtins.list[Store]:
        return await self._run(_api.store_list())

    async def get(self, name: str) -> Store:
        return await self._run(_api.store_get(name))

    async def create(self, name: str, *, idempotency_key: str | None = None, **fields: Any) -> Store:
        """Create a store; `fields`: description, embedding_provider, review_policy, extraction_config..."""
        return await self._run(_api.store_create(name, fields, idempotency_key))

    async def update(self, name: str, *, idempotency_key: str | None = None, **changes: Any) -> Store:
        return await self._run(_api.store_update(name, changes, idempotency_key))

    async def delete(self, name: str) -> dict:
        return await self._run(_api.store_delete(name))


class Memories(_Resource):
    async def add(
        self,
        store: str,
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
    ) -> MemoryWriteResult:
        """Add a memory; content the user already has comes back as the existing memory, `duplicate=True`.

        `fields` passes the server's other inputs (status, source, provenance, valid_from, valid_to).
        """
        item = _api.memory_item(
            user_id=user_id, content=content, memory_type=memory_type, metadata=metadata, tags=tags,
            agent_id=agent_id, session_id=session_id, importance=importance, confidence=confidence,
            expires_at=expires_at, **fields,
        )
        return await self._run(_api.memory_add(store, item))

    async def bulk_add(self, store: str, items: Iterable[Mapping[str, Any]]) -> builtins.list[MemoryWriteResult]:
        """Add up to 500 memories in one transaction; `items` are dicts of `add`'s fields."""
        return await self._run(_api.memory_bulk_add(store, items))

    async def list(self, store: str, *, cursor: str | None = None, page_size: int | None = None,
             **filters: Any) -> Page[Memory]:
        """One page, newest first. Filters: user_id, agent_id, session_id, memory_type, status, tag,
        created_after, created_before, include_expired, metadata={key: value}."""
        return await self._run(_api.memory_list(store, cursor, page_size, filters))

    def iter(self, store: str, *, page_size: int | None = None, **filters: Any) -> AsyncIterator[Memory]:
        """Every memory matching `filters`, page after page."""
        return self._pages(lambda cursor: _api.memory_list(store, cursor, page_size, filters))

    async def get(self, store: str, memory_id: Any) -> Memory:
        return await self._run(_api.memory_get(store, memory_id))

    async def update(self, store: str, memory_id: Any, *, reason: str | None = None, idempotency_key: str | None = None,
               **changes: Any) -> Memory:
        """Change content, metadata, tags, importance, confidence, memory_type, status...; `reason` is recorded."""
        return await self._run(_api.memory_update(store, memory_id, reason, changes, idempotency_key))

    async def delete(self, store: str, memory_id: Any, *, hard: bool = False, reason: str | None = None) -> dict:
        """Soft delete (restorable), or with `hard=True` (admin) remove the memory and its history."""
        return await self._run(_api.memory_delete(store, memory_id, hard, reason))

    async def history(self, store: str, memory_id: Any) -> builtins.list[Revision]:
        return await self._run(_api.memory_history(store, memory_id))


class Users(_Resource):
    async def erase(self, store: str, user_id: str) -> dict:
        """Forget a user: every memory, revision and session of theirs; returns the counts."""
        return await self._run(_api.user_erase(store, user_id))

    async def export(self, store: str, user_id: str) -> dict:
        """Everything the store holds about a user, as one JSON document (admin scope): memories with their history,
        sessions with their messages and working state, extraction jobs, webhook deliveries."""
        return await self._run(_api.user_export(store, user_id))


class Sessions(_Resource):
    async def list(self, store: str, *, cursor: str | None = None, page_size: int | None = None,
             **filters: Any) -> Page[Session]:
        """One page, newest first. Filters: user_id, agent_id, status."""
        return await self._run(_api.session_list(store, cursor, page_size, filters))

    def iter(self, store: str, *, page_size: int | None = None, **filters: Any) -> AsyncIterator[Session]:
        return self._pages(lambda cursor: _api.session_list(store, cursor, page_size, filters))

    async def get(self, store: str, session_id: str) -> Session:
        return await self._run(_api.session_get(store, session_id))

    async def delete(self, store: str, session_id: str) -> dict:
        return await self._run(_api.session_delete(store, session_id))

    async def add_messages(
        self,
        store: str,
        session_id: str,
        *,
        user_id: str,
        messages: Iterable[Mapping[str, Any]],
        run_id: str = "",
        agent_id: str = "",
        metadata: Mapping[str, Any] | None = None,
    ) -> IngestResult:
        """Send messages ({"role", "content", "seq"?, "metadata"?}); the server extracts in the background.

        With a `run_id` each message gets a seq (see `RunSequences`) and the call is retried safely: the
        server stores a repeated (run_id, seq) once. Use a new run_id (uuid4) for each run of a
        conversation: the seqs this client fills in start at 0 for a run it has not seen, so a run_id
        reused by another process or client would make its messages look like repeats.
        """
        filled = self._sequences.fill(store, session_id, run_id, messages)
        return await self._run(_api.messages_add(store, session_id, user_id=user_id, messages=filled, run_id=run_id,
                                           agent_id=agent_id, metadata=metadata))

    async def messages(self, store: str, session_id: str, *, cursor: str | None = None,
                 page_size: int | None = None) -> Page[Message]:
        """One page of the transcript, in seq order."""
        return await self._run(_api.messages_list(store, session_id, cursor, page_size))

    def iter_messages(self, store: str, session_id: str, *, page_size: int | None = None) -> AsyncIterator[Message]:
        return self._pages(lambda cursor: _api.messages_list(store, session_id, cursor, page_size))

    async def flush(self, store: str, session_id: str, *, wait: float = 10,
                    since_seq: int | None = None) -> FlushResult:
        """Extract everything not yet extracted and wait up to `wait` seconds (at most 60) for it.

        The result reports on the messages after `since_seq` (default: all of them): the jobs that cover
        them, whenever they ran, and the memory changes they made. `IngestResult.seqs[0] - 1` narrows it
        to one batch of messages.
        """
        return await self._run(_api.session_flush(store, session_id, wait, since_seq))

    async def events(self, store: str, session_id: str) -> builtins.list[SessionEvent]:
        """The session's event log, oldest first."""
        return await self._all(lambda cursor: _api.session_events(store, session_id, cursor))


class Jobs(_Resource):
    async def list(self, *, cursor: str | None = None, page_size: int | None = None, **filters: Any) -> Page[Job]:
        """One page of extraction jobs, newest first. Filters: store, session_id, status."""
        return await self._run(_api.job_list(cursor, page_size, filters))

    def iter(self, *, page_size: int | None = None, **filters: Any) -> AsyncIterator[Job]:
        return self._pages(lambda cursor: _api.job_list(cursor, page_size, filters))

    async def get(self, job_id: Any) -> Job:
        return await self._run(_api.job_get(job_id))

    async def retry(self, job_id: Any, *, idempotency_key: str | None = None) -> Job:
        """Run a failed job again."""
        return await self._run(_api.job_retry(job_id, idempotency_key))


class Webhooks(_Resource):
    """A store's outgoing webhooks (admin scope): signed JSON POSTs of its events to a URL."""

    async def list(self, store: str) -> builtins.list[Webhook]:
        """Every webhook of the store, oldest first, without secrets."""
        return await self._run(_api.webhook_list(store))

    async def get(self, store: str, webhook_id: Any) -> Webhook:
        return await self._run(_api.webhook_get(store, webhook_id))

    async def create(self, store: str, url: str, *, event_types: Iterable[str] | None = None,
                     description: str = "", idempotency_key: str | None = None) -> Webhook:
        """Send the store's events (all, or `event_types`) to `url`; the answer's `secret` is shown this once."""
        return await self._run(_api.webhook_create(store, url, event_types, description, idempotency_key))

    async def update(self, store: str, webhook_id: Any, *, idempotency_key: str | None = None,
                     **changes: Any) -> Webhook:
        """Change url, event_types, description or is_active (True enables it again and resets its failures)."""
        return await self._run(_api.webhook_update(store, webhook_id, changes, idempotency_key))

    async def delete(self, store: str, webhook_id: Any) -> dict:
        """Delete the webhook with its delivery log."""
        return await self._run(_api.webhook_delete(store, webhook_id))

    async def rotate_secret(self, store: str, webhook_id: Any, *, idempotency_key: str | None = None) -> Webhook:
        """A new signing secret (in the answer's `secret`, shown this once); the old one stops signing at once."""
        return await self._run(_api.webhook_rotate_secret(store, webhook_id, idempotency_key))

    async def send_test(self, store: str, webhook_id: Any, *, idempotency_key: str | None = None) -> WebhookDelivery:
        """Queue a signed `ping` event; follow the returned delivery in `deliveries`."""
        return await self._run(_api.webhook_send_test(store, webhook_id, idempotency_key))

    async def deliveries(self, store: str, webhook_id: Any, *, status: str | None = None,
                         cursor: str | None = None, page_size: int | None = None) -> Page[WebhookDelivery]:
        """One page of the delivery log, newest first (`status`: queued, succeeded or failed)."""
        return await self._run(_api.webhook_delivery_list(store, webhook_id, status, cursor, page_size))

    def iter_deliveries(self, store: str, webhook_id: Any, *, status: str | None = None,
                        page_size: int | None = None) -> AsyncIterator[WebhookDelivery]:
        return self._pages(lambda cursor: _api.webhook_delivery_list(store, webhook_id, status, cursor, page_size))

    async def retry_delivery(self, store: str, webhook_id: Any, delivery_id: Any, *,
                             idempotency_key: str | None = None) -> WebhookDelivery:
        """Queue a failed delivery again, with a fresh set of attempts."""
        return await self._run(_api.webhook_delivery_retry(store, webhook_id, delivery_id, idempotency_key))


class WorkingMemory(_Resource):
    async def list(self, store: str, session_id: str, prefix: str | None = None) -> builtins.list[WorkingMemoryItem]:
        """Every live key of the session (optionally starting with `prefix`), in key order."""
        return await self._all(lambda cursor: _api.working_memory_list(store, session_id, prefix, cursor))

    async def get(self, store: str, session_id: str, key: str) -> WorkingMemoryItem:
        return await self._run(_api.working_memory_get(store, session_id, key))

    async def put(self, store: str, session_id: str, key: str, value: Any, *, ttl_seconds: int | None = None,
            if_version: int | None = None) -> WorkingMemoryItem:
        """Set a key. `if_version` makes it a compare-and-set (0: the key must not exist; Conflict otherwise)."""
        return await self._run(_api.working_memory_put(store, session_id, key, value, ttl_seconds, if_version))

    async def delete(self, store: str, session_id: str, key: str) -> dict:
        return await self._run(_api.working_memory_delete(store, session_id, key))

    async def clear(self, store: str, session_id: str) -> int:
        """Delete every key; returns how many there were."""
        return await self._run(_api.working_memory_clear(store, session_id))


class TaskStates(_Resource):
    async def get(self, store: str, session_id: str) -> TaskState:
        return await self._run(_api.task_state_get(store, session_id))

    async def put(
        self,
        store: str,
        session_id: str,
        *,
        description: str | None = None,
        current_step: int | None = None,
        total_steps: int | None = None,
        progress: float | None = None,
        status: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> TaskState:
        """Set the whole task state (fields left out take the server's defaults)."""
        fields = _api.compact(description=description, current_step=current_step, total_steps=total_steps,
                               progress=progress, status=status, metadata=metadata)
        return await self._run(_api.task_state_put(store, session_id, fields))

    async def patch(self, store: str, session_id: str, *, idempotency_key: str | None = None,
              **changes: Any) -> TaskState:
        """Change some fields (description, current_step, total_steps, progress, status, metadata)."""
        return await self._run(_api.task_state_patch(store, session_id, changes, idempotency_key))

    async def delete(self, store: str, session_id: str) -> dict:
        return await self._run(_api.task_state_delete(store, session_id))


class Scratchpad(_Resource):
    async def list(self, store: str, session_id: str) -> builtins.list[ScratchpadEntry]:
        """Every entry, oldest first."""
        return await self._all(lambda cursor: _api.scratchpad_list(store, session_id, cursor))

    async def append(self, store: str, session_id: str, content: str, *, metadata: Mapping[str, Any] | None = None,
               idempotency_key: str | None = None) -> ScratchpadAppendResult:
        return await self._run(_api.scratchpad_append(store, session_id, content, metadata, idempotency_key))

    async def clear(self, store: str, session_id: str) -> int:
        return await self._run(_api.scratchpad_clear(store, session_id))


class Checkpoints(_Resource):
    async def create(self, store: str, session_id: str, *, description: str = "", ttl_seconds: int | None = None,
               idempotency_key: str | None = None) -> Checkpoint:
        """Snapshot the working state (`ttl_seconds` 0: never expires; None: the store's default)."""
        return await self._run(_api.checkpoint_create(store, session_id, description, ttl_seconds, idempotency_key))

    async def list(self, store: str, session_id: str) -> builtins.list[Checkpoint]:
        """Every checkpoint, newest first, without snapshots."""
        return await self._all(lambda cursor: _api.checkpoint_list(store, session_id, cursor))

    async def get(self, store: str, session_id: str, checkpoint_id: Any) -> Checkpoint:
        """A checkpoint with its snapshot."""
        return await self._run(_api.checkpoint_get(store, session_id, checkpoint_id))

    async def restore(self, store: str, session_id: str, checkpoint_id: Any, *, clear_current: bool = True,
                idempotency_key: str | None = None) -> LifecycleResult:
        """Replace the working state with the snapshot's (`clear_current=False`: merge its keys in)."""
        return await self._run(_api.checkpoint_restore(store, session_id, checkpoint_id, clear_current, idempotency_key))

    async def delete(self, store: str, session_id: str, checkpoint_id: Any) -> dict:
        return await self._run(_api.checkpoint_delete(store, session_id, checkpoint_id))


class Lifecycle(_Resource):
    async def spawn(
        self,
        store: str,
        session_id: str,
        *,
        user_id: str | None = None,
        agent_id: str = "",
        metadata: Mapping[str, Any] | None = None,
        working_memory: Iterable[Mapping[str, Any]] | Mapping[str, Any] | None = None,
        task_state: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> LifecycleResult:
        """Start a session (or reactivate a paused one) with optional working memory and task state.

        `working_memory` is a list of {"key", "value", "ttl_seconds"?} items or a {key: value} dict.
        """
        return await self._run(_api.session_spawn(
            store, session_id, user_id=user_id, agent_id=agent_id, metadata=metadata,
            working_memory=working_memory, task_state=task_state, idempotency_key=idempotency_key,
        ))

    async def pause(self, store: str, session_id: str, *, description: str = "",
              idempotency_key: str | None = None) -> LifecycleResult:
        """Pause an active session; takes an automatic checkpoint (its id is in `data`)."""
        return await self._run(_api.session_pause(store, session_id, description, idempotency_key))

    async def resume(self, store: str, session_id: str, *, checkpoint_id: Any = None, clear_current: bool = True,
               idempotency_key: str | None = None) -> LifecycleResult:
        """Resume a paused session from `checkpoint_id`, or the latest checkpoint since the pause."""
        return await self._run(_api.session_resume(store, session_id, checkpoint_id, clear_current, idempotency_key))

    async def terminate(
        self,
        store: str,
        session_id: str,
        *,
        outcome: str | None = None,
        task: str = "",
        lessons: Iterable[str] | None = None,
        key_facts: Iterable[str] | None = None,
        clear_working_memory: bool = False,
        wait: float | None = None,
        idempotency_key: str | None = None,
    ) -> LifecycleResult:
        """End a session: final extraction (waiting up to `wait` s), one episode memory, status terminated."""
        return await self._run(_api.session_terminate(
            store, session_id, outcome=outcome, task=task, lessons=lessons, key_facts=key_facts,
            clear_working_memory=clear_working_memory, wait=wait, idempotency_key=idempotency_key,
        ))


class AsyncMemoryHub:
    """Asynchronous memoryhub client (one `httpx.AsyncClient`).

    `base_url` and `api_key` default to the environment variables MEMORYHUB_URL and MEMORYHUB_API_KEY.
    Use it as an async context manager, or call `aclose()`.
    """

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 10.0,
        connect_timeout: float | None = None,
        max_retries: int = 3,
        backoff_seconds: float = 0.5,
        max_backoff_seconds: float = 8.0,
        auto_idempotency_keys: bool = True,
        transport: httpx.AsyncBaseTransport | None = None,
        headers: Mapping[str, str] | None = None,
    ):
        self._transport = AsyncTransport(
            base_url, api_key, timeout=timeout, connect_timeout=connect_timeout, max_retries=max_retries,
            backoff_seconds=backoff_seconds,
            max_backoff_seconds=max_backoff_seconds, auto_idempotency_keys=auto_idempotency_keys,
            transport=transport, headers=headers,
        )
        sequences = _api.RunSequences()
        self.stores = Stores(self._transport, sequences)
        self.memories = Memories(self._transport, sequences)
        self.users = Users(self._transport, sequences)
        self.sessions = Sessions(self._transport, sequences)
        self.jobs = Jobs(self._transport, sequences)
        self.working_memory = WorkingMemory(self._transport, sequences)
        self.task_state = TaskStates(self._transport, sequences)
        self.scratchpad = Scratchpad(self._transport, sequences)
        self.checkpoints = Checkpoints(self._transport, sequences)
        self.lifecycle = Lifecycle(self._transport, sequences)
        self.webhooks = Webhooks(self._transport, sequences)

    @property
    def base_url(self) -> str:
        """The server's /api/v1/ URL."""
        return self._transport.base_url

    async def key_info(self) -> ApiKeyInfo:
        """What this client's API key may do: tenant, scopes, stores."""
        return await self._transport.run(_api.key_info())

    async def search(
        self,
        store: str,
        query: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        limit: int | None = 10,
        mode: str | None = None,
        min_score: float | None = None,
        memory_types: Iterable[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        tags: Iterable[str] | None = None,
        include_pending: bool = False,
        include_superseded: bool = False,
        valid_at: datetime | str | None = None,
        created_after: datetime | str | None = None,
        created_before: datetime | str | None = None,
        explain: bool = False,
    ) -> builtins.list[SearchHit]:
        """Search memories, best first (`mode`: hybrid, vector or keyword; None: the store's default).

        `limit=None` leaves the number of results to the store's search defaults. `valid_at`: only memories that
        held at that moment (superseded ones included); `include_superseded`: old values too, below current ones;
        `explain`: each hit's `explain` holds its rank, score and share per signal.
        """
        return await self._transport.run(_api.search(
            store, query, user_id=user_id, agent_id=agent_id, session_id=session_id, limit=limit, mode=mode,
            min_score=min_score, memory_types=memory_types, metadata=metadata, tags=tags,
            include_pending=include_pending, include_superseded=include_superseded, valid_at=valid_at,
            created_after=created_after, created_before=created_before, explain=explain,
        ))

    async def context(
        self,
        store: str,
        query: str,
        *,
        user_id: str,
        session_id: str | None = None,
        token_budget: int = 2000,
        kinds: Iterable[str] | None = None,
        format: str = "xml",
        shares: Mapping[str, float] | None = None,
    ) -> ContextResult:
        """What an agent should know before answering `query`, as one block within `token_budget` tokens."""
        return await self._transport.run(_api.context(
            store, query, user_id=user_id, session_id=session_id, token_budget=token_budget, kinds=kinds,
            format=format, shares=shares,
        ))

    async def aclose(self) -> None:
        await self._transport.aclose()

    async def __aenter__(self) -> AsyncMemoryHub:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"AsyncMemoryHub(base_url={self.base_url!r})"
