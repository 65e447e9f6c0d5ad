"""Reload the signed-in customer's profile into project memory."""

from __future__ import annotations

from retaildb import current
from skills._shared.shop import profile

from keel.tools import ToolContext, ToolResult, tool


@tool(
    description="Reload the signed-in customer's profile into memory after a change.",
    effect="read_only",
)
async def load_account(*, context: ToolContext) -> ToolResult:
    """Addresses, payment methods (with gift card balances) and order statuses as they are now."""
    user_id = context.memory.get("project.user_id")
    if user_id is None:
        return ToolResult(error="Nobody is signed in.")
    context.memory.set("project.profile", profile(current(), str(user_id)))
    return ToolResult(llm_response={"reloaded": True})
