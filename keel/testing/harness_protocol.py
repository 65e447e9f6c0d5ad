"""What the conversation-test runner needs from a harness that drives an agent in process.

`keel.testing.harness.ConversationHarness` (with `TurnResult`) satisfies these protocols;
tests of the runner use small doubles that do too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from keel.events.base import JsonValue
from keel.events.fold import ConversationState
from keel.events.model import BotMessage, EventBase


class TurnOutcome(Protocol):
    """The outcome of one user message: what the bot said, why the turn ended, its events."""

    @property
    def bot_messages(self) -> tuple[BotMessage, ...]:
        """The bot messages of this turn, in order."""
        ...

    @property
    def stop_reason(self) -> str:
        """Why the turn ended (`end_turn`, `paused`, `budget_exhausted`, ...)."""
        ...

    @property
    def events(self) -> tuple[EventBase, ...]:
        """The events this turn appended, in order."""
        ...


class Harness(Protocol):
    """One conversation with an agent, driven message by message."""

    async def send(
        self, text: str, *, metadata: Mapping[str, JsonValue] | None = None
    ) -> TurnOutcome:
        """Handle one user message (typed text or a button payload) as one turn; `metadata`
        is the channel's metadata for the message (the runner passes it only when a test
        gives some)."""
        ...

    @property
    def events(self) -> tuple[EventBase, ...]:
        """Every event of the conversation so far, in order."""
        ...

    @property
    def state(self) -> ConversationState:
        """The conversation state (the fold of `events`)."""
        ...


@runtime_checkable
class CancellingHarness(Protocol):
    """A harness that can cancel a turn while a tool runs (`user: {cancel_on_tool: ...}`)."""

    async def send_cancelling(self, text: str, *, on_tool: str) -> None:
        """Send `text` and cancel the turn as soon as tool `on_tool` starts running."""
        ...

    @property
    def state(self) -> ConversationState:
        """The conversation state after the cancelled turn."""
        ...


@runtime_checkable
class SwitchingHarness(Protocol):
    """A harness that drives several conversations on one engine and store
    (`conversation: <id>` steps)."""

    conversation_id: str
    """The conversation `send` speaks to now."""

    async def switch(self, conversation_id: str) -> None:
        """Go on in conversation `conversation_id` (started on its first message)."""
        ...


@runtime_checkable
class FeedbackHarness(Protocol):
    """A harness that gives explicit plan feedback on a turn (`feedback:` steps)."""

    async def feedback(self, signal: str) -> str:
        """`signal` on the current conversation's last turn; returns what changed."""
        ...
