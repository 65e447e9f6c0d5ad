"""Tokens in prose: `@block.<id>`, `@skill.<id>`, `@memory.<ns>.<entry>`, `@tool.<name>`.

Also finds what prose must not contain: malformed lookalikes (`@memory.project`) and bare
`session.<ns>.<entry>` references, which are never substituted (an error; a warning inside a
backtick code span, which Mantle loads and the model reads as a name).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Final

from keel.conditions.names import is_identifier
from keel.skills.model import Token, TokenKind
from keel.source.reporter import Reporter

_TOKEN: Final = re.compile(
    r"(?<![\w.@])@(?P<kind>block|skill|memory|tool)(?![A-Za-z0-9_])"
    r"(?P<rest>(?:\.[A-Za-z0-9_\-]*)*)"
)
_BARE_SESSION: Final = re.compile(r"(?<![\w.@])session\.[A-Za-z_]\w*\.[A-Za-z_]\w*")
_SEGMENT: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_\-]*")
_CODE_SPAN: Final = re.compile(r"`[^`\n]*`")
_KINDS: Final[dict[str, TokenKind]] = {
    "block": "block",
    "skill": "skill",
    "memory": "memory",
    "tool": "tool",
}
_FORMS: Final = {
    "block": "@block.<block_id>",
    "skill": "@skill.<skill_id>",
    "memory": "@memory.<namespace>.<entry>",
    "tool": "@tool.<name>",
}

LineOf = Callable[[int, str], int]
"""(index of the line within the text, the matched text) -> line in the file."""


def scan_prose(text: str, line_of: LineOf, rep: Reporter) -> list[Token]:
    """Tokens of `text`, reporting bad tokens and bare `session.` references."""
    tokens: list[Token] = []
    for index, line_text in enumerate(text.split("\n")):
        for match in _TOKEN.finditer(line_text):
            line = line_of(index, match.group(0))
            token = _token(match, line, rep)
            if token is not None:
                tokens.append(token)
        spans = [m.span() for m in _CODE_SPAN.finditer(line_text)]
        for match in _BARE_SESSION.finditer(line_text):
            _session_reference(match, spans, line_of(index, match.group(0)), rep)
    return tokens


def _session_reference(
    match: re.Match[str], spans: Sequence[tuple[int, int]], line: int, rep: Reporter
) -> None:
    written = match.group(0)
    fix = f"@memory.{written.removeprefix('session.')}"
    if any(start < match.start() and match.end() < end for start, end in spans):
        # Mantle loads it: the model reads the name as written (a code span).
        rep.warning(
            "skill.prose.quoted_session_reference",
            line,
            f"`{written}` in backticks is shown to the model as written, never substituted; "
            f"write {fix} (no backticks) for its current value",
            key=written,
        )
        return
    rep.error(
        "skill.prose.bare_session_reference",
        line,
        f"{written!r} in prose is never substituted; write {fix}",
        key=written,
    )


def _token(match: re.Match[str], line: int, rep: Reporter) -> Token | None:
    kind = _KINDS[match.group("kind")]
    segments = match.group("rest").split(".")[1:]
    if segments and segments[-1] == "":
        # A trailing dot is the end of the sentence, not part of the token.
        segments.pop()
    problem = _problem(kind, segments)
    if problem is not None:
        written = "@" + match.group("kind") + ".".join(["", *segments])
        rep.error(
            "skill.prose.bad_token",
            line,
            f"malformed token {written!r}: {problem}; write {_FORMS[kind]}",
            key=written,
        )
        return None
    return Token(kind=kind, target=".".join(segments), line=line)


def _problem(kind: str, segments: Sequence[str]) -> str | None:
    wanted = 2 if kind == "memory" else 1
    if len(segments) != wanted:
        return f"expected {wanted} segment(s) after @{kind}, found {len(segments)}"
    if not all(_SEGMENT.fullmatch(s) for s in segments):
        return "empty or invalid segment"
    if kind == "memory":
        if not all(is_identifier(s) for s in segments):
            return "namespace and entry must be identifiers"
        if segments[0] == "system":
            return "system memory is not readable from prose"
    return None


def locate(raw_lines: Sequence[str], start_line: int, needle: str) -> int:
    """First file line at or after `start_line` (1-based) containing `needle`.

    Used for text that came out of a YAML scalar, whose inner lines YAML does not report.
    Falls back to `start_line`.
    """
    for number in range(max(start_line, 1), len(raw_lines) + 1):
        if needle in raw_lines[number - 1]:
            return number
    return start_line
