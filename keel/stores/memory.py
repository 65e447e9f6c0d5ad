"""An event store in process memory: the reference implementation and the test fake.

It keeps each event as its encoded JSON text, not as the object it was given, so it
behaves like a database: what was appended cannot change afterwards, and every read
returns fresh objects decoded from what was saved.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field

from keel.errors import ConcurrencyConflict
from keel.events.codec import dumps_event, loads_event
from keel.events.model import Event
from keel.ids import Clock, SystemClock
from keel.stores.locks import KeyedLocks
from keel.stores.port import ConversationSummary, StoredEvent


@dataclass(kw_only=True, slots=True)
class _Log:
    lines: list[str] = field(default_factory=list)
    updated_at: float = 0.0
    append_order: int = 0


class InMemoryEventStore:
    """`EventStore` kept in a dict; data lives as long as the object (`close` keeps it)."""

    def __init__(self, *, clock: Clock | None = None) -> None:
        self._clock = clock or SystemClock()
        self._logs: dict[str, _Log] = {}
        self._appends = itertools.count(1)
        self._conversation_locks = KeyedLocks()

    async def append(
        self,
        conversation_id: str,
        expected_seq: int,
        events: Sequence[Event],
        *,
        durable: bool = True,
    ) -> list[StoredEvent]:
        """See `EventStore.append`."""
        # No await from the check to the write: an append is atomic on the event loop.
        log = self._logs.get(conversation_id)
        actual = len(log.lines) if log else 0
        if actual != expected_seq:
            raise ConcurrencyConflict(conversation_id, expected_seq, actual)
        # Encode everything before touching the log so a bad event writes nothing.
        lines = [dumps_event(event) for event in events]
        if not lines:
            return []
        if log is None:
            log = self._logs[conversation_id] = _Log()
        log.lines.extend(lines)
        log.updated_at = self._clock.now().timestamp()
        log.append_order = next(self._appends)
        return [
            StoredEvent(conversation_id, expected_seq + i, event)
            for i, event in enumerate(events, start=1)
        ]

    async def read(self, conversation_id: str, after_seq: int = 0) -> list[StoredEvent]:
        """See `EventStore.read`."""
        log = self._logs.get(conversation_id)
        if log is None:
            return []
        start = max(after_seq, 0)
        return [
            StoredEvent(conversation_id, seq, loads_event(line))
            for seq, line in enumerate(log.lines[start:], start=start + 1)
        ]

    async def list_conversations(self) -> list[ConversationSummary]:
        """See `EventStore.list_conversations`."""
        newest_first = sorted(self._logs.items(), key=lambda item: -item[1].append_order)
        return [
            ConversationSummary(
                conversation_id=conversation_id,
                last_seq=len(log.lines),
                updated_at=log.updated_at,
            )
            for conversation_id, log in newest_first
        ]

    async def last_seq(self, conversation_id: str) -> int:
        """See `EventStore.last_seq`."""
        log = self._logs.get(conversation_id)
        return len(log.lines) if log else 0

    def conversation_lock(self, conversation_id: str) -> AbstractAsyncContextManager[None]:
        """See `EventStore.conversation_lock`: an asyncio lock per conversation."""
        return self._conversation_locks.hold(conversation_id)

    async def close(self) -> None:
        """Nothing to release; the data stays readable (useful in tests)."""
