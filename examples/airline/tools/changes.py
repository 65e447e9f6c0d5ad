"""Changing an existing reservation: its flights (or cabin), its bags, its passengers.

Each tool first checks the policy (`airlinedb.policy`: the customer's own reservation, not
cancelled, basic economy keeps its flights, same origin, destination and trip type, bags
only added and paid beyond the allowance) and refuses with a `policy.<rule>` error.
"""

from __future__ import annotations

import copy
from typing import Any, Literal

import airlinedb
from airlinedb.legs import (
    change_payment_problem,
    charge_for_change,
    plain,
    price_leg,
    shape_problem,
)
from airlinedb.policy import Refusal, bags_problem, flight_change_problem, open_problem
from airlinedb.session import owner_refusal

from keel.tools import ToolContext, ToolResult, tool

PRICE_PER_EXTRA_BAG = 50
LEG_FIELDS: dict[str, type | tuple[type, ...]] = {"flight_number": str, "date": str}
PASSENGER_FIELDS: dict[str, type | tuple[type, ...]] = {
    "first_name": str,
    "last_name": str,
    "dob": str,
}


def _kept_leg(record: dict[str, Any], leg: dict[str, Any], cabin: str) -> dict[str, Any] | None:
    """The booked leg with the same flight and date, when the cabin stays the same."""
    if cabin != record["cabin"]:
        return None
    for booked in record["flights"]:
        if booked["flight_number"] == leg["flight_number"] and booked["date"] == leg["date"]:
            return booked  # type: ignore[no-any-return]
    return None


def _price_new_legs(
    record: dict[str, Any], legs: list[dict[str, Any]], cabin: str
) -> tuple[int | float, str | None]:
    """Price every leg of the new itinerary (kept legs at the price paid) and return the
    difference to what the current legs cost, for all passengers."""
    seats = len(record["passengers"])
    total: int | float = 0
    for leg in legs:
        kept = _kept_leg(record, leg, cabin)
        if kept is not None:
            leg["price"] = kept["price"]
            leg["origin"] = kept["origin"]
            leg["destination"] = kept["destination"]
        else:
            problem = price_leg(airlinedb.flights(), leg, cabin, seats)
            if problem is not None:
                return 0, problem
        total += leg["price"] * seats
    total -= sum(booked["price"] for booked in record["flights"]) * seats
    return total, None


def _payment_record(payment_id: str, amount: int | float) -> dict[str, Any]:
    return {"payment_id": payment_id, "amount": amount}


@tool(
    description=(
        "Replace the flights of a reservation (and/or price it in another cabin). Give the "
        "whole new itinerary, unchanged legs included. The fare difference for all "
        "passengers is charged to, or refunded to, the given payment method."
    )
)
async def update_reservation_flights(
    reservation_id: str,
    cabin: Literal["basic_economy", "economy", "business"],
    flights: list[dict[str, str]],
    payment_id: str,
    *,
    context: ToolContext | None = None,
) -> ToolResult:
    """Legs kept from the booking (same flight, date and cabin) keep the price paid.

    Args:
        reservation_id: The six-character reservation id, e.g. 'ZFA04Y'.
        cabin: The cabin of the new itinerary.
        flights: Every leg of the new itinerary in order, each an object with
            'flight_number' (e.g. 'HAT001') and 'date' (YYYY-MM-DD).
        payment_id: A gift card or credit card id from the customer's profile.
    """
    record = airlinedb.reservation(reservation_id)
    if record is None:
        return ToolResult(error="reservation not found")
    flights = plain(flights)
    problem = shape_problem(flights, LEG_FIELDS, "flight")
    if problem is not None:
        return ToolResult(error=problem)
    refused = airlinedb.enforced(
        _account_problem(context, record)
        or flight_change_problem(record, airlinedb.flights(), airlinedb.cabin_of(record), flights)
    )
    if refused is not None:
        return ToolResult(error=refused.error)
    legs = copy.deepcopy(flights)
    difference, problem = _price_new_legs(record, legs, cabin)
    user = airlinedb.user(record["user_id"]) or {"payment_methods": {}}
    problem = problem or change_payment_problem(user["payment_methods"].get(payment_id), difference)
    if problem is not None:
        return ToolResult(error=problem)
    charge_for_change(_writable_user(record), payment_id, difference)
    record = _writable_reservation(reservation_id)
    record["flights"] = legs
    airlinedb.set_cabin(reservation_id, cabin)
    if difference != 0:
        record["payment_history"].append(_payment_record(payment_id, difference))
    return ToolResult(llm_response=airlinedb.dumps(record))


