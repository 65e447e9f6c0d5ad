"""Tools of the payout skill."""

from __future__ import annotations

from keel.tools import ToolContext, ToolResult, tool


@tool(description="Pay out an amount.")
async def pay(amount: int, *, context: ToolContext) -> ToolResult:
    """Pay.

    Args:
        amount: Whole pounds.
    """
    return ToolResult(llm_response={"paid": amount})
