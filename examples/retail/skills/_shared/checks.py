"""Checking a change before it is confirmed: item swaps, returns, a new payment method.

Each check returns `(problem, summary)`: a problem the model is told (the write is then
refused), or, once every value is recorded and valid, the summary the confirmation question
reads out. Pure functions over the database dict; they never change it.
"""

from __future__ import annotations

from collections.abc import Sequence

from retaildb.items import first_item, missing_item
from skills._shared.shop import Record, describe_item, payment_name

REFUND_TIMING = "at once for a gift card, otherwise within 5 to 7 business days"


def swap_problem(db: Record, order: Record, item_ids: Sequence[str], new_ids: Sequence[str]) -> str:
    """Why these (present) items cannot be swapped for these new items ('' when they can)."""
    if len(item_ids) != len(new_ids):
        return "Give exactly one new item id for each item id, in the same order."
    for old_id, new_id in zip(item_ids, new_ids, strict=True):
        old = first_item(order, old_id)
        variant = db["products"][old["product_id"]]["variants"].get(new_id)
        if variant is None:
            return f"{new_id} is not a variant of {old['name']}: items can only change options."
        if not variant["available"]:
            return f"Item {new_id} ({old['name']}) is not available."
        if new_id == old_id:
            return f"Item {new_id} is the same as the one ordered; pick different options."
    return ""


def swap_difference(
    db: Record, order: Record, item_ids: Sequence[str], new_ids: Sequence[str]
) -> float:
    """New prices minus old prices (positive: the customer pays)."""
    difference = 0.0
    for old_id, new_id in zip(item_ids, new_ids, strict=True):
        old = first_item(order, old_id)
        difference += db["products"][old["product_id"]]["variants"][new_id]["price"] - old["price"]
    return difference


def swap_summary(db: Record, order: Record, item_ids: Sequence[str], new_ids: Sequence[str]) -> str:
    """`Headphones (color blue) 342.81 -> (color black) 330.00; ...`."""
    parts = []
    for old_id, new_id in zip(item_ids, new_ids, strict=True):
        old = first_item(order, old_id)
        new = db["products"][old["product_id"]]["variants"][new_id]
        options = ", ".join(f"{key} {value}" for key, value in new["options"].items())
        parts.append(f"{describe_item(old)} {old['price']:.2f} -> ({options}) {new['price']:.2f}")
    return "; ".join(parts)


def method_problem(db: Record, user_id: str, method_id: str, amount: float = 0.0) -> str:
    """Why the user cannot pay `amount` with this method ('' when they can)."""
    method = db["users"][user_id]["payment_methods"].get(method_id)
    if method is None:
        return f"{method_id} is not one of the customer's payment methods."
    if method["source"] == "gift_card" and method["balance"] < amount:
        return f"Gift card {method_id} holds {method['balance']:.2f}, less than {amount:.2f}."
    return ""


def settle_line(db: Record, user_id: str, method_id: str, difference: float) -> str:
    """Who pays the price difference, and how (addressed to the customer)."""
    method = payment_name(db, user_id, method_id)
    if difference > 0:
        return f"You pay the difference of {difference:.2f} with your {method}."
    if difference < 0:
        return f"The difference of {-difference:.2f} is refunded to your {method}."
    return "There is no price difference."


def returned_total(order: Record, item_ids: Sequence[str]) -> float:
    """The price of the returned items."""
    return float(sum(first_item(order, item_id)["price"] for item_id in item_ids))


def _missing(order: Record, item_ids: Sequence[str]) -> str:
    item_id = missing_item(order, item_ids)
    return f"Item {item_id} is not in order {order['order_id']} (or not that many times)."


def _ids(value: object) -> list[str] | None:
    """A list memory value as a list of strings (None when unset)."""
    if value is None:
        return None
    return [str(v) for v in value] if isinstance(value, list | tuple) else [str(value)]


def check_swap(
    db: Record, order: Record, item_ids: object, new_ids: object, method_id: object
) -> tuple[str, str]:
    """(problem, summary) for swapping items of `order` (a pending modification or a
    delivered exchange); checks what is recorded so far, and summarises once all is."""
    olds, news = _ids(item_ids), _ids(new_ids)
    if olds is not None and missing_item(order, olds) is not None:
        return _missing(order, olds), ""
    difference = 0.0
    if olds is not None and news is not None:
        problem = swap_problem(db, order, olds, news)
        if problem:
            return problem, ""
        difference = swap_difference(db, order, olds, news)
    if method_id is not None:
        problem = method_problem(db, order["user_id"], str(method_id), max(difference, 0.0))
        if problem:
            return problem, ""
    if olds is None or news is None or method_id is None:
        return "", ""
    summary = swap_summary(db, order, olds, news)
    return "", f"{summary}. {settle_line(db, order['user_id'], str(method_id), difference)}"


def check_return(db: Record, order: Record, item_ids: object, method_id: object) -> tuple[str, str]:
    """(problem, summary) for returning items of a delivered order to a refund method."""
    olds = _ids(item_ids)
    if olds is not None and missing_item(order, olds) is not None:
        return _missing(order, olds), ""
    if method_id is not None:
        original = order["payment_history"][0]["payment_method_id"]
        method = db["users"][order["user_id"]]["payment_methods"].get(str(method_id))
        if method is None:
            return f"{method_id} is not one of the customer's payment methods.", ""
        if str(method_id) != original and method["source"] != "gift_card":
            return (
                f"A refund goes to the original payment method, {original} "
                f"({payment_name(db, order['user_id'], original)}), or to a gift card.",
                "",
            )
    if olds is None or method_id is None:
        return "", ""
    items = "; ".join(describe_item(first_item(order, i)) for i in olds)
    refund = returned_total(order, olds)
    method = payment_name(db, order["user_id"], str(method_id))
    return "", f"{items}, refund of {refund:.2f} to your {method}."


def check_new_payment(db: Record, order: Record, method_id: str) -> tuple[str, str]:
    """(problem, summary) for paying a pending order with another method."""
    payments = [p for p in order["payment_history"] if p["transaction_type"] == "payment"]
    if len(payments) != 1:
        return "Only an order paid in a single payment can change its payment method.", ""
    current_id, amount = payments[0]["payment_method_id"], payments[0]["amount"]
    if method_id == current_id:
        return "That is the payment method the order already uses; pick another one.", ""
    problem = method_problem(db, order["user_id"], method_id, amount)
    if problem:
        return problem, ""
    old = payment_name(db, order["user_id"], current_id)
    new = payment_name(db, order["user_id"], method_id)
    return "", (
        f"{amount:.2f} is charged to your {new} instead, and your {old} is refunded "
        f"({REFUND_TIMING})."
    )


def picked_order(
    db: Record, order_id: object, user_id: object, status: str
) -> tuple[Record | None, str]:
    """The picked order, when it is the customer's and in `status`; else None and why not."""
    order = db["orders"].get(str(order_id))
    if order is None or order["user_id"] != user_id:
        return None, "Pick one of the customer's orders first."
    if order["status"] != status:
        return None, f"Order {order['order_id']} is {order['status']}, not {status}."
    return order, ""
