"""Inbound `set:` button taps (spec §3.5), applied before any model call.

A tap is accepted only when the text equals the payload of a button on the latest bot
message, names the active skill's or the project's namespace, a declared field, a value
that coerces, a field the button may write now (write-once project fields), and its
post-write hook does not reject it. Any other tap utters `utter_set_memory_button_skipped`
and ends the turn without a model call.
"""

from __future__ import annotations

from collections.abc import Mapping

from keel.events.base import JsonValue
from keel.loop.memory_ops import (
    PlannedWrite,
    Refusal,
    plan_write,
)
from keel.loop.post_write import write_with_hook
from keel.loop.turn import Next, TurnContext
from keel.memory import parse_set_payload
from keel.memory.payload import SetPayload

SKIPPED = "utter_set_memory_button_skipped"


def _refusal(t: TurnContext, text: str) -> str | None:
    """Why the tap cannot apply, or None when it may."""
    payload = parse_set_payload(text)
    if not isinstance(payload, SetPayload):
        return "malformed payload"
    if not any(button.payload == text for button in t.state.last_bot_buttons):
        return "not a button of the latest message"
    active = t.state.active_skill_id
    if payload.namespace not in ("project", active):
        return "another skill's namespace"
    return None


def button_title(metadata: Mapping[str, JsonValue]) -> str | None:
    """The tapped button's title, when the channel sent one (`button_title` metadata)."""
    title = metadata.get("button_title")
    return title if isinstance(title, str) and title.strip() else None


def read_as_title(text: str, title: str | None) -> bool:
    """A malformed `set:` payload whose button title came along is read as that title."""
    return title is not None and not isinstance(parse_set_payload(text), SetPayload)


async def apply_tap(t: TurnContext, text: str, metadata: Mapping[str, JsonValue]) -> Next | None:
    """Apply the tap; None lets the turn go on, `Next.WAIT` when it was skipped.

    A malformed payload with a button title is not a tap: the turn goes on and the model
    reads the title as the user's words (spec §3.5).
    """
    if read_as_title(text, button_title(metadata)):
        return None
    reason = _refusal(t, text)
    payload = parse_set_payload(text)
    planned: PlannedWrite | Refusal | None = None
    if reason is None and isinstance(payload, SetPayload):
        planned = plan_write(
            t.definition.memory,
            t.state.memory,
            payload.key,
            payload.value,
            "button",
            t.state.active_skill_id,
        )
        if isinstance(planned, Refusal):
            reason = planned.message
    if reason is None and isinstance(planned, PlannedWrite):
        rejected = await write_with_hook(t, planned, filled_by="button")
        if rejected is not None:
            reason = f"rejected by {rejected.hook}: {rejected.message}".strip()
    if reason is None:
        return None
    t.stop_detail = f"set tap skipped: {reason}"
    await t.utter(SKIPPED)
    return Next.WAIT  # a skipped tap ends the message's processing (spec §7.3 step 1, §7.4)
