"""A shared tool: only the `other` skill imports it, so the vault skill must never run it."""

from __future__ import annotations

from keel.tools import ToolContext, ToolResult, tool


@tool(description="Look up the customer's region.")
async def shared_lookup(*, context: ToolContext) -> ToolResult:
    """Write the region (so a forbidden run would show in memory)."""
    context.memory.set("project.region", "north")
    return ToolResult(llm_response={"region": "north"})
