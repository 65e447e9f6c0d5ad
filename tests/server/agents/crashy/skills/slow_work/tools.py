"""The slow_work tool: tells the test it started, then waits until the test releases it.

It reports through files in `$CRASHY_DIR`, which the test watches and writes.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from keel.tools import ToolResult, tool

POLL_S = 0.02


def _file(name: str) -> Path:
    return Path(os.environ["CRASHY_DIR"]) / name


@tool(description="Do the slow work.")
async def run_slow_job() -> ToolResult:
    """Append to `slow_work.started`, wait for `slow_work.release`, append to `slow_work.done`.

    The wait is bounded by the agent's `tool_timeout`.
    """
    with _file("slow_work.started").open("a") as out:
        out.write("started\n")
    while not _file("slow_work.release").exists():
        await asyncio.sleep(POLL_S)
    with _file("slow_work.done").open("a") as out:
        out.write("done\n")
    return ToolResult(llm_response={"done": True})
