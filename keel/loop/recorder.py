"""Appending a conversation's events and keeping its folded state current.

Every state change goes through `Recorder.emit`: the events are stamped with the injected
clock, appended to the store with the last known sequence number (optimistic concurrency),
and only then folded into `state`. What the store accepted is what the engine believes.
Being the one writer, it also keeps seed 001's rule that every `memory_set` is followed by
its `slot_set` copy (`with_slot_copies`), whichever code path made the write.
"""

from __future__ import annotations

from collections.abc import Sequence

from keel.events.base import stamped
from keel.events.fold import ConversationState, fold
from keel.events.model import Event, MemorySet, SlotSet
from keel.ids import Clock
from keel.loop.observer import TurnObserver
from keel.stores.port import EventStore


class Recorder:
    """The single writer of one conversation's log during a turn."""

    def __init__(
        self,
        *,
        store: EventStore,
        conversation_id: str,
        state: ConversationState,
        clock: Clock,
        observer: TurnObserver | None = None,
    ) -> None:
        self.observer = observer
        self.store = store
        self.conversation_id = conversation_id
        self.state = state
        self.clock = clock
        self.events: list[Event] = []
        """The events of the current request's result (the engine clears it between the
        session start and the turn)."""
        self.committed: list[Event] = []
        """Every event appended through this recorder, in order."""
        self.persist_ms = 0.0
        """Milliseconds spent appending to the store (the `persist` stage)."""

    async def emit(self, *events: Event) -> None:
        """Append `events` atomically, then fold them into `state`."""
        if not events:
            return
        now = self.clock.now().timestamp()
        complete = with_slot_copies(events)
        # `stamped` shares the already frozen fields: a replace() would freeze them again.
        events_at = [e if e.timestamp else stamped(e, now) for e in complete]
        started = self.clock.now()
        stored = await self.store.append(self.conversation_id, self.state.last_seq, events_at)
        self.persist_ms += (self.clock.now() - started).total_seconds() * 1000
        self.state = fold(events_at, self.state)
        self.events.extend(events_at)
        self.committed.extend(events_at)
        if self.observer is not None:
            for item in stored:
                await self.observer.event(item.seq, item.event)


ENGINE_WRITER = "engine"
"""`slot_set.filled_by` of a copy the recorder adds (the engine's own memory writes)."""


def with_slot_copies(events: Sequence[Event]) -> list[Event]:
    """`events` with a `slot_set` copy right after each `memory_set` that has none there."""
    complete: list[Event] = []
    for index, event in enumerate(events):
        complete.append(event)
        if not isinstance(event, MemorySet):
            continue
        following = events[index + 1] if index + 1 < len(events) else None
        copied = (
            isinstance(following, SlotSet)
            and following.name == event.key
            and following.value == event.value
        )
        if not copied:
            complete.append(SlotSet(name=event.key, value=event.value, filled_by=ENGINE_WRITER))
    return complete
