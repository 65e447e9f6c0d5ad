"""Reading a step's output by path, and rendering values as text (plan-cache spec §1.4, §3.4).

    walk(output, ("entries", "0", "id"), lenient=False)   -> the first entry's id
    walk(output, ("entries", "*", "path"), lenient=False) -> every entry's path
    walk(output, ("@count",), lenient=False)              -> how many entries

A path segment is a field name, a list index, `*` (project the rest of the path over a
list), `@count` (the size of a list, or of a result's `entries`) or `@brief` (a short text).
Exact walking finds what the path names or nothing. Lenient walking, allowed only for
read-only consumers, also tries what Metnos tries, in order: field synonyms (entries,
results and items stand for one another), `metadata.<field>`, count synonyms, the field
projected over the entries (plural names read as singular), then `entries.*.path` and
`entries.*.url`. Nothing found is `MISSING`, never an exception. A step's output is its
result text decoded (`decoded_output`). Pure.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final


class _Missing:
    """The value of a path that names nothing."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()

LIST_FIELDS: Final = ("entries", "results", "items")
"""Where a tool's result keeps its list (the first is canonical)."""
_SYNONYMS: Final[Mapping[str, tuple[str, ...]]] = {
    "entries": ("results", "items"),
    "results": ("entries", "items"),
    "items": ("entries", "results"),
    "path": ("file_path", "filepath", "file"),
    "url": ("link", "href"),
    "name": ("title",),
    "title": ("name", "subject"),
    "id": ("identifier", "key"),
}
_COUNT_WORDS: Final = ("count", "total", "n", "num")
_LABELS: Final = ("name", "title", "subject", "path", "url", "id")
BRIEF_ITEMS: Final = 5
"""How many list items `@brief` names before "and N more"."""


def decoded_output(text: str) -> object:
    """A tool's output as plans read it: its result text (what the model saw) decoded as
    JSON when it is JSON, else the text. Recording (`keel.plans.from_turn`) and serving
    (`keel.loop.cascade_run`) both read outputs through this, so a `${stepN.path}` made
    from one run resolves the same way against the next (a tool that returns JSON text
    and one that returns the mapping read alike)."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def walk(value: object, path: tuple[str, ...], *, lenient: bool) -> object:
    """The value at `path` inside `value`, or `MISSING`."""
    if not path or value is MISSING:
        return value
    head, rest = path[0], path[1:]
    if head == "*":
        return _project(_as_list(value, lenient), rest, lenient=lenient)
    if head == "@count":
        return walk(count(value, lenient=lenient), rest, lenient=lenient)
    if head == "@brief":
        return walk(brief(value), rest, lenient=lenient)
    return walk(_segment(value, head, lenient), rest, lenient=lenient)


def count(value: object, *, lenient: bool) -> object:
    """The size of a list, of a result's entries, or a declared count; else `MISSING`."""
    if value is None:
        return 0
    if isinstance(value, list | tuple):
        return len(value)
    if not isinstance(value, Mapping):
        return MISSING
    for name in LIST_FIELDS:
        if isinstance(value.get(name), list | tuple):
            return len(value[name])
    for name in _COUNT_WORDS if lenient else ("count",):
        found = value.get(name)
        if isinstance(found, int) and not isinstance(found, bool):
            return found
    return MISSING


def list_of(value: object, *, lenient: bool) -> list[object] | None:
    """The list a result carries: itself, its `entries` (lenient: results/items too)."""
    if isinstance(value, list | tuple):
        return list(value)
    if isinstance(value, Mapping):
        for name in LIST_FIELDS if lenient else LIST_FIELDS[:1]:
            if isinstance(value.get(name), list | tuple):
                return list(value[name])
    return None


def is_empty(value: object) -> bool:
    """Nothing produced: None, an empty string/list/object, or a result with no entries."""
    if value is None:
        return True
    if isinstance(value, str | list | tuple | Mapping) and len(value) == 0:
        return True
    items = list_of(value, lenient=True) if isinstance(value, Mapping) else None
    return items is not None and not items


def brief(value: object) -> str:
    """A short human text: a list's first few labels, and how many more."""
    items = list_of(value, lenient=True)
    if items is None:
        return as_text(value)
    shown = ", ".join(label(item) for item in items[:BRIEF_ITEMS])
    extra = len(items) - BRIEF_ITEMS
    return f"{shown} and {extra} more" if extra > 0 else shown


def as_text(value: object) -> str:
    """How a value reads inside a string (an embedded ref)."""
    if value is None or value is MISSING:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list | tuple):
        return ", ".join(label(item) for item in value)
    return label(value)


def label(item: object) -> str:
    """An item's name-like field, or its compact JSON text."""
    if isinstance(item, Mapping):
        for name in _LABELS:
            if item.get(name) not in (None, ""):
                return as_text(item[name])
        return json.dumps(item, default=str, separators=(",", ":"), ensure_ascii=False)
    return as_text(item)


def _project(items: list[object] | None, rest: tuple[str, ...], *, lenient: bool) -> object:
    if items is None:
        return MISSING
    found = [walk(item, rest, lenient=lenient) for item in items]
    if any(v is MISSING for v in found):
        if not lenient:
            return MISSING
        found = [v for v in found if v is not MISSING]
    return found


def _as_list(value: object, lenient: bool) -> list[object] | None:
    if isinstance(value, list | tuple):
        return list(value)
    return list_of(value, lenient=True) if lenient else None


def _segment(value: object, name: str, lenient: bool) -> object:
    if isinstance(value, list | tuple):
        if name.isdigit():
            index = int(name)
            return value[index] if index < len(value) else MISSING
        if not lenient:
            return MISSING
        return _project(list(value), (_singular_of(value, name),), lenient=True)
    if not isinstance(value, Mapping):
        return MISSING
    if name in value:
        return value[name]
    return _fallback(value, name) if lenient else MISSING


def _fallback(value: Mapping[str, object], name: str) -> object:
    for other in _SYNONYMS.get(name, ()):
        if other in value:
            return value[other]
    metadata = value.get("metadata")
    if isinstance(metadata, Mapping) and name in metadata:
        return metadata[name]
    if name in _COUNT_WORDS:
        return count(value, lenient=True)
    entries = list_of(value, lenient=True)
    if entries is None:
        return MISSING
    for field in (_singular_of(entries, name), "path", "url"):
        found = _project(entries, (field,), lenient=False)
        if found is not MISSING:
            return found
    return MISSING


def _singular_of(items: list[object] | tuple[object, ...], name: str) -> str:
    """`name`, or its singular when the items have that field instead (`paths` -> `path`)."""
    first = next((i for i in items if isinstance(i, Mapping)), None)
    if first is None or name in first:
        return name
    candidates = [name[:-3] + "y"] if name.endswith("ies") else []
    candidates += [name[:-2]] if name.endswith("es") else []
    candidates += [name[:-1]] if name.endswith("s") else []
    return next((c for c in candidates if c in first), name)
