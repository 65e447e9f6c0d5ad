"""Sessions and the start of each turn: when a session is due, the project memory a new
session starts with, the events that open a turn (spec §7.1, §7.2), and how the control
messages `/session_end` and `/restart` close a session (spec §7.7)."""

from __future__ import annotations

from collections.abc import Mapping

from keel.events.base import ConversationStatus, JsonValue, freeze_json
from keel.events.fold import SESSION_METADATA_KEY, ConversationState
from keel.events.model import (
    BotTurnEnded,
    ConversationStateChanged,
    Event,
    MemoryCleared,
    MemorySet,
    SessionStarted,
    SlotSet,
    StackChanged,
    TurnEnded,
    TurnStarted,
    UserMessage,
)
from keel.ids import Clock
from keel.loop import lifecycle, stack
from keel.loop.recorder import Recorder
from keel.loop.taps import button_title
from keel.loop.turn import TurnContext
from keel.memory.frozen import thaw
from keel.project.definition import AgentDefinition

RESTART_RESPONSE = "utter_restart"
"""Said on `/restart` when the project defines it (none is bundled, as in Rasa)."""


def session_due(
    definition: AgentDefinition, clock: Clock, history: tuple[Event, ...], state: ConversationState
) -> bool:
    """A new session starts: no session yet, the last one ended (hangup), or it expired."""
    if not any(isinstance(e, SessionStarted) for e in history):
        return True
    if state.status == "ended":
        # After a hangup the session is over: the next message starts a new one.
        return True
    minutes = definition.config.session_config.session_expiration_time
    last = history[-1].timestamp
    return minutes > 0 and clock.now().timestamp() - last > minutes * 60


async def begin_session(t: TurnContext, metadata: Mapping[str, JsonValue]) -> None:
    """Open the session-start turn: a new session, the old one's stack and pause gone."""
    start: list[Event] = [
        TurnStarted(turn_id=t.turn_id),
        ConversationStateChanged(state="running"),
        SessionStarted(),
    ]
    if t.state.stack:
        start.append(StackChanged(frames=()))
    # A pause of the old session dies with it (spec §5.6): resolved as denied.
    start += stack.withdraw_pause(t.state, (), "session_ended")
    if metadata:
        start.append(MemorySet(key=SESSION_METADATA_KEY, value=freeze_json(dict(metadata))))
    # One append: metadata the log cannot hold fails it whole, leaving no turn running.
    await t.emit(*start)


async def begin_message(
    t: TurnContext, text: str, metadata: Mapping[str, JsonValue], load_ms: float
) -> None:
    """Open a message turn: its counters, then `turn_started`, `running` and the message."""
    t.stage_ms["load"] = load_ms
    t.recorder.persist_ms = 0.0
    t.user_text = text
    attachments = metadata.get("attachments")
    t.attachments = (
        len(attachments) if attachments is not None and isinstance(attachments, list | tuple) else 0
    )
    t.recorder.events.clear()
    await t.emit(
        TurnStarted(turn_id=t.turn_id),
        ConversationStateChanged(state="running"),
        UserMessage(
            text=text,
            message_id=t.new_id(),
            is_button_payload=text.startswith("set:"),
            button_title=button_title(metadata),
        ),
    )


async def close_skills(t: TurnContext) -> None:
    """`/session_end` (spec §7.7): the active skill completes (its pause withdrawn), the
    skills parked below it are cancelled, and `default_completed` is pushed to run its
    steps, as after any completed skill; nobody hears them (the caller hung up)."""
    active = t.state.active_skill_id
    if active is None:
        return
    finished = t.definition.skill(active)
    await lifecycle.end_skill(t, active, completed=True)
    for _ in range(len(t.state.stack)):  # bounded: each round takes one skill off
        parked = t.state.active_skill_id
        if parked is None:
            break
        await lifecycle.end_skill(t, parked, completed=False)
    await lifecycle.drop_resume_offer(t)
    engine_managed = finished is not None and finished.document.routing.engine_managed
    if not engine_managed and t.definition.skill(lifecycle.DEFAULT_COMPLETED) is not None:
        await lifecycle.activate(t, lifecycle.DEFAULT_COMPLETED, interrupt=False)


async def end_session(t: TurnContext) -> None:
    """The session is over: whatever is left on the stack is dropped; the turn then ends
    with the conversation `ended`, so the next message starts a new session."""
    await t.emit(*stack.withdraw_pause(t.state, (), "session_ended"))
    if t.state.stack:
        await t.emit(StackChanged(frames=()))


async def restart(t: TurnContext) -> None:
    """`/restart`, as Rasa's `action_restart`: the stack and a pending pause are dropped,
    every memory value is cleared (project, skill and system memory), and `utter_restart`
    is said when the project defines it. The driver then runs a new session start."""
    await t.emit(*stack.withdraw_pause(t.state, (), "restarted"))
    if t.state.stack:
        await t.emit(StackChanged(frames=()))
    keys = sorted(key for key, value in t.state.memory.items() if value is not None)
    await t.emit(*(MemoryCleared(key=key) for key in keys))
    await t.utter(RESTART_RESPONSE)


async def begin_approval(t: TurnContext) -> None:
    """Open the turn an approval from outside the chat runs in."""
    await t.emit(TurnStarted(turn_id=t.turn_id), ConversationStateChanged(state="running"))


async def seed_project_memory(t: TurnContext, metadata: Mapping[str, JsonValue]) -> None:
    """Project fields: `seed: true` ones from channel metadata, the others that are still
    unset take their `initial_value` (spec §3.2)."""
    writes: list[Event] = []
    for field in t.definition.memory.fields_of("project"):
        if field.seed and metadata.get(field.name) is not None:
            value = freeze_json(metadata[field.name])
        elif field.initial_value is not None and t.state.memory.get(field.key) is None:
            value = freeze_json(thaw(field.initial_value))
        else:
            continue
        writes += [
            MemorySet(key=field.key, value=value),
            SlotSet(name=field.key, value=value, filled_by="session_start"),
        ]
    await t.emit(*writes)


async def close_interrupted_turn(recorder: Recorder) -> None:
    """A turn that started but never ended (the process stopped mid-turn) is closed first.

    What it committed stays; a tool it was running has no `tool_executed` record and is
    not run again by this; a pause it created is still pending (the state says `paused`).
    """
    state = recorder.state
    if state.current_turn_id is None:
        return
    status: ConversationStatus = "paused" if state.pending_confirmation is not None else "idle"
    await recorder.emit(
        TurnEnded(
            turn_id=state.current_turn_id,
            stop_reason="cancelled",
            metadata={"detail": "interrupted: the process stopped during this turn"},
        ),
        ConversationStateChanged(state=status),
        BotTurnEnded(),
    )
