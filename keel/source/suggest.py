"""Suggestions for a name that names nothing: the closest known names, by difflib.

Diagnostics that report an unknown response, step, memory entry, tool, frontmatter key or
skill end their message with `did_you_mean(name, known)`, so `utter_ask_bookid` reads
"...; did you mean `utter_ask_book_id`?".
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

CUTOFF = 0.6
"""How alike (difflib ratio, 0 to 1) a known name must be to be suggested."""

MAX_SUGGESTIONS = 3

MARGIN = 0.1
"""How much less alike than the closest name another suggestion may be."""


def close_names(name: str, known: Iterable[str]) -> list[str]:
    """Up to three names of `known` close to `name`, closest first (never `name` itself).

    Case is ignored when comparing, so `Utter_Greet` finds `utter_greet`. Only names about
    as close as the closest one are kept (within `MARGIN`), so a shared prefix such as
    `utter_` does not bring in every other response.
    """
    by_folded: dict[str, str] = {}
    for candidate in sorted(set(known)):
        if candidate != name:
            by_folded.setdefault(candidate.casefold(), candidate)
    matcher = difflib.SequenceMatcher(b=name.casefold())
    scored: list[tuple[float, str]] = []
    for folded, candidate in by_folded.items():
        matcher.set_seq1(folded)
        ratio = matcher.ratio()
        if ratio >= CUTOFF:
            scored.append((ratio, candidate))
    if not scored:
        return []
    scored.sort(key=lambda item: (-item[0], item[1]))
    best = scored[0][0]
    return [candidate for ratio, candidate in scored if ratio >= best - MARGIN][:MAX_SUGGESTIONS]


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`"; did you mean `a`?"` (or `` `a` or `b` ``) for the close names, else `""`."""
    found = close_names(name, known)
    if not found:
        return ""
    return "; did you mean " + " or ".join(f"`{n}`" for n in found) + "?"
