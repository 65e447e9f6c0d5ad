"""What a tool returns (`ToolResult`), and `InvalidMemoryValue` for legacy hooks."""

from __future__ import annotations

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
