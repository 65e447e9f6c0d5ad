"""Rasa's socket.io channel, for Rasa's web-chat widgets: python-socketio mounted at `/socket.io`.

The protocol is the one of Rasa's `socketio` channel with its default event names:

* `connect`: the key goes in the connection's `auth` (`{"token": KEY}`) or its
  `Authorization: Bearer` / `x-api-key` header; with `--rasa-no-key` none is needed
  (`keel.server.channel_auth`). A refused connection gets the error object.
* `session_request` `{session_id?}`: answered by `session_confirm` with the session id,
  the one sent or a new one. It is the conversation id of this socket's messages.
* `user_uttered` `{message, session_id?, metadata?}`: one user message. The conversation
  is `session_id` when the message has one, else the confirmed session, else the socket's
  id (as Rasa without session persistence). Each bot message of the turn comes back as
  `bot_uttered` `{text}`, with `quick_replies` (Rasa's socket.io form: `content_type`,
  `title`, `payload`) and `buttons` (`title`, `payload`) when it has buttons.
* A message that cannot run gets an `error` event `{code, message}` (the HTTP API's codes:
  `request.invalid`, `conversation.busy`, `rate_limited`, ...).

Origins: the CORS origins of the settings (`--cors-origins`); with none only pages of the
server's own origin may connect from a browser (clients that send no `Origin` header,
like python-socketio's, always may).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import socketio
from fastapi.security import HTTPAuthorizationCredentials
from pydantic_core import PydanticCustomError

from keel.events.model import BotMessage
from keel.server.channel_auth import channel_principal
from keel.server.channels_openai import checked_text
from keel.server.errors import ApiError
from keel.server.feed import RunOutcome
from keel.server.owners import store_key
from keel.server.ratelimit import retry_after_header
from keel.server.runtime import ServerRuntime
from keel.server.turns import finish, start_message
from keel.server.wire import CONVERSATION_ID_PATTERN, storable_metadata

SOCKETIO_PATH = "/socket.io"
"""Where the channel is mounted (Rasa's default `socketio_path`)."""

_ID = re.compile(CONVERSATION_ID_PATTERN)


def _credentials(environ: Mapping[str, Any], auth: object) -> tuple[str | None, str | None]:
    """(bearer token, x-api-key) of a connection."""
    if isinstance(auth, dict) and isinstance(auth.get("token"), str):
        return auth["token"], None
    header = str(environ.get("HTTP_AUTHORIZATION", ""))
    scheme, _, token = header.partition(" ")
    bearer = token.strip() if scheme.lower() == "bearer" and token.strip() else None
    return bearer, environ.get("HTTP_X_API_KEY") or None


def _error(exc: ApiError) -> dict[str, str]:
    return {"code": exc.code, "message": exc.message}


def bot_uttered(outcome: RunOutcome) -> list[dict[str, object]]:
    """The `bot_uttered` payloads of the turn's bot messages."""
    payloads: list[dict[str, object]] = []
    for stored in outcome.events:
        if not isinstance(stored.event, BotMessage):
            continue
        payload: dict[str, object] = {"text": stored.event.text}
        if stored.event.buttons:
            buttons = [{"title": b.title, "payload": b.payload} for b in stored.event.buttons]
            payload["quick_replies"] = [{"content_type": "text", **b} for b in buttons]
            payload["buttons"] = buttons
        payloads.append(payload)
    return payloads


def _metadata(data: Mapping[str, Any]) -> dict[str, object] | None:
    metadata = data.get("metadata")
    if metadata is None:
        return None
    if not isinstance(metadata, dict):
        raise ApiError(422, "request.invalid", "metadata must be a JSON object")
    try:
        return storable_metadata(metadata)
    except PydanticCustomError as exc:
        raise ApiError(422, "request.invalid", f"metadata: {exc.message()}") from None


class RasaSocketChannel:
    """The event handlers of one app's socket.io server."""

    def __init__(self, runtime: ServerRuntime) -> None:
        origins = list(runtime.settings.cors_origins) or None  # None: the same origin only
        self.runtime = runtime
        self.sio = socketio.AsyncServer(async_mode="asgi", cors_allowed_origins=origins)
        self.sio.on("connect", self.connect)
        self.sio.on("session_request", self.session_request)
        self.sio.on("user_uttered", self.user_uttered)

    def asgi_app(self) -> socketio.ASGIApp:
        """The ASGI app to mount at `SOCKETIO_PATH`."""
        return socketio.ASGIApp(self.sio, socketio_path=SOCKETIO_PATH.strip("/"))

    async def connect(self, sid: str, environ: Mapping[str, Any], auth: object = None) -> None:
        """Check the connection's key; refused with the error object."""
        bearer, api_key = _credentials(environ, auth)
        credentials = (
            HTTPAuthorizationCredentials(scheme="Bearer", credentials=bearer) if bearer else None
        )
        try:
            principal = channel_principal(self.runtime, credentials, api_key)
        except ApiError as exc:
            raise socketio.exceptions.ConnectionRefusedError(_error(exc)) from None
        await self.sio.save_session(sid, {"owner": principal.name, "session_id": None})

    async def session_request(self, sid: str, data: object = None) -> None:
        """Confirm the session id asked for, or a new one."""
        asked = data.get("session_id") if isinstance(data, dict) else None
        if asked is not None and (not isinstance(asked, str) or not _ID.match(asked)):
            error = ApiError(422, "request.invalid", "session_id: 1-128 of A-Z a-z 0-9 . _ : @ -")
            await self.sio.emit("error", _error(error), to=sid)
            return
        session_id = asked or self.runtime.ids.new_id()
        async with self.sio.session(sid) as session:
            session["session_id"] = session_id
        await self.sio.emit("session_confirm", session_id, to=sid)

    async def user_uttered(self, sid: str, data: object = None) -> None:
        """Run the turn for one message and send its bot messages back."""
        try:
            for payload in await self._turn(sid, data):
                await self.sio.emit("bot_uttered", payload, to=sid)
        except ApiError as exc:
            await self.sio.emit("error", _error(exc), to=sid)

    async def _turn(self, sid: str, data: object) -> list[dict[str, object]]:
        if not isinstance(data, dict):
            raise ApiError(422, "request.invalid", "user_uttered takes {message, session_id?}")
        message = data.get("message")
        text = checked_text(message if isinstance(message, str) else None, "message")
        session = await self.sio.get_session(sid)
        conversation = data.get("session_id") or session["session_id"] or sid
        if not isinstance(conversation, str) or not _ID.match(conversation):
            raise ApiError(422, "request.invalid", "session_id: 1-128 of A-Z a-z 0-9 . _ : @ -")
        owner: str = session["owner"]
        wait = self.runtime.limiter.take(owner)
        if wait is not None:
            raise ApiError(
                429, "rate_limited", f"rate limit reached; retry in {retry_after_header(wait)} s"
            )
        run = start_message(self.runtime, store_key(owner, conversation), text, _metadata(data))
        return bot_uttered(await finish(run))
