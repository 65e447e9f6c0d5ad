"""A ledger tool that blocks inside `async def` (a locked sqlite file, here a closed gate)."""

from __future__ import annotations

import sqlite3
import threading

from keel.tools import tool

NEVER = threading.Event()
"""Never set: every call blocks for `HOLD` seconds, far past the agent's tool_timeout."""
HOLD = 2.0


@tool(description="Read the account balance from the ledger.")
async def read_ledger() -> dict[str, object]:
    """Read the balance."""
    connection = sqlite3.connect(":memory:")
    try:
        NEVER.wait(HOLD)  # blocks the calling thread
        return {"ok": True, "balance": 120}
    finally:
        connection.close()
