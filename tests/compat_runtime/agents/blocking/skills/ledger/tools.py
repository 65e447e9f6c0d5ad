"""Ledger tools written the way real Mantle projects write them: sqlite3 called
synchronously inside `async def`. The tests hold the call with `GATE` (a threading.Event)."""

from __future__ import annotations

import sqlite3
import threading

from keel.tools import ToolContext, tool

GATE = threading.Event()
"""Closed: a call blocks (as a slow database would) until the test opens it."""
STARTED = threading.Event()
"""Set when a call has started blocking."""
RELEASED = threading.Event()
"""Set when a call has stopped blocking."""
HOLD_AT_MOST = 30.0
"""Seconds a call waits for the gate at most (so a forgotten gate ends)."""


def _balance() -> int:
    connection = sqlite3.connect(":memory:")
    try:
        connection.execute("create table ledger (amount integer)")
        connection.execute("insert into ledger values (120)")
        STARTED.set()
        GATE.wait(HOLD_AT_MOST)  # blocks the calling thread, like a locked database file
        RELEASED.set()
        return int(connection.execute("select sum(amount) from ledger").fetchone()[0])
    finally:
        connection.close()


@tool(description="Read the account balance from the ledger.")
async def read_ledger(*, context: ToolContext) -> dict[str, object]:
    """Read the balance."""
    return {"ok": True, "balance": _balance()}
