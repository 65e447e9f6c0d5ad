"""Read-only flight tools: airports, direct flights, and connections with one stop."""

from __future__ import annotations

from typing import Any

import airlinedb

from keel.tools import ToolResult, tool

AIRPORTS: dict[str, str] = {
    "SFO": "San Francisco",
    "JFK": "New York",
    "LAX": "Los Angeles",
    "ORD": "Chicago",
    "DFW": "Dallas",
    "DEN": "Denver",
    "SEA": "Seattle",
    "ATL": "Atlanta",
    "MIA": "Miami",
    "BOS": "Boston",
    "PHX": "Phoenix",
    "IAH": "Houston",
    "LAS": "Las Vegas",
    "MCO": "Orlando",
    "EWR": "Newark",
    "CLT": "Charlotte",
    "MSP": "Minneapolis",
    "DTW": "Detroit",
    "PHL": "Philadelphia",
    "LGA": "LaGuardia",
}
"""The airports the airline serves, with the city each one is in."""


@tool(description="List every airport the airline flies to, as airport code -> city.")
async def list_all_airports() -> ToolResult:
    """The airline's network, for turning a city into an airport code."""
    return ToolResult(llm_response=airlinedb.dumps(AIRPORTS))


def _offer(flight: dict[str, Any], day: dict[str, Any]) -> dict[str, Any]:
    """A flight's fixed fields (not its calendar), then that day's status, seats and prices."""
    offer = {key: value for key, value in flight.items() if key != "dates"}
    offer.update(day)
    return offer


def _bookable(flight: dict[str, Any], date: str) -> bool:
    day = flight["dates"].get(date)
    return day is not None and day["status"] == "available"


@tool(
    description="Find the nonstop flights between two airports on one day that can still be booked."
)
async def search_direct_flight(origin: str, destination: str, date: str) -> ToolResult:
    """Each result is a flight with that day's status, free seats and prices per cabin.

    Args:
        origin: Three-letter code of the departure airport, e.g. 'JFK'.
        destination: Three-letter code of the arrival airport, e.g. 'LAX'.
        date: Day of departure as YYYY-MM-DD, e.g. '2024-05-20'.
    """
    found = [
        _offer(flight, flight["dates"][date])
        for flight in airlinedb.flights().values()
        if flight["origin"] == origin
        and flight["destination"] == destination
        and _bookable(flight, date)
    ]
    return ToolResult(llm_response=airlinedb.dumps(found))


def _second_leg_date(first: dict[str, Any], date: str) -> str:
    # A first leg landing after midnight ("...+1") connects on the next day of May.
    # The day number is not zero-padded, as in the reference tool.
    if "+1" in first["scheduled_arrival_time_est"]:
        return f"2024-05-{int(date[-2:]) + 1}"
    return date


def _connections(date: str, origin: str, destination: str) -> list[list[dict[str, Any]]]:
    table = airlinedb.flights().values()
    pairs: list[list[dict[str, Any]]] = []
    for first in table:
        if first["origin"] != origin:
            continue
        for second in table:
            if second["destination"] != destination or first["destination"] != second["origin"]:
                continue
            if first["scheduled_arrival_time_est"] > second["scheduled_departure_time_est"]:
                continue
            later = _second_leg_date(first, date)
            if not (_bookable(first, date) and _bookable(second, later)):
                continue
            # The reference reports the second leg's status, seats and prices for the first
            # leg's date (not `later`); kept so the outputs stay the same.
            pairs.append(
                [
                    {**_offer(first, first["dates"][date]), "date": date},
                    {
                        **_offer(second, second["dates"].get(date, second["dates"][later])),
                        "date": later,
                    },
                ]
            )
    return pairs


@tool(
    description="Find trips with exactly one connection between two airports, leaving on one day."
)
async def search_onestop_flight(origin: str, destination: str, date: str) -> ToolResult:
    """Each result is a pair [first leg, second leg]; each leg carries its own `date`.

    Args:
        origin: Three-letter code of the departure airport, e.g. 'JFK'.
        destination: Three-letter code of the final arrival airport, e.g. 'LAX'.
        date: Day the first leg departs, as YYYY-MM-DD, e.g. '2024-05-20'.
    """
    return ToolResult(llm_response=airlinedb.dumps(_connections(date, origin, destination)))
