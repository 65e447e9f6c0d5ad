"""`TurnObserver`: what a running turn reports as it goes (for streaming to clients).

The engine reports committed events only: a turn buffers its events and commits them at
its boundaries (`keel.loop.recorder`), and after each commit the observer hears the
batch in one `committed` call (its events in log order, with their sequence numbers). It
also hears each piece of model text as it streams in, and when a builder tool is about to
run (a read-only tool may start before the events that led to it are committed). An
observer must not raise; it may await (a slow client slows the turn, so keep it quick or
buffer).

An observer that never reads the model's text says so with a class attribute
`reads_text = False` (`reads_text(observer)` reads it; absent means True): the engine then
asks the model for the whole reply at once instead of streaming it (telemetry taps read
only the committed events).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from keel.stores.port import StoredEvent


class TurnObserver(Protocol):
    """Receives a turn's progress."""

    async def committed(self, events: Sequence[StoredEvent], started_at: float) -> None:
        """`events` (in log order, with their seqs; never empty) were appended in one
        commit, which started at `started_at` (epoch seconds, the engine's clock)."""

    async def text_delta(self, text: str) -> None:
        """A piece of model text arrived (the whole text follows as a `bot_message`)."""

    async def tool_started(self, name: str, arguments: Mapping[str, object]) -> None:
        """A builder tool is about to run with these (validated) arguments."""


def reads_text(observer: TurnObserver) -> bool:
    """Whether `observer` wants `text_delta` calls (its `reads_text`, True when it has
    none): the engine streams the model's reply only for an observer that does."""
    return getattr(observer, "reads_text", True) is not False
