"""Item checks shared by the tools that swap items (pending modifications, exchanges)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Record = dict[str, Any]


def missing_item(order: Record, item_ids: Sequence[str]) -> str | None:
    """The first requested id the order holds fewer times than it is requested, if any."""
    held = [item["item_id"] for item in order["items"]]
    return next((i for i in item_ids if item_ids.count(i) > held.count(i)), None)


def first_item(order: Record, item_id: str) -> Record:
    """The first item of the order whose (current) id is `item_id`."""
    return next(item for item in order["items"] if item["item_id"] == item_id)


def price_difference(
    order: Record, products: Record, item_ids: Sequence[str], new_item_ids: Sequence[str]
) -> tuple[float, str | None]:
    """Sum of (new price - old price) over the pairs, in double arithmetic and unrounded,
    starting from the integer 0; or the problem with the first unavailable new item."""
    difference: float = 0
    for old_id, new_id in zip(item_ids, new_item_ids, strict=False):
        item = first_item(order, old_id)
        variant = products[item["product_id"]]["variants"].get(new_id)
        if variant is None or not variant["available"]:
            return difference, f"new item {new_id} not found or available"
        difference += variant["price"] - item["price"]
    return difference, None


def check_swap(
    order: Record,
    database: Record,
    item_ids: Sequence[str],
    new_item_ids: Sequence[str],
    payment_method_id: str,
) -> tuple[float, Record] | str:
    """(price difference, payment method) of swapping `item_ids` for `new_item_ids`, or the
    reference's message for the first check that fails, in the reference's order: items in
    the order, as many new items as old, new items available, the customer's own method."""
    missing = missing_item(order, item_ids)
    if missing is not None:
        return f"{missing} not found"
    if len(item_ids) != len(new_item_ids):
        return "the number of items to be exchanged should match"
    difference, unavailable = price_difference(order, database["products"], item_ids, new_item_ids)
    if unavailable is not None:
        return unavailable
    methods = database["users"][order["user_id"]]["payment_methods"]
    if payment_method_id not in methods:
        return "payment method not found"
    return difference, methods[payment_method_id]
