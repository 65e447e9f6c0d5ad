"""Tools of the sender skill."""

from __future__ import annotations

from keel.tools import ToolContext, ToolResult, tool


@tool(description="Send a message.")
async def send_message(to: str, *, context: ToolContext) -> ToolResult:
    """Send it.

    Args:
        to: Who gets the message.
    """
    return ToolResult(llm_response={"sent_to": to})
