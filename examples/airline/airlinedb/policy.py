"""The airline's rules (`policy.md`) as code: what the write tools refuse before they write.

Each check returns a `Refusal` (a code and the sentence the model reads) or None. The
tools return a refusal as their error, `policy.<rule>: <why>`, so the model reads
`Error: policy.<rule>: <why>` and a replay can count refusals by their prefix. The
checks only read: the records, the flight table, and the airline's clock (`NOW`).

The reference tools check none of this; every check here is written so that the
τ-bench gold calls pass it (the conformance replay runs them through these tools).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import pairwise
from typing import Any

from airlinedb.store import Record

NOW = datetime(2024, 5, 15, 15, 0, 0)
"""The airline's "now", 2024-05-15 15:00 EST: the records' `created_at` are in EST too."""

CANCEL_WINDOW = timedelta(hours=24)
"""Any reservation may be cancelled this long after it was booked."""

MAX_PASSENGERS = 5

FREE_BAGS: Mapping[str, Mapping[str, int]] = {
    "regular": {"basic_economy": 0, "economy": 1, "business": 2},
    "silver": {"basic_economy": 1, "economy": 2, "business": 3},
    "gold": {"basic_economy": 2, "economy": 3, "business": 3},
}
"""Free checked bags per passenger, by the booking customer's tier and the cabin."""

MAX_METHODS = {"certificate": 1, "credit_card": 1, "gift_card": 3}
"""At most this many payment methods of each kind in one booking."""

FLOWN = frozenset({"landed", "flying"})
"""Flight statuses of a leg that has been used."""

COMPENSATION_PER_PASSENGER = (100, 50)
"""A certificate for a cancelled (100) or delayed (50) flight, per passenger."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Refusal:
    """Why the policy does not allow a write."""

    code: str
    """`policy.<rule>`, stable: replays and tests count refusals by it."""
    message: str
    """What the model reads, and can tell the customer."""

    @property
    def error(self) -> str:
        """The tool's error text (the engine adds `Error: `)."""
        return f"{self.code}: {self.message}"


def refusal(rule: str, message: str) -> Refusal:
    """A refusal of the rule `policy.<rule>`."""
    return Refusal(code=f"policy.{rule}", message=message)


def owner_problem(owner: str, signed_in: object) -> Refusal | None:
    """A customer acts only on their own profile and reservations. `signed_in` is the
    conversation's `project.user_id`; with none (the conformance runner calls tools with
    an empty memory) the tool's `requires` gate has already decided."""
    if signed_in is None or signed_in == owner:
        return None
    return refusal(
        "not_your_account",
        f"this belongs to another customer, not to the signed-in user {signed_in}",
    )


def open_problem(record: Record) -> Refusal | None:
    """A cancelled reservation is not changed or cancelled again."""
    if record.get("status") == "cancelled":
        return refusal(
            "reservation_cancelled", f"reservation {record['reservation_id']} is cancelled"
        )
    return None


def leg_status(flights: Mapping[str, Record], leg: Mapping[str, Any]) -> str | None:
    """The flight's status on the leg's date (None when the table does not have it)."""
    flight = flights.get(str(leg.get("flight_number")))
    day = flight["dates"].get(str(leg.get("date"))) if flight else None
    return str(day["status"]) if day else None


def cancel_problem(record: Record, flights: Mapping[str, Record], cabin: str) -> Refusal | None:
    """Only a trip none of whose legs is flown, and only when it was booked less than 24
    hours ago, or the airline cancelled a flight of it, or it is business, or it has
    travel insurance (whether the reason is one it covers is the customer's word: the
    tool is not given the reason)."""
    statuses = [leg_status(flights, leg) for leg in record["flights"]]
    if any(status in FLOWN for status in statuses):
        return refusal(
            "trip_flown",
            "part of this trip has been flown, so it cannot be cancelled here; transfer "
            "the customer to a human agent",
        )
    booked = datetime.fromisoformat(str(record["created_at"]))
    if NOW - booked <= CANCEL_WINDOW or "cancelled" in statuses:
        return None
    if cabin == "business" or record.get("insurance") == "yes":
        return None
    return refusal(
        "cancel_not_allowed",
        f"reservation {record['reservation_id']} was booked more than 24 hours ago, no "
        f"flight of it was cancelled by the airline, it is {cabin.replace('_', ' ')} and "
        "has no travel insurance, so it cannot be cancelled",
    )


