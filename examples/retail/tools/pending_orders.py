"""Changes to a pending order: cancel it, or change its address, payment method or items.

Each answers with the whole order after the change, or the reference's error text.
"""

from __future__ import annotations

from typing import Any, Literal

from retaildb import current, failure, success
from retaildb.items import check_swap, first_item

from keel.tools import ToolResult, tool

Record = dict[str, Any]


def _pending(order_id: str, verb: str) -> Record | ToolResult:
    """The order, or the failure to answer when it is missing or in another status."""
    order: Record | None = current()["orders"].get(order_id)
    if order is None:
        return failure("order not found")
    if order["status"] != "pending":
        return failure(f"non-pending order cannot be {verb}")
    return order


def _gift_card_add(method: Record, amount: float) -> None:
    method["balance"] = round(method["balance"] + amount, 2)


@tool(
    description="Cancel a pending order once the customer confirmed; every payment is refunded "
    "(to a gift card at once, otherwise in 5-7 business days).",
    effect="write",
    bindings={"reason": "structural"},
    idempotency_key=["order_id"],
)
async def cancel_pending_order(
    order_id: str, reason: Literal["no longer needed", "ordered by mistake"]
) -> ToolResult:
    """Gift-card payments are refunded to the card at once, others in 5-7 business days.
    Only after the customer confirmed the order and the reason.

    Args:
        order_id: The order id, starting with '#', e.g. '#W1234567'.
        reason: Why the customer cancels: 'no longer needed' or 'ordered by mistake'.
    """
    order = _pending(order_id, "cancelled")
    if isinstance(order, ToolResult):
        return order
    methods = current()["users"][order["user_id"]]["payment_methods"]
    refunds = []
    for payment in order["payment_history"]:
        method_id = payment["payment_method_id"]
        refunds.append(
            {
                "transaction_type": "refund",
                "amount": payment["amount"],
                "payment_method_id": method_id,
            }
        )
        if "gift_card" in method_id:
            _gift_card_add(methods[method_id], payment["amount"])
    order["status"] = "cancelled"
    order["cancel_reason"] = reason
    order["payment_history"].extend(refunds)
    return success(order)


@tool(
    description="Change the shipping address of a pending order once the customer confirmed.",
    effect="write_idempotent",
)
async def modify_pending_order_address(
    order_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str
) -> ToolResult:
    """Only after the customer confirmed the new address.

    Args:
        order_id: The order id, starting with '#', e.g. '#W1234567'.
        address1: Street address, e.g. '12 Elm Street'.
        address2: Apartment, suite or unit; '' when there is none.
        city: City, e.g. 'Austin'.
        state: State code, e.g. 'TX'.
        country: Country, e.g. 'USA'.
        zip: Zip code, e.g. '73301'.
    """
    order = _pending(order_id, "modified")
    if isinstance(order, ToolResult):
        return order
    order["address"] = {
        "address1": address1,
        "address2": address2,
        "city": city,
        "state": state,
        "country": country,
        "zip": zip,
    }
    return success(order)


@tool(
    description="Pay a pending order with another of the customer's payment methods once they "
    "confirmed; the original payment is refunded.",
    effect="write",
    bindings={"payment_method_id": "piped"},
)
async def modify_pending_order_payment(order_id: str, payment_method_id: str) -> ToolResult:
    """The new method is charged the order total and the original one refunded (a gift card
    at once). A gift card must cover the total. Only after the customer confirmed.

    Args:
        order_id: The order id, starting with '#', e.g. '#W1234567'.
        payment_method_id: The new payment method, e.g. 'gift_card_1234567' or
            'credit_card_1234567', from the user's details.
    """
    order = _pending(order_id, "modified")
    if isinstance(order, ToolResult):
        return order
    methods = current()["users"][order["user_id"]]["payment_methods"]
    if payment_method_id not in methods:
        return failure("payment method not found")
    history = order["payment_history"]
    if len(history) > 1 or history[0]["transaction_type"] != "payment":
        return failure("there should be exactly one payment for a pending order")
    old_id, amount = history[0]["payment_method_id"], history[0]["amount"]
    if old_id == payment_method_id:
        return failure("the new payment method should be different from the current one")
    method = methods[payment_method_id]
    if method["source"] == "gift_card" and method["balance"] < amount:
        return failure("insufficient gift card balance to pay for the order")
    history.append(
        {"transaction_type": "payment", "amount": amount, "payment_method_id": payment_method_id}
    )
    history.append({"transaction_type": "refund", "amount": amount, "payment_method_id": old_id})
    if method["source"] == "gift_card":
        _gift_card_add(method, -amount)
    if "gift_card" in old_id:
        _gift_card_add(methods[old_id], amount)
    return success(order)


@tool(
    description="Swap items of a pending order for other variants of the same products. Once "
    "per order: collect every item first, then get the customer's confirmation.",
    effect="write",
    bindings={"item_ids": "piped", "new_item_ids": "piped", "payment_method_id": "piped"},
)
async def modify_pending_order_items(
    order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
) -> ToolResult:
    """Can be done once per order: collect every item to change first. The price difference
    is charged to, or refunded to, the given payment method (a gift card must cover it).
    Only after the customer confirmed.

    Args:
        order_id: The order id, starting with '#', e.g. '#W1234567'.
        item_ids: Item ids in the order to change, e.g. ['1008292230']; repeat an id to
            change several units of it.
        new_item_ids: The replacement item ids, position by position, each a variant of the
            same product as the item it replaces.
        payment_method_id: Pays or receives the price difference, e.g. 'gift_card_1234567'.
    """
    order = _pending(order_id, "modified")
    if isinstance(order, ToolResult):
        return order
    database = current()
    checked = check_swap(order, database, item_ids, new_item_ids, payment_method_id)
    if isinstance(checked, str):
        return failure(checked)
    difference, method = checked
    if method["source"] == "gift_card" and method["balance"] < difference:
        return failure("insufficient gift card balance to pay for the new item")
    _settle(order, method, payment_method_id, difference)
    _swap_items(order, database["products"], item_ids, new_item_ids)
    order["status"] = "pending (item modified)"
    return success(order)


def _settle(order: Record, method: Record, method_id: str, difference: float) -> None:
    # Always one entry, even for a zero difference (then a refund of 0).
    order["payment_history"].append(
        {
            "transaction_type": "payment" if difference > 0 else "refund",
            "amount": abs(difference),
            "payment_method_id": method_id,
        }
    )
    if method["source"] == "gift_card":
        _gift_card_add(method, -difference)


def _swap_items(
    order: Record, products: Record, item_ids: list[str], new_item_ids: list[str]
) -> None:
    # One pair at a time: a repeated id finds the next unit, the first one already changed.
    for old_id, new_id in zip(item_ids, new_item_ids, strict=True):
        item = first_item(order, old_id)
        variant = products[item["product_id"]]["variants"][new_id]
        item["item_id"] = new_id
        item["price"] = variant["price"]
        item["options"] = dict(variant["options"])
