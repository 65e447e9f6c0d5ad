"""What a tool returns (`ToolResult`), the text a model sees for its `llm_response`, and
`InvalidMemoryValue` for legacy hooks."""

from __future__ import annotations

import dataclasses
import enum
import json
from collections.abc import Mapping
from dataclasses import dataclass

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


# What `json.dumps` with these options makes, the encoder made once.
_RESULT = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=_jsonable
)


def _plain_str(value: object) -> str:
    try:
        return str(value)
    except Exception:
        return f"<{type(value).__name__}>"
