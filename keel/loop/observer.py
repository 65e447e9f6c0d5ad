"""`TurnObserver`: what a running turn reports as it goes (for streaming to clients).

The engine calls the observer after each event is appended (with its log sequence number),
for each piece of model text as it streams in, and just before a builder tool runs. An
observer must not raise; it may await (a slow client slows the turn, so keep it quick or
buffer).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from keel.events.model import Event


class TurnObserver(Protocol):
    """Receives a turn's progress."""

    async def event(self, seq: int, event: Event) -> None:
        """An event was appended to the log at `seq`."""

    async def text_delta(self, text: str) -> None:
        """A piece of model text arrived (the whole text follows as a `bot_message`)."""

    async def tool_started(self, name: str, arguments: Mapping[str, object]) -> None:
        """A builder tool is about to run with these (validated) arguments."""
