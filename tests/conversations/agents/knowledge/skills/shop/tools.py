"""Tools of the shop skill."""

from __future__ import annotations

from keel.tools import ToolContext, ToolResult, tool


@tool(description="Look up a book order.")
async def order_status(order_id: str, *, context: ToolContext) -> ToolResult:
    """Every order is on its way.

    Args:
        order_id: The order number.
    """
    return ToolResult(llm_response={"order_id": order_id, "status": "shipped"})


@tool(description="Cancel a book order.")
async def cancel_order(order_id: str, *, context: ToolContext) -> ToolResult:
    """Cancel (needs the customer's confirmation).

    Args:
        order_id: The order number.
    """
    return ToolResult(llm_response={"order_id": order_id, "cancelled": True})
