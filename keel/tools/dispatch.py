"""Run a validated tool call, or a post-write hook, and say how it went.

    run = await run_tool(definition, arguments, context=context, timeout=10)
    run.outcome         # "success" | "error" | "timeout"
    run.result_text     # what the model sees as the tool output

The call goes through `invoke_tool` / `invoke_hook`, so `current_tool_context()` works in it.
A raised exception becomes an error described as `"<ExceptionType>: <message>"` (no
traceback reaches the model); passing the deadline becomes a timeout; a returned value that
reports failure (a `ToolResult` error, or a failure payload such as `{"ok": false}`: see
`keel.tools.failure`, the one definition) becomes an error. A cancellation of the
calling task (a cancelled turn) is not an outcome: `asyncio.CancelledError` propagates and
nothing is recorded, as the spec wants (the tool may run again next turn).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from keel.errors import KeelError
from keel.tools.coerce import coerce_arguments
from keel.tools.context import ToolContext
from keel.tools.definition import HookDefinition, ToolDefinition
from keel.tools.failure import payload_failure
from keel.tools.frozen import thaw_json
from keel.tools.guarded import Finished, Raised, describe_exception, guarded, seconds
from keel.tools.invoke import invoke_hook, invoke_tool
from keel.tools.result import InvalidMemoryValue, ToolResult, to_result_text
from keel.tools.threads import tool_threads

ToolOutcome = Literal["success", "error", "timeout"]


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolRun:
    """How one tool call went."""

    outcome: ToolOutcome
    result_text: str
    """The tool output the model sees, on every path: the `llm_response` as text on success;
    on failure `Error: <message>`, or the `llm_response` text when a failing `ToolResult`
    carried one."""
    llm_response: object
    """The tool's `llm_response` (a bare return value counts as one); None when it raised
    or timed out."""
    error_message: str | None
    """Set exactly when the run failed."""
    error_code: str | None = None
    """Why it failed, dotted (set exactly when it failed): `tool.timeout`, `tool.error_result`
    (the tool returned an error), `tool.raised`, or the `code` of a raised `KeelError`
    (e.g. `mcp.server_unavailable`)."""
    raised: BaseException | None = field(default=None, compare=False, repr=False)
    """The exception the tool raised (for the operator's log; never shown to the model)."""

    @property
    def is_error(self) -> bool:
        """True for an error or a timeout."""
        return self.outcome != "success"


@dataclass(frozen=True, kw_only=True, slots=True)
class HookRun:
    """What a post-write hook decided: keep the write, or reject (roll back) with a reason."""

    rejected: bool
    message: str | None
    """Why it rejected (None when the write stands)."""


async def run_tool(
    definition: ToolDefinition,
    arguments: Mapping[str, object],
    *,
    context: ToolContext | None,
    timeout: float,
) -> ToolRun:
    """Call the tool with already-validated arguments for at most `timeout` seconds.

    Arguments are first thawed (fresh lists and dicts) and converted to the annotated
    Python types (`coerce_arguments`); a
    failure there counts as the tool's error. A return value that is not a `ToolResult` is
    taken as its `llm_response` (Mantle tools sometimes return a plain dict).
    """

    # Arguments read back from the log (a confirmed or resumed call) are frozen; a tool
    # gets plain lists and dicts, the same as a direct call.
    plain = thaw_json(arguments)

    async def call() -> object:
        return await invoke_tool(definition, coerce_arguments(definition, plain), context)

    if definition.runs_in_thread:  # blocking code: a worker thread keeps the deadline
        outcome = await tool_threads().call(call, timeout, name=definition.name)
    else:
        # `invoke_tool`'s own coroutine, without `call`'s around it (`guarded` turns what
        # the conversion raises into the tool's failure, as it does what the tool raises).
        outcome = await guarded(
            lambda: invoke_tool(definition, coerce_arguments(definition, plain), context),
            timeout,
        )
    if isinstance(outcome, Finished):
        return _finished(definition.name, outcome.value)
    if isinstance(outcome, Raised):
        message = describe_exception(outcome.error)
        code = outcome.error.code if isinstance(outcome.error, KeelError) else "tool.raised"
        return ToolRun(
            outcome="error",
            result_text=error_text(message),
            llm_response=None,
            error_message=message,
            error_code=code,
            raised=outcome.error,
        )
    message = f"tool '{definition.name}' timed out after {seconds(timeout)} seconds"
    return ToolRun(
        outcome="timeout",
        result_text=error_text(message),
        llm_response=None,
        error_message=message,
        error_code="tool.timeout",
    )


def error_text(message: str) -> str:
    """What the model sees for a failed run that carried no `llm_response`."""
    return f"Error: {message}"


def _finished(name: str, value: object) -> ToolRun:
    """A returned value as a run: a success, or a failure (`keel.tools.failure`)."""
    response = value.llm_response if isinstance(value, ToolResult) else value
    if not isinstance(value, ToolResult) or value.error is None:
        failure = payload_failure(response)
        text = to_result_text(response)
        if failure is None:
            return ToolRun(
                outcome="success", result_text=text, llm_response=response, error_message=None
            )
        return ToolRun(
            outcome="error",
            result_text=text,  # the model reads the payload itself, as the tool wrote it
            llm_response=response,
            error_message=failure.message or f"tool '{name}' reported failure ({failure.marker})",
            error_code="tool.error_result",
        )
    message = str(value.error) or f"tool '{name}' reported an error"
    text = error_text(message) if value.llm_response is None else to_result_text(value.llm_response)
    return ToolRun(
        outcome="error",
        result_text=text,
        llm_response=value.llm_response,
        error_message=message,
        error_code="tool.error_result",
    )


async def run_hook(hook: HookDefinition, *, context: ToolContext | None, timeout: float) -> HookRun:
    """Run a post-write hook (sync or async) for at most `timeout` seconds.

    It rejects the write by returning a `ToolResult` with `error` set, or a response mapping
    (the `ToolResult.llm_response`, or a bare returned mapping) with a non-null `error` or
    `ok: false`, or by raising (`InvalidMemoryValue` or anything else). Timing out rejects
    too: an unchecked value is not kept. A sync hook, or an async one seen doing blocking
    IO, runs in a worker thread (`keel.tools.threads`), so the deadline holds for it too.
    """
    if hook.runs_in_thread:
        outcome = await tool_threads().call(
            lambda: invoke_hook(hook, context), timeout, name=hook.name
        )
    else:
        outcome = await guarded(lambda: invoke_hook(hook, context), timeout)
    if isinstance(outcome, Finished):
        return _hook_verdict(hook.name, outcome.value)
    if isinstance(outcome, Raised):
        error = outcome.error
        if isinstance(error, InvalidMemoryValue):
            return HookRun(rejected=True, message=str(error) or _rejected(hook.name))
        return HookRun(rejected=True, message=describe_exception(error))
    return HookRun(
        rejected=True, message=f"hook '{hook.name}' timed out after {seconds(timeout)} seconds"
    )


def _hook_verdict(name: str, value: object) -> HookRun:
    if isinstance(value, ToolResult):
        if value.error is not None:
            return HookRun(rejected=True, message=str(value.error) or _rejected(name))
        value = value.llm_response
    failure = payload_failure(value)  # the same definition as a tool run's
    if failure is None:
        return HookRun(rejected=False, message=None)
    return HookRun(rejected=True, message=failure.message or _rejected(name))


def _rejected(name: str) -> str:
    return f"hook '{name}' rejected the value"
