import hashlib
import re
import unicodedata

_WHITESPACE = re.compile(r"\s+")
_TRAILING_PUNCTUATION = ".!;, "


def normalise_content(content: str) -> str:
    """The form two memories must share to count as the same: NFKC, case-folded, single-spaced."""
    text = unicodedata.normalize("NFKC", content).casefold()
    text = _WHITESPACE.sub(" ", text).strip()
    return text.rstrip(_TRAILING_PUNCTUATION)


def content_hash(content: str) -> str:
    return hashlib.sha256(normalise_content(content).encode("utf-8")).hexdigest()
