"""Appending a conversation's events and keeping its folded state current.

Every state change goes through `Recorder.emit`: the events are stamped with the injected
clock (in place: an event is stamped once, never copied for it), folded into `state` at
once (the turn reads its own changes) and buffered. `Recorder.commit` appends what is
buffered in one `store.append` (one transaction), with the seq of the last commit
(optimistic concurrency: a writer that appended in between makes the commit fail, whatever
was folded since). The turn commits at the boundaries the crash guarantees need
(docs/events.md, "What a crash can lose"): before a model call, before an effectful tool
runs and after its record, at the end of every turn and request. Read-only work between
boundaries costs no commit.

A commit that fails is rolled back: its events leave `events` and `state` goes back to the
last committed state (what the store holds is what the engine believes), then the error
propagates. Observers hear only committed events: each batch in one `committed` call, in
log order with their seqs; nothing of a buffered event reaches them before its commit.

Being the one writer, it also keeps seed 001's rule that every `memory_set` is followed by
its `slot_set` copy (`with_slot_copies`), whichever code path made the write.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import timedelta

from keel.events.base import from_frozen
from keel.events.fold import ConversationState, fold
from keel.events.model import Event, MemorySet, SlotSet
from keel.ids import Clock
from keel.loop.observer import TurnObserver, reads_text
from keel.stores.port import EventStore


class Recorder:
    """The single writer of one conversation's log during a request."""

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
        self.streams_text = observer is not None and reads_text(observer)
        """Someone reads the model's text as it streams (read once per request)."""
        self.store = store
        self.conversation_id = conversation_id
        self.state = state
        """The folded state, buffered events included (what the turn goes on from)."""
        self.committed_state = state
        """The folded state of what the store holds (after the last commit)."""
        self.clock = clock
        self.events: list[Event] = []
        """The events of the current request's result, committed or buffered (the engine
        clears it between the session start and the turn)."""
        self.committed: list[Event] = []
        """Every event appended through this recorder, in order."""
        self.buffered: list[Event] = []
        """Events emitted since the last commit, in order."""
        self.commits = 0
        """Store appends made (one transaction each)."""
        self.persist_ms = 0.0
        """Milliseconds spent appending to the store (the `persist` stage)."""
        self._commit_busy = False
        """A commit is under way (`commit` lets one run at a time)."""
        self._commit_waiters: list[asyncio.Future[None]] = []

    async def emit(self, *events: Event) -> None:
        """Stamp `events` (those without a timestamp), fold them into `state` and buffer
        them for the next commit."""
        if not events:
            return
        now = self.clock.now().timestamp()
        complete: Sequence[Event] = events
        for event in events:  # `with_slot_copies` only when there is a write to copy
            if type(event) is MemorySet:
                complete = with_slot_copies(events)
                break
        for event in complete:
            if not event.timestamp:
                # `keel.events.base.stamp`, inlined: one call less per event emitted.
                object.__setattr__(event, "timestamp", now)
        self.state = fold(complete, self.state)
        self.buffered.extend(complete)
        self.events.extend(complete)

    async def commit(self, *, durable: bool = False) -> None:
        """Append the buffered events in one `store.append`, then report them to the
        observer. Nothing buffered: nothing happens. A failure rolls the batch back.
        `durable`: the commit must reach stable storage (an effect's boundary)."""
        if not self.buffered:
            return
        # One commit at a time (a concurrent tool's commit waits), without an asyncio.Lock's
        # calls on the usual, uncontended path: a flag, and futures only for waiters.
        while self._commit_busy:
            waiter = asyncio.get_running_loop().create_future()
            self._commit_waiters.append(waiter)
            await waiter
        self._commit_busy = True
        try:
            batch, self.buffered = self.buffered, []
            if not batch:
                return
            folded = self.state
            expected = self.committed_state.last_seq
            started = self.clock.now()
            try:
                stored = await self.store.append(
                    self.conversation_id, expected, batch, durable=durable
                )
            except BaseException:
                self._roll_back(batch)
                raise
            self.persist_ms += (self.clock.now() - started) / _MILLISECOND
            self.commits += 1
            # Events emitted while the append ran (a concurrent tool's) stay buffered.
            self.committed_state = (
                folded if not self.buffered else fold(batch, self.committed_state)
            )
            self.committed.extend(batch)
            observer = self.observer
            if observer is not None:
                await observer.committed(stored, started.timestamp())
        finally:
            self._commit_busy = False
            if self._commit_waiters:
                # Every waiter looks again (one cancelled meanwhile loses no wake-up).
                waiters, self._commit_waiters = self._commit_waiters, []
                for waiter in waiters:
                    if not waiter.done():
                        waiter.set_result(None)

    def _roll_back(self, batch: list[Event]) -> None:
        """Forget a batch the store refused: the state is the committed one again, plus
        what was emitted after the batch (still buffered)."""
        dropped = {id(event) for event in batch}
        self.events = [event for event in self.events if id(event) not in dropped]
        self.state = fold(self.buffered, self.committed_state)

    def on_record(self, turn_id: str) -> bool:
        """Whether turn `turn_id` is still open in the state (its start was not rolled
        back with a failed commit)."""
        return self.state.current_turn_id == turn_id


_MILLISECOND = timedelta(milliseconds=1)

ENGINE_WRITER = "engine"
"""`slot_set.filled_by` of a copy the recorder adds (the engine's own memory writes)."""


def with_slot_copies(events: Sequence[Event]) -> Sequence[Event]:
    """`events` with a `slot_set` copy right after each `memory_set` that has none there.

    The copy shares the write's frozen value (`from_frozen`: it is not frozen again)."""
    for event in events:  # a plain loop: no call per event on the usual path
        if type(event) is MemorySet:
            break
    else:
        return events
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
            complete.append(
                from_frozen(SlotSet, name=event.key, value=event.value, filled_by=ENGINE_WRITER)
            )
    return complete
