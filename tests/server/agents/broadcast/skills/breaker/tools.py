"""The breaker's tool: it always raises, as a tool with a bug would."""

from __future__ import annotations

from keel.tools import tool


@tool(description="Break on purpose.")
async def explode() -> dict[str, str]:
    """Always raises."""
    raise RuntimeError("the breaker exploded")
