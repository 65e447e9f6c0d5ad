"""Tools of the bills skill."""

from __future__ import annotations

from keel.tools import tool


@tool(description="Pay a bill.")
async def pay_bill(biller: str) -> dict[str, object]:
    """Pay.

    Args:
        biller: Who is paid.
    """
    return {"success": False, "message": "biller offline"}
