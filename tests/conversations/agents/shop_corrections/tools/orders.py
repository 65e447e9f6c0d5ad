"""The shop's order tools; `ORDERS` is its state (one dict per loaded project)."""

from __future__ import annotations

from typing import Literal

from keel.tools import ToolResult, tool

ORDERS: dict[str, dict[str, str]] = {
    "#W7044833": {"status": "pending", "owner": "ann"},
    "#W9474165": {"status": "pending", "owner": "ann"},
    "#W5555555": {"status": "pending", "owner": "bob"},
}


@tool(
    description="Cancel a pending order once the customer confirmed.",
    effect="write",
    idempotency_key=["order_id"],
)
async def cancel_pending_order(
    order_id: str, reason: Literal["no longer needed", "ordered by mistake"]
) -> ToolResult:
    """Cancel the order.

    Args:
        order_id: The order id, starting with '#', e.g. '#W1234567'.
        reason: Why the customer cancels: 'no longer needed' or 'ordered by mistake'.
    """
    order = ORDERS.get(order_id)
    if order is None:
        return ToolResult(error=f"no order {order_id}")
    order["status"] = "cancelled"
    order["reason"] = reason
    return ToolResult(llm_response={"order_id": order_id, "status": "cancelled"})
