"""Events of the voice channels (v7)."""

from dataclasses import dataclass

from keel.events.base import EventBase


@dataclass(frozen=True, kw_only=True, slots=True)
class BargeIn(EventBase):
    """The caller spoke while the agent was answering: playback stopped at once and the
    answer's turn, when still running, was cancelled (seed 002). Appended after that turn
    ended, so it follows the cancelled turn's `turn_ended`."""

    kind = "barge_in"

    cut_text: str
    """What the caller did not hear: the unplayed rest of the answer's messages (the
    message being played counts whole), in order, joined by spaces; '' if none was due."""
    cut_messages: int
    """How many bot messages were cut (partly or wholly unheard)."""
    turn_cancelled: bool
    """Whether the answer's turn was still running and was cancelled."""
    turn_id: str | None = None
    """The turn whose answer was cut, when known."""
    speech_start_ms: int = 0
    """Where the caller's speech began, as an offset in the call's inbound audio."""
    reaction_ms: float = 0.0
    """From the detected speech start to the playback stop sent to the channel."""


__all__ = ["BargeIn"]
