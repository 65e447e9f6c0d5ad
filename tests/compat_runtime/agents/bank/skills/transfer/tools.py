"""Tools of the transfer skill: failure is reported in the payload, as Mantle tools do."""

from __future__ import annotations

from keel.tools import ToolContext, ToolResult, tool


@tool(description="Transfer an amount to a payee.")
async def transfer_money(amount: int, payee: str, *, context: ToolContext) -> dict[str, object]:
    """Transfer.

    Args:
        amount: Whole pounds.
        payee: Who receives it.
    """
    if amount > 100:
        return {"ok": False, "error": "insufficient_funds", "balance": 100}
    if payee == "nobody":
        return {"success": False, "message": "unknown payee"}
    if payee == "blocked":
        return {"error": "payee blocked", "payee": payee}
    if payee == "wrapped":
        return ToolResult(llm_response={"ok": False, "reason": "limit reached"})  # type: ignore[return-value]
    context.memory.set("transfer_reference", "TR-1")
    return {"ok": True, "reference": "TR-1", "error": None}
