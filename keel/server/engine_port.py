"""The server's calls into the engine: one call per request, reporting to an observer.

A `TurnCall` runs one request's work (`Engine.handle` for a message, `Engine.resolve_pause`
for an approval) with a `FeedObserver` that pushes what the engine reports (log events
with their sequence numbers, model text, tool starts) into the run's feed. The engine
serialises turns of a conversation itself through the store's conversation lock.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import cast

from keel.events.base import JsonValue, freeze_mapping
from keel.loop.engine import Engine
from keel.loop.observer import TurnObserver
from keel.loop.result import TurnResult
from keel.server.feed import Delta, Logged, ToolStart, TurnFeed
from keel.stores.port import StoredEvent

TurnCall = Callable[[TurnObserver], Awaitable[TurnResult]]
"""Runs one request's work on the engine, reporting to the observer."""


class FeedObserver:
    """A `TurnObserver` that pushes everything into a run's feed and keeps the log events."""

    def __init__(self, feed: TurnFeed) -> None:
        self._feed = feed
        self.appended: list[StoredEvent] = []
        """The events this request appended, in log order."""

    async def committed(self, events: Sequence[StoredEvent], started_at: float) -> None:
        """A commit of `events` ended: each goes into the feed, in log order."""
        self.appended.extend(events)
        push = self._feed.push
        for item in events:
            push(Logged(seq=item.seq, event=item.event))

    async def text_delta(self, text: str) -> None:
        """Model text arrived."""
        self._feed.push(Delta(text=text))

    async def tool_started(self, name: str, arguments: Mapping[str, object]) -> None:
        """A tool is about to run."""
        self._feed.push(ToolStart(name=name, arguments=_frozen(arguments)))


def handle_call(
    engine: Engine, conversation_id: str, text: str, metadata: Mapping[str, JsonValue] | None
) -> TurnCall:
    """The call for one user message."""

    async def call(observer: TurnObserver) -> TurnResult:
        return await engine.handle(conversation_id, text, metadata=metadata, observer=observer)

    return call


def resolve_call(engine: Engine, conversation_id: str, pause_id: str, approved: bool) -> TurnCall:
    """The call for an approval (raises `PauseNotPending` when the pause is not pending)."""

    async def call(observer: TurnObserver) -> TurnResult:
        return await engine.resolve_pause(conversation_id, pause_id, approved, observer=observer)

    return call


def _frozen(arguments: Mapping[str, object]) -> Mapping[str, JsonValue]:
    try:
        return freeze_mapping(cast(Mapping[object, object], arguments))
    except (TypeError, ValueError):
        return freeze_mapping({"unprintable": True})
