"""Hook of change_order_payment: the new payment method is checked in code.

It must be one of the customer's methods, differ from the one the order was paid with,
and, for a gift card, hold at least the order total.
"""

from __future__ import annotations

from retaildb import current
from skills._shared.checks import check_new_payment, picked_order

from keel.tools import ToolContext, ToolResult


async def run_after_setting_payment_method_id(context: ToolContext) -> ToolResult:
    """Check the new payment method and write the change summary."""
    db = current()
    read = context.memory.get
    order, refused = picked_order(
        db, read("pick_order.order_id"), read("project.user_id"), "pending"
    )
    if order is None:
        return ToolResult(error=refused)
    problem, summary = check_new_payment(db, order, str(read("payment_method_id")))
    if problem:
        return ToolResult(error=problem)
    context.memory.set("change_summary", summary)
    return ToolResult(llm_response={"change": summary})
