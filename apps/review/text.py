"""Untrusted text made safe to show: escaped, with the characters a reader cannot see made visible.

Memory content, messages, customer ids and reasons come from clients and models. Autoescaping stops
markup; it does not stop a right-to-left override (U+202E) from reversing what a reviewer reads, nor a
zero-width space or a Unicode tag character from hiding words an agent will still read. Those are shown as
a marked token such as ⟨U+202E⟩ instead.
"""

import re
import unicodedata
from functools import cache

from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

# Newlines and tabs are layout the page keeps (white-space: pre-wrap); every other control is marked.
_KEPT = {"\n", "\t"}
# Other characters that are invisible or reorder text without being Cc/Cf: separators that break lines
# unseen, and the fillers that render as blank.
_ALSO_INVISIBLE = {"\u2028", "\u2029", "\u115f", "\u1160", "\u3164", "\uffa0", "\u034f"}


def is_hidden_character(char: str) -> bool:
    """Whether `char` is invisible or changes how the text around it reads (controls, format characters)."""
    if char in _KEPT:
        return False
    return unicodedata.category(char) in ("Cc", "Cf", "Cs", "Zl", "Zp") or char in _ALSO_INVISIBLE


@cache
def _hidden_pattern() -> re.Pattern:
    # Built once per process from the Unicode database, so every Cf character (e.g. the tag characters
    # U+E0000–U+E007F that smuggle ASCII) is covered, not a hand-kept list.
    chars = [chr(code) for code in range(0x110000) if is_hidden_character(chr(code))]
    ranges, start = [], None
    for index, char in enumerate(chars):
        if start is None:
            start = char
        following = chars[index + 1] if index + 1 < len(chars) else None
        if following is None or ord(following) != ord(char) + 1:
            ranges.append(re.escape(start) if start == char else f"{re.escape(start)}-{re.escape(char)}")
            start = None
    return re.compile(f"[{''.join(ranges)}]")


def hidden_token(char: str) -> str:
    return f"⟨U+{ord(char):04X}⟩"


def reveal(value) -> SafeString:
    """`value` escaped, then each hidden character replaced by a marked, visible ⟨U+XXXX⟩ token."""
    text = "" if value is None else str(value)
    pattern = _hidden_pattern()
    parts = []
    position = 0
    for match in pattern.finditer(text):
        parts.append(escape(text[position:match.start()]))
        char = match.group()
        name = unicodedata.name(char, "control character")
        parts.append(format_html('<span class="hidden-char" data-testid="hidden-char" title="{}">{}</span>',
                                 name.lower(), hidden_token(char)))
        position = match.end()
    parts.append(escape(text[position:]))
    return mark_safe("".join(parts))  # every piece was escaped above


def has_hidden_characters(value) -> bool:
    return bool(value) and _hidden_pattern().search(str(value)) is not None
