"""Tools of the collector skill."""

from __future__ import annotations

from keel.tools import ToolContext, ToolResult, tool


@tool(description="Check a code.")
async def check_code(code: str, strict: bool = False, *, context: ToolContext) -> ToolResult:
    """Check the code.

    Args:
        code: The code.
        strict: Check strictly.
    """
    context.memory.set("checked", True)
    return ToolResult(llm_response={"ok": True})
