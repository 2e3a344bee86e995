"""How OpenAI Agents SDK items live in memoryhub: each item one message of the session (its text for extraction,
the item itself in the message's metadata), fitted to the server's limits; and the pop and clear markers
(``memoryhub_client.openai_agents`` explains the mapping)."""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass
from typing import Any

logger = logging.getLogger("memoryhub_client.openai_agents")

#: The metadata key of this adapter's messages.
METADATA_KEY = "openai_agents"
# The server's limits (MEMORYHUB_MAX_METADATA_BYTES, MEMORYHUB_MAX_MESSAGE_CHARS,
# MEMORYHUB_MAX_MESSAGES_PER_BATCH): a message over one is refused, and a refused message is dropped by the
# outbox, so items are fitted to them before they are queued.
MAX_METADATA_BYTES = 16_384
MAX_MESSAGE_CHARS = 32_768
MAX_MESSAGES_PER_REQUEST = 100
#: Messages per page when reading a transcript (the server's maximum is 1000).
PAGE_SIZE = 500
TRUNCATED = " […truncated]"

_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}
# Keys whose values identify an item rather than say something: never shortened.
_IDENTIFYING_KEYS = frozenset({"type", "role", "id", "call_id", "name", "status"})
_INLINE_PARTS = frozenset({"input_image", "input_file", "input_audio"})
_SHORTEST_CUT = 200


@dataclass
class Record:
    """One message of the session as this adapter reads it: an item, a pop marker or a clear marker."""

    key: tuple  # ("run", run_id, client seq) for messages sent with one, else ("seq", session seq)
    kind: str  # "item" | "pop" | "clear" | "other"
    item: dict | None = None
    target: tuple | None = None  # the key of the item a pop removes
    ticket: int | None = None  # the outbox's ticket, for a write of this process not yet read back
    server_seq: int | None = None
    created_at: str | None = None


def record_of(message: Any) -> Record:
    """A transcript message as this adapter reads it."""
    if message.client_seq is not None:
        key: tuple = ("run", message.run_id, message.client_seq)
    else:
        key = ("seq", message.seq)
    record = Record(key=key, kind="other", server_seq=message.seq, created_at=message.raw.get("created_at"))
    ours = (message.metadata or {}).get(METADATA_KEY)
    if isinstance(ours, dict):
        if isinstance(ours.get("item"), dict):
            record.kind, record.item = "item", ours["item"]
        elif isinstance(ours.get("pop"), dict):
            record.kind, record.target = "pop", _target_key(ours["pop"])
        elif ours.get("clear") is True:
            record.kind = "clear"
    elif message.role in ("user", "assistant", "system") and (message.text or "").strip():
        # A message another client sent to this session: its text is all there is of it.
        record.kind, record.item = "item", {"role": message.role, "content": message.text}
    return record


def same_message(message: Any, record: Record) -> bool:
    return message.seq == record.server_seq and message.raw.get("created_at") == record.created_at


def history_view(records: list[Record]) -> list[tuple[tuple, dict]]:
    """The items the records leave: each item in order, minus those popped, after the last clear."""
    items: list[tuple[tuple, dict]] = []
    for record in records:
        if record.kind == "item":
            items.append((record.key, record.item))
        elif record.kind == "clear":
            items = []
        elif record.kind == "pop":
            items = [(key, item) for key, item in items if key != record.target]
    return items


def target_of(key: tuple) -> dict:
    if key[0] == "run":
        return {"run_id": key[1], "seq": key[2]}
    return {"session_seq": key[1]}


def _target_key(target: dict) -> tuple | None:
    if "session_seq" in target:
        return ("seq", target["session_seq"])
    if "run_id" in target and "seq" in target:
        return ("run", target["run_id"], target["seq"])
    return None


def marker_message(marker: dict) -> tuple[dict, Record]:
    """A message that only says something to this adapter: no text, so nothing to extract."""
    kind = "pop" if "pop" in marker else "clear"
    record = Record(key=(), kind=kind, target=_target_key(marker["pop"]) if kind == "pop" else None)
    return {"role": "system", "content": "", "metadata": {METADATA_KEY: marker}}, record


# --- items as messages -------------------------------------------------------------------------------------

def plain(item: Any) -> dict:
    """The item as plain JSON (a copy): what a session keeps and gives back."""
    if hasattr(item, "model_dump"):
        item = item.model_dump(exclude_unset=True, mode="json")
    plain = json.loads(json.dumps(item))
    if not isinstance(plain, dict):
        raise TypeError(f"a session item must be a JSON object, not {type(plain).__name__}")
    return plain


def item_message(item: dict) -> tuple[dict, Record]:
    kept, altered = _fitted(item)
    if altered:
        logger.warning("a %s item is kept altered: memoryhub cannot store it as given (it refuses NUL characters, "
                       "unpaired surrogates and NaN, and keeps at most %d bytes of an item)",
                       item.get("type") or "message", MAX_METADATA_BYTES)
    role, content = _role_and_content(_storable(item))
    ours: dict[str, Any] = {"item": kept}
    if altered:
        ours["altered"] = True
    message = {"role": role, "content": content, "metadata": {METADATA_KEY: ours}}
    return message, Record(key=(), kind="item", item=kept)


