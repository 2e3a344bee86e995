"""Message content blocks: accept a plain string or a list of blocks; keep binaries out of the database."""

from django.conf import settings

from apps.core.errors import ApplicationError, PayloadTooLargeError
from apps.core.fields import find_unstorable_text

# Blocks whose payload may be raw bytes (base64 in JSON); stored as a placeholder with type and size.
BINARY_BLOCKS = ("image", "document", "video")
KNOWN_BLOCKS = (
    "text",
    "toolUse",
    "toolResult",
    "reasoningContent",
    "citationsContent",
    "cachePoint",
    "guardContent",
    *BINARY_BLOCKS,
)


def _check_strings(value, where: str) -> None:
    if isinstance(value, str):
        problem = find_unstorable_text(value)
        if problem:
            raise ApplicationError(f"{where} {problem}.", code="validation_error")
    elif isinstance(value, dict):
        for key, inner in value.items():
            _check_strings(key, where)
            _check_strings(inner, where)
    elif isinstance(value, list):
        for inner in value:
            _check_strings(inner, where)


def _placeholder(kind: str, block: dict) -> dict:
    source = block.get("source") if isinstance(block.get("source"), dict) else {}
    payload = source.get("bytes") or source.get("data") or ""
    size = (len(payload) * 3) // 4 if isinstance(payload, str) else 0  # base64 -> bytes
    placeholder = {"omitted": True, "size": size}
    for key in ("format", "name"):
        if isinstance(block.get(key), str):
            placeholder[key] = block[key]
    return {kind: placeholder}


def normalise_content(content, *, where: str) -> tuple[list[dict], str]:
    """Content blocks to store and their flattened text (text blocks and tool-result text joined)."""
    if isinstance(content, str):
        content = [{"text": content}]
    if not isinstance(content, list) or not content:
        raise ApplicationError(
            f"{where}.content must be a string or a non-empty list of content blocks.", code="validation_error"
        )
    blocks, texts = [], []
    for index, block in enumerate(content):
        if not isinstance(block, dict) or len(block) != 1:
            raise ApplicationError(
                f"{where}.content[{index}] must be an object with exactly one block type, e.g. {{\"text\": \"...\"}}.",
                code="validation_error",
            )
        (kind, value), = block.items()
        if kind not in KNOWN_BLOCKS:
            raise ApplicationError(
                f"{where}.content[{index}]: unknown block type {kind!r}; known: {', '.join(KNOWN_BLOCKS)}.",
                code="validation_error",
            )
        if kind in BINARY_BLOCKS:
            blocks.append(_placeholder(kind, value if isinstance(value, dict) else {}))
            continue
        _check_strings(value, f"{where}.content[{index}]")
        if kind == "text":
            if not isinstance(value, str):
                raise ApplicationError(f"{where}.content[{index}].text must be a string.", code="validation_error")
            texts.append(value)
        elif kind == "toolResult" and isinstance(value, dict):
            texts.extend(
                inner["text"] for inner in value.get("content") or [] if isinstance(inner, dict) and isinstance(inner.get("text"), str)
            )
        blocks.append({kind: value})
    text = "\n".join(part for part in texts if part)
    limit = settings.MEMORYHUB_MAX_MESSAGE_CHARS
    if len(text) > limit:
        raise PayloadTooLargeError(
            f"{where} has {len(text)} characters of text; the limit is {limit}.", code="message_too_large"
        )
    return blocks, text
