"""Tools of the session-start skill."""

from __future__ import annotations

from keel.tools import ToolContext, ToolResult, tool


@tool(description="Count one greeting.")
async def count_greeting(*, context: ToolContext) -> ToolResult:
    """Count."""
    count = (context.memory.get("project.greeted_count") or 0) + 1
    context.memory.set("project.greeted_count", count)
    return ToolResult(llm_response={"count": count})
