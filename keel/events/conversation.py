"""Conversation-level events: sessions, messages, turns, conversation state, measurements.

Observed Mantle order at `/session_start` (spec §7.2): `session_started` →
`memory_set session_started_metadata` → `flow_started` → `skill_activated` →
`ordered_block_entered` → stack → `user_message` → `bot_message` → `flow_completed` →
`ordered_block_completed` → `skill_completed` → stack → `bot_turn_ended`.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field

from keel.events.base import (
    EMPTY,
    Button,
    ConversationStatus,
    EventBase,
    JsonMapping,
    ResponseSource,
    StopReason,
)


@dataclass(frozen=True, kw_only=True, slots=True)
class SessionStarted(EventBase):
    """A (new or renewed) session began; channel metadata follows as a memory write.

    Ids such as `model_id`, `assistant_id`, `session_id` travel in `metadata`.
    """

    kind = "session_started"


@dataclass(frozen=True, kw_only=True, slots=True)
class UserMessage(EventBase):
    """A message from the user (text, ASR transcript, button payload or control message)."""

    kind = "user_message"

    text: str
    """The final text after incoming-message hooks; a tapped payload is stored as sent."""

    message_id: str
    input_channel: str | None = None
    is_button_payload: bool = False
    """The text is the payload of a tapped button (e.g. a `set:` payload)."""

    button_title: str | None = None
    """The tapped button's title, when the channel sent it."""

    parse_data: JsonMapping = field(default_factory=lambda: EMPTY)
    """Parse results for the message (Rasa's `parse_data`), if any."""


@dataclass(frozen=True, kw_only=True, slots=True)
class BotMessage(EventBase):
    """A message sent to the user."""

    kind = "bot_message"

    text: str
    buttons: tuple[Button, ...] = ()
    utter_action: str | None = None
    """The named response (`utter_*`) this text came from, if any."""

    response_source: ResponseSource
    """`verbatim` (a named response as written), `llm`, `filler`, or `rephrased`."""


@dataclass(frozen=True, kw_only=True, slots=True)
class BotTurnEnded(EventBase):
    """The agent finished answering and waits for the user (latency breakdown in metadata)."""

    kind = "bot_turn_ended"


@dataclass(frozen=True, kw_only=True, slots=True)
class TurnStarted(EventBase):
    """A turn (one inbound message and everything the engine does for it) began."""

    kind = "turn_started"

    turn_id: str


@dataclass(frozen=True, kw_only=True, slots=True)
class TurnEnded(EventBase):
    """A turn ended, and why."""

    kind = "turn_ended"

    turn_id: str
    stop_reason: StopReason


@dataclass(frozen=True, kw_only=True, slots=True)
class ConversationStateChanged(EventBase):
    """The conversation moved to `state` (the only event that sets the conversation state)."""

    kind = "conversation_state_changed"

    state: ConversationStatus


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelCalled(EventBase):
    """One model round trip finished (for cost, latency and budget accounting)."""

    kind = "model_called"

    model: str
    """The concrete model id the tier resolved to."""

    tier: str
    """The tier asked for (`router`, `default`, `reasoning`, ...)."""

    input_tokens: int
    """Every prompt token, cached ones included."""
    output_tokens: int
    cached_input_tokens: int = 0
    """Of `input_tokens`, those read from the provider's prompt cache (schema version 6)."""
    cache_write_tokens: int = 0
    """Of `input_tokens`, those written to the provider's prompt cache (version 6)."""
    latency_ms: float
    cost: float | None = None
    """Cost in the provider's currency units, when known."""


@dataclass(frozen=True, kw_only=True, slots=True)
class StageTimed(EventBase):
    """A measured stage of a turn (load, route, build tools, build prompt, ...)."""

    kind = "stage_timed"

    stage: str
    duration_ms: float


@dataclass(frozen=True, kw_only=True, slots=True)
class StagesTimed(EventBase):
    """Every measured stage of one turn in one event, written at its end (schema version
    8): the compact form of one `stage_timed` per stage, which logs before it hold.
    `expanded()` gives those; `stage_timings` reads either form."""

    kind = "stages_timed"

    durations_ms: JsonMapping
    """Stage name -> milliseconds spent in it this turn, by name."""

    def expanded(self) -> tuple[StageTimed, ...]:
        """The same measurements as one `stage_timed` per stage (same stamp)."""
        return tuple(
            StageTimed(stage=stage, duration_ms=float(ms), timestamp=self.timestamp)
            for stage, ms in self.durations_ms.items()
            if isinstance(ms, int | float)
        )


def stage_timings(events: Iterable[object]) -> list[StageTimed]:
    """The stage timings among `events`, old (`stage_timed`) and compact (`stages_timed`)
    alike, as `stage_timed` events in log order."""
    found: list[StageTimed] = []
    for event in events:
        if isinstance(event, StageTimed):
            found.append(event)
        elif isinstance(event, StagesTimed):
            found.extend(event.expanded())
    return found
