"""A shared tool: it writes an entry that only file_claim declares (get_quote imports it too)."""

from __future__ import annotations

from keel.tools import ToolContext, ToolResult, tool


@tool(description="Record the policy the caller has.")
async def record_policy(policy: str, *, context: ToolContext) -> ToolResult:
    """Record the policy.

    Args:
        policy: The policy name (Car or Home).
    """
    context.memory.set("policy_name", policy)
    return ToolResult(llm_response={"ok": True, "policy": policy})
