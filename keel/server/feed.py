"""What a running turn reports, in order, to everyone following it.

A `TurnFeed` is an append-only list of items with any number of followers: the request
that started the turn, and clients that reconnect to `GET .../stream` while it runs.
Items are log events with their sequence numbers (`Logged`), streamed model text
(`Delta`), tool starts (`ToolStart`) and finally the outcome (`Finished`). Only `Logged`
items are in the conversation's log; the others are previews that a reconnect does not
replay.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TypeAlias

from keel.events.base import JsonMapping
from keel.events.fold import ConversationState
from keel.events.model import Event, TurnEnded
from keel.stores.port import StoredEvent


@dataclass(frozen=True, kw_only=True, slots=True)
class Failure:
    """Why a run did not complete normally, as the HTTP status and error it maps to."""

    status: int
    code: str
    message: str


@dataclass(frozen=True, kw_only=True, slots=True)
class RunOutcome:
    """How a request's run ended and what it added to the log."""

    events: tuple[StoredEvent, ...]
    """The events this request appended, in log order."""
    state: ConversationState
    """The conversation's state afterwards."""
    cancelled: bool = False
    failure: Failure | None = None

    @property
    def stop_reason(self) -> str:
        """The stop reason of the request's last turn (`cancelled` / `error` when it had none)."""
        for stored in reversed(self.events):
            if isinstance(stored.event, TurnEnded):
                return stored.event.stop_reason
        if self.cancelled:
            return "cancelled"
        return "error" if self.failure is not None else "end_turn"


@dataclass(frozen=True, kw_only=True, slots=True)
class Logged:
    """An event appended to the log, with its sequence number."""

    seq: int
    event: Event


@dataclass(frozen=True, kw_only=True, slots=True)
class Delta:
    """A piece of model text as it streams (a preview; the bot message is authoritative)."""

    text: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolStart:
    """A tool is about to run."""

    name: str
    arguments: JsonMapping


@dataclass(frozen=True, kw_only=True, slots=True)
class Finished:
    """The run ended; always the last item."""

    outcome: RunOutcome


FeedItem: TypeAlias = Logged | Delta | ToolStart | Finished


class TurnFeed:
    """Append-only items of one run; followers read from any position and wait for more."""

    def __init__(self) -> None:
        self._items: list[FeedItem] = []
        self._wake: asyncio.Event | None = None
        """Set by the next push; made only when someone waits (most pushes have no
        waiter: the request that started the turn waits for its outcome)."""
        self.last_seq = 0
        """The highest sequence number pushed so far."""
        self.followers = 0
        """How many `follow` iterations are active."""
        self._followers_changed: asyncio.Event | None = None

    @property
    def finished(self) -> bool:
        """True once the `Finished` item is in."""
        return bool(self._items) and isinstance(self._items[-1], Finished)

    def push(self, item: FeedItem) -> None:
        """Add an item; a `Logged` item at or below `last_seq` is a duplicate and dropped."""
        if self.finished:
            return
        if isinstance(item, Logged):
            if item.seq <= self.last_seq:
                return
            self.last_seq = item.seq
        self._items.append(item)
        wake, self._wake = self._wake, None
        if wake is not None:
            wake.set()

    def next_push(self) -> asyncio.Event:
        """An event set by the next push (never, once finished): wait on it to learn that
        the feed grew without following it."""
        if self._wake is None:
            self._wake = asyncio.Event()
        return self._wake

    def position_after(self, seq: int) -> int:
        """The index just past the last `Logged` item with a sequence number <= `seq`."""
        position = 0
        for index, item in enumerate(self._items):
            if isinstance(item, Logged) and item.seq <= seq:
                position = index + 1
        return position

    async def follow(self, start: int = 0) -> AsyncIterator[FeedItem]:
        """Yield the items from index `start` on, waiting for new ones, up to `Finished`."""
        index = start
        self._count_follower(+1)
        try:
            while True:
                wake = self.next_push()
                while index < len(self._items):
                    item = self._items[index]
                    index += 1
                    yield item
                    if isinstance(item, Finished):
                        return
                await wake.wait()
        finally:
            self._count_follower(-1)

    def _count_follower(self, change: int) -> None:
        self.followers += change
        changed, self._followers_changed = self._followers_changed, None
        if changed is not None:
            changed.set()

    async def until_followed(self, count: int) -> None:
        """Return once at least `count` followers are attached (used to order tests)."""
        while self.followers < count:
            if self._followers_changed is None:
                self._followers_changed = asyncio.Event()
            await self._followers_changed.wait()
