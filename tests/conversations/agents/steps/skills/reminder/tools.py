"""Tools of the reminder skill."""

from __future__ import annotations

from keel.tools import ToolContext, ToolResult, tool


@tool(description="Set a reminder two days before the loan is due.")
async def set_reminder(*, context: ToolContext) -> ToolResult:
    """Remind."""
    return ToolResult(llm_response={"reminder": "set"})
