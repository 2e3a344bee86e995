"""How LangGraph items live in memoryhub: an item is a memory of its namespace's user, with the namespace, key and
value in its metadata (``memoryhub_client.langgraph`` explains the mapping); the filters LangGraph's stores take;
and the outbox's deliveries of puts and ttl refreshes, idempotent upserts by namespace and key."""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from langgraph.store.base import (
    Item,
    MatchCondition,
    SearchItem,
    get_text_at_path,
    tokenize_path,
)

from memoryhub_client.client import MemoryHub
from memoryhub_client.errors import Conflict, NotFound
from memoryhub_client.models import Memory
from memoryhub_client.resilience import register_delivery

logger = logging.getLogger("memoryhub_client.langgraph")

TAG = "langgraph"
PUT_OPERATION = "langgraph_put"
TOUCH_OPERATION = "langgraph_touch"
NAMESPACE_KEY = "langgraph_namespace"
KEY_KEY = "langgraph_key"
VALUE_KEY = "langgraph_value"
TTL_KEY = "langgraph_ttl"
PREFIX_KEY = "langgraph_prefix_{}"
# Fields of a value that hold its text, in order of preference (LangMem keeps {"content": {"content": ...}}).
TEXT_FIELDS = ("content", "text", "memory")
# The server's limits at their defaults (MEMORYHUB_MAX_METADATA_BYTES; a search query; a page of a list).
# A value over the metadata limit would be refused on every delivery, so `put` refuses it at once instead.
MAX_METADATA_BYTES = 16_384
MAX_QUERY_CHARS = 4_000
MAX_SEARCH_LIMIT = 100
LIST_PAGE_SIZE = 500
# The content is only the searchable rendering (the value itself is in the metadata): a long value is cut
# well within a store's max_content_length (default 8192).
MAX_CONTENT_CHARS = 4_000
MAX_USER_ID_CHARS = 255
_FILTER_OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")
MEMORY_TYPES = ("fact", "preference", "episode", "procedure")


def first_label(namespace: tuple[str, ...]) -> str | None:
    return namespace[0] if namespace else None


def _join(labels: Iterable[str]) -> str:
    return ".".join(labels)


def item_metadata(namespace: tuple[str, ...], key: str, value: dict, ttl: float | None) -> dict[str, Any]:
    """The metadata of the memory holding an item."""
    metadata: dict[str, Any] = {NAMESPACE_KEY: _join(namespace), KEY_KEY: key, VALUE_KEY: value}
    for depth in range(1, len(namespace) + 1):
        metadata[PREFIX_KEY.format(depth)] = _join(namespace[:depth])
    if ttl is not None:
        metadata[TTL_KEY] = ttl
    return metadata


def render_content(value: dict, index: list[str] | None, max_chars: int = MAX_CONTENT_CHARS) -> str:
    """The memory's content: the text search ranks the item by."""
    texts: list[str] = []
    if index:
        for path in index:
            texts.extend(text for text in get_text_at_path(value, tokenize_path(path)) if text.strip())
    else:
        for name in TEXT_FIELDS:
            field = value.get(name)
            if isinstance(field, dict):  # LangMem: {"kind": ..., "content": {"content": "..."}}
                field = next((field[inner] for inner in TEXT_FIELDS if isinstance(field.get(inner), str)), None)
            if isinstance(field, str) and field.strip():
                texts.append(field)
                break
    text = "\n".join(texts) if texts else json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return clean_text(text).strip()[:max_chars] or "{}"


def clean_text(text: str) -> str:
    return text.replace("\x00", "")


def namespace_of(memory: Memory) -> tuple[str, ...] | None:
    text = (memory.metadata or {}).get(NAMESPACE_KEY)
    return tuple(text.split(".")) if isinstance(text, str) and text else None


def value_of(memory: Memory) -> dict:
    value = (memory.metadata or {}).get(VALUE_KEY)
    return value if isinstance(value, dict) else {"content": memory.content}


def ttl_of(memory: Memory) -> float | None:
    ttl = (memory.metadata or {}).get(TTL_KEY)
    return float(ttl) if isinstance(ttl, int | float) and not isinstance(ttl, bool) and ttl > 0 else None


def _is_item(memory: Memory, namespace: tuple[str, ...], key: str) -> bool:
    return namespace_of(memory) == tuple(namespace) and (memory.metadata or {}).get(KEY_KEY) == key


