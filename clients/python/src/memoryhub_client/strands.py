"""memoryhub as a Strands Agents memory store (strands-agents >= 1.62, ``strands.memory.MemoryStore``).

    from strands import Agent
    from strands.memory import MemoryManager
    from memoryhub_client.strands import MemoryHubStore

    store = MemoryHubStore(store="support", user_id="alice", agent_id="support-bot", spool="var/memoryhub.spool")
    agent = Agent(model=model, memory_manager=MemoryManager(stores=[store]))

The agent's conversation goes to memoryhub as raw messages after every invocation; memoryhub extracts
durable facts on the server, in the background. Before each model call the manager searches the store and
injects what it finds; the ``search_memory`` tool searches it too.

memoryhub is never the reason an agent is down or slow (see ``memoryhub_client.resilience``): an agent can
be built and can answer while memoryhub is refused, erroring, hanging or stopped. Searches get one second
and then return nothing; after a failure they are skipped altogether until a background probe finds the
server back. Messages go through an outbox that delivers them in order and, with ``spool=``, keeps them on
disk until delivered, across restarts. Only what a person must fix fails loudly, when the agent is built: a
wrong API key, a key without the needed scope, a missing store, a URL that is not memoryhub, a session that
belongs to another user.

**Async use.** ``agent("...")`` saves the turn's messages before it returns. ``await agent.invoke_async(...)``
saves them in the background: before the event loop ends, await ``agent.memory_manager.flush()`` — or use
``async with flush_memory_on_exit(agent):`` or ``await invoke_and_save(agent, prompt)``. (This store queues
messages before its first await, so even a loop that ends early loses none it was given; Strands itself only
hands over the messages of a save that started.)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import threading
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from strands.memory import AddMessagesContext, ExtractionConfig, InvocationTrigger, MemoryEntry, SearchOptions

from memoryhub_client.client import MemoryHub
from memoryhub_client.errors import MemoryHubError, NotFound
from memoryhub_client.resilience import (
    READ_TIMEOUT_SECONDS,
    REFUSED_RECHECK_SECONDS,
    Guard,
    describe_refusal,
    is_transient,
)

logger = logging.getLogger("memoryhub_client.strands")

# Block kinds the memoryhub server accepts; others (from newer Strands versions) are dropped rather
# than failing the whole batch on every retry.
_KNOWN_BLOCKS = frozenset(
    {"text", "toolUse", "toolResult", "reasoningContent", "citationsContent", "cachePoint", "guardContent",
     "image", "document", "video"}
)
_BINARY_BLOCKS = frozenset({"image", "document", "video"})
# The server's limits (MEMORYHUB_MAX_MESSAGES_PER_BATCH, MEMORYHUB_MAX_MESSAGE_CHARS, the search query's
# length). A save that breaks one would be refused on every retry: the store keeps within them instead.
MAX_MESSAGES_PER_REQUEST = 100
MAX_MESSAGE_CHARS = 32_768
MAX_QUERY_CHARS = 4_000
TRUNCATED = " […truncated]"


class MemoryHubStore:
    """A Strands ``MemoryStore`` backed by one memoryhub store, for one user (and optionally one agent
    and one session).

    Args:
        store: The memoryhub store's name.
        user_id: Whose memories: searches, adds and messages are all scoped to this user.
        agent_id: Recorded on messages and added memories; with ``search_by_agent`` also a search filter.
        session_id: The memoryhub session the conversation is recorded in; default: one new session
            per store instance. An existing session must belong to ``user_id``.
        base_url, api_key: The server (default: ``MEMORYHUB_URL`` / ``MEMORYHUB_API_KEY``).
        client: A ``MemoryHub`` to use instead; its timeout and retries then bound what a memory call
            costs the agent, so keep them short.
        timeout: Seconds a memory call may hold up the agent (default 1).
        spool: A file where messages wait until memoryhub has them, surviving restarts (SQLite; one per
            process or shared, replays are idempotent). Default: in process memory only.
        name, description, max_search_results, writable, extraction: the Strands store attributes;
            ``extraction`` defaults to server-side extraction after every invocation.
    """

    def __init__(
        self,
        *,
        store: str,
        user_id: str,
        agent_id: str | None = None,
        session_id: str | None = None,
        client: MemoryHub | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = READ_TIMEOUT_SECONDS,
        spool: str | Path | None = None,
        name: str | None = None,
        description: str | None = "Long-term memory about the user, kept by memoryhub.",
        max_search_results: int | None = 5,
        writable: bool = True,
        extraction: ExtractionConfig | bool | None = None,
        search_by_agent: bool = False,
    ) -> None:
        if not store or not user_id:
            raise ValueError("MemoryHubStore needs a store name and a user_id")
        self.store = store
        self.user_id = user_id
        self.agent_id = agent_id
        self.name = name or f"memoryhub-{store}"
        self.description = description
        self.max_search_results = max_search_results
        self.writable = writable
        # Server-side extraction: the raw messages go to add_messages after each invocation and
        # memoryhub extracts them; no extractor (and no model call) on the client.
        self.extraction = ExtractionConfig(trigger=[InvocationTrigger()]) if extraction is None else extraction
        self.search_by_agent = search_by_agent
        self._guard = Guard(base_url=base_url, api_key=api_key, client=client, timeout=timeout, spool=spool)
        self._client = self._guard.client
        # The idempotency key of a message is (run id, Strands sequence number). Strands numbers the
        # messages of each agent's MemoryManager from 0, so the run id is minted per store instance, again
        # in initialize() (called once per agent, before its numbering starts), and again if the numbering
        # visibly restarts (see _run_for). One store instance serves one agent at a time.
        self._run_id = uuid.uuid4().hex
        self.session_id = session_id or f"strands-{self._run_id}"
        self._acknowledged_seq = -1
        self._lock = threading.Lock()
        # Whether the store, the key's scope and the session's owner were checked (they cannot be while
        # memoryhub is down: then on the first call after it is back), and until when a refusal stands.
        self._checked = False
        self._refused_until = 0.0

    # --- Strands MemoryStore contract ---------------------------------------------------------------

    async def initialize(self) -> None:
        """At agent construction: fail loudly on what a person must fix (a wrong key, a missing store or
        scope, a URL that is not memoryhub, a session of another user); if memoryhub is unavailable, warn
        and let the agent run without memory until it is back. Starts a new run of message numbers."""
        with self._lock:
            self._run_id = uuid.uuid4().hex
            self._acknowledged_seq = -1
        if not self._guard.available:
            logger.warning("memoryhub is unavailable; agent built without memory for store %r until it is back",
                           self.store)
            return
        try:
            await asyncio.to_thread(self._check)
        except MemoryHubError as error:
            if not is_transient(error):
                raise ValueError(describe_refusal(error, base_url=self._client.base_url, store=self.store)) from error
            self._guard.record_failure(error)

    async def search(self, query: str, options: SearchOptions | None = None) -> list[MemoryEntry]:
        """The user's memories that match, best first; nothing (at once) while memoryhub is unavailable."""
        limit = (options or {}).get("max_search_results") or self.max_search_results or 5
        # The query is often the user's whole last message: keep what the server accepts, the end of it.
        query = _clean_text(query).strip()[-MAX_QUERY_CHARS:]
        if not query or not self._usable():
            return []

        def search() -> list:
            if not self._checked:
                self._check()
            return self._client.search(
                self.store,
                query,
                user_id=self.user_id,
                agent_id=self.agent_id if self.search_by_agent else None,
                limit=max(1, min(int(limit), 100)),
            )

        try:
            hits = await self._guard.read_async(search, default=[], what="memory search")
        except (MemoryHubError, ValueError) as error:
            self._refuse(error)
            return []
        return [
            MemoryEntry(
                content=hit.memory.content,
                metadata={
                    "memory_id": str(hit.memory.id),
                    "score": round(float(hit.score), 6),
                    "memory_type": hit.memory.memory_type,
                },
            )
            for hit in hits
        ]

    async def add(self, content: str, metadata: dict[str, Any] | None = None) -> dict[str, Any]:
        """Store one memory (the ``add_memory`` tool); the same content twice is one memory.

        While memoryhub is unavailable the memory is queued and stored when it is back (``"queued": True``):
        the model is not told that a memory failed that will be, or was, stored. Refused content raises.
        """
        memory = {"user_id": self.user_id, "content": content, "agent_id": self.agent_id,
                  "session_id": self.session_id, "metadata": _json_safe(metadata or {})}
        if self._guard.available:
            try:
                result = await asyncio.to_thread(self._client.memories.add, self.store, **memory)
            except MemoryHubError as error:
                if not is_transient(error):
                    raise
                # Perhaps stored before the answer was lost: the outbox sends it again, which the server
                # answers as a duplicate.
                self._guard.record_failure(error)
            else:
                self._guard.breaker.record_success()
                return {"memory_id": str(result.memory.id), "duplicate": result.duplicate}
        self._guard.outbox.submit("add_memory", {"store": self.store, "memory": memory})
        return {"queued": True}

    async def add_messages(self, messages: list[dict], context: AddMessagesContext | None = None) -> dict[str, Any]:
        """Send the conversation to memoryhub, which extracts from it in the background.

        The messages are queued (on disk with a spool) before anything is awaited, then delivered by the
        outbox; while memoryhub is up this waits up to ``timeout`` for the delivery. Each message carries
        (run id, Strands sequence number), so a batch delivered twice is stored once.
        """
        sequence = context.sequence_numbers if context is not None else None
        batch = []
        for index, message in enumerate(messages):
            content = _server_content(message.get("content") or [])
            if not content:
                continue
            item: dict[str, Any] = {"role": message["role"], "content": content}
            if sequence is not None:
                item["seq"] = sequence[index]
            batch.append(item)
        if not batch:
            return {"queued": 0, "delivered": True}
        run_id = self._run_for(sequence)
        if sequence:
            with self._lock:
                self._acknowledged_seq = max(self._acknowledged_seq, max(sequence))
        delivered = True
        for start in range(0, len(batch), MAX_MESSAGES_PER_REQUEST):
            payload = {"store": self.store, "session_id": self.session_id, "user_id": self.user_id,
                       "agent_id": self.agent_id or "", "run_id": run_id,
                       "messages": batch[start:start + MAX_MESSAGES_PER_REQUEST]}
            delivered = await self._guard.write_async("add_messages", payload) and delivered
        return {"queued": len(batch), "delivered": delivered}

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until memoryhub has every message and memory queued so far (or ``timeout``); True if it has."""
        return self._guard.flush(timeout)

    def close(self) -> None:
        self._guard.close()

    # --- helpers ------------------------------------------------------------------------------------

    def _check(self) -> None:
        """What a person must fix: the store, the key's scope, the session's owner. Raises ValueError for a
        problem, the client's error for an outage."""
        # The key first: its answer also tells a wrong URL (no such route) from a missing store.
        key = self._client.key_info()
        self._client.stores.get(self.store)
        if self.writable:
            if not key.can_write:
                raise ValueError(
                    f"MemoryHubStore {self.name!r} is writable but API key {key.name!r} has scopes "
                    f"{', '.join(key.scopes)}: it needs 'write' (or pass writable=False)"
                )
        try:
            session = self._client.sessions.get(self.store, self.session_id)
        except NotFound:
            pass  # a new session: the first messages create it
        else:
            if session.user_id != self.user_id:
                raise ValueError(
                    f"memoryhub session {self.session_id!r} belongs to user {session.user_id!r}, not "
                    f"{self.user_id!r}: its messages would be refused; use another session_id"
                )
        self._checked = True

    def _usable(self) -> bool:
        return self._guard.available and time.monotonic() >= self._refused_until

    def _refuse(self, error: Exception) -> None:
        """A refusal met after the agent was built (a key revoked, a store deleted): log it once, and leave
        memoryhub alone for a while rather than ask again before every model call."""
        message = error if isinstance(error, ValueError) else describe_refusal(
            error, base_url=self._client.base_url, store=self.store)
        logger.error("%s; memory searches for store %r are skipped for %.0f s", message, self.store,
                     REFUSED_RECHECK_SECONDS)
        self._refused_until = time.monotonic() + REFUSED_RECHECK_SECONDS

    def _run_for(self, sequence: list[int] | None) -> str:
        """The run id for a batch. A batch whose numbers start at or below the highest number already
        acknowledged cannot be a retry (a retry resends only unacknowledged messages): the numbering
        restarted (a new MemoryManager using this store), so the batch gets a fresh run id."""
        with self._lock:
            if sequence and min(sequence) <= self._acknowledged_seq:
                self._run_id = uuid.uuid4().hex
                self._acknowledged_seq = -1
            return self._run_id

    def __repr__(self) -> str:
        return f"MemoryHubStore(store={self.store!r}, user_id={self.user_id!r}, session_id={self.session_id!r})"


