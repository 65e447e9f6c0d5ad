"""Context anchoring for the slot binder: which span of a new request plays a slot's part.

A slot's recorded span sits between words of the recorded request ("files in [Projects]",
"move [a.txt] to [b.txt]"). In a new request the same words around a span show which span
plays that part: `context_score` ranks the candidate entities of a typed slot, and
`anchored_text` finds a free-text slot between its neighbours ("files in [Archive]").
Words of other slots count as wildcards. Positions are token indices of
`keel.plans.lexicon.tokens`, so a normalised recorded request works as well as the raw one.
Pure.
"""

from __future__ import annotations

from typing import Final, Literal

from keel.plans.lexicon import SEPARATORS, Token, words

TokenRange = tuple[int, int]
"""[first, last) token indices."""

_REACH: Final = 2
"""Words each side that anchor a slot."""
_SLACK: Final = 4
"""How many more words than recorded a free-text slot may take."""
_STOPS: Final = SEPARATORS | {"please", "thanks"}
Miss = Literal["binder_missing_slot", "binder_ambiguous"]


def locate(source: str | None, recorded: list[Token]) -> TokenRange | None:
    """The first token range of `recorded` that says `source`, or None."""
    if not source:
        return None
    wanted = words(source)
    size = len(wanted)
    if not size:
        return None
    for i in range(len(recorded) - size + 1):
        if [t.norm for t in recorded[i : i + size]] == wanted:
            return (i, i + size)
    return None


def span_tokens(found: TokenRange, recorded: list[Token]) -> tuple[int, int]:
    """The character span of a token range."""
    return (recorded[found[0]].start, recorded[found[1] - 1].end)


def token_range(span: tuple[int, int], said: list[Token]) -> TokenRange | None:
    """The tokens a character span overlaps."""
    inside = [i for i, t in enumerate(said) if t.start < span[1] and span[0] < t.end]
    return (inside[0], inside[-1] + 1) if inside else None


def context_score(
    span: tuple[int, int],
    said: list[Token],
    recorded: list[Token],
    source: TokenRange | None,
    others: list[TokenRange],
) -> int:
    """How many neighbouring words of `span` in the request match the recorded slot's."""
    here = token_range(span, said)
    if source is None or here is None:
        return 0
    wild = _wild(others)
    score = 0
    for step, start_r, start_s in ((-1, source[0] - 1, here[0] - 1), (1, source[1], here[1])):
        r, s = start_r, start_s
        for _ in range(_REACH + 1):
            if not (0 <= r < len(recorded) and 0 <= s < len(said)):
                break
            if r not in wild:
                if recorded[r].norm != said[s].norm:
                    break
                score += 1
            r, s = r + step, s + step
    return score


def anchored_text(
    said: list[Token],
    recorded: list[Token],
    source: TokenRange | None,
    others: list[TokenRange],
) -> tuple[int, int] | Miss:
    """The character span between the recorded slot's neighbours in the request."""
    if source is None:
        return "binder_missing_slot"
    wild = _wild(others)
    left = _anchor(recorded, source[0] - 1, -1, wild)[::-1]
    right = _anchor(recorded, source[1], 1, wild)
    if not left and not right:
        return "binder_missing_slot"
    found: set[tuple[int, int]] = set()
    limit = source[1] - source[0] + _SLACK
    for p in _starts(said, left, at_start=source[0] == 0):
        q = _end(said, p, right, limit, at_end=source[1] == len(recorded))
        if q is not None and q > p:
            found.add((said[p].start, said[q - 1].end))
    if not found:
        return "binder_missing_slot"
    if len(found) > 1:
        return "binder_ambiguous"
    return found.pop()


def _wild(others: list[TokenRange]) -> set[int]:
    return {i for start, end in others for i in range(start, end)}


def _anchor(recorded: list[Token], index: int, step: int, wild: set[int]) -> list[str]:
    out: list[str] = []
    while 0 <= index < len(recorded) and index not in wild and len(out) < _REACH:
        out.append(recorded[index].norm)
        index += step
    return out


def _starts(said: list[Token], left: list[str], *, at_start: bool) -> list[int]:
    if not left:
        return [0] if at_start else list(range(len(said)))
    size = len(left)
    return [p for p in range(size, len(said)) if [t.norm for t in said[p - size : p]] == left]


def _end(said: list[Token], p: int, right: list[str], limit: int, *, at_end: bool) -> int | None:
    if right:
        size = len(right)
        for q in range(p + 1, min(len(said), p + limit) + 1):
            if [t.norm for t in said[q : q + size]] == right:
                return q
        return None
    q = p
    while q < len(said) and q - p < limit and said[q].norm not in _STOPS:
        q += 1
    if at_end and q < len(said) and said[q].norm not in _STOPS:
        return None
    return q
