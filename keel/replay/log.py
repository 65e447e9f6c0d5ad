"""What a stored conversation asked of the engine, read back from its log (pure).

A replay needs the inputs of each request (user messages with the metadata the log keeps,
approvals through the API, and when each request came) and the model's replies (each
`model_called` event carries the reply in `metadata.reply`, in OpenAI message format, and
the usage the provider reported). Everything else is what the engine derives, and is what
the replay compares: behaviour apart from measurements (`keel.replay.measurements`).

The metadata the log keeps: the session metadata of a request that started a session
(`memory_set session_started_metadata`, which also seeded project memory) and the title of
a tapped button (`user_message.button_title`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from keel.events.base import EMPTY, JsonMapping, JsonValue, freeze_json, to_plain
from keel.events.codec import encode_event
from keel.events.fold import SESSION_METADATA_KEY
from keel.events.model import (
    BotTurnEnded,
    Event,
    MemorySet,
    ModelCalled,
    PausePointCreated,
    PausePointResolved,
    SessionStarted,
    TurnStarted,
    UserMessage,
)
from keel.llm.port import Usage
from keel.replay.measurements import Compared, split

ID_FIELDS = ("frame_id", "turn_id", "pause_id", "message_id", "tool_batch_id")
ENGINE_CALLS = ("step:", "approval:")
"""Fields holding ids from the engine's id source; replays compare them by first use."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Say:
    """A user message (or `/session_start`)."""

    text: str
    metadata: JsonMapping = field(default_factory=lambda: EMPTY)
    """The request's metadata, as far as the log keeps it (see the module docstring)."""
    at: float = 0.0
    """When the stored request began (epoch seconds): the replay's clock is set to it."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Approve:
    """An approval through the API: the `index`-th pause point of the log, answered."""

    index: int
    approved: bool
    at: float = 0.0
    """When the stored request began (epoch seconds)."""


Step = Say | Approve


@dataclass(frozen=True, kw_only=True, slots=True)
class RecordedCall:
    """One recorded model call: the reply, the model id that gave it, the usage reported."""

    reply: Mapping[str, object]
    model: str
    usage: Usage


@dataclass(frozen=True, kw_only=True, slots=True)
class Recording:
    """The inputs of a stored conversation and the model replies it got."""

    steps: tuple[Step, ...]
    calls: tuple[RecordedCall, ...]
    with_model: bool
    """The log has `model_called` events; without any, the conversation was served with
    no model (`--model none`, or never needed one) and replays with none."""


def read_recording(events: Sequence[Event]) -> Recording:
    """The requests and model replies of a stored log."""
    steps: list[Step] = []
    calls: list[RecordedCall] = []
    pauses: list[str] = []
    awaiting_input = False
    began: float | None = None  # when the request being read began
    session_metadata: Mapping[str, JsonValue] | None = None
    for event in events:
        if began is None and isinstance(event, TurnStarted):
            began = event.timestamp
        if isinstance(event, SessionStarted):
            session_metadata = None
        if isinstance(event, TurnStarted | SessionStarted):
            awaiting_input = True
        elif isinstance(event, BotTurnEnded) and not awaiting_input:
            began = None  # the request answered; the next turn starts the next one
        elif isinstance(event, MemorySet) and event.key == SESSION_METADATA_KEY and awaiting_input:
            # Written by the engine at a session start, before the request's message.
            session_metadata = _metadata(event.value)
        elif isinstance(event, UserMessage):
            steps.append(
                Say(
                    text=event.text,
                    metadata=_message_metadata(session_metadata, event),
                    at=event.timestamp if began is None else began,
                )
            )
            awaiting_input, session_metadata = False, None
        elif isinstance(event, PausePointCreated):
            pauses.append(event.pause_id)
        elif isinstance(event, PausePointResolved) and awaiting_input:
            # A turn that starts with a resolution came from the approval API.
            at = event.timestamp if began is None else began
            steps.append(
                Approve(index=pauses.index(event.pause_id), approved=event.approved, at=at)
            )
            awaiting_input = False
        elif isinstance(event, ModelCalled):
            reply = event.metadata.get("reply")
            if isinstance(reply, Mapping):
                usage = Usage(
                    input_tokens=event.input_tokens,
                    output_tokens=event.output_tokens,
                    cached_input_tokens=event.cached_input_tokens,
                    cache_write_tokens=event.cache_write_tokens,
                )
                calls.append(RecordedCall(reply=reply, model=event.model, usage=usage))
    with_model = any(isinstance(e, ModelCalled) for e in events)
    return Recording(steps=tuple(steps), calls=tuple(calls), with_model=with_model)


def _metadata(value: object) -> Mapping[str, JsonValue] | None:
    plain = to_plain(value)
    return plain if isinstance(plain, dict) else None


def _message_metadata(session: Mapping[str, JsonValue] | None, message: UserMessage) -> JsonMapping:
    """The metadata a stored message came with: its session's, and its button title."""
    metadata: dict[str, JsonValue] = dict(session or {})
    if message.button_title is not None:
        metadata.setdefault("button_title", message.button_title)
    frozen = freeze_json(metadata)
    return frozen if isinstance(frozen, Mapping) else EMPTY


def compared(events: Sequence[Event]) -> tuple[Compared, ...]:
    """Each event as a replay compares it: its behaviour as a JSON line, with engine ids
    numbered by first use (so runs with different id sources compare equal when they
    behave alike), and its measurements apart (`keel.replay.measurements`)."""
    names: dict[str, str] = {}
    found: list[Compared] = []
    for event in events:
        behaviour, measured = split(encode_event(event))
        line = json.dumps(_renamed(behaviour, names), sort_keys=True, default=str)
        found.append(Compared(kind=event.kind, line=line, measured=measured))
    return tuple(found)


def comparable(events: Sequence[Event]) -> list[str]:
    """The behaviour lines of `compared`: what two runs must agree on."""
    return [c.line for c in compared(events)]


def _renamed(value: object, names: dict[str, str]) -> object:
    """`value` with every id field (at any depth) replaced by its first-use number."""
    if isinstance(value, list):
        return [_renamed(item, names) for item in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, object] = {}
    for key, item in value.items():
        if key in ID_FIELDS and isinstance(item, str) and item:
            out[key] = names.setdefault(item, f"<id{len(names) + 1}>")
        elif key == "tool_call_id" and isinstance(item, str) and item.startswith(ENGINE_CALLS):
            # Engine-made call ids embed frame or pause ids: `step:<frame>:<step>`.
            out[key] = ":".join(names.get(part, part) for part in item.split(":"))
        else:
            out[key] = _renamed(item, names)
    return out
