"""Keep texts in test YAML literal: `user: yes` means the text "yes", not a YAML boolean.

PyYAML resolves plain scalars with YAML 1.1 rules, so `yes`, `No`, `on`, `1:30` or `007`
become booleans and numbers. Under keys that always hold text (a user message, a bot
text, a button title...), `restore_texts` puts the source text back. It reads the
scalar from its source line and keeps it only when it resolves to the very value YAML
produced, so an unusual layout leaves the value as it is (and the caller then reports
"expected text", asking for quotes).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import yaml

from keel.source.yaml import LineDict, LineList

TEXT_KEYS = frozenset({"user", "bot", "model", "text", "content", "title", "payload"})
"""Keys whose values are always text in conversation tests and scripts."""

TEXT_LIST_KEYS = frozenset({"model", "buttons"})
"""Keys whose list items, when scalars, are texts (one `- item` per line is restored)."""

_NOT_PLAIN = tuple("'\"[{&*!|>%@`")


def restore_texts(data: object, source: str, keys: frozenset[str] = TEXT_KEYS) -> None:
    """Replace, in place, YAML-resolved booleans and numbers under `keys` (and the items
    of block lists under `TEXT_LIST_KEYS`) by their source text."""
    _walk(data, source.splitlines(), keys)


def _walk(node: object, lines: Sequence[str], keys: frozenset[str]) -> None:
    if isinstance(node, LineDict):
        for key, value in node.items():
            if key in keys and _is_resolved_scalar(value):
                text = _source_text(lines, node.line_of(key), rf"{re.escape(str(key))}\s*:", value)
                if text is not None:
                    node[key] = text
            elif key in TEXT_LIST_KEYS and isinstance(value, LineList):
                _restore_items(value, lines)
            _walk(value, lines, keys)
    elif isinstance(node, LineList):
        for item in node:
            _walk(item, lines, keys)


def _restore_items(items: LineList, lines: Sequence[str]) -> None:
    for index, item in enumerate(items):
        if _is_resolved_scalar(item):
            text = _source_text(lines, items.line_of(index), "-", item)
            if text is not None:
                items[index] = text


def _is_resolved_scalar(value: object) -> bool:
    return isinstance(value, bool | int | float)


def _source_text(lines: Sequence[str], line: int, lead: str, value: object) -> str | None:
    """The plain scalar after `lead` (a key and colon, or a list dash) on `line`."""
    if not 1 <= line <= len(lines):
        return None
    found = re.search(rf"(^|[\s{{,\-]){lead}\s+(.*)$", lines[line - 1])
    if found is None:
        return None
    in_flow = "{" in lines[line - 1][: found.start(2)]
    raw = re.split(r"[,}]" if in_flow else r"\s#", found.group(2), maxsplit=1)[0].strip()
    if not raw or raw.startswith(_NOT_PLAIN):
        return None
    try:
        reread = yaml.safe_load(raw)
    except yaml.YAMLError:
        return None
    if type(reread) is not type(value) or reread != value:
        return None
    return raw
