"""Hooks of return_items: the return is checked in code while it is recorded.

The items must be in the picked (delivered) order, and the refund must go to the order's
original payment method or to one of the customer's gift cards.
"""

from __future__ import annotations

from retaildb import current
from skills._shared.checks import check_return, picked_order

from keel.tools import ToolContext, ToolResult


def _check(context: ToolContext) -> ToolResult:
    db = current()
    read = context.memory.get
    order, refused = picked_order(
        db, read("pick_order.order_id"), read("project.user_id"), "delivered"
    )
    if order is None:
        return ToolResult(error=refused)
    problem, summary = check_return(db, order, read("item_ids"), read("payment_method_id"))
    if problem:
        return ToolResult(error=problem)
    context.memory.set("return_summary", summary or None)
    return ToolResult(llm_response={"return": summary} if summary else {"recorded": True})


async def run_after_setting_item_ids(context: ToolContext) -> ToolResult:
    """Check the items to return."""
    return _check(context)


async def run_after_setting_payment_method_id(context: ToolContext) -> ToolResult:
    """Check where the refund goes."""
    return _check(context)
