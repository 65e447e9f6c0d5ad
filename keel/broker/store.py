"""`PublishingStore`: an event store that offers what it committed to an `EventPublisher`."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager

from keel.broker.publisher import EventPublisher
from keel.events.model import Event
from keel.stores.port import ConversationSummary, EventStore, StoredEvent


class PublishingStore:
    """`inner` with every committed append offered to `publisher` (an `EventStore`)."""

    def __init__(self, inner: EventStore, publisher: EventPublisher) -> None:
        self.inner = inner
        self.publisher = publisher

    async def append(
        self,
        conversation_id: str,
        expected_seq: int,
        events: Sequence[Event],
        *,
        durable: bool = True,
    ) -> list[StoredEvent]:
        """Append to `inner`; once that committed, offer the stored events (never waits)."""
        stored = await self.inner.append(conversation_id, expected_seq, events, durable=durable)
        # After the commit, and synchronous: a broker that is down or slow cannot delay or
        # undo it, and appends of one conversation reach the queue in their commit order.
        self.publisher.offer(stored)
        return stored

    async def read(self, conversation_id: str, after_seq: int = 0) -> list[StoredEvent]:
        """`inner.read`."""
        return await self.inner.read(conversation_id, after_seq)

    async def list_conversations(self) -> list[ConversationSummary]:
        """`inner.list_conversations`."""
        return await self.inner.list_conversations()

    async def last_seq(self, conversation_id: str) -> int:
        """`inner.last_seq`."""
        return await self.inner.last_seq(conversation_id)

    def conversation_lock(self, conversation_id: str) -> AbstractAsyncContextManager[None]:
        """`inner.conversation_lock`."""
        return self.inner.conversation_lock(conversation_id)

    async def close(self) -> None:
        """Closes nothing: the runtime closes the publisher, then `inner`."""
