"""The shop's order tools: JSON text results, as the retail example's tools return them."""

import json

from keel.tools import tool

ORDERS: dict[str, dict[str, object]] = {
    "#W1111111": {
        "order_id": "#W1111111",
        "status": "pending",
        "address": {"city": "Austin", "zip": "78701"},
    },
    "#W2222222": {
        "order_id": "#W2222222",
        "status": "shipped",
        "address": {"city": "Denver", "zip": "80202"},
    },
    "#W3333333": {
        "order_id": "#W3333333",
        "status": "pending",
        "address": {"city": "Boston", "zip": "02108"},
    },
}


@tool(description="Look up an order by its id, e.g. '#W1234567'.", effect="read_only")
async def get_order_details(order_id: str) -> str:
    order = ORDERS.get(order_id)
    return json.dumps(order) if order is not None else "Error: order not found"


@tool(
    description="Cancel a pending order.",
    effect="write",
    idempotency_key=("order_id",),
    bindings={"reason": "structural"},
)
async def cancel_pending_order(order_id: str, reason: str) -> str:
    return json.dumps({"order_id": order_id, "status": "cancelled", "reason": reason})


@tool(description="Put an order on hold.", effect="write", idempotency_key=("order_id",))
async def hold_order(order_id: str) -> str:
    return json.dumps({"order_id": order_id, "status": "on hold"})