def _legs(legs: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    return [(str(leg.get("flight_number")), str(leg.get("date"))) for leg in legs]


def _ends(
    flights: Mapping[str, Record], legs: Sequence[Mapping[str, Any]]
) -> list[tuple[str, str]]:
    ends: list[tuple[str, str]] = []
    for leg in legs:
        flight = flights.get(str(leg.get("flight_number")))
        if flight is None:
            return []  # an unknown flight: the tool reports it itself
        ends.append((str(flight["origin"]), str(flight["destination"])))
    return ends


def itinerary_problem(
    flights: Mapping[str, Record],
    legs: Sequence[Mapping[str, Any]],
    origin: str,
    destination: str,
    flight_type: str,
) -> Refusal | None:
    """The legs connect, start at `origin`, and end at `destination` (one way) or back at
    `origin` after reaching `destination` (round trip): every stored reservation does."""
    ends = _ends(flights, legs)
    if not ends:
        return None
    for (_, landed), (departs, _) in pairwise(ends):
        if landed != departs:
            return refusal("itinerary", f"the flights do not connect: {landed} then {departs}")
    last = ends[-1][1]
    if flight_type == "round_trip":
        shaped = ends[0][0] == origin and last == origin and destination in {e[1] for e in ends}
        want = f"a round trip {origin} - {destination} - {origin}"
    else:
        shaped = ends[0][0] == origin and last == destination
        want = f"one way {origin} to {destination}"
    if shaped:
        return None
    return refusal(
        "itinerary",
        f"the flights go from {ends[0][0]} to {last}, but the trip is {want}; origin, "
        "destination and trip type cannot change",
    )


def flight_change_problem(
    record: Record, flights: Mapping[str, Record], cabin_now: str, legs: Sequence[Mapping[str, Any]]
) -> Refusal | None:
    """Basic economy keeps its flights (its cabin may change); any other reservation keeps
    its origin, destination and trip type."""
    if cabin_now == "basic_economy" and _legs(legs) != _legs(record["flights"]):
        return refusal(
            "basic_economy_flights",
            "the flights of a basic economy reservation cannot be changed; its cabin can "
            "be, on the same flights",
        )
    return itinerary_problem(
        flights, legs, str(record["origin"]), str(record["destination"]), record["flight_type"]
    )


def free_bags(membership: str, cabin: str, passengers: int) -> int:
    """The free checked bags of a reservation."""
    return FREE_BAGS.get(membership, FREE_BAGS["regular"]).get(cabin, 0) * passengers


def bags_problem(
    record: Record, membership: str, cabin: str, total: int, nonfree: int
) -> Refusal | None:
    """Bags can be added, never removed, and no fewer are paid than the free allowance
    leaves (bags already paid for stay paid). More paid bags than that are not refused:
    two of the five gold bag changes charge for bags the allowance would cover."""
    if total < record["total_baggages"]:
        return refusal(
            "bags_removed",
            f"checked bags can be added but not removed: the reservation has "
            f"{record['total_baggages']}, so the total must be at least that",
        )
    free = free_bags(membership, cabin, len(record["passengers"]))
    due = max(int(record["nonfree_baggages"]), total - free)
    if not due <= nonfree <= total:
        return refusal(
            "bag_allowance",
            f"with {total} checked bags and {free} free ones ({membership} member, "
            f"{cabin.replace('_', ' ')}), {due} must be paid, not {nonfree}",
        )
    return None


def booking_problem(
    user: Record, flights: Mapping[str, Record], args: Mapping[str, Any]
) -> Refusal | None:
    """Passengers, payment mix, bag allowance and the shape of the trip of a new booking."""
    passengers = len(args["passengers"])
    if not 1 <= passengers <= MAX_PASSENGERS:
        return refusal("passengers", f"a reservation has 1 to 5 passengers, not {passengers}")
    kinds = Counter(
        str(user["payment_methods"].get(p["payment_id"], {}).get("source"))
        for p in args["payment_methods"]
    )
    for kind, most in MAX_METHODS.items():
        if kinds[kind] > most:
            return refusal(
                "payment_mix",
                "a booking uses at most one travel certificate, one credit card and three "
                f"gift cards; this one uses {kinds[kind]} {kind.replace('_', ' ')}s",
            )
    free = free_bags(str(user["membership"]), str(args["cabin"]), passengers)
    due = max(0, int(args["total_baggages"]) - free)
    if int(args["nonfree_baggages"]) != due:
        return refusal(
            "bag_allowance",
            f"with {args['total_baggages']} checked bags and {free} free ones "
            f"({user['membership']} member, {str(args['cabin']).replace('_', ' ')}, "
            f"{passengers} passenger(s)), {due} must be paid, not {args['nonfree_baggages']}",
        )
    return itinerary_problem(
        flights,
        args["flights"],
        str(args["origin"]),
        str(args["destination"]),
        str(args["flight_type"]),
    )


def certificate_problem(
    user: Record, reservations: Mapping[str, Record], cabins: Mapping[str, str], amount: float
) -> Refusal | None:
    """A certificate is 100 (cancelled flight) or 50 (delayed flight) per passenger of one
    of the customer's reservations, and only for a silver or gold member, or a reservation
    with insurance, or a business one. (Whether the flight really was cancelled or delayed
    is left to the model: the statuses in the data do not always show what the gold
    compensations were given for.)"""
    gold_or_silver = user["membership"] in ("silver", "gold")
    for reservation_id in user["reservations"]:
        record = reservations.get(reservation_id)
        if record is None:
            continue
        eligible = (
            gold_or_silver
            or record.get("insurance") == "yes"
            or cabins.get(reservation_id, record["cabin"]) == "business"
        )
        count = len(record["passengers"])
        if eligible and any(amount == each * count for each in COMPENSATION_PER_PASSENGER):
            return None
    return refusal(
        "compensation",
        f"no reservation of {user['user_id']} allows a certificate of {amount}: it is 100 "
        "(cancelled flight) or 50 (delayed flight) per passenger, for silver and gold "
        "members, insured or business reservations only",
    )
