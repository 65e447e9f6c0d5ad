"""Tools of the redirect_parcel skill."""

from __future__ import annotations

from keel.tools import ToolContext, ToolResult, tool


@tool(description="Send a parcel to a new delivery address.", effect="write")
async def reroute(parcel_id: str, new_address: str, speed: str, context: ToolContext) -> ToolResult:
    """Ask the depot to deliver the parcel somewhere else.

    Args:
        parcel_id: The tracking number, e.g. PX1001.
        new_address: Where the parcel should go instead.
        speed: standard or express.
    """
    if not new_address.strip():
        return ToolResult(error="The new address is empty.")
    eta = "tomorrow" if speed == "express" else "in three working days"
    context.memory.set("eta", eta)
    return ToolResult(llm_response={"parcel_id": parcel_id, "eta": eta})
