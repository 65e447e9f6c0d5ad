"""The desk's tools: JSON text results with markers a test can look for in later requests."""

import json

from keel.tools import tool

RESERVATIONS: dict[str, dict[str, object]] = {
    "R1": {"reservation_id": "R1", "flight": "LIS-42", "marker": "RESULT-OF-R1"},
    "R2": {"reservation_id": "R2", "flight": "OPO-17", "marker": "RESULT-OF-R2"},
    "R3": {"reservation_id": "R3", "flight": "FAO-08", "marker": "RESULT-OF-R3"},
}


@tool(description="Look up a reservation by its id, e.g. 'R1'.", effect="read_only")
async def get_reservation(reservation_id: str) -> str:
    found = RESERVATIONS.get(reservation_id)
    return json.dumps(found) if found is not None else "Error: reservation not found"


@tool(description="Cancel a reservation.", effect="write", idempotency_key=("reservation_id",))
async def cancel_reservation(reservation_id: str) -> str:
    return json.dumps({"reservation_id": reservation_id, "status": "cancelled"})


@tool(description="Save a travel note.", effect="write")
async def save_note(text: str) -> str:
    return json.dumps({"saved": text, "marker": "NOTE-SAVED-MARKER"})
