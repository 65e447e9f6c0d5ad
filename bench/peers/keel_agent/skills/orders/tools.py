"""The benchmark's one tool, the same in every framework (see bench/peers/scenarios.py)."""

from __future__ import annotations

from keel.tools import ToolResult, tool


@tool(description="Look an order up by its id.", effect="read_only")
async def lookup(order_id: str) -> ToolResult:
    """Return the order's status.

    Args:
        order_id: The order id, e.g. A-1.
    """
    return ToolResult(llm_response={"order_id": order_id, "status": "shipped", "items": 2})