def in_prefix(memory: Memory, prefix: tuple[str, ...]) -> bool:
    namespace = namespace_of(memory)
    return namespace is not None and isinstance((memory.metadata or {}).get(KEY_KEY), str) \
        and namespace[:len(prefix)] == prefix


def to_item(memory: Memory, *, score: float | None = None, search: bool = False) -> Item:
    """The LangGraph item a memory holds (a SearchItem for search results)."""
    namespace = namespace_of(memory) or ()
    key = str((memory.metadata or {}).get(KEY_KEY, ""))
    created = memory.created_at or datetime.now(UTC)
    updated = memory.updated_at or created
    if search:
        return SearchItem(namespace=namespace, key=key, value=value_of(memory), created_at=created,
                          updated_at=updated, score=score)
    return Item(value=value_of(memory), key=key, namespace=namespace, created_at=created, updated_at=updated)


def prefix_filter(prefix: tuple[str, ...]) -> dict[str, Any]:
    return {PREFIX_KEY.format(len(prefix)): _join(prefix)} if prefix else {}


def list_filters(user: str | None, metadata: dict[str, Any], prefix: tuple[str, ...]) -> dict[str, Any]:
    filters: dict[str, Any] = {"status": "active"}
    if user:
        filters["user_id"] = user
    if metadata:
        filters["metadata"] = metadata
    if not prefix:
        filters["tag"] = TAG  # nothing else tells LangGraph's memories from the store's others
    return filters


def find_items(client: MemoryHub, store: str, user: str, namespace: tuple[str, ...], key: str, *,
               include_expired: bool = False, page_size: int = 10) -> list[Memory]:
    """The live memories holding namespace/key, newest first (one, unless concurrent writers raced)."""
    page = client.memories.list(
        store, user_id=user, status="active", include_expired=include_expired or None, page_size=page_size,
        metadata={NAMESPACE_KEY: _join(namespace), KEY_KEY: key},
    )
    return [memory for memory in page.items if _is_item(memory, tuple(namespace), key)]


# --- filters ------------------------------------------------------------------------------------------------

def matches_filter(value: dict, conditions: dict[str, Any] | None) -> bool:
    """InMemoryStore's filter semantics: exact (JSON) match per field, nested dicts and lists included, and the
    operators $eq, $ne, $gt, $gte, $lt, $lte."""
    return not conditions or all(_compare(value.get(name), wanted) for name, wanted in conditions.items())


def _compare(actual: Any, wanted: Any) -> bool:
    if isinstance(wanted, dict):
        if any(name.startswith("$") for name in wanted):
            return all(_apply_operator(actual, operator, operand) for operator, operand in wanted.items())
        return isinstance(actual, dict) and all(_compare(actual.get(name), inner) for name, inner in wanted.items())
    if isinstance(wanted, list | tuple):
        return (isinstance(actual, list | tuple) and len(actual) == len(wanted)
                and all(_compare(a, w) for a, w in zip(actual, wanted, strict=True)))
    return actual == wanted


def _apply_operator(actual: Any, operator: str, operand: Any) -> bool:
    if operator not in _FILTER_OPERATORS:
        raise ValueError(f"Unsupported operator: {operator}")
    if operator == "$eq":
        return actual == operand
    if operator == "$ne":
        return actual != operand
    try:
        left, right = float(actual), float(operand)
    except (TypeError, ValueError):
        return False  # a missing or non-numeric field matches no comparison
    return {"$gt": left > right, "$gte": left >= right, "$lt": left < right, "$lte": left <= right}[operator]


def pushable_filter(conditions: dict[str, Any] | None) -> dict[str, Any]:
    """The part of a filter memoryhub's search can apply (JSON containment of the value): exact matches of
    strings and numbers. The whole filter is still checked here: containment is looser for lists and dicts."""
    pushed: dict[str, Any] = {}
    for name, wanted in (conditions or {}).items():
        if isinstance(wanted, dict) and set(wanted) == {"$eq"}:
            wanted = wanted["$eq"]
        if isinstance(wanted, str) or (isinstance(wanted, int | float) and not isinstance(wanted, bool)
                                       and math.isfinite(wanted)):
            pushed[name] = wanted
    return pushed


def namespace_matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise ValueError(f"Unsupported match type: {condition.match_type}")
    return all(wanted == "*" or label == wanted for label, wanted in pairs)


# --- deliveries (the outbox's background thread) ------------------------------------------------------------

