"""What a tool module defines: tool and post-write hook definitions, and the error for bad ones.

A `ToolDefinition` is built by the `@tool` decorator when a module is imported; the loader
(`keel.tools.load`) then fills in what only the source text can tell (project-relative file,
literal memory keys written). A `HookDefinition` describes a `run_after_setting_<entry>`
function, which the engine calls after a write of `<entry>` and never offers to the LLM.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from keel.errors import ToolError
from keel.tools.blocking import BlockingCall
from keel.tools.contract import ToolContract
from keel.tools.frozen import thaw_json

HOOK_PREFIX = "run_after_setting_"
"""Functions named `run_after_setting_<entry>` are post-write hooks for `<entry>`."""


class ToolDefinitionError(ToolError):
    """A function cannot be made into a tool (raised at import time, reported as a diagnostic)."""

    code = "tool.definition.invalid"

    def __init__(
        self,
        message: str,
        *,
        function: str | None = None,
        parameter: str | None = None,
        line: int | None = None,
    ) -> None:
        self.message = message
        self.function = function
        self.parameter = parameter
        self.line = line
        super().__init__(message)


@dataclass(frozen=True, kw_only=True, slots=True)
class MemoryWrite:
    """A `context.memory.set(...)` / `.clear(...)` call found in a tool module's source."""

    key: str | None
    """The literal key (or the value of a module-level string constant); None when dynamic."""
    line: int
    """1-based line of the call."""
    method: Literal["set", "clear"]


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolDefinition:
    """One builder tool: what the LLM is offered and what to call."""

    name: str
    """Tool name offered to the LLM (the function name unless `@tool(name=...)`)."""
    description: str
    parameters: Mapping[str, object]
    """JSON schema of the arguments, deep read-only; `json_schema()` gives a plain copy."""
    func: Callable[..., Awaitable[Any]]
    """The decorated `async def`, unchanged."""
    context_param: str | None
    """Name of the injected context parameter (`context`), or None if the tool takes none."""
    param_names: tuple[str, ...]
    """The LLM-visible parameter names, in signature order."""
    module_file: str
    """Defining file: project-relative (forward slashes) once loaded by `load_tool_module`,
    the interpreter's filename when taken straight from a decorated function."""
    line: int
    """1-based line of the `def`."""
    memory_writes: tuple[MemoryWrite, ...] = ()
    """Memory writes in the function body and in same-module functions it calls
    (filled by `load_tool_module`; empty when the definition came from the decorator alone)."""
    mcp_server: str | None = None
    """The MCP server that serves the tool (`keel.mcp`); None for a Python tool."""
    timeout: float | None = None
    """Seconds the tool may run; None means the agent's `tool_timeout`."""
    contract: ToolContract = field(default_factory=ToolContract)
    """What the tool declares for plans (`@tool(effect=..., bindings=...)`, plan-cache spec
    §3.5); the fail-closed default when it declares nothing."""
    blocking: bool | None = None
    """`@tool(blocking=...)`: True runs it in a worker thread, False on the event loop;
    None (the default) decides from `blocking_calls`."""
    blocking_calls: tuple[BlockingCall, ...] = ()
    """Blocking IO the source shows in the `async def` (filled by `load_tool_module`,
    `keel.tools.blocking`)."""

    @property
    def runs_in_thread(self) -> bool:
        """Run in a worker thread with its own event loop (`keel.tools.threads`), so its
        timeout holds and the server's loop stays free: a Python tool declared blocking, or
        not declared either way and seen doing blocking IO. MCP tools never are."""
        if self.mcp_server is not None:
            return False
        return self.blocking if self.blocking is not None else bool(self.blocking_calls)

    def json_schema(self) -> dict[str, Any]:
        """A fresh, plain (mutable) copy of `parameters`, ready for a validator or a model API."""
        thawed: dict[str, Any] = thaw_json(self.parameters)
        return thawed


@dataclass(frozen=True, kw_only=True, slots=True)
class HookDefinition:
    """A post-write hook `run_after_setting_<entry>`: engine-invoked, never offered to the LLM."""

    entry: str
    """The memory entry whose successful write triggers the hook."""
    name: str
    """The function name (`run_after_setting_<entry>`)."""
    func: Callable[..., Any]
    """The function; sync or async, called with at most a `context` keyword argument."""
    is_async: bool
    context_param: str | None
    """`context` when the hook accepts it, else None."""
    module_file: str
    """Project-relative defining file, forward slashes."""
    line: int
    """1-based line of the `def`."""
    memory_writes: tuple[MemoryWrite, ...] = ()
    blocking_calls: tuple[BlockingCall, ...] = ()
    """Blocking IO the source shows in an `async def` hook."""

    @property
    def runs_in_thread(self) -> bool:
        """A sync hook, or an async one seen doing blocking IO, runs in a worker thread."""
        return not self.is_async or bool(self.blocking_calls)
