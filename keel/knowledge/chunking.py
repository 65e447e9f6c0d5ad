"""Cutting markdown reference documents into chunks (pure).

A document is first split into **sections** at ATX headings (`#` to `######`, outside
fenced code blocks). A section is its heading line and the text up to the next heading of
any level; its `heading` is the path of headings above it, joined by ` > `
(`Billing > Late payment`). Text before the first heading is a section with an empty
heading. A section with no text besides its heading is dropped (its heading still appears
in the paths of the sections below it).

A section that fits in `chunk_size` characters is one chunk. A longer one is cut into
pieces of at most `chunk_size` characters, each starting `chunk_overlap` characters before
the previous one ended (moved forward to a word start); a cut prefers, in this order, a
blank line, a line end, a sentence end and a space in the second half of the window, so
pieces rarely end mid-word. The heading path is not counted in the size (it is stored
beside the text).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from keel.project.references import ChunkingConfig

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(```|~~~)")
_BREAKS = ("\n\n", "\n", ". ", "? ", "! ", " ")


@dataclass(frozen=True, kw_only=True, slots=True)
class Chunk:
    """One retrievable piece of a reference document."""

    source: str
    """The file, relative to the project root (`references/billing.md`)."""
    heading: str
    """Heading path of its section (`Billing > Late payment`); empty before any heading."""
    text: str
    """The chunk's text (for the first piece of a section, starting with its heading line)."""

    @property
    def search_text(self) -> str:
        """What is embedded and keyword-indexed: the heading path, then the text."""
        return f"{self.heading}\n{self.text}" if self.heading else self.text


@dataclass(frozen=True, kw_only=True, slots=True)
class Section:
    """A heading and the text under it."""

    heading: str
    text: str


def sections(markdown: str) -> list[Section]:
    """The sections of a markdown document, in order (see the module docstring)."""
    found: list[Section] = []
    path: list[tuple[int, str]] = []
    lines: list[str] = []
    has_body = False
    fenced = False
    for line in markdown.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        match = None if fenced else _HEADING.match(line)
        if match is None:
            lines.append(line)
            has_body = has_body or bool(line.strip())
            continue
        if has_body:
            found.append(Section(heading=_joined(path), text="\n".join(lines).strip()))
        level = len(match.group(1))
        path = [(lv, title) for lv, title in path if lv < level] + [(level, match.group(2))]
        lines, has_body = [line], False
    if has_body:
        found.append(Section(heading=_joined(path), text="\n".join(lines).strip()))
    return found


def _joined(path: list[tuple[int, str]]) -> str:
    return " > ".join(title for _, title in path)


def split_text(text: str, size: int, overlap: int) -> list[str]:
    """`text` in pieces of at most `size` characters overlapping by about `overlap`."""
    pieces: list[str] = []
    start = 0
    while start < len(text):
        end = min(start + size, len(text))
        if end < len(text):
            end = _cut(text, start, end)
        piece = text[start:end].strip()
        if piece:
            pieces.append(piece)
        if end >= len(text):
            break
        start = _overlap_start(text, max(end - overlap, start + 1), end)
    return pieces


def _overlap_start(text: str, start: int, end: int) -> int:
    """`start`, moved forward to the next word when it falls inside one."""
    if start == 0 or text[start - 1].isspace():
        return start
    space = text.find(" ", start, end)
    return space + 1 if space != -1 else start


def _cut(text: str, start: int, end: int) -> int:
    """The best place to end a piece in `text[start:end]`: after a break in its second half."""
    floor = start + (end - start) // 2
    for mark in _BREAKS:
        at = text.rfind(mark, floor, end)
        if at != -1:
            return at + len(mark)
    return end


def chunk_document(source: str, markdown: str, chunking: ChunkingConfig) -> list[Chunk]:
    """Every chunk of one document, in order."""
    return [
        Chunk(source=source, heading=section.heading, text=piece)
        for section in sections(markdown)
        for piece in split_text(section.text, chunking.chunk_size, chunking.chunk_overlap)
    ]
