"""A read-only tool and an effectful one (no effect declared: `write`, fail closed)."""

from __future__ import annotations

from keel.tools import ToolResult, tool


@tool(description="Look an order up by its id.", effect="read_only")
async def lookup(order_id: str) -> ToolResult:
    """Return the order's status.

    Args:
        order_id: The order id, e.g. A-1.
    """
    return ToolResult(llm_response={"order_id": order_id, "status": "shipped"})


@tool(description="Refund an order.")
async def refund(order_id: str) -> ToolResult:
    """Refund the order.

    Args:
        order_id: The order id, e.g. A-1.
    """
    return ToolResult(llm_response={"order_id": order_id, "refunded": True})
