"""Suggestions for a name that names nothing: the closest known names, by difflib.

Diagnostics that report an unknown response, step, memory entry, tool, frontmatter key or
skill end their message with `did_you_mean(name, known)`, so `utter_ask_bookid` reads
"...; did you mean `utter_ask_book_id`?".
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

CUTOFF = 0.75
"""How alike (difflib ratio, 0 to 1) a known name must be to be suggested."""

MAX_SUGGESTIONS = 3


def close_names(name: str, known: Iterable[str]) -> list[str]:
    """Up to three names of `known` close to `name`, closest first (never `name` itself).

    Case is ignored when comparing, so `Utter_Greet` finds `utter_greet`.
    """
    by_folded: dict[str, str] = {}
    for candidate in sorted(set(known)):
        if candidate != name:
            by_folded.setdefault(candidate.casefold(), candidate)
    found = difflib.get_close_matches(
        name.casefold(), list(by_folded), n=MAX_SUGGESTIONS, cutoff=CUTOFF
    )
    return [by_folded[folded] for folded in found]


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`"; did you mean `a`?"` (or `` `a` or `b` ``) for the close names, else `""`."""
    found = close_names(name, known)
    if not found:
        return ""
    return "; did you mean " + " or ".join(f"`{n}`" for n in found) + "?"
