"""The breaker's tools: one answers, one always raises (as a tool with a bug would)."""

from __future__ import annotations

from keel.tools import tool


@tool(description="Fetch the thing.")
async def fetch() -> dict[str, bool]:
    """Always answers."""
    return {"ok": True}


@tool(description="Break on purpose.")
async def explode() -> dict[str, str]:
    """Always raises."""
    raise RuntimeError("the breaker exploded")
