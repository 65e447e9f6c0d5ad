"""Recently served conversations' logs, decoded and folded, so a turn reads only what is new.

Reading and decoding a whole conversation log at the start of every turn is most of a
turn's cost once a conversation is a few dozen turns long (bench/scale). A conversation's
log is append-only and every turn holds the conversation's lock, so a log known up to seq
`n` is still right up to `n`: the next turn reads the events after `n` (appended by this
process or by another worker) and folds only those into the kept state.

    log = LogCache(store)
    history, state = await log.load(conversation_id)
    ...                                   # the turn appends through its Recorder
    log.keep(conversation_id, history + appended, recorder.state)   # or log.forget(...)

At most `capacity` conversations are kept, the least recently served dropped first.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from keel.events.fold import ConversationState, fold
from keel.events.model import Event
from keel.stores.port import EventStore

DEFAULT_CAPACITY = 256


@dataclass(frozen=True, kw_only=True, slots=True)
class _Known:
    events: tuple[Event, ...]
    state: ConversationState
    """`fold(events)`; its `last_seq` is the seq of the last event."""


class LogCache:
    """Per-engine cache of decoded conversation logs and their folded states."""

    def __init__(self, store: EventStore, *, capacity: int = DEFAULT_CAPACITY) -> None:
        self.store = store
        self.capacity = capacity
        self._known: OrderedDict[str, _Known] = OrderedDict()

    async def load(self, conversation_id: str) -> tuple[tuple[Event, ...], ConversationState]:
        """The whole log of `conversation_id` and its folded state; call under its lock."""
        known = self._known.pop(conversation_id, None)
        after = known.state.last_seq if known is not None else 0
        new = tuple(s.event for s in await self.store.read(conversation_id, after_seq=after))
        if known is None:
            return new, fold(new)
        if not new:
            return known.events, known.state
        return known.events + new, fold(new, known.state)

    def keep(
        self, conversation_id: str, events: tuple[Event, ...], state: ConversationState
    ) -> None:
        """Remember the log as it stands after a turn (`state` must be `fold(events)`)."""
        self._known[conversation_id] = _Known(events=events, state=state)
        self._known.move_to_end(conversation_id)
        while len(self._known) > self.capacity:
            self._known.popitem(last=False)

    def forget(self, conversation_id: str) -> None:
        """Drop what is known (after a failed turn: the next one reads the whole log)."""
        self._known.pop(conversation_id, None)
