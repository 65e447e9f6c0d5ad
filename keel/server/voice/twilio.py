"""The phone channel: Twilio Media Streams, bidirectional (`<Connect><Stream>`).

`POST /v1/voice/twilio/incoming` is the number's voice webhook. It answers TwiML that
connects the call to the stream `wss://HOST/v1/voice/twilio` (`ws://` when the webhook came
over plain HTTP), passing the caller's key and the call's numbers as `<Parameter>`s, since
Twilio's stream URL takes no query string. The key of the webhook itself is `?key=`, a
Bearer or `x-api-key` header (none with `--rasa-no-key`).

`/v1/voice/twilio` speaks Twilio's WebSocket protocol:

* from Twilio: `connected`; `start` (`start.streamSid`, `start.callSid`,
  `start.customParameters`, `start.mediaFormat`); `media` (`media.payload`: base64 μ-law,
  8 kHz mono, `media.track` `inbound`); `mark` (`mark.name`, a mark we sent was played);
  `dtmf`; `stop`;
* to Twilio: `media` (`streamSid`, `media.payload`: base64 μ-law 8 kHz, 20 ms a message),
  `mark` (`mark.name`, after each bot message), `clear` (barge-in: drop the buffered audio).

The key is `customParameters.key` (or the stream URL's `?key=`, for other clients); the
conversation is the call SID. `start` opens the call (`/session_start` with `call_id`,
`stream_id`, `user_phone`, `bot_phone`, `direction`), `stop` or a dropped socket ends it
(`/session_end`), and `action: hangup` closes the socket, which ends the call (the TwiML
has nothing after the stream). A message that is not Twilio's closes the socket with code
1008 and the reason `voice.bad_message: ...`; a refused key with 1008 `auth.*`.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import logging
import re
from typing import Annotated, Any
from urllib.parse import parse_qs
from xml.sax.saxutils import quoteattr

from fastapi import APIRouter, Depends, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import Response
from fastapi.security import HTTPAuthorizationCredentials

from keel.events.base import JsonValue
from keel.server.auth import Principal
from keel.server.channel_auth import channel_principal
from keel.server.deps import Runtime, _api_key, _bearer
from keel.server.errors import ApiError
from keel.server.owners import store_key
from keel.server.runtime import ServerRuntime
from keel.server.voice.call import CallSettings, Role, VoiceCall
from keel.server.voice.engines import TWILIO_CHANNEL, speech_for
from keel.server.wire import CONVERSATION_ID_PATTERN
from keel.speech.audio import pcm16_to_ulaw, ulaw_to_pcm16

_log = logging.getLogger("keel.voice")

router = APIRouter(tags=["voice"])

STREAM_PATH = "/v1/voice/twilio"
CONVERSATION_ID = re.compile(CONVERSATION_ID_PATTERN)
TWILIO_RATE = 8000
"""Twilio's media: μ-law, 8 kHz, mono."""
FRAME_BYTES = 160
"""20 ms of 8 kHz μ-law: one outbound `media` message."""
POLICY_VIOLATION = 1008
"""WebSocket close code for a refused key or a message that is not Twilio's."""
_FORWARDED_CALL_FIELDS = {"From": "user_phone", "To": "bot_phone", "Direction": "direction"}
"""Webhook form fields passed on to the stream (as custom parameters) and their names in
the session-start metadata (Mantle's `session_started_metadata` keys)."""


def _presented_key(
    request: Request,
    bearer: HTTPAuthorizationCredentials | None,
    api_key: str | None,
) -> tuple[HTTPAuthorizationCredentials | None, str | None]:
    query = request.query_params.get("key")
    return bearer, api_key or query or None


def _stream_url(request: Request) -> str:
    proto = request.headers.get("x-forwarded-proto", request.url.scheme)
    scheme = "wss" if proto == "https" else "ws"
    host = request.headers.get("x-forwarded-host") or request.headers.get("host") or "localhost"
    return f"{scheme}://{host}{STREAM_PATH}"


def twiml(stream_url: str, parameters: dict[str, str]) -> str:
    """TwiML connecting the call to the bidirectional stream at `stream_url`."""
    params = "".join(
        f"<Parameter name={quoteattr(name)} value={quoteattr(value)}/>"
        for name, value in parameters.items()
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f"<Response><Connect><Stream url={quoteattr(stream_url)}>{params}</Stream></Connect>"
        "</Response>"
    )


