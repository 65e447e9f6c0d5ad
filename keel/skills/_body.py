"""The markdown body of a skill.md: paragraphs, `if:` markers and ordered-block fences.

Paragraphs are split by blank lines. A column-0 `if: <condition>` line scopes the single
paragraph that follows it; the condition is the rest of that one physical line. An
indented `if:` is ordinary prose. Fenced `:::ordered_block` regions are cut out here and
parsed as YAML by `_block`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from keel.conditions import Condition
from keel.skills._condition import read_condition
from keel.skills._tokens import scan_prose
from keel.skills.model import Paragraph, Token
from keel.source.reporter import Reporter

FENCE_OPEN: Final = ":::ordered_block"
_ELSE: Final = re.compile(r"else\s*:|elif\b.*:")


@dataclass(frozen=True, kw_only=True, slots=True)
class Fence:
    """An `:::ordered_block` region, not yet parsed."""

    line: int
    """Line of the opening fence."""
    attributes: str
    """Text after `:::ordered_block` on the opening line."""
    body: tuple[str, ...]
    """Lines between the fences."""
    closed: bool = True
    """False when no `:::` line closes it (reported; the block is not parsed)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Body:
    """What the body splitter found."""

    paragraphs: tuple[Paragraph, ...]
    fences: tuple[Fence, ...]
    tokens: tuple[Token, ...]


@dataclass(slots=True)
class _Splitter:
    """Walks the body once; collects paragraphs and fences (a scratchpad)."""

    rep: Reporter
    paragraphs: list[Paragraph] = field(default_factory=list)
    fences: list[Fence] = field(default_factory=list)
    tokens: list[Token] = field(default_factory=list)
    lines: list[tuple[int, str]] = field(default_factory=list)
    marker: tuple[int, Condition | None] | None = None
    """The pending `if:` line: its line and parsed condition (None when invalid)."""

    def text_line(self, number: int, text: str) -> None:
        if text.startswith("if:"):
            self.flush()
            source = text[3:]
            offset = 3 + len(source) - len(source.lstrip())
            condition = read_condition(
                self.rep, source.strip(), number, where="if: marker", column_offset=offset
            )
            self.marker = (number, condition)
            return
        if _ELSE.match(text):
            self.rep.error(
                "skill.prose.else_not_supported",
                number,
                "prose has no else:/elif:; write one `if:` line per case",
                key=text.split(":", 1)[0].strip(),
            )
        self.lines.append((number, text.rstrip()))

    def flush(self) -> None:
        """End the current paragraph (at a blank line, a fence, an `if:` or the end)."""
        if self.marker is not None and not self.lines:
            self.rep.warning(
                "skill.prose.empty_if",
                self.marker[0],
                "this if: line scopes no paragraph (the paragraph must follow directly)",
            )
        if self.lines:
            first = self.lines[0][0]
            text = "\n".join(t for _, t in self.lines)
            condition = self.marker[1] if self.marker is not None else None
            self.paragraphs.append(Paragraph(text=text, line=first, condition=condition))
            self.tokens.extend(scan_prose(text, lambda index, _: first + index, self.rep))
        self.lines = []
        self.marker = None


def split_body(lines: Sequence[str], first_line: int, rep: Reporter) -> Body:
    """Split body `lines` (the first is file line `first_line`) into paragraphs and fences."""
    splitter = _Splitter(rep=rep)
    index = 0
    while index < len(lines):
        text = lines[index]
        if is_fence_open(text):
            splitter.flush()
            index = _take_fence(lines, index, first_line, splitter)
            continue
        if text.strip():
            splitter.text_line(first_line + index, text)
        else:
            splitter.flush()
        index += 1
    splitter.flush()
    return Body(
        paragraphs=tuple(splitter.paragraphs),
        fences=tuple(splitter.fences),
        tokens=tuple(splitter.tokens),
    )


def is_fence_open(text: str) -> bool:
    """True for a column-0 `:::ordered_block` line."""
    rest = text[len(FENCE_OPEN) :]
    return text.startswith(FENCE_OPEN) and (not rest or rest[0].isspace())


def _take_fence(lines: Sequence[str], start: int, first_line: int, splitter: _Splitter) -> int:
    """Record the fence opened at `start`; return the index just after it."""
    end = len(lines)
    for index in range(start + 1, len(lines)):
        if lines[index].strip() == ":::":
            splitter.fences.append(_fence(lines, start, index, first_line, closed=True))
            return index + 1
        if is_fence_open(lines[index]):
            # A new fence before this one closed: this one was never closed.
            end = index
            break
    splitter.rep.error(
        "skill.block.unclosed_fence",
        first_line + start,
        "this :::ordered_block has no closing ::: line",
    )
    splitter.fences.append(_fence(lines, start, end, first_line, closed=False))
    return end


def _fence(lines: Sequence[str], start: int, end: int, first_line: int, *, closed: bool) -> Fence:
    return Fence(
        line=first_line + start,
        attributes=lines[start][len(FENCE_OPEN) :].strip(),
        body=tuple(lines[start + 1 : end]),
        closed=closed,
    )
