"""What a tool receives as `context`: memory access, immediate messages, cancellation, ids.

`ToolContext` is the protocol the turn loop implements. `LocalToolContext` is a small
concrete one backed by values and callables passed in (tests, scripts, and the loop until
it brings its own). `current_tool_context()` returns the context of the tool call running
in this task; Mantle's `current_turn_context()` is served from it by the compat shim.

`send` returns an awaitable: Mantle tools write `await context.send(text)`. Implementations
should record the message when `send` is called and return an already-finished awaitable,
so a tool that forgets the `await` still sends.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Generator, Mapping
from contextvars import ContextVar
from typing import Any, Protocol, runtime_checkable

from keel.errors import RunError
from keel.tools.result import InvalidMemoryValue, ToolResult

__all__ = [
    "InvalidMemoryValue",
    "LocalMemory",
    "LocalToolContext",
    "MemoryAccess",
    "ToolContext",
    "ToolResult",
    "current_tool_context",
    "use_tool_context",
]


@runtime_checkable
class MemoryAccess(Protocol):
    """`context.memory`: keys are bare (`entry`: own skill, then project) or qualified
    (`project.entry`, `<skill_id>.entry`)."""

    def get(self, key: str) -> Any:
        """The current value, or None when unset."""
        ...

    def set(self, key: str, value: Any) -> None:
        """Write a declared key now (kept even if the tool is later cancelled)."""
        ...

    def clear(self, key: str) -> None:
        """Unset a declared key."""
        ...


@runtime_checkable
class ToolContext(Protocol):
    """The object injected as a tool's `context` argument."""

    @property
    def memory(self) -> MemoryAccess:
        """Read and write conversation memory."""
        ...

    def send(self, text: str) -> Awaitable[None]:
        """Send `text` to the user immediately, verbatim."""
        ...

    @property
    def is_cancelled(self) -> bool:
        """True once the turn has been cancelled; check before irreversible work."""
        ...

    @property
    def sender_id(self) -> str:
        """The channel's id for the user (Mantle's tracker sender id)."""
        ...

    @property
    def conversation_id(self) -> str:
        """Keel's id for the conversation."""
        ...


class _Finished:
    """An awaitable that is already done (what `send` returns after recording the text)."""

    __slots__ = ()

    def __await__(self) -> Generator[None, None, None]:
        return
        yield  # pragma: no cover - makes this a generator


class LocalMemory:
    """Dict-backed `MemoryAccess`. Keys are stored exactly as given (no scope resolution).

    `on_set(key, value)` runs before each write and may raise to reject it.
    """

    def __init__(
        self,
        values: Mapping[str, Any] | None = None,
        *,
        on_set: Callable[[str, Any], None] | None = None,
    ) -> None:
        self.values: dict[str, Any] = dict(values or {})
        self._on_set = on_set

    def get(self, key: str) -> Any:
        """The stored value or None."""
        return self.values.get(key)

    def set(self, key: str, value: Any) -> None:
        """Store `value` under `key` (after `on_set` accepts it)."""
        if self._on_set is not None:
            self._on_set(key, value)
        self.values[key] = value

    def clear(self, key: str) -> None:
        """Remove `key` if present."""
        self.values.pop(key, None)


class LocalToolContext:
    """A `ToolContext` made of plain parts.

    Every sent text is appended to `sent`; `on_send` (sync or async) is called as well.
    `cancelled` is polled by `is_cancelled`.
    """

    def __init__(
        self,
        *,
        memory: MemoryAccess | None = None,
        on_send: Callable[[str], object] | None = None,
        cancelled: Callable[[], bool] | None = None,
        sender_id: str = "",
        conversation_id: str = "",
    ) -> None:
        self._memory: MemoryAccess = memory if memory is not None else LocalMemory()
        self._on_send = on_send
        self._cancelled = cancelled
        self._sender_id = sender_id
        self._conversation_id = conversation_id
        self.sent: list[str] = []

    @property
    def memory(self) -> MemoryAccess:
        """The memory given at construction (a fresh `LocalMemory` by default)."""
        return self._memory

    def send(self, text: str) -> Awaitable[None]:
        """Record `text`, pass it to `on_send`, and return an awaitable for the caller."""
        self.sent.append(text)
        outcome = self._on_send(text) if self._on_send is not None else None
        if inspect.isawaitable(outcome):
            return _discard(outcome)
        return _Finished()

    @property
    def is_cancelled(self) -> bool:
        """What `cancelled()` says (False when not given)."""
        return self._cancelled() if self._cancelled is not None else False

    @property
    def sender_id(self) -> str:
        """The sender id given at construction."""
        return self._sender_id

    @property
    def conversation_id(self) -> str:
        """The conversation id given at construction."""
        return self._conversation_id


async def _discard(awaitable: Awaitable[object]) -> None:
    await awaitable


_CURRENT: ContextVar[ToolContext | None] = ContextVar("keel_tool_context", default=None)


def current_tool_context() -> ToolContext:
    """The context of the tool call running in this task (raises `RunError` outside one)."""
    context = _CURRENT.get()
    if context is None:
        raise RunError("no tool call is running in this task")
    return context


class use_tool_context:
    """Make `context` what `current_tool_context()` returns inside the `with` block (a
    class, not a generator: every tool call enters one)."""

    __slots__ = ("context", "token")

    def __init__(self, context: ToolContext) -> None:
        self.context = context

    def __enter__(self) -> ToolContext:
        self.token = _CURRENT.set(self.context)
        return self.context

    def __exit__(self, *_: object) -> None:
        _CURRENT.reset(self.token)
