"""Tools of the tiering skill."""

from __future__ import annotations

from keel.tools import ToolContext, tool


@tool(description="Record the customer's tier.")
async def set_tier(tier: str, *, context: ToolContext) -> dict[str, object]:
    """Set the tier.

    Args:
        tier: The tier.
    """
    context.memory.set("project.customer_tier", tier)
    return {"ok": True, "tier": tier}
