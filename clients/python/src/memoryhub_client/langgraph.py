"""memoryhub as a LangGraph store (langgraph >= 1.2, ``langgraph.store.base.BaseStore``).

    from langgraph.graph import StateGraph
    from memoryhub_client.langgraph import MemoryHubLangGraphStore

    store = MemoryHubLangGraphStore(store="support", spool="var/memoryhub.spool")
    graph = builder.compile(store=store)
    # in a node: runtime.store.put(("alice", "memories"), "tea", {"content": "Alice drinks green tea"})
    #            runtime.store.search(("alice", "memories"), query="what does she drink?")

**Namespaces.** By default a namespace is ``(user_id, *rest)``: its first label is the memoryhub user (every
item is a memory of that user, isolated as memoryhub isolates users), the rest groups the user's items.
``user_from_namespace`` gives another layout, e.g. ``lambda ns: ns[1] if len(ns) > 1 else None`` for
``("memories", user_id)``; it returns None for a prefix that does not name the user (then a search covers
every user of the store).

**Items.** An item is one memory of the store: its content is a text rendering of the value (the value's
``content``, ``text`` or ``memory`` field, the fields named by ``index=``/``fields=``, or else compact JSON),
so memoryhub's hybrid search finds it, and its metadata carries the namespace, the key and the whole value
(``langgraph_namespace``: the labels joined with ".", as LangGraph's own PostgresStore does, since labels
cannot contain one; ``langgraph_key``; ``langgraph_value``; ``langgraph_prefix_<n>``: the first n labels, so a
namespace prefix is a server-side filter; ``langgraph_ttl``). Items carry the tag ``langgraph``. A put of an
existing key updates the memory (its history keeps the old value); a delete is memoryhub's soft delete
(restorable, with history). ``index=False`` stores the item all the same and it stays searchable: memoryhub
embeds every memory. ``ttl`` (minutes) becomes the memory's ``expires_at``; a read extends it (``refresh_ttl``)
through the outbox, at most about twice per ttl. memoryhub keeps one live memory per user and content: an item
whose text another memory of the user already has gets ``[namespace/key]`` appended to its content. A memory
superseded, rejected or deleted in memoryhub (by
extraction or in the review console) is no longer an item.

**Resilience** (see ``memoryhub_client.resilience``). Reads get ``timeout`` seconds and then answer as if
memoryhub were empty (``get`` None, ``search``/``list_namespaces`` []); after a failure they are skipped until
the outbox's background probe finds memoryhub back. Puts and deletes go through an outbox that delivers them in
order, idempotently (an upsert by namespace and key) and, with ``spool=``, from disk across restarts; while memoryhub is up a put
waits up to ``timeout`` for delivery. So a ``get`` right after a ``put`` made while memoryhub was down (or slow)
does not see it yet. What a person must fix raises ``ValueError``: a wrong API key or URL, a missing store, a
key without the write scope (at the first put).
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import threading
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    validate_op_namespace,
)

from memoryhub_client._langgraph_items import (
    LIST_PAGE_SIZE,
    MAX_CONTENT_CHARS,
    MAX_METADATA_BYTES,
    MAX_QUERY_CHARS,
    MAX_SEARCH_LIMIT,
    MAX_USER_ID_CHARS,
    MEMORY_TYPES,
    PUT_OPERATION,
    TAG,
    TOUCH_OPERATION,
    VALUE_KEY,
    clean_text,
    find_items,
    first_label,
    in_prefix,
    item_metadata,
    list_filters,
    matches_filter,
    namespace_matches,
    namespace_of,
    prefix_filter,
    pushable_filter,
    render_content,
    to_item,
    ttl_of,
    value_of,
)
from memoryhub_client.client import MemoryHub
from memoryhub_client.errors import MemoryHubError
from memoryhub_client.models import Memory
from memoryhub_client.resilience import READ_TIMEOUT_SECONDS, Guard, describe_refusal, needs_a_person

logger = logging.getLogger("memoryhub_client.langgraph")


class MemoryHubLangGraphStore(BaseStore):
    """A LangGraph ``BaseStore`` backed by one memoryhub store.

    Args:
        store: The memoryhub store's name.
        base_url, api_key: The server (default: ``MEMORYHUB_URL`` / ``MEMORYHUB_API_KEY``).
        client: A ``MemoryHub`` to use instead; its timeout and retries then bound what a read costs the graph.
        timeout: Seconds a read (or a put waiting for delivery) may hold up the graph (default 1).
        spool: A file where puts wait until memoryhub has them, surviving restarts (SQLite). Default: memory.
        user_from_namespace: The memoryhub user of a namespace (or of a search prefix; None when it does not
            tell). Default: the first label.
        fields: Paths of a value rendered into the memory's content when a put names none (LangGraph's
            ``IndexConfig["fields"]``, e.g. ``["text", "tags[*]"]``); default: a text field or compact JSON.
        agent_id: Recorded on the memories this store writes.
        memory_type: Their memory type (default ``fact``).
        ttl: LangGraph's ``TTLConfig``: ``default_ttl`` (minutes) for puts that give none, ``refresh_on_read``.
    """

    supports_ttl = True

    def __init__(
        self,
        *,
        store: str,
        base_url: str | None = None,
        api_key: str | None = None,
        client: MemoryHub | None = None,
        timeout: float = READ_TIMEOUT_SECONDS,
        spool: str | Path | None = None,
        user_from_namespace: Callable[[tuple[str, ...]], str | None] | None = None,
        fields: list[str] | None = None,
        agent_id: str | None = None,
        memory_type: str = "fact",
        ttl: TTLConfig | None = None,
    ) -> None:
        if not store:
            raise ValueError("MemoryHubLangGraphStore needs a memoryhub store name")
        if memory_type not in MEMORY_TYPES:
            raise ValueError(f"memory_type must be one of {', '.join(MEMORY_TYPES)}, not {memory_type!r}")
        self.store = store
        self.user_from_namespace = user_from_namespace or first_label
        self.fields = list(fields) if fields else None
        self.agent_id = agent_id or ""
        self.memory_type = memory_type
        self.ttl_config = ttl
        self._guard = Guard(base_url=base_url, api_key=api_key, client=client, timeout=timeout, spool=spool)
        self._client = self._guard.client
        # The key and the store are checked on first use (not while memoryhub is down: then once it is back).
        self._checked = False
        self._can_write = True
        self._max_content = MAX_CONTENT_CHARS
        self._check_lock = threading.Lock()

    # --- BaseStore ------------------------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run `ops`: reads first, each from memoryhub (or empty during an outage), then the puts, last one per
        key, through the outbox — as InMemoryStore orders a batch."""
        ops = list(ops)
        for op in ops:
            validate_op_namespace(op)
        payloads = self._put_payloads(ops)
        results: list[Result] = [None] * len(ops)
        for index, op in self._reads(ops):
            results[index] = self._read_op(op)
        if payloads:
            self._ensure_checked()
            self._require_write()
            for payload in payloads:
                self._guard.write(PUT_OPERATION, payload)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """`batch` for an event loop: the reads run in a worker thread; puts are queued before any await."""
        ops = list(ops)
        for op in ops:
            validate_op_namespace(op)
        results: list[Result] = [None] * len(ops)
        payloads = self._put_payloads(ops)
        reads = list(self._reads(ops))
        if reads or (payloads and not self._checked and self._guard.available):
            values = await asyncio.to_thread(self._read_all, [op for _, op in reads], bool(payloads))
            for (index, _), value in zip(reads, values, strict=True):
                results[index] = value
        if payloads:
            self._require_write()
            for payload in payloads:
                await self._guard.write_async(PUT_OPERATION, payload)
        return results

    # --- the rest of the public surface ---------------------------------------------------------------------

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until memoryhub has every put queued so far (or `timeout`); True if it has."""
        return self._guard.flush(timeout)

    def close(self) -> None:
        self._guard.close()

    # --- reads ----------------------------------------------------------------------------------------------

    @staticmethod
    def _reads(ops: list[Op]) -> Iterator[tuple[int, Op]]:
        for index, op in enumerate(ops):
            if isinstance(op, GetOp | SearchOp | ListNamespacesOp):
                yield index, op
            elif not isinstance(op, PutOp):
                raise ValueError(f"Unknown operation type: {type(op).__name__}")

    def _read_all(self, ops: list[Op], check: bool) -> list[Result]:
        if check:
            self._ensure_checked()
        return [self._read_op(op) for op in ops]

    def _read_op(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return self._read(lambda: self._get(op), default=None, what="langgraph get")
        if isinstance(op, SearchOp):
            return self._read(lambda: self._search(op), default=[], what="langgraph search")
        return self._read(lambda: self._list_namespaces(op), default=[], what="langgraph list_namespaces")

    def _read(self, call: Callable[[], Any], *, default: Any, what: str) -> Any:
        """`call` through the guard, after the first-use check; a refusal a person must fix raises ValueError."""

        def checked() -> Any:
            if not self._checked:
                self._check()
            return call()

        try:
            return self._guard.read(checked, default=default, what=what)
        except MemoryHubError as error:
            if needs_a_person(error):
                raise ValueError(describe_refusal(error, base_url=self._client.base_url, store=self.store)) from error
            raise

    def _ensure_checked(self) -> None:
        if not self._checked:
            self._read(lambda: None, default=None, what="memoryhub store check")

    def _check(self) -> None:
        with self._check_lock:
            if self._checked:
                return
            # The key first: its answer also tells a wrong URL (no such route) from a missing store.
            key = self._client.key_info()
            store = self._client.stores.get(self.store)
            self._can_write = key.can_write
            if store.max_content_length:
                self._max_content = max(64, min(MAX_CONTENT_CHARS, int(store.max_content_length)))
            self._checked = True

    def _require_write(self) -> None:
        if not self._can_write:
            raise ValueError(f"the API key may only read memoryhub store {self.store!r}: LangGraph puts need the "
                             "'write' scope")

    def _get(self, op: GetOp) -> Item | None:
        user = self._user_of(op.namespace)
        found = find_items(self._client, self.store, user, op.namespace, op.key, page_size=10)
        if not found:
            return None
        if op.refresh_ttl:
            self._refresh_ttl(found[:1])
        return to_item(found[0])

    def _search(self, op: SearchOp) -> list[SearchItem]:
        if op.limit <= 0:
            return []
        wanted = max(0, op.offset) + op.limit
        prefix = tuple(op.namespace_prefix)
        user = self.user_from_namespace(prefix) if prefix else None
        metadata = prefix_filter(prefix)
        memories: list[tuple[Memory, float | None]] = []
        if op.query and op.query.strip():
            pushed = pushable_filter(op.filter)
            if pushed:
                metadata[VALUE_KEY] = pushed
            hits = self._client.search(
                self.store, clean_text(op.query)[:MAX_QUERY_CHARS], user_id=user,
                limit=min(MAX_SEARCH_LIMIT, wanted), metadata=metadata or None, tags=None if prefix else [TAG],
            )
            for hit in hits:
                if in_prefix(hit.memory, prefix) and matches_filter(value_of(hit.memory), op.filter):
                    memories.append((hit.memory, float(hit.score)))
        else:
            filters = list_filters(user, metadata, prefix)
            for memory in self._client.memories.iter(self.store, page_size=min(LIST_PAGE_SIZE, max(wanted, 50)),
                                                     **filters):
                if in_prefix(memory, prefix) and matches_filter(value_of(memory), op.filter):
                    memories.append((memory, None))
                    if len(memories) >= wanted:
                        break
        page = memories[max(0, op.offset):wanted]
        if op.refresh_ttl:
            self._refresh_ttl([memory for memory, _ in page])
        return [to_item(memory, score=score, search=True) for memory, score in page]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        # memoryhub has no "distinct metadata values" read: every item in scope is listed (500 a page) and its
        # namespace collected here. The scope is narrowed on the server by the longest literal prefix asked for.
        conditions = tuple(op.match_conditions or ())
        literal: tuple[str, ...] = ()
        for condition in conditions:
            if condition.match_type == "prefix":
                labels = tuple(condition.path)
                head = labels[:labels.index("*")] if "*" in labels else labels
                literal = max(literal, head, key=len)
        user = self.user_from_namespace(literal) if literal else None
        namespaces: set[tuple[str, ...]] = set()
        filters = list_filters(user, prefix_filter(literal), literal)
        for memory in self._client.memories.iter(self.store, page_size=LIST_PAGE_SIZE, **filters):
            namespace = namespace_of(memory)
            if namespace is not None and all(namespace_matches(condition, namespace) for condition in conditions):
                namespaces.add(namespace[:op.max_depth] if op.max_depth is not None else namespace)
        return sorted(namespaces)[op.offset:op.offset + op.limit]

    def _refresh_ttl(self, memories: list[Memory]) -> None:
        """Extend the expiry of items read, through the outbox (never holding up the read), once more than half
        of their ttl has passed: a refresh is a write and a revision, so not one per read. (Whether to refresh
        is the op's `refresh_ttl`, which BaseStore resolves from `ttl=TTLConfig(refresh_on_read=...)`.)"""
        now = datetime.now(UTC)
        for memory in memories:
            ttl = ttl_of(memory)
            if ttl is None or memory.expires_at is None:
                continue
            if memory.expires_at - now < timedelta(minutes=ttl) / 2:
                self._guard.outbox.submit(TOUCH_OPERATION, {"store": self.store, "memory_id": memory.id,
                                                            "read_at": now.isoformat()})

    # --- writes ---------------------------------------------------------------------------------------------

    def _put_payloads(self, ops: list[Op]) -> list[dict[str, Any]]:
        """One outbox payload per key, the last put of a key winning; what can never be stored raises now."""
        last: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            if isinstance(op, PutOp):
                last.pop((tuple(op.namespace), str(op.key)), None)
                last[(tuple(op.namespace), str(op.key))] = op
        return [self._put_payload(op) for op in last.values()]

    def _put_payload(self, op: PutOp) -> dict[str, Any]:
        namespace, key = tuple(op.namespace), str(op.key)
        if not namespace:
            raise ValueError("a LangGraph namespace cannot be empty")
        user = self._user_of(namespace)
        payload: dict[str, Any] = {"store": self.store, "user_id": user, "namespace": list(namespace), "key": key,
                                   "value": None}
        if op.value is None:
            return payload
        try:
            value = json.loads(json.dumps(dict(op.value), ensure_ascii=False, allow_nan=False))
        except (TypeError, ValueError) as error:
            raise ValueError(f"a memoryhub item's value must be JSON (no NaN or infinity): {error}") from error
        ttl = op.ttl
        if ttl is not None and (not isinstance(ttl, int | float) or not math.isfinite(ttl) or ttl <= 0):
            raise ValueError(f"ttl must be a positive number of minutes, got {ttl!r}")
        size = len(json.dumps(item_metadata(namespace, key, value, ttl), ensure_ascii=False).encode("utf-8"))
        if size > MAX_METADATA_BYTES:
            raise ValueError(f"the value of {'.'.join(namespace)}/{key} takes {size} bytes as memoryhub metadata; "
                             f"the server's limit is {MAX_METADATA_BYTES}")
        index = self.fields if op.index is None else op.index
        payload.update(
            value=value,
            ttl=ttl,
            content=render_content(value, index or None, self._max_content),
            expires_at=(datetime.now(UTC) + timedelta(minutes=ttl)).isoformat() if ttl else None,
            agent_id=self.agent_id,
            memory_type=self.memory_type,
        )
        return payload

    def _user_of(self, namespace: tuple[str, ...]) -> str:
        user = self.user_from_namespace(tuple(namespace))
        if not user or not isinstance(user, str):
            raise ValueError(f"namespace {namespace!r} does not name a memoryhub user (see user_from_namespace)")
        if len(user) > MAX_USER_ID_CHARS:
            raise ValueError(f"the memoryhub user id {user[:40]!r}... is longer than {MAX_USER_ID_CHARS} characters")
        return user

    def __repr__(self) -> str:
        return f"MemoryHubLangGraphStore(store={self.store!r}, base_url={self._client.base_url!r})"


# --- the mapping between items and memories -----------------------------------------------------------------


__all__ = ["MemoryHubLangGraphStore", "matches_filter", "namespace_matches", "render_content", "to_item"]
