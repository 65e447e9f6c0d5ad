"""Order tools of the plan-cache test agent; `WORLD` is the shop's state (tests reset it)."""

from keel.tools import tool

WORLD: dict[str, dict[str, str]] = {}
CALLS: list[tuple[str, str]] = []


def reset() -> None:
    """Fresh orders and an empty call log."""
    WORLD.clear()
    WORLD.update(
        {"12": {"status": "pending"}, "34": {"status": "delivered"}, "56": {"status": "pending"}}
    )
    CALLS.clear()


reset()


@tool(description="Look up an order by its number.", effect="read_only")
async def get_order(order_id: str) -> dict[str, str]:
    CALLS.append(("get_order", order_id))
    if order_id not in WORLD:
        raise ValueError(f"no order {order_id}")
    return {"order_id": order_id, "status": WORLD[order_id]["status"]}


@tool(description="Cancel a pending order.", effect="write", idempotency_key=("order_id",))
async def cancel_order(order_id: str) -> dict[str, str]:
    CALLS.append(("cancel_order", order_id))
    if WORLD[order_id]["status"] != "pending":
        raise ValueError(f"order {order_id} is not pending")
    WORLD[order_id]["status"] = "cancelled"
    return {"order_id": order_id, "status": "cancelled"}


@tool(description="Refund an order.", effect="write")
async def refund_order(order_id: str) -> dict[str, str]:
    CALLS.append(("refund_order", order_id))
    WORLD[order_id]["status"] = "refunded"
    return {"order_id": order_id, "status": "refunded"}
