"""The conversation state as a pure fold over its events.

`fold(events, initial)` is incremental: `fold(b, fold(a)) == fold(a + b)`. Which events
change what:

| state | changed by |
| --- | --- |
| `status` | `conversation_state_changed` only |
| `stack` | `stack_changed` (the whole new stack); `step_advanced` moves one frame's step |
| `memory` | `memory_set` / `slot_set` write, `memory_cleared` removes; `session_started` drops |
|  | `session_started_metadata` so a later session never reuses it (spec §3.6) |
| `pending_confirmation` | `pause_point_created` sets; the matching `pause_point_resolved` clears; |
|  | Mantle-style logs: a `system.pending_tool_confirmation` write sets it when none is |
|  | pending, clearing that key clears it |
| `last_bot_buttons` | every `bot_message` (a message without buttons empties it) |
| `current_turn_id`, `turn_count`, `last_stop_reason` | `turn_started` / `turn_ended` |
| `last_seq` | every event (stores number events 1, 2, 3... with no gaps) |

Skill lifecycle, flow, tool, message and measurement events record what happened but do
not change this state: the engine writes the stack and memory changes they imply as
their own events, so the fold never needs the agent definition. `tool_call_refused` is
ignored on purpose too: a refused proposal changed nothing, it is logged only as a record.
So are `routing_decided` and `history_compressed` (schema v3): a routing decision's effect
is the activation events and stack change that follow it, and compressing the history sent
to a model changes what the model saw, never the conversation state. `plan_cache_decided`
and `plan_executed` (schema v5) are records too: a plan's effects are its tool runs.
`barge_in` (schema v7) is a record of a voice channel: the cancelled turn it follows
recorded its own end.
Events that do not fit the state (a step for an unknown frame, a resolution of another
pause) are ignored: the log is the truth and the fold never fails.
"""

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypeVar

from keel.events.base import (
    EMPTY,
    Button,
    ConversationStatus,
    EventBase,
    JsonMapping,
    JsonValue,
    StackFrame,
    StopReason,
    to_plain,
)
from keel.events.model import (
    BotMessage,
    ConversationStateChanged,
    Event,
    MemoryCleared,
    MemorySet,
    PausePointCreated,
    PausePointResolved,
    SessionStarted,
    SlotSet,
    StackChanged,
    StepAdvanced,
    TurnEnded,
    TurnStarted,
)

_T = TypeVar("_T")

PENDING_CONFIRMATION_KEY = "system.pending_tool_confirmation"
SESSION_METADATA_KEY = "session_started_metadata"


@dataclass(frozen=True, kw_only=True, slots=True)
class PendingConfirmation:
    """A tool call waiting for the user's yes or no (spec §5.6)."""

    pause_id: str
    """Empty when rebuilt from a Mantle-style memory record that had no pause id."""

    tool_name: str
    tool_args: JsonMapping
    confirmation_ask: str
    utter_on_user_denial: str | None = None
    skill_id: str | None = None
    frame_id: str | None = None
    execute_step_id: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ConversationState:
    """Everything the engine needs to know about a conversation, rebuilt from its log."""

    status: ConversationStatus = "idle"
    stack: tuple[StackFrame, ...] = ()
    """Bottom first; ordered-block frames hold their step pointer in `step_id`."""

    memory: JsonMapping = field(default_factory=lambda: EMPTY)
    """Scope-qualified key -> value for every key currently set."""

    pending_confirmation: PendingConfirmation | None = None
    last_bot_buttons: tuple[Button, ...] = ()
    """The buttons of the latest bot message (what a `set:` tap may match)."""

    last_stop_reason: StopReason | None = None
    current_turn_id: str | None = None
    """The turn in progress, or None between turns."""

    turn_count: int = 0
    last_seq: int = 0
    """How many events have been folded, i.e. the seq of the last one."""

    @property
    def active_skill_id(self) -> str | None:
        """The skill of the topmost skill frame, or None when the stack is empty."""
        for frame in reversed(self.stack):
            if frame.type == "skill":
                return frame.skill_id
        return None

    @property
    def session_metadata(self) -> JsonMapping:
        """Channel metadata of the current session (empty when none was given)."""
        value = self.memory.get(SESSION_METADATA_KEY)
        return value if isinstance(value, Mapping) else EMPTY


