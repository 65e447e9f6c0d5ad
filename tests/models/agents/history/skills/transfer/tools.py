"""Tools of the transfer skill."""

from __future__ import annotations

from keel.tools import ToolContext, ToolResult, tool


@tool(description="Send money to a payee.")
async def send_money(payee: str, amount: int, *, context: ToolContext) -> ToolResult:
    """Send.

    Args:
        payee: Who gets the money.
        amount: Whole pounds.
    """
    return ToolResult(llm_response={"sent": amount, "to": payee})