@router.post(
    "/v1/voice/twilio/incoming",
    response_class=Response,
    responses={200: {"content": {"text/xml": {}}, "description": "TwiML"}},
    summary="Twilio voice webhook: TwiML connecting the call to the media stream",
)
async def twilio_incoming(
    request: Request,
    runtime: Runtime,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    api_key: Annotated[str | None, Depends(_api_key)],
) -> Response:
    """Answer a call (Twilio's form-encoded webhook) with `<Connect><Stream>`."""
    bearer, key = _presented_key(request, bearer, api_key)
    channel_principal(runtime, bearer, key)  # 401/403/429 before the call is connected
    form = parse_qs((await request.body()).decode("utf-8", "replace"))
    parameters: dict[str, str] = {}
    if bearer is not None:
        parameters["key"] = bearer.credentials
    elif key:
        parameters["key"] = key
    for field, name in _FORWARDED_CALL_FIELDS.items():
        values = form.get(field)
        if values and values[0]:
            parameters[name] = values[0][:128]
    return Response(twiml(_stream_url(request), parameters), media_type="text/xml")


class BadMessage(Exception):
    """A WebSocket message that is not Twilio's protocol."""


class TwilioSink:
    """A call's output as Twilio messages on the stream's socket."""

    def __init__(self, socket: WebSocket, stream_sid: str) -> None:
        self.socket = socket
        self.stream_sid = stream_sid
        self._lock = asyncio.Lock()
        self._pending = b""

    async def _send(self, message: dict[str, Any]) -> None:
        async with self._lock:
            await self.socket.send_text(json.dumps(message, separators=(",", ":")))

    async def play(self, pcm: bytes) -> None:
        """PCM16 8 kHz -> μ-law `media` messages of 20 ms (the rest waits for more)."""
        data = self._pending + pcm16_to_ulaw(pcm)
        whole = len(data) - len(data) % FRAME_BYTES
        self._pending = data[whole:]
        for start in range(0, whole, FRAME_BYTES):
            payload = base64.b64encode(data[start : start + FRAME_BYTES]).decode("ascii")
            await self._send(
                {"event": "media", "streamSid": self.stream_sid, "media": {"payload": payload}}
            )

    async def mark(self, name: str) -> None:
        """The last partial frame (padded with μ-law silence), then the mark."""
        if self._pending:
            frame = self._pending + b"\xff" * (FRAME_BYTES - len(self._pending))
            self._pending = b""
            payload = base64.b64encode(frame).decode("ascii")
            await self._send(
                {"event": "media", "streamSid": self.stream_sid, "media": {"payload": payload}}
            )
        await self._send({"event": "mark", "streamSid": self.stream_sid, "mark": {"name": name}})

    async def clear(self) -> None:
        """Twilio drops the audio it buffered (and returns the marks pending)."""
        self._pending = b""
        await self._send({"event": "clear", "streamSid": self.stream_sid})

    async def transcript(self, role: Role, text: str, *, final: bool) -> None:
        """Twilio has no transcript message: logged at debug level."""
        _log.debug("%s%s: %s", role, "" if final else " (interim)", text)

    async def hangup(self) -> None:
        """Close the socket: the TwiML has nothing after the stream, so the call ends."""
        async with self._lock:
            await self.socket.close(code=1000)


def _parse(text: str) -> dict[str, Any]:
    try:
        message = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadMessage(f"not JSON ({exc.msg})") from None
    if not isinstance(message, dict) or not isinstance(message.get("event"), str):
        raise BadMessage("a Twilio message is a JSON object with an `event`")
    return message


def _section(message: dict[str, Any], name: str) -> dict[str, Any]:
    section = message.get(name)
    if not isinstance(section, dict):
        raise BadMessage(f"`{message['event']}` needs the object `{name}`")
    return section


