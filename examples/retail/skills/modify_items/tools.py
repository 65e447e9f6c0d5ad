"""Hooks of modify_items: the item swap is checked in code while it is recorded.

Each recorded value is checked against the picked order (items in the order, same product,
available, different options; a payment method of the customer that can cover the
difference). A bad value is refused with the reason; once all three are good, the change
summary the confirmation question shows is written.
"""

from __future__ import annotations

from retaildb import current
from skills._shared.checks import check_swap, picked_order

from keel.tools import ToolContext, ToolResult


def _check(context: ToolContext) -> ToolResult:
    db = current()
    read = context.memory.get
    order, refused = picked_order(
        db, read("pick_order.order_id"), read("project.user_id"), "pending"
    )
    if order is None:
        return ToolResult(error=refused)
    problem, summary = check_swap(
        db, order, read("item_ids"), read("new_item_ids"), read("payment_method_id")
    )
    if problem:
        return ToolResult(error=problem)
    context.memory.set("change_summary", summary or None)
    return ToolResult(llm_response={"change": summary} if summary else {"recorded": True})


async def run_after_setting_item_ids(context: ToolContext) -> ToolResult:
    """Check the items to change."""
    return _check(context)


async def run_after_setting_new_item_ids(context: ToolContext) -> ToolResult:
    """Check the new variants against the items to change."""
    return _check(context)


async def run_after_setting_payment_method_id(context: ToolContext) -> ToolResult:
    """Check the payment method for the price difference."""
    return _check(context)
