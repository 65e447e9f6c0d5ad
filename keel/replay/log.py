"""What a stored conversation asked of the engine, read back from its log (pure).

A replay needs the inputs of each request (user messages with their metadata, approvals
through the API) and the model's replies (each `model_called` event carries the reply in
`metadata.reply`, in OpenAI message format). Everything else is what the engine derives,
and is what the replay compares.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from keel.events.codec import encode_event
from keel.events.model import (
    Event,
    ModelCalled,
    PausePointCreated,
    PausePointResolved,
    SessionStarted,
    TurnStarted,
    UserMessage,
)

ID_FIELDS = ("frame_id", "turn_id", "pause_id", "message_id", "tool_batch_id")
ENGINE_CALLS = ("step:", "approval:")
"""Fields holding ids from the engine's id source; replays compare them by first use."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Say:
    """A user message (or `/session_start`)."""

    text: str


@dataclass(frozen=True, kw_only=True, slots=True)
class Approve:
    """An approval through the API: the `index`-th pause point of the log, answered."""

    index: int
    approved: bool


Step = Say | Approve


@dataclass(frozen=True, kw_only=True, slots=True)
class Recording:
    """The inputs of a stored conversation and the model replies it got."""

    steps: tuple[Step, ...]
    replies: tuple[Mapping[str, object], ...]
    models: tuple[str, ...]
    """The model id that gave each reply."""


def read_recording(events: Sequence[Event]) -> Recording:
    """The requests and model replies of a stored log."""
    steps: list[Step] = []
    replies: list[Mapping[str, object]] = []
    models: list[str] = []
    pauses: list[str] = []
    awaiting_input = False
    for event in events:
        if isinstance(event, TurnStarted | SessionStarted):
            awaiting_input = True
        elif isinstance(event, UserMessage):
            steps.append(Say(text=event.text))
            awaiting_input = False
        elif isinstance(event, PausePointCreated):
            pauses.append(event.pause_id)
        elif isinstance(event, PausePointResolved) and awaiting_input:
            # A turn that starts with a resolution came from the approval API.
            steps.append(Approve(index=pauses.index(event.pause_id), approved=event.approved))
            awaiting_input = False
        elif isinstance(event, ModelCalled):
            reply = event.metadata.get("reply")
            if isinstance(reply, Mapping):
                replies.append(reply)
                models.append(event.model)
    return Recording(steps=tuple(steps), replies=tuple(replies), models=tuple(models))


def comparable(events: Sequence[Event]) -> list[str]:
    """Events as JSON lines without timestamps and with engine ids numbered by first use,
    so two runs with different clocks and id sources compare equal when they behave alike.
    A `model_called` event's `metadata.request` (the prompt as sent, which shows the
    clock's date) is left out too: what the engine did with the replies is compared."""
    names: dict[str, str] = {}
    lines: list[str] = []
    for event in events:
        data = encode_event(event)
        data.pop("timestamp", None)
        metadata = data.get("metadata")
        if isinstance(event, ModelCalled) and isinstance(metadata, dict):
            data["metadata"] = {k: v for k, v in metadata.items() if k != "request"}
        lines.append(json.dumps(_renamed(data, names), sort_keys=True, default=str))
    return lines


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
