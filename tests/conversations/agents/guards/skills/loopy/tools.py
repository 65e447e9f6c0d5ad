"""Tools of the loopy skill."""

from __future__ import annotations

from keel.tools import ToolContext, ToolResult, tool


@tool(description="Poll once.")
async def poll(n: int, *, context: ToolContext) -> ToolResult:
    """Poll.

    Args:
        n: Which poll.
    """
    return ToolResult(llm_response={"polled": n})
