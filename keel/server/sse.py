"""Server-sent event frames of the chat API: one encode function per frame type.

Internal events stay dataclasses; this module alone knows the wire (style rule 16).

| frame | when | `id:` |
| --- | --- | --- |
| `text_delta` | model text as it streams (a preview) | none |
| `tool_started` | a tool is about to run | none |
| `tool_finished` | a `tool_executed` event | its log seq |
| `bot_message` | a `bot_message` event (with buttons) | its log seq |
| `paused` | a `pause_point_created` event | its log seq |
| `stop` | a `turn_ended` event (stop reason) | its log seq |
| `error` | the request failed | none |
| `done` | always last | the last log seq |

The admin stream (`keel.server.inspector`) sends every log event as a `logged` frame
(`{seq, event}`, `id:` its seq) and a keep-alive comment when it has been quiet.

Frames without an `id:` leave the client's last event id where it was, so a reconnect
with `Last-Event-ID` resumes from the log and skips only what is not in it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from keel.events.base import to_plain
from keel.events.codec import encode_event
from keel.events.model import BotMessage, Event, PausePointCreated, ToolExecuted, TurnEnded
from keel.server.feed import Delta, FeedItem, Finished, Logged, RunOutcome, ToolStart
from keel.server.views import bot_message_out


@dataclass(frozen=True, kw_only=True, slots=True)
class Frame:
    """One server-sent event: its name, JSON data and optional id."""

    event: str
    data: Mapping[str, object]
    id: int | None = None


def render(frame: Frame) -> str:
    """The frame as text/event-stream lines (the JSON is compact, so one `data:` line)."""
    text = json.dumps(frame.data, ensure_ascii=False, separators=(",", ":"))
    head = f"id: {frame.id}\n" if frame.id is not None else ""
    return f"{head}event: {frame.event}\ndata: {text}\n\n"


def encode_text_delta(item: Delta) -> Frame:
    """`text_delta`: `{text}`."""
    return Frame(event="text_delta", data={"text": item.text})


def encode_tool_started(item: ToolStart) -> Frame:
    """`tool_started`: `{tool, arguments}`."""
    return Frame(
        event="tool_started", data={"tool": item.name, "arguments": to_plain(item.arguments)}
    )


def encode_tool_finished(seq: int, event: ToolExecuted) -> Frame:
    """`tool_finished`: `{tool, tool_call_id, is_error, error_message}`."""
    data = {
        "tool": event.tool_name,
        "tool_call_id": event.tool_call_id,
        "is_error": event.is_error,
        "error_message": event.error_message,
    }
    return Frame(event="tool_finished", data=data, id=seq)


def encode_bot_message(seq: int, event: BotMessage) -> Frame:
    """`bot_message`: `{seq, text, buttons, utter_action}`."""
    return Frame(event="bot_message", data=bot_message_out(seq, event), id=seq)


def encode_paused(seq: int, event: PausePointCreated) -> Frame:
    """`paused`: `{pause_id, tool, ask, arguments}`."""
    data = {
        "pause_id": event.pause_id,
        "tool": event.tool_name,
        "ask": event.confirmation_ask,
        "arguments": to_plain(event.tool_args),
    }
    return Frame(event="paused", data=data, id=seq)


def encode_stop(seq: int, event: TurnEnded) -> Frame:
    """`stop`: `{stop_reason, turn_id}`; a request that starts a session has two turns."""
    return Frame(
        event="stop", data={"stop_reason": event.stop_reason, "turn_id": event.turn_id}, id=seq
    )


def encode_error(code: str, message: str) -> Frame:
    """`error`: `{code, message}`."""
    return Frame(event="error", data={"code": code, "message": message})


def encode_done(outcome: RunOutcome | None, *, state: str, last_seq: int) -> Frame:
    """`done`: `{stop_reason, state, last_seq}` (stop_reason null when replaying a log)."""
    data = {
        "stop_reason": outcome.stop_reason if outcome is not None else None,
        "state": state,
        "last_seq": last_seq,
    }
    return Frame(event="done", data=data, id=last_seq)


def encode_logged(seq: int, event: Event) -> Frame | None:
    """The frame for a log event, or None for kinds the stream does not report."""
    if isinstance(event, BotMessage):
        return encode_bot_message(seq, event)
    if isinstance(event, ToolExecuted):
        return encode_tool_finished(seq, event)
    if isinstance(event, PausePointCreated):
        return encode_paused(seq, event)
    if isinstance(event, TurnEnded):
        return encode_stop(seq, event)
    return None


def encode_log_entry(seq: int, event: Event) -> Frame:
    """`logged` (admin stream): `{seq, event}`, the event encoded as stored (not masked)."""
    return Frame(event="logged", data={"seq": seq, "event": encode_event(event)}, id=seq)


KEEP_ALIVE = ": keep-alive\n\n"
"""A comment line: clients ignore it; proxies see the connection is alive."""


def encode_item(item: FeedItem) -> list[Frame]:
    """The frames for one feed item (`Finished` gives `error` when it failed, then `done`)."""
    if isinstance(item, Logged):
        frame = encode_logged(item.seq, item.event)
        return [] if frame is None else [frame]
    if isinstance(item, Delta):
        return [encode_text_delta(item)]
    if isinstance(item, ToolStart):
        return [encode_tool_started(item)]
    return _finished(item)


def _finished(item: Finished) -> list[Frame]:
    outcome = item.outcome
    frames: list[Frame] = []
    if outcome.failure is not None:
        frames.append(encode_error(outcome.failure.code, outcome.failure.message))
    frames.append(encode_done(outcome, state=outcome.state.status, last_seq=outcome.state.last_seq))
    return frames
