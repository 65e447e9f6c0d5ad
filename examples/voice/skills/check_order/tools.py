"""Tools of the check_order skill."""

from __future__ import annotations

from keel.tools import ToolContext, ToolResult, tool


@tool(description="Look up the caller's latest order.", effect="read_only")
async def order_status(context: ToolContext) -> ToolResult:
    """The latest order's delivery status (a fixed answer in this example)."""
    context.memory.set("arrives", "tomorrow")
    return ToolResult(llm_response={"status": "shipped", "arrives": "tomorrow"})
