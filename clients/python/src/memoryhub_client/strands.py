"""memoryhub as a Strands Agents memory store (strands-agents >= 1.62, ``strands.memory.MemoryStore``).

    from strands import Agent
    from strands.memory import MemoryManager
    from memoryhub_client.strands import MemoryHubStore

    store = MemoryHubStore(store="support", user_id="alice", agent_id="support-bot")
    agent = Agent(model=model, memory_manager=MemoryManager(stores=[store]))

The agent's conversation goes to memoryhub as raw messages after every invocation; memoryhub
extracts durable facts on the server, in the background. Before each model call the manager
searches the store and injects what it finds; the ``search_memory`` tool searches it too.

Strands runs every synchronous ``agent(...)`` call in a new event loop, so this store never keeps an
``httpx.AsyncClient`` (bound to the loop that created it): it uses the synchronous client from a
worker thread (``asyncio.to_thread``).
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import uuid
from typing import Any

from strands.memory import AddMessagesContext, ExtractionConfig, InvocationTrigger, MemoryEntry, SearchOptions

from memoryhub_client.client import MemoryHub
from memoryhub_client.errors import Conflict, MemoryHubError, NotFound, PermissionDenied, ValidationFailed

logger = logging.getLogger("memoryhub_client.strands")

# Block kinds the memoryhub server accepts; others (from newer Strands versions) are dropped rather
# than failing the whole batch on every retry.
_KNOWN_BLOCKS = frozenset(
    {"text", "toolUse", "toolResult", "reasoningContent", "citationsContent", "cachePoint", "guardContent",
     "image", "document", "video"}
)
_BINARY_BLOCKS = frozenset({"image", "document", "video"})
# The server's limits (MEMORYHUB_MAX_MESSAGES_PER_BATCH, MEMORYHUB_MAX_MESSAGE_CHARS, the search query's
# length). A save that breaks one would be refused on every retry, and Strands resends refused messages
# with every later save: the store keeps within them instead.
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
            per store instance.
        client: A ``MemoryHub`` to use (default: one built from ``MEMORYHUB_URL`` / ``MEMORYHUB_API_KEY``,
            or from ``base_url`` / ``api_key``, with a short timeout and one retry: it sits on the
            agent's path, so an unreachable memoryhub should cost seconds, not minutes).
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
        self._client = client or MemoryHub(base_url=base_url, api_key=api_key, timeout=5.0, max_retries=1)
        self._owns_client = client is None
        # The idempotency key of a message is (run id, Strands sequence number). Strands numbers the
        # messages of each agent's MemoryManager from 0, so the run id is minted per store instance, again
        # in initialize() (called once per agent, before its numbering starts), and again if the numbering
        # visibly restarts (see _run_for). One store instance serves one agent at a time.
        self._run_id = uuid.uuid4().hex
        self.session_id = session_id or f"strands-{self._run_id}"
        self._acknowledged_seq = -1
        self._lock = threading.Lock()

    # --- Strands MemoryStore contract ---------------------------------------------------------------

    async def initialize(self) -> None:
        """At agent construction: fail loudly if the store is missing or the key cannot use it (or, for a
        writable store, cannot write); start a new run of message numbers."""
        try:
            await asyncio.to_thread(self._client.stores.get, self.store)
        except NotFound as exc:
            raise ValueError(f"memoryhub store {self.store!r} does not exist (or this API key cannot see it)") from exc
        except PermissionDenied as exc:
            raise ValueError(f"this API key may not use memoryhub store {self.store!r}") from exc
        if self.writable:
            key = await asyncio.to_thread(self._client.key_info)
            if not key.can_write:
                raise ValueError(
                    f"MemoryHubStore {self.name!r} is writable but API key {key.name!r} has scopes "
                    f"{', '.join(key.scopes)}: it needs 'write' (or pass writable=False)"
                )
        with self._lock:
            self._run_id = uuid.uuid4().hex
            self._acknowledged_seq = -1

    async def search(self, query: str, options: SearchOptions | None = None) -> list[MemoryEntry]:
        limit = (options or {}).get("max_search_results") or self.max_search_results or 5
        # The query is often the user's whole last message: keep what the server accepts, the end of it.
        query = _clean_text(query).strip()[-MAX_QUERY_CHARS:]
        if not query:
            return []
        hits = await asyncio.to_thread(
            self._client.search,
            self.store,
            query,
            user_id=self.user_id,
            agent_id=self.agent_id if self.search_by_agent else None,
            limit=max(1, min(int(limit), 100)),
        )
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
        """Store one memory (the ``add_memory`` tool); the same content twice is one memory."""
        result = await asyncio.to_thread(
            self._client.memories.add,
            self.store,
            user_id=self.user_id,
            content=content,
            agent_id=self.agent_id,
            session_id=self.session_id,
            metadata=_json_safe(metadata or {}),
        )
        return {"memory_id": str(result.memory.id), "duplicate": result.duplicate}

    async def add_messages(self, messages: list[dict], context: AddMessagesContext | None = None) -> dict[str, Any]:
        """Send the conversation to memoryhub, which extracts from it in the background (202 at once).

        Each message carries (run id, Strands sequence number), so a retried batch — Strands resends
        the messages of a failed save together with newer ones — stores each message once.
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
            return {"accepted": 0, "duplicates": 0}
        run_id = self._run_for(sequence)
        totals = {"accepted": 0, "duplicates": 0, "dropped": 0}
        for start in range(0, len(batch), MAX_MESSAGES_PER_REQUEST):
            chunk = batch[start:start + MAX_MESSAGES_PER_REQUEST]
            try:
                result = await asyncio.to_thread(
                    self._client.sessions.add_messages,
                    self.store,
                    self.session_id,
                    user_id=self.user_id,
                    agent_id=self.agent_id or "",
                    run_id=run_id,
                    messages=chunk,
                )
            except (ValidationFailed, Conflict) as exc:
                # Refused for good (invalid content, a terminated session...): raising would make Strands
                # resend these messages, refused again, with every later save. Drop them, loudly.
                logger.error("memoryhub refused %d message(s) of session %s: %s; they are not stored",
                             len(chunk), self.session_id, exc)
                totals["dropped"] += len(chunk)
                continue
            totals["accepted"] += result.accepted
            totals["duplicates"] += result.duplicates
        if sequence:
            with self._lock:
                self._acknowledged_seq = max(self._acknowledged_seq, max(sequence))
        return totals

    def close(self) -> None:
        if self._owns_client:
            self._client.close()

    # --- helpers ------------------------------------------------------------------------------------

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


__all__ = ["MemoryHubError", "MemoryHubStore"]
