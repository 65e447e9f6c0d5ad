"""`follow_log`: a conversation's log as `logged` frames, followed live (admin stream).

The log is the source of truth: each round reads the store after the last seq sent, then
waits for a reason to look again. Reasons: the conversation's running turn pushed to its
feed (events of this process's turns arrive at once), a run started in this process (its
next turn), or `POLL_SECONDS` passed (turns run by other worker processes). When nothing
was sent for `KEEP_ALIVE_SECONDS` a comment is sent so proxies keep the connection. The
generator never ends by itself: `EventStream` closes it when the client leaves.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from keel.server.runtime import ServerRuntime
from keel.server.sse import KEEP_ALIVE, encode_log_entry, render

POLL_SECONDS = 1.0
"""How often the store is read when nothing in this process signals a change."""

KEEP_ALIVE_SECONDS = 15.0
"""Quiet time after which a keep-alive comment is sent."""


async def follow_log(runtime: ServerRuntime, key: str, after: int) -> AsyncIterator[str]:
    """SSE text: every event of conversation `key` after seq `after`, then new ones."""
    loop = asyncio.get_running_loop()
    last, last_write = after, loop.time()
    while True:
        # Take the wake-up signals before reading, so an append in between is not missed.
        signals = [runtime.runs.next_start()]
        run = runtime.runs.active(key)
        if run is not None and not run.feed.finished:
            signals.append(run.feed.next_push())
        for stored in await runtime.store.read(key, after_seq=last):
            yield render(encode_log_entry(stored.seq, stored.event))
            last, last_write = stored.seq, loop.time()
        if loop.time() - last_write >= KEEP_ALIVE_SECONDS:
            yield KEEP_ALIVE
            last_write = loop.time()
        await first_set(signals, timeout=POLL_SECONDS)


async def first_set(events: list[asyncio.Event], *, timeout: float) -> None:
    """Return when one of `events` is set, or after `timeout` seconds."""
    waiters = [asyncio.ensure_future(event.wait()) for event in events]
    try:
        await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
