"""The pay tool: its effect is one line in `$CRASHY_DIR/pay.effects`, written as it ends.

`pay.started` counts the calls that began; while `pay.hold` exists a call waits for
`pay.release` before its effect, so a test can kill the server mid-payment.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from keel.tools import ToolResult, tool

POLL_S = 0.02


def _file(name: str) -> Path:
    return Path(os.environ["CRASHY_DIR"]) / name


def _append(name: str, line: str) -> None:
    with _file(name).open("a") as out:
        out.write(line + "\n")


@tool(description="Pay 10 coins.")
async def pay_coins() -> ToolResult:
    """Record the start, wait while the test holds payments, then record the effect."""
    _append("pay.started", "started")
    if _file("pay.hold").exists():
        while not _file("pay.release").exists():
            await asyncio.sleep(POLL_S)
    _append("pay.effects", "paid 10")
    return ToolResult(llm_response={"paid": 10})
