"""Rasa's REST channel: `POST /webhooks/rest/webhook` with `{sender, message, metadata?}`.

The answer is the list of bot messages of the turn, each `{recipient_id, text}` plus
`buttons` when it has some, as Rasa's REST channel sends them. `sender` is the
conversation id (under the caller's key, like every conversation).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body
from fastapi.responses import JSONResponse

from keel.events.model import BotMessage
from keel.server.deps import ChatKey, Runtime
from keel.server.errors import ERROR_RESPONSES
from keel.server.owners import store_key
from keel.server.turns import finish, start_message
from keel.server.wire import ButtonOut, RestMessageOut, RestWebhookRequest

router = APIRouter(tags=["channels"], responses=ERROR_RESPONSES)


@router.post("/webhooks/rest/webhook", response_model=list[RestMessageOut])
async def rest_webhook(
    body: Annotated[RestWebhookRequest, Body()], principal: ChatKey, runtime: Runtime
) -> JSONResponse:
    """One user message in, the turn's bot messages out."""
    sender = body["sender"]
    run = start_message(
        runtime, store_key(principal.name, sender), body["message"], body.get("metadata")
    )
    outcome = await finish(run)
    replies: list[RestMessageOut] = []
    for stored in outcome.events:
        if isinstance(stored.event, BotMessage):
            reply: RestMessageOut = {"recipient_id": sender, "text": stored.event.text}
            buttons: list[ButtonOut] = [
                {"title": b.title, "payload": b.payload} for b in stored.event.buttons
            ]
            if buttons:
                reply["buttons"] = buttons
            replies.append(reply)
    return JSONResponse(replies)
