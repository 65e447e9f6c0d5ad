"""A booking system that hangs on its first call (a slow backend) and answers after."""

from __future__ import annotations

import asyncio

from keel.tools import ToolContext, ToolResult, tool

_CALLS = [0]


@tool(description="Look up the caller's booking.", effect="read_only")
async def slow_lookup(context: ToolContext) -> ToolResult:
    """The first call never returns by itself (only a cancellation ends it)."""
    _CALLS[0] += 1
    if _CALLS[0] == 1:
        await asyncio.Event().wait()
    return ToolResult(llm_response={"day": "monday"})
