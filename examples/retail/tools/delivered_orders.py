"""Requests on a delivered order: return items, or exchange them for other variants.

Nothing is charged or refunded here: the request is recorded on the order, which is
answered whole after the change (or with the reference's error text).
"""

from __future__ import annotations

from typing import Any

from retaildb import current, failure, success
from retaildb.items import check_swap, missing_item

from keel.tools import ToolResult, tool

Record = dict[str, Any]


def _delivered(order_id: str, verb: str) -> Record | ToolResult:
    """The order, or the failure to answer when it is missing or in another status."""
    order: Record | None = current()["orders"].get(order_id)
    if order is None:
        return failure("order not found")
    if order["status"] != "delivered":
        return failure(f"non-delivered order cannot be {verb}")
    return order


@tool(
    description="Request the return of items of a delivered order once the customer confirmed; "
    "the refund goes to the original payment method or a gift card.",
    effect="write",
    bindings={"item_ids": "piped", "payment_method_id": "piped"},
)
async def return_delivered_order_items(
    order_id: str, item_ids: list[str], payment_method_id: str
) -> ToolResult:
    """The refund goes to the original payment method or to one of the user's gift cards.
    The customer then gets an email on how to send the items back. Can be done once per
    order; only after the customer confirmed the items and the refund method.

    Args:
        order_id: The order id, starting with '#', e.g. '#W1234567'.
        item_ids: Item ids in the order to return, e.g. ['1008292230']; repeat an id to
            return several units of it.
        payment_method_id: Receives the refund: the original method or a gift card, e.g.
            'gift_card_1234567'.
    """
    order = _delivered(order_id, "returned")
    if isinstance(order, ToolResult):
        return order
    methods = current()["users"][order["user_id"]]["payment_methods"]
    if payment_method_id not in methods:
        return failure("payment method not found")
    original = order["payment_history"][0]["payment_method_id"]
    if "gift_card" not in payment_method_id and payment_method_id != original:
        return failure("payment method should be either the original payment method or a gift card")
    if missing_item(order, item_ids) is not None:
        return failure("some item not found")
    order["status"] = "return requested"
    order["return_items"] = sorted(item_ids)
    order["return_payment_method_id"] = payment_method_id
    return success(order)


@tool(
    description="Request an exchange of delivered items for other variants of the same "
    "products. Once per order: collect every item first, then get the customer's confirmation.",
    effect="write",
    bindings={"item_ids": "piped", "new_item_ids": "piped", "payment_method_id": "piped"},
)
async def exchange_delivered_order_items(
    order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
) -> ToolResult:
    """Can be done once per order: collect every item to exchange first. The price
    difference is settled with the given payment method (a gift card must cover it). Only
    after the customer confirmed.

    Args:
        order_id: The order id, starting with '#', e.g. '#W1234567'.
        item_ids: Item ids in the order to exchange, e.g. ['1008292230']; repeat an id to
            exchange several units of it.
        new_item_ids: The replacement item ids, position by position, each a variant of the
            same product as the item it replaces.
        payment_method_id: Pays or receives the price difference, e.g. 'credit_card_1234567'.
    """
    order = _delivered(order_id, "exchanged")
    if isinstance(order, ToolResult):
        return order
    checked = check_swap(order, current(), item_ids, new_item_ids, payment_method_id)
    if isinstance(checked, str):
        return failure(checked)
    difference, method = round(checked[0], 2), checked[1]
    if method["source"] == "gift_card" and method["balance"] < difference:
        return failure("insufficient gift card balance to pay for the price difference")
    order["status"] = "exchange requested"
    order["exchange_items"] = sorted(item_ids)
    order["exchange_new_items"] = sorted(new_item_ids)
    order["exchange_payment_method_id"] = payment_method_id
    order["exchange_price_difference"] = difference
    return success(order)