class _Builder:
    """Mutable working copy used inside one `fold` call; never escapes it."""

    def __init__(self, state: ConversationState) -> None:
        self.status: ConversationStatus = state.status
        self.stack = state.stack
        self.kept = state.memory
        self.copied: dict[str, JsonValue] | None = None
        self.pending = state.pending_confirmation
        self.buttons = state.last_bot_buttons
        self.stop_reason = state.last_stop_reason
        self.turn_id = state.current_turn_id
        self.turn_count = state.turn_count
        self.last_seq = state.last_seq

    @property
    def memory(self) -> dict[str, JsonValue]:
        """The memory to change: copied from the state's the first time it is asked for
        (most batches change no memory; they keep the state's read-only mapping)."""
        if self.copied is None:
            self.copied = dict(self.kept)
        return self.copied

    def current_memory(self) -> Mapping[str, JsonValue]:
        """The memory as it stands, without copying it."""
        return self.copied if self.copied is not None else self.kept

    def build(self) -> ConversationState:
        kept = self.kept
        memory = (
            MappingProxyType(self.copied)
            if self.copied is not None
            else kept
            if type(kept) is MappingProxyType
            else MappingProxyType(dict(kept))
        )
        return _state(
            self.status,
            self.stack,
            memory,
            self.pending,
            self.buttons,
            self.stop_reason,
            self.turn_id,
            self.turn_count,
            self.last_seq,
        )


def fold(events: Iterable[Event], initial: ConversationState | None = None) -> ConversationState:
    """Apply `events` in order to `initial` (a fresh conversation when None)."""
    state = initial or ConversationState()
    batch = events if type(events) is list or type(events) is tuple else list(events)
    # Plain loops and `in` (no call per event): this runs for every emit of every turn.
    for event in batch:
        if type(event) in _HANDLERS:
            break
    else:
        # Records only (most batches of a turn): the state moves on by their count alone.
        return _advanced(state, len(batch))
    builder = _Builder(state)
    for event in batch:
        kind = type(event)
        if kind in _HANDLERS:
            _HANDLERS[kind](builder, event)
    builder.last_seq += len(batch)
    return builder.build()


def _advanced(state: ConversationState, count: int) -> ConversationState:
    if not count:
        return state
    return _state(
        state.status,
        state.stack,
        state.memory,
        state.pending_confirmation,
        state.last_bot_buttons,
        state.last_stop_reason,
        state.current_turn_id,
        state.turn_count,
        state.last_seq + count,
    )


def _state(
    status: ConversationStatus,
    stack: tuple[StackFrame, ...],
    memory: JsonMapping,
    pending: PendingConfirmation | None,
    buttons: tuple[Button, ...],
    stop_reason: StopReason | None,
    turn_id: str | None,
    turn_count: int,
    last_seq: int,
) -> ConversationState:
    """What the constructor makes (the class has no __post_init__), positionally and each
    field set once through a bound object.__setattr__ (frozen dataclasses allow writes only
    that way): `fold` makes one per emit of every turn."""
    state = _new(ConversationState)
    _set(state, "status", status)
    _set(state, "stack", stack)
    _set(state, "memory", memory)
    _set(state, "pending_confirmation", pending)
    _set(state, "last_bot_buttons", buttons)
    _set(state, "last_stop_reason", stop_reason)
    _set(state, "current_turn_id", turn_id)
    _set(state, "turn_count", turn_count)
    _set(state, "last_seq", last_seq)
    return state


_new = object.__new__
_set = object.__setattr__


def _on_state_changed(b: _Builder, event: ConversationStateChanged) -> None:
    b.status = event.state


def _on_stack_changed(b: _Builder, event: StackChanged) -> None:
    b.stack = event.frames


def _on_step_advanced(b: _Builder, event: StepAdvanced) -> None:
    b.stack = tuple(
        dataclasses.replace(frame, step_id=event.step_id)
        if frame.frame_id == event.frame_id
        else frame
        for frame in b.stack
    )


