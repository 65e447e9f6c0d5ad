"""Splitting text into the pieces a TTS engine speaks one after another.

Synthesising sentence by sentence lets the first audio out while the rest is rendered.
A sentence ends at `.`, `!`, `?`, `;` or `:` followed by white space, or at a line break;
a piece longer than `max_chars` is cut again at its last comma or space before the limit.
Abbreviations such as "Mr." or "e.g." are not told apart (a short pause too many is harmless).
"""

from __future__ import annotations

import re

_BOUNDARY = re.compile(r"(?<=[.!?;:])\s+|\s*\n\s*")
DEFAULT_MAX_CHARS = 200


def split_sentences(text: str, *, max_chars: int = DEFAULT_MAX_CHARS) -> list[str]:
    """The non-empty sentences of `text`, in order, each at most `max_chars` long."""
    pieces: list[str] = []
    for part in _BOUNDARY.split(text):
        part = " ".join(part.split())
        while len(part) > max_chars:
            cut = _cut_point(part, max_chars)
            pieces.append(part[:cut].strip())
            part = part[cut:].strip()
        if part:
            pieces.append(part)
    return [p for p in pieces if any(c.isalnum() for c in p)]


def _cut_point(part: str, max_chars: int) -> int:
    comma = part.rfind(",", 0, max_chars)
    if comma > 0:
        return comma + 1
    space = part.rfind(" ", 0, max_chars)
    return space if space > 0 else max_chars
