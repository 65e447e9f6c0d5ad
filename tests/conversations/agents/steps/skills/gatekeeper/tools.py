"""Tools of the gatekeeper skill."""

from __future__ import annotations

from keel.tools import ToolContext, ToolResult, tool


@tool(description="Open the gate.")
async def open_gate(*, context: ToolContext) -> ToolResult:
    """Open it."""
    return ToolResult(llm_response={"open": True})
