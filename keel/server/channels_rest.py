"""Rasa's REST channel: `POST /webhooks/rest/webhook` with Rasa's request shape.

The request is `{sender, message, metadata?, input_channel?}` as Rasa's REST channel reads
it; `input_channel` is handed on as the `input_channel` entry of the metadata (unless the
metadata has one). The answer is the list of bot messages of the turn, each
`{recipient_id, text}` plus `buttons` when it has some, as Rasa's REST channel sends them.
`sender` is the conversation id (under the caller's key, like every conversation; with no
key under `rasa-local` when the server runs with `--rasa-no-key`, see
`keel.server.channel_auth`).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body
from fastapi.responses import JSONResponse

from keel.events.model import BotMessage
from keel.server.channel_auth import RasaKey
from keel.server.deps import Runtime
from keel.server.errors import ERROR_RESPONSES
from keel.server.feed import RunOutcome
from keel.server.owners import store_key
from keel.server.turns import finish, start_message
from keel.server.wire import ButtonOut, RestMessageOut, RestWebhookRequest

router = APIRouter(tags=["channels"], responses=ERROR_RESPONSES)


def rasa_metadata(
    metadata: dict[str, object] | None, input_channel: str | None
) -> dict[str, object] | None:
    """The message's metadata with `input_channel` added when the client named one."""
    if input_channel is None:
        return metadata
    return {"input_channel": input_channel, **(metadata or {})}


def rasa_messages(outcome: RunOutcome, recipient: str) -> list[RestMessageOut]:
    """The turn's bot messages in the shape of Rasa's REST channel."""
    replies: list[RestMessageOut] = []
    for stored in outcome.events:
        if isinstance(stored.event, BotMessage):
            reply: RestMessageOut = {"recipient_id": recipient, "text": stored.event.text}
            buttons: list[ButtonOut] = [
                {"title": b.title, "payload": b.payload} for b in stored.event.buttons
            ]
            if buttons:
                reply["buttons"] = buttons
            replies.append(reply)
    return replies


@router.post("/webhooks/rest/webhook", response_model=list[RestMessageOut])
async def rest_webhook(
    body: Annotated[RestWebhookRequest, Body()], principal: RasaKey, runtime: Runtime
) -> JSONResponse:
    """One user message in, the turn's bot messages out."""
    sender = body["sender"]
    metadata = rasa_metadata(body.get("metadata"), body.get("input_channel"))
    run = start_message(runtime, store_key(principal.name, sender), body["message"], metadata)
    outcome = await finish(run)
    return JSONResponse(rasa_messages(outcome, sender))
