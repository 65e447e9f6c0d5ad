"""`EventPublisher`: a bounded queue of committed events and the task that sends them.

`offer` is called right after a commit and never waits: the events join the queue, or,
when `capacity` events are already waiting, are dropped (counted in `BrokerStats.dropped`
and logged: the first drop of an overflow at WARNING, and how many were dropped once the
queue has room again). The background task sends the queue's head through the
`Transport` and removes it only once the broker has confirmed it, so every event is
published at least once, in commit order; a failure (the broker down, a refused
connection, a lost channel) is counted, logged (the first of a series at WARNING), and
retried after a backoff (`backoff(attempt)`, up to `MAX_BACKOFF` seconds) on a new
connection. `close` waits up to its deadline for the queue to drain, then stops and logs
what was published, dropped, failed and left unpublished.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from keel.stores.port import StoredEvent

_log = logging.getLogger("keel.broker")

MAX_BACKOFF = 30.0
FLUSH_SECONDS = 5.0
"""How long `close` waits by default for the queue to drain."""

Sleep = Callable[[float], Awaitable[None]]


class Transport(Protocol):
    """Where events go (RabbitMQ: `keel.broker.amqp.AmqpTransport`)."""

    @property
    def where(self) -> str:
        """The broker's address without credentials, for log lines."""
        ...

    async def connect(self) -> None:
        """Open a connection (and declare what publishing needs)."""
        ...

    async def publish(self, event: StoredEvent) -> None:
        """Send one event; returns once the broker has taken it, else raises."""
        ...

    async def close(self) -> None:
        """Close the connection, if open; never raises."""
        ...


@dataclass(kw_only=True, slots=True)
class BrokerStats:
    """What the publisher did since it started."""

    published: int = 0
    """Events the broker confirmed."""
    dropped: int = 0
    """Events that found the queue full (never published)."""
    failures: int = 0
    """Failed connection or publish attempts (each one retried)."""
    waiting: int = 0
    """Events in the queue now."""


def default_backoff(attempt: int) -> float:
    """Seconds before retry `attempt` (0-based): 0.5, 1, 2, ... up to `MAX_BACKOFF`."""
    return float(min(MAX_BACKOFF, 0.5 * 2 ** min(attempt, 16)))


class EventPublisher:
    """Publishes committed events in order through `transport`, from a background task."""

    def __init__(
        self,
        transport: Transport,
        *,
        capacity: int,
        backoff: Callable[[int], float] = default_backoff,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, not {capacity}")
        self.transport = transport
        self.capacity = capacity
        self.stats = BrokerStats()
        self._queue: deque[StoredEvent] = deque()
        self._backoff = backoff
        self._sleep = sleep
        self._ready = asyncio.Event()
        self._changed = asyncio.Condition()
        self._task: asyncio.Task[None] | None = None
        self._dropping = 0
        """Events dropped in the current overflow (logged when the queue has room again)."""
        self.connected = False
        """The last attempt reached the broker (`close` waits for the queue only then)."""

    def start(self) -> None:
        """Start the background task (inside the server's event loop)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="keel.broker")
            _log.info("publishing events to %s", self.transport.where)

    def offer(self, events: Sequence[StoredEvent]) -> None:
        """Queue committed events for publishing; never waits (drops what does not fit)."""
        for event in events:
            if len(self._queue) >= self.capacity:
                self.stats.dropped += 1
                self._dropping += 1
                if self._dropping == 1:
                    _log.warning(
                        "event broker queue full (%d events waiting for %s): dropping events, "
                        "first conversation %s seq %d",
                        len(self._queue),
                        self.transport.where,
                        event.conversation_id,
                        event.seq,
                        extra={"conversation_id": event.conversation_id, "seq": event.seq},
                    )
                continue
            if self._dropping:
                _log.warning(
                    "event broker queue has room again: %d events were dropped", self._dropping
                )
                self._dropping = 0
            self._queue.append(event)
        self.stats.waiting = len(self._queue)
        self._ready.set()

    async def until(self, condition: Callable[[BrokerStats], bool]) -> BrokerStats:
        """Wait until `condition(stats)` holds (for tests and shutdown; wrap in a timeout)."""
        async with self._changed:
            await self._changed.wait_for(lambda: condition(self.stats))
        return self.stats

    async def close(self, flush_seconds: float = FLUSH_SECONDS) -> BrokerStats:
        """Wait up to `flush_seconds` for the queue to drain (not when the broker is out of
        reach: a shutdown does not wait for it), then stop; returns the stats."""
        if self._task is not None:
            if self.connected:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.until(lambda s: s.waiting == 0), flush_seconds)
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self.transport.close()
        s = self.stats
        level = logging.WARNING if s.waiting or s.dropped else logging.INFO
        _log.log(
            level,
            "event broker %s stopped: %d published, %d dropped, %d failed attempts, %d unpublished",
            self.transport.where,
            s.published,
            s.dropped,
            s.failures,
            s.waiting,
            extra={
                "published": s.published,
                "dropped": s.dropped,
                "failures": s.failures,
                "unpublished": s.waiting,
            },
        )
        return s

    async def _run(self) -> None:
        attempt = 0
        while True:
            if not self._queue:
                self._ready.clear()
                await self._ready.wait()
                continue
            head = self._queue[0]
            try:
                if not self.connected:
                    await self.transport.connect()
                    self.connected = True
                    if attempt:
                        _log.info("event broker %s reachable again", self.transport.where)
                await self.transport.publish(head)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # any broker trouble: count, log, reconnect, retry
                self.connected = False
                await self.transport.close()
                await self._note(failed=True)
                log = _log.warning if attempt == 0 else _log.debug
                log(
                    "event broker %s failed (%s: %s); retrying, %d events waiting",
                    self.transport.where,
                    type(exc).__name__,
                    exc,
                    len(self._queue),
                    extra={"error_type": type(exc).__name__, "error": str(exc)},
                )
                await self._sleep(self._backoff(attempt))
                attempt += 1
                continue
            attempt = 0
            self._queue.popleft()  # only once the broker confirmed it: at least once
            await self._note(failed=False)

    async def _note(self, *, failed: bool) -> None:
        if failed:
            self.stats.failures += 1
        else:
            self.stats.published += 1
        self.stats.waiting = len(self._queue)
        async with self._changed:
            self._changed.notify_all()
