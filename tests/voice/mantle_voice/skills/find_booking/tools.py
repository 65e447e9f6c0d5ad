"""A booking system that hangs on its first call (a slow backend) and answers after."""

from __future__ import annotations

import asyncio

from keel.tools import ToolContext, ToolResult, tool

_CALLS = [0]


@tool(description="Look up the caller's booking.", effect="read_only")
async def slow_lookup(context: ToolContext) -> ToolResult:
    """The first call writes memory, then never returns by itself (only a cancellation
    ends it): the memory is kept, the call leaves no record."""
    _CALLS[0] += 1
    context.memory.set("lookup_started", f"call {_CALLS[0]}")
    if _CALLS[0] == 1:
        await asyncio.Event().wait()
    return ToolResult(llm_response={"day": "monday"})
