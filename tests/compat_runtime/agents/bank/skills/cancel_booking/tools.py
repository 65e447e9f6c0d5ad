"""Tools of the cancel_booking skill: the booking row is cancelled, then memory says so."""

from __future__ import annotations

from keel.tools import ToolContext, tool

CANCELLED: list[str] = []
"""The booking rows cancelled (the "database")."""


@tool(description="Cancel the booking.")
async def cancel_reservation(*, context: ToolContext) -> dict[str, object]:
    """Cancel."""
    CANCELLED.append("B-1")  # the row is cancelled first (an already cancelled row stays so)
    context.memory.set("project.booking_status", "cancelled")
    return {"ok": True, "booking": "B-1", "status": "cancelled"}
