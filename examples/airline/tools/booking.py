"""Booking a new reservation."""

from __future__ import annotations

import copy
from typing import Any, Literal

import airlinedb
from airlinedb.legs import plain, price_leg, shape_problem
from airlinedb.policy import booking_problem
from airlinedb.session import owner_refusal

from keel.tools import ToolContext, ToolResult, tool

NEW_IDS = ("HATHAT", "HATHAU", "HATHAV")
"""Ids given to new reservations, the first one not taken yet."""

BOOKED_AT = "2024-05-15T15:00:00"
"""The creation time of every new reservation: the demo's fixed "now"."""

INSURANCE_PER_PASSENGER = 30
PRICE_PER_EXTRA_BAG = 50

Cabin = Literal["basic_economy", "economy", "business"]

LEG_FIELDS: dict[str, type | tuple[type, ...]] = {"flight_number": str, "date": str}
PASSENGER_FIELDS: dict[str, type | tuple[type, ...]] = {
    "first_name": str,
    "last_name": str,
    "dob": str,
}
PAYMENT_FIELDS: dict[str, type | tuple[type, ...]] = {"payment_id": str, "amount": (int, float)}


def _new_id(taken: dict[str, Any]) -> str:
    return next((rid for rid in NEW_IDS if rid not in taken), NEW_IDS[-1])


def _shape(flights: list[Any], passengers: list[Any], payments: list[Any]) -> str | None:
    return (
        shape_problem(flights, LEG_FIELDS, "flight")
        or shape_problem(passengers, PASSENGER_FIELDS, "passenger")
        or shape_problem(payments, PAYMENT_FIELDS, "payment method")
    )


def _payment_problem(
    user: dict[str, Any], payments: list[dict[str, Any]], total: int | float
) -> str | None:
    """Every method must be the user's own, a gift card or certificate must cover its own
    part, and the parts must add up to the total."""
    methods = user["payment_methods"]
    for payment in payments:
        pid, amount = payment["payment_id"], payment["amount"]
        method = methods.get(pid)
        if method is None:
            return f"payment method {pid} not found"
        if method["source"] in ("gift_card", "certificate") and method["amount"] < amount:
            return f"not enough balance in payment method {pid}"
    paid = sum(payment["amount"] for payment in payments)
    if paid != total:
        return f"payment amount does not add up, total price is {total}, but paid {paid}"
    return None


def _collect(user: dict[str, Any], payments: list[dict[str, Any]]) -> None:
    """Gift cards lose the amount used; a certificate is used up whatever its remainder."""
    methods = user["payment_methods"]
    for payment in payments:
        method = methods.get(payment["payment_id"])
        if method is None:
            continue
        if method["source"] == "gift_card":
            method["amount"] -= payment["amount"]
        elif method["source"] == "certificate":
            del methods[payment["payment_id"]]


@tool(
    description=(
        "Book a new reservation for a customer, paid with payment methods from their "
        "profile. The parts paid must add up exactly to the fares of every leg for every "
        "passenger, plus 30 per passenger with insurance, plus 50 per extra checked bag."
    )
)
async def book_reservation(
    user_id: str,
    origin: str,
    destination: str,
    flight_type: Literal["one_way", "round_trip"],
    cabin: Cabin,
    flights: list[dict[str, str]],
    passengers: list[dict[str, str]],
    payment_methods: list[dict[str, str | float]],
    total_baggages: int,
    nonfree_baggages: int,
    insurance: Literal["yes", "no"],
    *,
    context: ToolContext | None = None,
) -> ToolResult:
    """Create the reservation, take the payments, and add it to the customer's profile.

    Args:
        user_id: The booking customer's user id, e.g. 'sara_doe_496'.
        origin: Airport code where the trip starts, e.g. 'SFO'.
        destination: Airport code of the trip's destination, e.g. 'JFK'.
        flight_type: 'one_way' or 'round_trip'.
        cabin: The cabin for every leg and every passenger.
        flights: Every leg of the trip in order, each an object with 'flight_number'
            (e.g. 'HAT001') and 'date' (YYYY-MM-DD).
        passengers: Each traveller (at most five), an object with 'first_name',
            'last_name' and 'dob' (date of birth, YYYY-MM-DD).
        payment_methods: How the total is paid, each an object with 'payment_id' (a
            payment method id from the profile) and 'amount' (dollars).
        total_baggages: Checked bags on the reservation in all.
        nonfree_baggages: How many of those bags are beyond the free allowance (50 each).
        insurance: 'yes' to add travel insurance (30 per passenger), else 'no'.
    """
    flights, passengers, payment_methods = plain(flights), plain(passengers), plain(payment_methods)
    problem = _shape(flights, passengers, payment_methods)
    if problem is not None:
        return ToolResult(error=problem)
    refused = airlinedb.enforced(owner_refusal(context, user_id))
    if refused is not None:
        return ToolResult(error=refused.error)
    return _book(
        {
            "user_id": user_id,
            "origin": origin,
            "destination": destination,
            "flight_type": flight_type,
            "cabin": cabin,
            "flights": flights,
            "passengers": passengers,
            "payment_methods": payment_methods,
            "total_baggages": total_baggages,
            "nonfree_baggages": nonfree_baggages,
            "insurance": insurance,
        }
    )


def _book(args: dict[str, Any]) -> ToolResult:
    user = airlinedb.user(args["user_id"])
    if user is None:
        return ToolResult(error="user not found")
    refused = airlinedb.enforced(booking_problem(user, airlinedb.flights(), args))
    if refused is not None:
        return ToolResult(error=refused.error)
    seats = len(args["passengers"])
    legs = copy.deepcopy(args["flights"])
    total: int | float = 0
    for leg in legs:
        problem = price_leg(airlinedb.flights(), leg, args["cabin"], seats)
        if problem is not None:
            return ToolResult(error=problem)
        total += leg["price"] * seats
    if args["insurance"] == "yes":
        total += INSURANCE_PER_PASSENGER * seats
    total += PRICE_PER_EXTRA_BAG * args["nonfree_baggages"]
    payments = copy.deepcopy(args["payment_methods"])
    problem = _payment_problem(user, payments, total)
    if problem is not None:
        return ToolResult(error=problem)
    record = _record(args, legs, payments)
    user = airlinedb.writable_user(args["user_id"])
    assert user is not None
    _collect(user, payments)
    airlinedb.add_reservation(record)
    user["reservations"].append(record["reservation_id"])
    return ToolResult(llm_response=airlinedb.dumps(record))


def _record(args: dict[str, Any], legs: list[Any], payments: list[Any]) -> dict[str, Any]:
    return {
        "reservation_id": _new_id(airlinedb.current()["reservations"]),
        "user_id": args["user_id"],
        "origin": args["origin"],
        "destination": args["destination"],
        "flight_type": args["flight_type"],
        "cabin": args["cabin"],
        "flights": legs,
        "passengers": copy.deepcopy(args["passengers"]),
        "payment_history": payments,
        "created_at": BOOKED_AT,
        "total_baggages": args["total_baggages"],
        "nonfree_baggages": args["nonfree_baggages"],
        "insurance": args["insurance"],
    }
