"""Reservation tools that look at or cancel a whole reservation."""

from __future__ import annotations

import airlinedb

from keel.tools import ToolResult, tool


@tool(
    description=(
        "Read a reservation: trip, cabin, flights with the price paid per leg, passengers, "
        "payments, creation time, bags, insurance and (once cancelled) its status."
    )
)
async def get_reservation_details(reservation_id: str) -> ToolResult:
    """The stored reservation, as it is.

    Args:
        reservation_id: The six-character reservation id, e.g. '8JX2WO'.
    """
    record = airlinedb.reservation(reservation_id)
    if record is None:
        # The reference tool answers "user not found" here too; kept for identical outputs.
        return ToolResult(error="user not found")
    return ToolResult(llm_response=airlinedb.dumps(record))


@tool(
    description=(
        "Cancel a whole reservation and refund every payment to the method it came from. "
        "The tool does not check the cancellation rules: check them first."
    )
)
async def cancel_reservation(reservation_id: str) -> ToolResult:
    """Append one refund (the negative amount) per recorded payment and mark it cancelled.

    Args:
        reservation_id: The six-character reservation id, e.g. 'ZFA04Y'.
    """
    record = airlinedb.writable_reservation(reservation_id)
    if record is None:
        return ToolResult(error="reservation not found")
    history = record["payment_history"]
    history.extend(
        {"payment_id": payment["payment_id"], "amount": -payment["amount"]}
        for payment in list(history)
    )
    record["status"] = "cancelled"
    return ToolResult(llm_response=airlinedb.dumps(record))
