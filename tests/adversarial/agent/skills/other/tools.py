"""The other skill's own tool: the vault skill must never run it."""

from __future__ import annotations

from keel.tools import ToolContext, ToolResult, tool


@tool(description="Reset the other skill's topic.")
async def other_tool(*, context: ToolContext) -> ToolResult:
    """Write the topic (so a forbidden run would show in memory)."""
    context.memory.set("topic", "hijacked")
    return ToolResult(llm_response={"reset": True})