@contextlib.asynccontextmanager
async def flush_memory_on_exit(agent: Any) -> AsyncIterator[Any]:
    """Save the agent's memory before leaving the block, so an event loop that ends after it loses nothing:

        async def main():
            async with flush_memory_on_exit(agent):
                await agent.invoke_async("...")
        asyncio.run(main())
    """
    try:
        yield agent
    finally:
        if getattr(agent, "memory_manager", None) is not None:
            await agent.memory_manager.flush()


async def invoke_and_save(agent: Any, prompt: Any = None, **kwargs: Any) -> Any:
    """``agent.invoke_async(prompt, **kwargs)``, then save the turn's messages before returning (what the
    synchronous ``agent(prompt)`` does): safe in an ``asyncio.run`` per turn."""
    async with flush_memory_on_exit(agent):
        return await agent.invoke_async(prompt, **kwargs)


def _clean_text(text: str) -> str:
    """Text PostgreSQL can store: no NUL characters, no unpaired surrogates."""
    return text.replace("\x00", "").encode("utf-8", "replace").decode("utf-8")


def _server_content(blocks: list[dict]) -> list[dict]:
    """Strands content blocks as memoryhub takes them: binaries reduced to a placeholder (the server
    keeps none of their bytes), unknown kinds dropped, text cleaned and cut to the server's limit."""
    kept = []
    for block in blocks:
        if not isinstance(block, dict) or len(block) != 1:
            continue
        (kind, value), = block.items()
        if kind not in _KNOWN_BLOCKS:
            continue
        if kind in _BINARY_BLOCKS:
            value = value if isinstance(value, dict) else {}
            kept.append({kind: {key: value[key] for key in ("format", "name") if isinstance(value.get(key), str)}})
            continue
        if kind == "text" and isinstance(value, str):
            value = _clean_text(value)
            if len(value) > MAX_MESSAGE_CHARS:
                value = value[: MAX_MESSAGE_CHARS - len(TRUNCATED)] + TRUNCATED
        kept.append({kind: _json_safe(value)})
    return kept


def _json_safe(value: Any) -> Any:
    """A JSON-serialisable copy: bytes become a size note, other unknown objects their str()."""
    if isinstance(value, dict):
        return {str(key): _json_safe(inner) for key, inner in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(inner) for inner in value]
    if isinstance(value, bytes | bytearray):
        return f"<{len(value)} bytes omitted>"
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, str):
        return _clean_text(value)
    if value is None or isinstance(value, int | float | bool):
        return value
    return str(value)


__all__ = ["MemoryHubError", "MemoryHubStore", "flush_memory_on_exit", "invoke_and_save"]
