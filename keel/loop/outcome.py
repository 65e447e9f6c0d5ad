"""What a framework tool call comes to: a recorded run, or a refusal the model is told."""

from __future__ import annotations

from keel.events.model import ToolCallRefused
from keel.llm.port import ToolCall
from keel.loop.tools_run import CallSite
from keel.loop.turn import Next, TurnContext
from keel.tools.dispatch import ToolRun


def _ok(text: str) -> ToolRun:
    return ToolRun(outcome="success", result_text=text, llm_response=text, error_message=None)


def _error(text: str) -> ToolRun:
    return ToolRun(
        outcome="error",
        result_text=text,
        llm_response=text,
        error_message=text,
        error_code="tool.error_result",
    )


async def refuse(
    t: TurnContext,
    call: ToolCall,
    code: str,
    message: str,
    *,
    batch: str | None,
    retryable: bool = False,
) -> str:
    """Record a refused proposal (`tool_call_refused`); returns what the model is told."""
    await t.emit(
        ToolCallRefused(
            tool_name=call.name,
            arguments=call.arguments,
            code=code,
            message=message,
            tool_call_id=call.id,
            tool_batch_id=batch,
            retryable=retryable,
        )
    )
    return f"Error ({code}): {message}"


async def _refused(
    t: TurnContext, call: ToolCall, site: CallSite, code: str, message: str
) -> tuple[str, Next]:
    """A refused framework-tool call: what the model is told, and that the loop goes on."""
    return await refuse(t, call, code, message, batch=site.batch_id), Next.CONTINUE


class _Done:
    """A framework tool ran: its result, and what the loop does next."""

    __slots__ = ("next", "run")

    def __init__(self, run: ToolRun, nxt: Next = Next.CONTINUE) -> None:
        self.run, self.next = run, nxt


Outcome = _Done | tuple[str, Next]
"""A framework tool's outcome: `_Done` (recorded as a run) or a refusal's (text, next)."""
