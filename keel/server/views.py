"""Answers of the chat API, built from the log and the folded state (no IO here)."""

from __future__ import annotations

from dataclasses import replace
from typing import cast

from keel.events.base import JsonValue, to_plain
from keel.events.codec import encode_event
from keel.events.fold import ConversationState, PendingConfirmation
from keel.events.model import BotMessage, Event, MemorySet, SlotSet
from keel.memory import MemorySchema
from keel.server.feed import RunOutcome
from keel.server.wire import (
    BotMessageOut,
    ButtonOut,
    ConversationView,
    EventsReply,
    FrameOut,
    JsonObject,
    LoggedEvent,
    MessageReply,
    PendingOut,
    StateAtReply,
    StopReasonOut,
)
from keel.stores.port import StoredEvent

MASK = "[set]"
"""What a pii memory value is shown as."""


def bot_message_out(seq: int, message: BotMessage) -> BotMessageOut:
    """One bot message with its buttons."""
    buttons: list[ButtonOut] = [{"title": b.title, "payload": b.payload} for b in message.buttons]
    return {
        "seq": seq,
        "text": message.text,
        "buttons": buttons,
        "utter_action": message.utter_action,
    }


def bot_messages(events: tuple[StoredEvent, ...]) -> list[BotMessageOut]:
    """The bot messages among `events`, in order."""
    return [bot_message_out(s.seq, s.event) for s in events if isinstance(s.event, BotMessage)]


def pending_out(pending: PendingConfirmation | None) -> PendingOut | None:
    """A pending confirmation, or None."""
    if pending is None:
        return None
    return {
        "pause_id": pending.pause_id,
        "tool": pending.tool_name,
        "ask": pending.confirmation_ask,
        "arguments": cast(JsonObject, to_plain(pending.tool_args)),
    }


def message_reply(conversation_id: str, outcome: RunOutcome) -> MessageReply:
    """The JSON answer to a message or approval."""
    return {
        "conversation_id": conversation_id,
        "messages": bot_messages(outcome.events),
        "stop_reason": cast(StopReasonOut, outcome.stop_reason),
        "state": outcome.state.status,
        "pending_confirmation": pending_out(outcome.state.pending_confirmation),
        "last_seq": outcome.state.last_seq,
    }


def is_pii(schema: MemorySchema, key: str) -> bool:
    """Memory key `key` is a declared `pii` field (its value is shown as `[set]`)."""
    declared = schema.field(key)
    return declared is not None and declared.pii


def masked_memory(state: ConversationState, schema: MemorySchema) -> JsonObject:
    """Memory as plain JSON, every value of a `pii` field replaced by `[set]`."""
    return {
        key: MASK if is_pii(schema, key) else to_plain(state.memory[key])
        for key in sorted(state.memory)
    }


def masked_event(event: Event, schema: MemorySchema) -> Event:
    """`event` with the value it writes to a `pii` field replaced by `[set]`, the rule of
    `masked_memory` (`memory_set` and its `slot_set` copy; other events unchanged)."""
    mask: JsonValue = MASK
    if isinstance(event, MemorySet) and is_pii(schema, event.key):
        return replace(event, value=mask)
    if isinstance(event, SlotSet) and is_pii(schema, event.name):
        return replace(event, value=mask)
    return event


def conversation_view(
    conversation_id: str, state: ConversationState, schema: MemorySchema, *, running: bool
) -> ConversationView:
    """`GET /v1/conversations/{id}`."""
    stack: list[FrameOut] = [
        {
            "frame_id": f.frame_id,
            "skill_id": f.skill_id,
            "type": f.type,
            "block_id": f.block_id,
            "step_id": f.step_id,
        }
        for f in state.stack
    ]
    return {
        "conversation_id": conversation_id,
        "state": state.status,
        "running": running,
        "active_skill": state.active_skill_id,
        "stack": stack,
        "memory": masked_memory(state, schema),
        "pending_confirmation": pending_out(state.pending_confirmation),
        "last_stop_reason": state.last_stop_reason,
        "turn_count": state.turn_count,
        "last_seq": state.last_seq,
    }


def events_reply(
    conversation_id: str,
    events: list[StoredEvent],
    last_seq: int,
    *,
    masked: MemorySchema | None,
    internals: bool = False,
) -> EventsReply:
    """`GET /v1/conversations/{id}/events`: encoded events as stored, with the values
    written to `pii` fields of `masked` shown as `[set]` (as the state view shows them;
    None: unmasked, the admin view). The prompts the model was sent (`model_called`
    `metadata.request`: the system prompt, the agent's rules) are internals: only the
    admin view (`internals=True`) shows them."""
    logged: list[LoggedEvent] = [
        {
            "seq": s.seq,
            "event": _without_internals(
                encode_event(s.event if masked is None else masked_event(s.event, masked)),
                internals,
            ),
        }
        for s in events
    ]
    return {"conversation_id": conversation_id, "events": logged, "last_seq": last_seq}


def _without_internals(data: dict[str, object], internals: bool) -> dict[str, object]:
    metadata = data.get("metadata")
    if internals or data.get("type") != "model_called" or not isinstance(metadata, dict):
        return data
    return {**data, "metadata": {k: v for k, v in metadata.items() if k != "request"}}


def state_at_reply(
    owner: str | None,
    conversation_id: str,
    state: ConversationState,
    schema: MemorySchema,
    *,
    seq: int,
    last_seq: int,
) -> StateAtReply:
    """`GET /v1/admin/conversations/{owner}/{id}/state`: `state`, the log folded up to
    `seq`, in the shapes of `conversation_view` (pii memory masked)."""
    view = conversation_view(conversation_id, state, schema, running=False)
    return {
        "owner": owner,
        "conversation_id": conversation_id,
        "seq": seq,
        "last_seq": last_seq,
        "status": view["state"],
        "active_skill": view["active_skill"],
        "stack": view["stack"],
        "memory": view["memory"],
        "pending_confirmation": view["pending_confirmation"],
        "last_stop_reason": view["last_stop_reason"],
        "turn_count": view["turn_count"],
    }