def _role_and_content(item: dict) -> tuple[str, Any]:
    """The message memoryhub extracts from: a role it knows and content blocks (the text within its limit)."""
    kind = item.get("type")
    role = item.get("role")
    if role in _ROLES and kind in (None, "message"):
        return _ROLES[role], _message_blocks(item.get("content")) or ""
    if kind == "function_call":
        call = {"toolUseId": str(item.get("call_id") or ""), "name": str(item.get("name") or ""),
                "input": _arguments(item.get("arguments"))}
        return "assistant", [{"toolUse": call}]
    if kind == "function_call_output":
        text = _clip(_output_text(item.get("output")), MAX_MESSAGE_CHARS)
        return "tool", [{"toolResult": {"toolUseId": str(item.get("call_id") or ""), "status": "success",
                                        "content": [{"text": text}]}}]
    if kind == "reasoning":
        summary = "\n".join(part["text"] for part in item.get("summary") or []
                            if isinstance(part, dict) and isinstance(part.get("text"), str))
        return "assistant", [{"reasoningContent": {"reasoningText": {"text": _clip(summary, MAX_MESSAGE_CHARS)}}}]
    # Hosted tool calls, their outputs, MCP items...: named in a block, kept whole in the metadata.
    kind = str(kind or "item")
    role = "tool" if kind.endswith("_output") or kind == "mcp_approval_response" else "assistant"
    return role, [{"toolUse": {"toolUseId": str(item.get("call_id") or item.get("id") or ""), "name": kind,
                               "input": {}}}]


def _message_blocks(content: Any) -> list[dict]:
    parts = [{"type": "input_text", "text": content}] if isinstance(content, str) else content
    blocks, budget = [], MAX_MESSAGE_CHARS
    for part in parts if isinstance(parts, list) else []:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        text = part.get("refusal") if kind == "refusal" else part.get("text")
        if isinstance(text, str) and kind in ("input_text", "output_text", "text", "refusal"):
            text = _clip(text, budget)
            budget = max(0, budget - len(text) - 1)  # the server joins texts with a newline
            blocks.append({"text": text})
        elif kind == "input_image":
            blocks.append({"image": {}})  # memoryhub keeps no bytes of images: a placeholder
        elif kind == "input_file":
            name = part.get("filename")
            blocks.append({"document": {"name": name} if isinstance(name, str) else {}})
    return blocks


def _arguments(arguments: Any) -> dict:
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and len(arguments) <= MAX_METADATA_BYTES:
            return _storable(parsed)  # JSON escapes may hide a NUL
        return {"arguments": _clip(arguments, 2_000)}
    return {}


def _output_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "\n".join(part["text"] for part in output
                         if isinstance(part, dict) and isinstance(part.get("text"), str))
    return json.dumps(output, ensure_ascii=False) if output is not None else ""


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:max(0, limit - len(TRUNCATED))] + TRUNCATED


# --- fitting an item into the metadata ---------------------------------------------------------------------

def _fitted(item: dict) -> tuple[dict, bool]:
    """The item as a message's metadata can hold it, and whether that differs from the item: unchanged when
    it can be; else without what PostgreSQL refuses (NUL, lone surrogates, NaN) and, over the size limit,
    with inline images and files replaced by a note and the longest strings cut, never the identifying ones."""
    kept = _storable(item)
    altered = kept != item
    if _metadata_bytes(kept) <= MAX_METADATA_BYTES:
        return kept, altered
    kept = _without_inline_data(kept)
    while (excess := _metadata_bytes(kept) - MAX_METADATA_BYTES) > 0:
        longest = _longest_string(kept)
        if longest is None:
            return _bare(kept), True
        container, key, text = longest
        # Cutting n characters saves at least n bytes (UTF-8, JSON escapes): one cut per string is enough.
        container[key] = text[:max(_SHORTEST_CUT, len(text) - excess - len(TRUNCATED))] + TRUNCATED
    return kept, True


def _metadata_bytes(item: dict) -> int:
    # As the server measures it: the whole metadata object, compact UTF-8 JSON with default separators.
    return len(json.dumps({METADATA_KEY: {"item": item, "altered": True}}, ensure_ascii=False).encode("utf-8"))


def _storable(value: Any) -> Any:
    """A copy PostgreSQL's jsonb can hold: no NUL characters, no unpaired surrogates, no NaN or infinity."""
    if isinstance(value, str):
        return value.replace("\x00", "").encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, dict):
        return {_storable(str(key)): _storable(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [_storable(inner) for inner in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _without_inline_data(value: Any) -> Any:
    """Images, files and audio sent inline (base64) replaced by a text part that says so; encrypted
    reasoning dropped (cut, it could not be decrypted)."""
    if isinstance(value, list):
        return [_without_inline_data(inner) for inner in value]
    if not isinstance(value, dict):
        return value
    kind = value.get("type")
    if kind in _INLINE_PARTS and len(json.dumps(value)) > 1024:
        name = value.get("filename")
        what = f"file {name}" if isinstance(name, str) else str(kind).removeprefix("input_")
        return {"type": "input_text", "text": f"[{what} omitted: too large to keep in memoryhub]"}
    return {key: _without_inline_data(inner) for key, inner in value.items() if key != "encrypted_content"}


def _longest_string(value: Any) -> tuple[Any, Any, str] | None:
    """The longest string that can still be cut, with its container and key."""
    best = None
    stack = [value]
    while stack:
        node = stack.pop()
        pairs = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, inner in pairs:
            if isinstance(inner, str):
                if key not in _IDENTIFYING_KEYS and len(inner) > _SHORTEST_CUT + len(TRUNCATED) and (
                        best is None or len(inner) > len(best[2])):
                    best = (node, key, inner)
            elif isinstance(inner, dict | list):
                stack.append(inner)
    return best


def _bare(item: dict) -> dict:
    """The last resort for an item of many small parts: what identifies it, and a note for its content."""
    bare = {key: value for key, value in item.items()
            if key in _IDENTIFYING_KEYS and isinstance(value, str) and len(value) <= _SHORTEST_CUT}
    note = "[omitted: too large to keep in memoryhub]"
    for key, value in (("content", note), ("output", note), ("arguments", "{}"), ("summary", [])):
        if key in item:
            bare[key] = value
    return bare
