"""Tools of the counter skill: `CALLS` records every run of `bump` (tests reset it)."""

from __future__ import annotations

from keel.tools import ToolContext, tool

CALLS: list[int] = []


@tool(description="Count one more.")
async def bump(n: int, *, context: ToolContext) -> dict[str, int]:
    """Record the run and count it in memory.

    Args:
        n: Which call this is.
    """
    CALLS.append(n)
    context.memory.set("count", (context.memory.get("count") or 0) + 1)
    return {"count": len(CALLS)}


@tool(description="Break on purpose.")
async def explode() -> dict[str, str]:
    """Always raises."""
    raise RuntimeError("the counter exploded")


@tool(description="Pay 10 coins.")
async def pay() -> dict[str, int]:
    """Pay (after the user confirms)."""
    return {"paid": 10}
