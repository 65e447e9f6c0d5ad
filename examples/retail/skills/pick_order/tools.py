"""The order hook: only an order of the signed-in customer can be picked.

Ownership is checked here, in code: an order id that does not exist or belongs to someone
else is refused, so no skill can look at or change another customer's order.
"""

from __future__ import annotations

from retaildb import current
from skills._shared.shop import order_summary, owned_order, profile

from keel.tools import ToolContext, ToolResult


async def run_after_setting_order_id(context: ToolContext) -> ToolResult:
    """Load the picked order (status, record, summary), or refuse it."""
    db = current()
    user_id = context.memory.get("project.user_id")
    order, problem = owned_order(db, user_id, str(context.memory.get("order_id") or ""))
    if order is None:
        return ToolResult(error=problem)
    context.memory.set("order_id", order["order_id"])
    context.memory.set("order_status", order["status"])
    context.memory.set("order_details", order)
    context.memory.set("order_summary", order_summary(db, order))
    # The profile lists every order with its status: refresh it while we are here.
    context.memory.set("project.profile", profile(db, str(user_id)))
    return ToolResult(llm_response={"order_id": order["order_id"], "status": order["status"]})
