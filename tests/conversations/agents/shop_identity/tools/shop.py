"""Tools of the identity test shop: customers, products and orders (each order has an owner).

`get_order_details` shows any order (as the retail example's look-up does), so only the plan
cache stands between one customer's cached plan and another customer's data;
`cancel_pending_order` checks ownership in code: an order the signed-in customer
(`project.user_id`) does not own is refused, whoever asks (the model or a served plan).
"""

from __future__ import annotations

from typing import Literal

from keel.tools import ToolContext, ToolResult, tool

USERS: dict[str, dict[str, str]] = {
    "ann@example.com": {"user_id": "u-ann", "name": "Ann Lee", "open_order": "#W1001"},
    "bob@example.com": {"user_id": "u-bob", "name": "Bob Stone", "open_order": "#W2002"},
    "cy@example.com": {"user_id": "u-cy", "name": "Cy Park"},
}
ORDERS: dict[str, dict[str, str]] = {
    "#W1001": {"owner": "u-ann", "status": "pending", "item": "Mug", "address": "1 Elm Street"},
    "#W1003": {"owner": "u-ann", "status": "delivered", "item": "Scarf", "address": "1 Elm Street"},
    "#W2002": {"owner": "u-bob", "status": "delivered", "item": "Lamp", "address": "9 Oak Road"},
}
PRODUCTS = ["T-shirt", "Mug", "Backpack"]


@tool(description="Sign the customer in by the email on their account.", effect="write_idempotent")
async def sign_in(email: str, *, context: ToolContext) -> ToolResult:
    """Find the account and remember who is signed in.

    Args:
        email: The email on the account.
    """
    user = USERS.get(email.strip().lower())
    if user is None:
        return ToolResult(error="No account uses that email.")
    context.memory.set("project.user_id", user["user_id"])
    context.memory.set("project.user_name", user["name"])
    if "open_order" in user:
        context.memory.set("project.open_order", user["open_order"])
    return ToolResult(llm_response={"signed_in": True})


@tool(description="List the store's products.", effect="read_only")
async def list_products() -> ToolResult:
    """Every product the store sells."""
    return ToolResult(llm_response={"products": list(PRODUCTS)})


def _owned(order_id: str, context: ToolContext) -> dict[str, str] | str:
    order = ORDERS.get(order_id)
    if order is None:
        return f"No order {order_id}."
    if order["owner"] != context.memory.get("project.user_id"):
        return "That order belongs to another customer."
    return order


@tool(description="Show an order: status, item, shipping address.", effect="read_only")
async def get_order_details(order_id: str) -> ToolResult:
    """The stored order (no ownership check, like the retail example's look-up).

    Args:
        order_id: The order id, e.g. '#W1001'.
    """
    order = ORDERS.get(order_id)
    if order is None:
        return ToolResult(error=f"No order {order_id}.")
    return ToolResult(llm_response={"order_id": order_id, **order})


@tool(
    description="Cancel one of the signed-in customer's pending orders.",
    effect="write",
    bindings={"reason": "structural"},
    idempotency_key=["order_id"],
)
async def cancel_pending_order(
    order_id: str,
    reason: Literal["no longer needed", "ordered by mistake"],
    *,
    context: ToolContext,
) -> ToolResult:
    """Cancel a pending order of the signed-in customer.

    Args:
        order_id: The order id, e.g. '#W1001'.
        reason: Why the customer cancels.
    """
    order = _owned(order_id, context)
    if isinstance(order, str):
        return ToolResult(error=order)
    if order["status"] != "pending":
        return ToolResult(error=f"Order {order_id} is not pending.")
    # The shop's data is never changed (tests that share this module must not see each
    # other's cancellations): the answer says what a real store would have done.
    return ToolResult(llm_response={"order_id": order_id, "status": "cancelled"})
