"""What one request to the engine produced."""

from __future__ import annotations

from dataclasses import dataclass

from keel.events.fold import ConversationState
from keel.events.model import BotMessage, Event
from keel.loop.recorder import Recorder


@dataclass(frozen=True, kw_only=True, slots=True)
class TurnResult:
    """What one request produced."""

    bot_messages: tuple[BotMessage, ...]
    stop_reason: str
    events: tuple[Event, ...]
    """Every event this request appended, in order."""
    state: ConversationState


def turn_result(events: tuple[Event, ...], recorder: Recorder) -> TurnResult:
    return TurnResult(
        bot_messages=tuple(e for e in events if isinstance(e, BotMessage)),
        stop_reason=recorder.state.last_stop_reason or "end_turn",
        events=events,
        state=recorder.state,
    )
