"""Shared parcel tools: any skill that lists them in `import_tools` may use them."""

from __future__ import annotations

from keel.tools import ToolContext, ToolResult, tool

# A stand-in for the depot's system: tracking number -> status.
PARCELS = {"PX1001": "in_transit", "PX1002": "delivered", "PX2040": "in_transit"}


@tool(description="Look a parcel up in the depot system.", effect="read_only")
async def check_parcel(parcel_id: str, context: ToolContext) -> ToolResult:
    """Record whether the parcel is in transit, delivered or unknown.

    Args:
        parcel_id: The tracking number as the customer read it, e.g. PX1001.
    """
    status = PARCELS.get(parcel_id.strip().upper(), "unknown")
    context.memory.set("parcel_status", status)
    return ToolResult(llm_response={"parcel_id": parcel_id, "status": status})
