"""The hold agent's tool: it waits, with no polling, until someone writes to a named pipe.

The pipe is `hold.fifo` in the project folder (the test copies the agent into its temporary
folder and makes the pipe there with `os.mkfifo`). The tool opens it for reading and
writing, so the open never blocks and the pipe always has a reader while the tool waits;
the event loop wakes the tool when a line is written. A cancelled turn closes the pipe on
its way out, so afterwards nobody reads it: a writer's non-blocking open fails with ENXIO.
"""

import asyncio
import os
from pathlib import Path

from keel.tools import tool

PIPE = Path(__file__).resolve().parents[1] / "hold.fifo"


@tool(description="Wait until the turn is released; returns what the releaser wrote.")
async def wait_for_release() -> str:
    fd = os.open(PIPE, os.O_RDWR | os.O_NONBLOCK)
    loop = asyncio.get_running_loop()
    readable: asyncio.Future[None] = loop.create_future()
    loop.add_reader(fd, lambda: readable.done() or readable.set_result(None))
    try:
        await readable
        return os.read(fd, 256).decode().strip()
    finally:
        loop.remove_reader(fd)
        os.close(fd)