def _write(b: _Builder, key: str, value: JsonValue) -> None:
    b.memory[key] = value
    if key == PENDING_CONFIRMATION_KEY and b.pending is None:
        b.pending = _pending_from_memory(value)


def _on_memory_set(b: _Builder, event: MemorySet) -> None:
    _write(b, event.key, event.value)


def _on_slot_set(b: _Builder, event: SlotSet) -> None:
    _write(b, event.name, event.value)


def _on_memory_cleared(b: _Builder, event: MemoryCleared) -> None:
    if event.key in b.current_memory():  # clearing what is not set keeps the mapping
        b.memory.pop(event.key, None)
    if event.key == PENDING_CONFIRMATION_KEY:
        b.pending = None


def _on_session_started(b: _Builder, event: SessionStarted) -> None:
    if SESSION_METADATA_KEY in b.current_memory():
        b.memory.pop(SESSION_METADATA_KEY, None)


def _on_pause_created(b: _Builder, event: PausePointCreated) -> None:
    b.pending = PendingConfirmation(
        pause_id=event.pause_id,
        tool_name=event.tool_name,
        tool_args=event.tool_args,
        confirmation_ask=event.confirmation_ask,
        utter_on_user_denial=event.utter_on_user_denial,
        skill_id=event.skill_id,
        frame_id=event.frame_id,
        execute_step_id=event.execute_step_id,
    )


def _on_pause_resolved(b: _Builder, event: PausePointResolved) -> None:
    if b.pending is not None and b.pending.pause_id == event.pause_id:
        b.pending = None


def _on_turn_started(b: _Builder, event: TurnStarted) -> None:
    b.turn_id = event.turn_id
    b.turn_count += 1


def _on_turn_ended(b: _Builder, event: TurnEnded) -> None:
    b.turn_id = None
    b.stop_reason = event.stop_reason


def _on_bot_message(b: _Builder, event: BotMessage) -> None:
    b.buttons = event.buttons


def _pending_from_memory(value: JsonValue) -> PendingConfirmation | None:
    """Rebuild a pending confirmation from Mantle's memory record, if it has the shape."""
    if not isinstance(value, Mapping):
        return None
    tool_name = value.get("tool_name")
    tool_args = value.get("tool_args", EMPTY)
    if not isinstance(tool_name, str) or not isinstance(tool_args, Mapping):
        return None
    return PendingConfirmation(
        pause_id=_str_or(value.get("pause_id"), ""),
        tool_name=tool_name,
        tool_args=tool_args,
        confirmation_ask=_str_or(value.get("confirmation_ask"), ""),
        utter_on_user_denial=_str_or(value.get("utter_on_user_denial"), None),
        skill_id=_str_or(value.get("skill_id"), None),
        frame_id=_str_or(value.get("frame_id"), None),
        execute_step_id=_str_or(value.get("execute_step_id"), None),
    )


def _str_or(value: object, default: _T) -> str | _T:
    return value if isinstance(value, str) else default


_HANDLERS: Mapping[type[EventBase], Callable[[_Builder, Any], None]] = MappingProxyType(
    {
        ConversationStateChanged: _on_state_changed,
        StackChanged: _on_stack_changed,
        StepAdvanced: _on_step_advanced,
        MemorySet: _on_memory_set,
        SlotSet: _on_slot_set,
        MemoryCleared: _on_memory_cleared,
        SessionStarted: _on_session_started,
        PausePointCreated: _on_pause_created,
        PausePointResolved: _on_pause_resolved,
        TurnStarted: _on_turn_started,
        TurnEnded: _on_turn_ended,
        BotMessage: _on_bot_message,
    }
)
"""Event class -> how it changes the state. Every other kind leaves the state as it is."""


def state_to_json(state: ConversationState) -> dict[str, object]:
    """Plain JSON data of a state (plus the derived `active_skill_id`), for fixtures and tools.

    Keys are sorted at every level so the output is stable whatever order memory was written.
    """
    data: dict[str, object] = {
        f.name: to_plain(getattr(state, f.name)) for f in dataclasses.fields(state)
    }
    data["active_skill_id"] = state.active_skill_id
    return {key: _sorted(data[key]) for key in sorted(data)}


def _sorted(value: object) -> object:
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value
