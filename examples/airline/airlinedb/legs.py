"""Shared rules of the write tools: the shape of list arguments, pricing a flight leg,
and which payment method may pay for a change.

Functions return the failure text (without the `Error: ` prefix the engine adds) or None.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from airlinedb.store import Record

Cabin = str


def plain(items: Any) -> Any:
    """A list argument as plain lists and dicts. A call the customer confirmed reaches the
    tool with the arguments Keel stored with the pause point, frozen (tuples and read-only
    mappings); a direct call's are plain. Other values are returned as they are."""
    if isinstance(items, Mapping):
        return {key: plain(value) for key, value in items.items()}
    if isinstance(items, list | tuple):
        return [plain(item) for item in items]
    return items


def shape_problem(
    items: list[Any], fields: dict[str, type | tuple[type, ...]], what: str
) -> str | None:
    """Why a list argument of objects is unusable: an item that is not an object, or lacks
    a field, or has one of the wrong type. Extra fields are allowed (they are kept)."""
    for position, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            return f"{what} {position} must be an object"
        for name, kind in fields.items():
            value = item.get(name)
            if value is None or isinstance(value, bool) or not isinstance(value, kind):
                return f"{what} {position} needs a valid '{name}'"
    return None


def price_leg(flight_table: dict[str, Record], leg: Record, cabin: Cabin, seats: int) -> str | None:
    """Look a requested leg up and add its `price` (for `cabin`), `origin` and
    `destination` to it; a failure text when it cannot be sold for `seats` passengers."""
    number, day = leg["flight_number"], leg["date"]
    flight = flight_table.get(number)
    if flight is None:
        return f"flight {number} not found"
    entry = flight["dates"].get(day)
    if entry is None:
        return f"flight {number} not found on date {day}"
    if entry["status"] != "available":
        return f"flight {number} not available on date {day}"
    if entry["available_seats"][cabin] < seats:
        return f"not enough seats on flight {number}"
    leg["price"] = entry["prices"][cabin]
    leg["origin"] = flight["origin"]
    leg["destination"] = flight["destination"]
    return None


def change_payment_problem(method: Record | None, cost: int | float) -> str | None:
    """Whether a stored payment method may pay `cost` for a change to a reservation."""
    if method is None:
        return "payment method not found"
    if method["source"] == "certificate":
        return "certificate cannot be used to update reservation"
    if method["source"] == "gift_card" and method["amount"] < cost:
        return "gift card balance is not enough"
    return None


def charge_for_change(user: Record, payment_id: str, cost: int | float) -> None:
    """Take `cost` (negative: give it back) from a gift card; other methods keep no balance."""
    method = user["payment_methods"][payment_id]
    if method["source"] == "gift_card":
        method["amount"] -= cost