def _deliver_put(client: MemoryHub, payload: dict[str, Any]) -> None:
    """Upsert (or delete) one item by namespace and key: delivering it again changes nothing."""
    store, user, key = payload["store"], payload["user_id"], payload["key"]
    namespace = tuple(payload["namespace"])
    found = find_items(client, store, user, namespace, key, include_expired=True)
    if payload["value"] is None:
        for memory in found:
            _soft_delete(client, store, memory.id)
        return
    metadata = item_metadata(namespace, key, payload["value"], payload.get("ttl"))
    if found:
        current, *extra = found
        if not _update(client, store, current, payload, metadata):
            _create(client, store, payload, metadata)
        for memory in extra:  # left by writers that raced: the newest wins
            _soft_delete(client, store, memory.id)
    else:
        _create(client, store, payload, metadata)


def _create(client: MemoryHub, store: str, payload: dict[str, Any], metadata: dict[str, Any]) -> None:
    namespace, key = tuple(payload["namespace"]), payload["key"]
    content = payload["content"]
    for attempt in (content, _distinct(content, namespace, key)):
        result = client.memories.add(
            store, user_id=payload["user_id"], content=attempt, memory_type=payload.get("memory_type") or "fact",
            metadata=metadata, tags=[TAG], agent_id=payload.get("agent_id") or None,
            expires_at=payload.get("expires_at"),
        )
        if not result.duplicate:
            return
        if _is_item(result.memory, namespace, key):  # this item after all (a race, a replay)
            _update(client, store, result.memory, payload, metadata)
            return
        # memoryhub keeps one live memory per user and content: another item (or another memory of the user)
        # has this text. The item's content gets its namespace and key, which only it can have.
    logger.error("memoryhub refused LangGraph item %s/%s of user %r: its content is already taken", _join(namespace),
                 key, payload["user_id"])


def _update(client: MemoryHub, store: str, memory: Memory, payload: dict[str, Any], metadata: dict[str, Any]) -> bool:
    """Bring the memory up to date; False if it is gone (hard-deleted since it was found)."""
    namespace, key = tuple(payload["namespace"]), payload["key"]
    content = payload["content"]
    distinct = _distinct(content, namespace, key)
    if memory.content == distinct:
        content = distinct  # it had to be told apart before: keep it so, rather than collide again
    expires_at = payload.get("expires_at")
    if (memory.content, memory.metadata, memory.expires_at) == (
            content, metadata, datetime.fromisoformat(expires_at) if expires_at else None):
        return True  # already so: a write delivered again
    changes: dict[str, Any] = {"content": content, "metadata": metadata, "expires_at": expires_at}
    try:
        try:
            client.memories.update(store, memory.id, reason="LangGraph put", **changes)
        except Conflict as error:
            if error.code != "duplicate_memory":
                raise
            client.memories.update(store, memory.id, reason="LangGraph put", **{**changes, "content": distinct})
    except NotFound as error:
        if error.code == "memory_not_found":
            return False
        raise
    return True


def _distinct(content: str, namespace: tuple[str, ...], key: str) -> str:
    suffix = f"\n[{_join(namespace)}/{key}]"
    return content[:max(1, MAX_CONTENT_CHARS - len(suffix))] + suffix


def _soft_delete(client: MemoryHub, store: str, memory_id: str) -> None:
    try:
        client.memories.delete(store, memory_id, reason="LangGraph delete")
    except NotFound as error:
        if error.code != "memory_not_found":  # already gone is what was asked; a missing store is not
            raise


def _deliver_touch(client: MemoryHub, payload: dict[str, Any]) -> None:
    """Extend an item's expiry after a read. Read again here: a put queued before this touch may have changed
    or removed the ttl, and a touch must never shorten or add one."""
    store = payload["store"]
    try:
        memory = client.memories.get(store, payload["memory_id"])
    except NotFound as error:
        if error.code == "memory_not_found":
            return
        raise
    ttl = ttl_of(memory)
    if ttl is None or memory.expires_at is None or memory.status != "active":
        return
    expires_at = datetime.fromisoformat(payload["read_at"]) + timedelta(minutes=ttl)
    if expires_at > memory.expires_at:
        client.memories.update(store, memory.id, expires_at=expires_at.isoformat(), reason="LangGraph ttl refreshed")


register_delivery(PUT_OPERATION, _deliver_put)
register_delivery(TOUCH_OPERATION, _deliver_touch)
