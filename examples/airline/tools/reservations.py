"""Reservation tools that look at or cancel a whole reservation."""

from __future__ import annotations

import airlinedb
from airlinedb.policy import cancel_problem, open_problem
from airlinedb.session import owner_refusal

from keel.tools import ToolContext, ToolResult, tool


@tool(
    description=(
        "Read a reservation: trip, cabin, flights with the price paid per leg, passengers, "
        "payments, creation time, bags, insurance and (once cancelled) its status."
    )
)
async def get_reservation_details(
    reservation_id: str, *, context: ToolContext | None = None
) -> ToolResult:
    """The stored reservation, as it is (only the signed-in customer's own).

    Args:
        reservation_id: The six-character reservation id, e.g. '8JX2WO'.
    """
    record = airlinedb.reservation(reservation_id)
    if record is None:
        # The reference tool answers "user not found" here too; kept for identical outputs.
        return ToolResult(error="user not found")
    problem = airlinedb.enforced(owner_refusal(context, record["user_id"]))
    if problem is not None:
        return ToolResult(error=problem.error)
    return ToolResult(llm_response=airlinedb.dumps(record))


@tool(
    description=(
        "Cancel a whole reservation and refund every payment to the method it came from. "
        "Refused when the cancellation rules do not allow it or a leg has been flown."
    )
)
async def cancel_reservation(
    reservation_id: str, *, context: ToolContext | None = None
) -> ToolResult:
    """Append one refund (the negative amount) per recorded payment and mark it cancelled.

    Args:
        reservation_id: The six-character reservation id, e.g. 'ZFA04Y'.
    """
    found = airlinedb.reservation(reservation_id)
    if found is None:
        return ToolResult(error="reservation not found")
    problem = airlinedb.enforced(
        owner_refusal(context, found["user_id"])
        or open_problem(found)
        or cancel_problem(found, airlinedb.flights(), airlinedb.cabin_of(found))
    )
    if problem is not None:
        return ToolResult(error=problem.error)
    record = airlinedb.writable_reservation(reservation_id)
    assert record is not None  # found just above
    history = record["payment_history"]
    history.extend(
        {"payment_id": payment["payment_id"], "amount": -payment["amount"]}
        for payment in list(history)
    )
    record["status"] = "cancelled"
    return ToolResult(llm_response=airlinedb.dumps(record))