def _start_metadata(start: dict[str, Any], stream_sid: str, call_sid: str) -> dict[str, JsonValue]:
    params = start.get("customParameters")
    custom = params if isinstance(params, dict) else {}
    metadata: dict[str, JsonValue] = {
        "call_id": call_sid,
        "stream_id": stream_sid,
        "voice_channel": TWILIO_CHANNEL,
    }
    for name in _FORWARDED_CALL_FIELDS.values():
        if isinstance(custom.get(name), str):
            metadata[name] = custom[name]
    extra = {k: v for k, v in custom.items() if k != "key" and k not in metadata}
    if extra:
        metadata["extra"] = {str(k): str(v) for k, v in extra.items()}
    return metadata


class TwilioStream:
    """One Media Streams socket."""

    def __init__(self, runtime: ServerRuntime, socket: WebSocket) -> None:
        self.runtime = runtime
        self.socket = socket
        self.call: VoiceCall | None = None

    async def run(self) -> None:
        """Read Twilio's messages until `stop` or the socket closes."""
        await self.socket.accept()
        hung_up = True
        try:
            while True:
                message = _parse(await self.socket.receive_text())
                if not await self._handle(message):
                    break
        except WebSocketDisconnect:
            hung_up = self.call is None or not self.call_ended()
        except BadMessage as exc:
            await self._refuse(f"voice.bad_message: {exc}")
        except ApiError as exc:
            await self._refuse(f"{exc.code}: {exc.message}")
        finally:
            if self.call is not None:
                await self.call.close(hung_up=hung_up)

    def call_ended(self) -> bool:
        """The agent hung up (`action: hangup`)."""
        return self.call is not None and self.call.hung_up

    async def _refuse(self, reason: str) -> None:
        _log.warning("twilio stream refused: %s", reason)
        try:
            await self.socket.close(code=POLICY_VIOLATION, reason=reason[:120])
        except RuntimeError:  # already closed
            pass

    async def _handle(self, message: dict[str, Any]) -> bool:
        event = message["event"]
        if event == "connected":
            return True
        if event == "start":
            await self._start(message)
            return True
        if self.call is None:
            raise BadMessage(f"`{event}` before `start`")
        if event == "media":
            media = _section(message, "media")
            if media.get("track", "inbound") not in ("inbound", "inbound_track"):
                return True
            payload = media.get("payload")
            if not isinstance(payload, str):
                raise BadMessage("`media.payload` must be base64 text")
            try:
                ulaw = base64.b64decode(payload, validate=True)
            except (binascii.Error, ValueError):
                raise BadMessage("`media.payload` is not base64") from None
            await self.call.audio(ulaw_to_pcm16(ulaw))
            return True
        if event == "mark":
            name = _section(message, "mark").get("name")
            if isinstance(name, str):
                self.call.played(name)
            return True
        if event == "stop":
            return False
        if event == "dtmf":
            return True  # keypresses are not read yet
        raise BadMessage(f"unknown event `{event}`")

    async def _start(self, message: dict[str, Any]) -> None:
        if self.call is not None:
            raise BadMessage("a second `start`")
        start = _section(message, "start")
        stream_sid = start.get("streamSid") or message.get("streamSid")
        call_sid = start.get("callSid")
        if not isinstance(stream_sid, str) or not isinstance(call_sid, str):
            raise BadMessage("`start` needs `streamSid` and `callSid`")
        if not CONVERSATION_ID.match(call_sid):
            raise BadMessage("`start.callSid` is not a usable conversation id")
        params = start.get("customParameters")
        key = params.get("key") if isinstance(params, dict) else None
        key = key if isinstance(key, str) and key else self.socket.query_params.get("key")
        principal: Principal = channel_principal(self.runtime, None, key)
        engines = speech_for(self.runtime.definition, TWILIO_CHANNEL)
        settings = CallSettings(
            conversation_key=store_key(principal.name, call_sid),
            input_rate=TWILIO_RATE,
            output_rate=TWILIO_RATE,
            barge_in=engines.barge_in,
            metadata=_start_metadata(start, stream_sid, call_sid),
        )
        self.call = VoiceCall(
            runtime=self.runtime,
            engines=engines,
            sink=TwilioSink(self.socket, stream_sid),
            settings=settings,
        )
        await self.call.start()


@router.websocket(STREAM_PATH)
async def twilio_stream(socket: WebSocket) -> None:
    """Twilio Media Streams, bidirectional (see the module docstring)."""
    runtime: ServerRuntime = socket.app.state.keel
    await TwilioStream(runtime, socket).run()
