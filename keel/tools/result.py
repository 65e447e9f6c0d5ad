"""What a tool returns (`ToolResult`), the text a model sees for its `llm_response`, and
`InvalidMemoryValue` for legacy hooks."""

from __future__ import annotations

import dataclasses
import enum
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import orjson

from keel.errors import ToolError


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolResult:
    """A tool's outcome.

    `llm_response` is what the model sees as the tool output (any JSON-able value).
    `next` is accepted for Mantle compatibility and ignored (a no-op in Mantle too); a list
    passed by older code is stored as a tuple. A non-null `error` marks the run as failed;
    a post-write hook returning one rejects (rolls back) the write.
    """

    llm_response: object = None
    next: tuple[object, ...] = ()
    error: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.next, tuple):
            # Mantle code passes lists; keep the value immutable.
            object.__setattr__(self, "next", tuple(self.next))

    @property
    def is_error(self) -> bool:
        """True when `error` is set."""
        return self.error is not None


class InvalidMemoryValue(ToolError):
    """Raised by a legacy `set_<entry>` hook to reject the value just written."""

    code = "tool.invalid_memory_value"


# The text a model sees for a tool's `llm_response`.


def to_result_text(value: object) -> str:
    """`value` as tool-output text: a str unchanged, None as "", anything else as compact
    JSON with sorted keys (read-only mappings, tuples, sets, enums and dataclass instances
    included); `str(value)` when it cannot be JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if _orjson_writes_alike(value, 0):
        try:
            return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
        except (TypeError, orjson.JSONEncodeError):
            pass  # a lone surrogate, an integer beyond 64 bits: the standard library's way
    try:
        return _RESULT.encode(value)
    except (TypeError, ValueError, RecursionError):
        return _plain_str(value)


def _jsonable(value: object) -> object:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr)
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: getattr(value, field.name) for field in dataclasses.fields(value)}
    raise TypeError(f"{type(value).__name__} is not JSON")


def _orjson_writes_alike(value: object, depth: int) -> bool:
    """Whether orjson writes `value` (sorted keys) as `_RESULT` does, when it writes it at
    all: dicts with string keys, lists, tuples, strings, integers, booleans and None, of
    exactly those types (no float: the two spell some differently; no subclass: enums)."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if depth > _ALIKE_DEPTH:
        return False
    items: Iterable[object]
    if kind is dict:
        for key in value:  # type: ignore[attr-defined]
            if type(key) is not str:
                return False
        items = value.values()  # type: ignore[attr-defined]
    elif kind is list or kind is tuple:
        items = value  # type: ignore[assignment]
    else:
        return False
    for item in items:
        kind = type(item)
        if not (kind is str or kind is int or kind is bool or item is None):
            if not _orjson_writes_alike(item, depth + 1):
                return False
    return True


_ALIKE_DEPTH = 32
"""Deeper values take the standard library's way (which also tells a cycle)."""


# What `json.dumps` with these options makes, the encoder made once.
_RESULT = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=_jsonable
)


def _plain_str(value: object) -> str:
    try:
        return str(value)
    except Exception:
        return f"<{type(value).__name__}>"
