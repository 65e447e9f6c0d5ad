"""Tools of the planned transfer skill: failure is reported in the payload."""

from __future__ import annotations

from keel.tools import ToolContext, tool


@tool(description="Transfer an amount to a payee.", effect="write")
async def transfer_money(amount: int, payee: str, *, context: ToolContext) -> dict[str, object]:
    """Transfer.

    Args:
        amount: Whole pounds.
        payee: Who receives it.
    """
    if amount > 100:
        return {"ok": False, "error": "insufficient_funds"}
    context.memory.set("transfer_reference", "TR-1")
    return {"ok": True, "reference": "TR-1"}