@tool(
    description=(
        "Set the checked bags of a reservation. Bags beyond those already paid for cost 50 "
        "each, charged to the given payment method."
    )
)
async def update_reservation_baggages(
    reservation_id: str,
    total_baggages: int,
    nonfree_baggages: int,
    payment_id: str,
    *,
    context: ToolContext | None = None,
) -> ToolResult:
    """Store the new bag counts and charge for the added paid bags.

    Args:
        reservation_id: The six-character reservation id, e.g. 'ZFA04Y'.
        total_baggages: Checked bags on the reservation in all, after the change.
        nonfree_baggages: How many of those bags are paid ones, after the change.
        payment_id: A gift card or credit card id from the customer's profile.
    """
    record = airlinedb.reservation(reservation_id)
    if record is None:
        return ToolResult(error="reservation not found")
    owner = airlinedb.user(record["user_id"]) or {"membership": "regular"}
    refused = airlinedb.enforced(
        _account_problem(context, record)
        or bags_problem(
            record,
            str(owner["membership"]),
            airlinedb.cabin_of(record),
            total_baggages,
            nonfree_baggages,
        )
    )
    if refused is not None:
        return ToolResult(error=refused.error)
    cost = PRICE_PER_EXTRA_BAG * max(0, nonfree_baggages - record["nonfree_baggages"])
    user = airlinedb.user(record["user_id"]) or {"payment_methods": {}}
    problem = change_payment_problem(user["payment_methods"].get(payment_id), cost)
    if problem is not None:
        return ToolResult(error=problem)
    record = _writable_reservation(reservation_id)
    record["total_baggages"] = total_baggages
    record["nonfree_baggages"] = nonfree_baggages
    charge_for_change(_writable_user(record), payment_id, cost)
    if cost != 0:
        record["payment_history"].append(_payment_record(payment_id, cost))
    return ToolResult(llm_response=airlinedb.dumps(record))


@tool(
    description=(
        "Replace the passenger details of a reservation. The number of passengers cannot change."
    )
)
async def update_reservation_passengers(
    reservation_id: str, passengers: list[dict[str, str]], *, context: ToolContext | None = None
) -> ToolResult:
    """Store the new passenger list (same length as before).

    Args:
        reservation_id: The six-character reservation id, e.g. 'ZFA04Y'.
        passengers: Every traveller, in order, each an object with 'first_name',
            'last_name' and 'dob' (date of birth, YYYY-MM-DD).
    """
    record = airlinedb.reservation(reservation_id)
    if record is None:
        return ToolResult(error="reservation not found")
    passengers = plain(passengers)
    problem = shape_problem(passengers, PASSENGER_FIELDS, "passenger")
    if problem is not None:
        return ToolResult(error=problem)
    if len(passengers) != len(record["passengers"]):
        return ToolResult(error="number of passengers does not match")
    refused = airlinedb.enforced(_account_problem(context, record))
    if refused is not None:
        return ToolResult(error=refused.error)
    record = _writable_reservation(reservation_id)
    record["passengers"] = copy.deepcopy(passengers)
    return ToolResult(llm_response=airlinedb.dumps(record))


def _account_problem(context: ToolContext | None, record: dict[str, Any]) -> Refusal | None:
    """The signed-in customer's own reservation, and not cancelled."""
    return owner_refusal(context, record["user_id"]) or open_problem(record)


def _writable_reservation(reservation_id: str) -> dict[str, Any]:
    record = airlinedb.writable_reservation(reservation_id)
    assert record is not None  # looked up just before
    return record


def _writable_user(reservation: dict[str, Any]) -> dict[str, Any]:
    user = airlinedb.writable_user(reservation["user_id"])
    assert user is not None  # the payment method was found in this profile
    return user
