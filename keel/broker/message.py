"""The body of one broker message: one committed event, Rasa-shaped where Rasa has a match.

    {"sender_id": "c-42", "event": "user", "timestamp": 1733100000.5, "text": "hello",
     "message_id": "...", "input_channel": "rest", "parse_data": {}, "metadata": {},
     "conversation_id": "web/c-42", "owner": "web", "seq": 7, "agent_id": "support",
     "keel_event": {"type": "user_message", "v": 6, ...}}

`sender_id`, `event`, `timestamp` (and `text`, `name`, `value`, `data`, ...) are what
Rasa's event brokers send (its event names: `user`, `bot`, `slot`, `session_started`;
any other Keel event keeps its own type name). `keel_event` is the event exactly as the
events API encodes it, except for the prompt a `model_called` event keeps
(`metadata.request`, internals, as in the events API's non-admin view). `(conversation_id,
seq)` identifies the event: a consumer that sees it twice (delivery is at least once)
drops the second; the seqs of one conversation arrive in order, and a gap means events
were dropped (read them from `GET /v1/conversations/{id}/events`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from keel.events.codec import encode_event
from keel.events.model import BotMessage, Event, SlotSet, UserMessage
from keel.stores.port import StoredEvent

FORMAT_VERSION = 1
"""Bumped when a field changes meaning or goes away (sent as the `keel-format` header)."""

RASA_EVENT_NAMES: Mapping[str, str] = {
    "user_message": "user",
    "bot_message": "bot",
    "slot_set": "slot",
    "session_started": "session_started",
}
"""Keel event types with a Rasa counterpart, and Rasa's name for it."""

OWNER_SEPARATOR = "/"
"""The server stores a key's conversation `c-42` as `web/c-42` (keel.server.owners)."""


def broker_body(stored: StoredEvent, *, agent_id: str) -> dict[str, object]:
    """The JSON-ready body for `stored`."""
    event = stored.event
    owner, sep, client_id = stored.conversation_id.partition(OWNER_SEPARATOR)
    encoded = encode_event(event)
    if encoded.get("type") == "model_called" and isinstance(encoded.get("metadata"), dict):
        metadata = encoded["metadata"]
        assert isinstance(metadata, dict)
        encoded["metadata"] = {k: v for k, v in metadata.items() if k != "request"}
    body: dict[str, object] = {
        "sender_id": client_id if sep else stored.conversation_id,
        "event": RASA_EVENT_NAMES.get(event.kind, event.kind),
        "timestamp": event.timestamp,
    }
    body.update(_rasa_fields(event, encoded))
    body.update(
        {
            "conversation_id": stored.conversation_id,
            "owner": owner if sep else None,
            "seq": stored.seq,
            "agent_id": agent_id,
            "keel_event": encoded,
        }
    )
    return body


def _rasa_fields(event: Event, encoded: Mapping[str, object]) -> dict[str, object]:
    if isinstance(event, UserMessage):
        return {
            "text": event.text,
            "message_id": event.message_id,
            "input_channel": event.input_channel,
            "parse_data": encoded.get("parse_data", {}),
            "metadata": encoded.get("metadata", {}),
        }
    if isinstance(event, BotMessage):
        buttons = [{"title": b.title, "payload": b.payload} for b in event.buttons]
        return {
            "text": event.text,
            "data": {"buttons": buttons or None, "utter_action": event.utter_action},
            "metadata": encoded.get("metadata", {}),
        }
    if isinstance(event, SlotSet):
        return {"name": event.name, "value": encoded.get("value")}
    return {}


def dumps_body(body: Mapping[str, object]) -> bytes:
    """The body as UTF-8 JSON."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
