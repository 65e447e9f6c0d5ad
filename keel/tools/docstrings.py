"""Per-argument descriptions from the `Args:` section of a Google-style docstring."""

from __future__ import annotations

import inspect
import re

_SECTION = re.compile(r"^(?P<indent>\s*)(?:Args|Arguments|Parameters|Params)\s*:\s*$")
_ENTRY = re.compile(r"^\*{0,2}(?P<name>[A-Za-z_]\w*)\s*(?:\([^)]*\))?\s*:(?P<text>.*)$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def parse_arg_descriptions(doc: str | None) -> dict[str, str]:
    """Map argument name -> description from the docstring's `Args:` section.

    Continuation lines (indented deeper than the entry) are joined with single spaces.
    The section ends at the first non-blank line indented no deeper than its header
    (e.g. `Returns:` or a closing paragraph). Returns {} when there is no such section.
    """
    if not doc:
        return {}
    lines = inspect.cleandoc(doc).splitlines()
    start = next((i for i, line in enumerate(lines) if _SECTION.match(line)), None)
    if start is None:
        return {}
    header_indent = _indent(lines[start])
    entry_indent: int | None = None
    parts: dict[str, list[str]] = {}
    current: str | None = None
    for line in lines[start + 1 :]:
        if not line.strip():
            continue
        indent = _indent(line)
        if indent <= header_indent:
            break
        if entry_indent is None:
            entry_indent = indent
        match = _ENTRY.match(line.strip()) if indent <= entry_indent else None
        if match is not None:
            current = match.group("name")
            parts[current] = [match.group("text").strip()]
        elif current is not None:
            parts[current].append(line.strip())
    return {name: " ".join(p for p in texts if p) for name, texts in parts.items()}
