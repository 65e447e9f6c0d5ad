"""Browser voice: the `/ui/voice` page and its WebSocket `/v1/voice/browser`.

The page (keel/server/ui/static/voice.html, voice.js, voice-worklet.js) captures the
microphone with getUserMedia, converts it to 16 kHz PCM16 in an AudioWorklet and streams
it; it plays the agent's audio and shows a live transcript of both sides. The key is the
web chat's (`#key=` in the page address, kept in the tab's sessionStorage).

The socket's protocol (text messages are JSON objects with an `event`):

* page -> server: first `{"event": "start", "key"?, "conversation_id"?}` (the key may
  instead be `?key=`; without a conversation id a new one is made); then binary messages,
  each PCM16 little-endian mono at 16 kHz; `{"event": "mark", "name"}` once the audio up
  to a mark was played; `{"event": "stop"}` to hang up;
* server -> page: `{"event": "started", "conversation_id"}`; binary messages of agent
  audio, PCM16 at 16 kHz; `{"event": "mark", "name"}` after each bot message's audio;
  `{"event": "clear"}` on barge-in (stop playback now, drop what is queued);
  `{"event": "transcript", "role": "user"|"agent", "text", "final"}`;
  `{"event": "hangup"}` (`action: hangup`), then the socket closes; on a refused key or a
  bad message `{"event": "error", "code", "message", "status"}` (`status` the HTTP status
  the same refusal has in the API: 401/403 for a key, 400 for a bad message), then the
  socket closes (1008).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

from fastapi import APIRouter, WebSocket, WebSocketDisconnect
from fastapi.responses import Response

from keel.server.channel_auth import channel_principal
from keel.server.errors import ApiError
from keel.server.owners import store_key
from keel.server.runtime import ServerRuntime
from keel.server.ui.routes import CONTENT_SECURITY_POLICY, read_asset
from keel.server.voice.call import CallSettings, Role, VoiceCall
from keel.server.voice.engines import BROWSER_CHANNEL, speech_for
from keel.server.voice.twilio import CONVERSATION_ID, POLICY_VIOLATION

_log = logging.getLogger("keel.voice")

router = APIRouter()

SOCKET_PATH = "/v1/voice/browser"
BROWSER_RATE = 16000
"""The page's audio both ways: PCM16, 16 kHz, mono."""
PAGE = "voice.html"


@router.get("/ui/voice", include_in_schema=False)
async def voice_page() -> Response:
    """The browser voice page (no key needed to load it; it asks for one)."""
    found = read_asset(PAGE)
    if found is None:
        raise ApiError(404, "ui.asset_not_found", f"{PAGE} is not installed")
    content, content_type = found
    return Response(
        content,
        media_type=content_type,
        headers={
            "content-security-policy": CONTENT_SECURITY_POLICY,
            "x-content-type-options": "nosniff",
            "referrer-policy": "no-referrer",
            "cache-control": "no-cache",
        },
    )


class BrowserRefused(Exception):
    """The page's message cannot be used; `code` says why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class BrowserSink:
    """A call's output on the page's socket."""

    def __init__(self, socket: WebSocket) -> None:
        self.socket = socket
        self._lock = asyncio.Lock()
        self.closed = False

    async def send(self, message: dict[str, Any]) -> None:
        """One JSON message (nothing once the page has left)."""
        async with self._lock:
            if not self.closed:
                try:
                    await self.socket.send_text(json.dumps(message, separators=(",", ":")))
                except (RuntimeError, WebSocketDisconnect):
                    self.closed = True

    async def play(self, pcm: bytes) -> None:
        """Agent audio as one binary message (nothing once the page has left)."""
        async with self._lock:
            if not self.closed:
                try:
                    await self.socket.send_bytes(pcm)
                except (RuntimeError, WebSocketDisconnect):
                    self.closed = True

    async def mark(self, name: str) -> None:
        """After a bot message's audio."""
        await self.send({"event": "mark", "name": name})

    async def clear(self) -> None:
        """Barge-in: the page stops its audio."""
        await self.send({"event": "clear"})

    async def transcript(self, role: Role, text: str, *, final: bool) -> None:
        """A line of the live transcript."""
        await self.send({"event": "transcript", "role": role, "text": text, "final": final})

    async def hangup(self) -> None:
        """`action: hangup`: tell the page, then close."""
        await self.send({"event": "hangup"})
        async with self._lock:
            self.closed = True
            with contextlib.suppress(RuntimeError, WebSocketDisconnect):
                await self.socket.close(code=1000)


def _json(text: str) -> dict[str, Any]:
    try:
        message = json.loads(text)
    except json.JSONDecodeError:
        raise BrowserRefused("voice.bad_message", "text messages must be JSON") from None
    if not isinstance(message, dict) or not isinstance(message.get("event"), str):
        raise BrowserRefused("voice.bad_message", "a message is a JSON object with an `event`")
    return message


class BrowserStream:
    """One page's socket."""

    def __init__(self, runtime: ServerRuntime, socket: WebSocket) -> None:
        self.runtime = runtime
        self.socket = socket
        self.sink = BrowserSink(socket)
        self.call: VoiceCall | None = None

    async def run(self) -> None:
        """Read the page's messages until it stops or leaves."""
        await self.socket.accept()
        hung_up = True
        try:
            while True:
                received = await self.socket.receive()
                if received["type"] == "websocket.disconnect":
                    hung_up = not (self.call is not None and self.call.hung_up)
                    break
                if not await self._received(received):
                    break
        except WebSocketDisconnect:
            hung_up = not (self.call is not None and self.call.hung_up)
        except BrowserRefused as exc:
            await self._refuse(exc.code, exc.message, 400)
        except ApiError as exc:
            await self._refuse(exc.code, exc.message, exc.status)
        finally:
            if self.call is not None:
                await self.call.close(hung_up=hung_up)
            if not self.sink.closed:
                self.sink.closed = True
                with contextlib.suppress(RuntimeError, WebSocketDisconnect):
                    await self.socket.close(code=1000)

    async def _refuse(self, code: str, message: str, status: int) -> None:
        _log.warning("browser voice refused: %s %s", code, message)
        error = {"event": "error", "code": code, "message": message, "status": status}
        try:
            await self.sink.send(error)
            self.sink.closed = True
            await self.socket.close(code=POLICY_VIOLATION, reason=code)
        except (RuntimeError, WebSocketDisconnect):
            pass

    async def _received(self, received: Any) -> bool:
        """One message of the page; False when it hangs up."""
        if received.get("bytes") is not None:
            if self.call is None:
                raise BrowserRefused("voice.bad_message", "audio before `start`")
            pcm: bytes = received["bytes"]
            if len(pcm) % 2:
                raise BrowserRefused("voice.bad_audio", "PCM16 needs an even byte count")
            await self.call.audio(pcm)
            return True
        return await self._handle(_json(received.get("text") or ""))

    async def _handle(self, message: dict[str, Any]) -> bool:
        event = message["event"]
        if event == "start":
            await self._start(message)
            return True
        if self.call is None:
            raise BrowserRefused("voice.bad_message", f"`{event}` before `start`")
        if event == "mark":
            name = message.get("name")
            if isinstance(name, str):
                self.call.played(name)
            return True
        if event == "stop":
            return False
        raise BrowserRefused("voice.bad_message", f"unknown event `{event}`")

    async def _start(self, message: dict[str, Any]) -> None:
        if self.call is not None:
            raise BrowserRefused("voice.bad_message", "a second `start`")
        key = message.get("key")
        key = key if isinstance(key, str) and key else self.socket.query_params.get("key")
        principal = channel_principal(self.runtime, None, key)
        conversation = message.get("conversation_id") or self.runtime.ids.new_id()
        if not isinstance(conversation, str) or not CONVERSATION_ID.match(conversation):
            raise BrowserRefused(
                "request.invalid", "conversation_id: 1-128 of A-Z a-z 0-9 . _ : @ -"
            )
        engines = speech_for(self.runtime.definition, BROWSER_CHANNEL)
        settings = CallSettings(
            conversation_key=store_key(principal.name, conversation),
            input_rate=BROWSER_RATE,
            output_rate=BROWSER_RATE,
            barge_in=engines.barge_in,
            metadata={"call_id": conversation, "voice_channel": BROWSER_CHANNEL},
        )
        self.call = VoiceCall(
            runtime=self.runtime, engines=engines, sink=self.sink, settings=settings
        )
        await self.sink.send({"event": "started", "conversation_id": conversation})
        await self.call.start()


@router.websocket(SOCKET_PATH)
async def browser_stream(socket: WebSocket) -> None:
    """The browser voice page's socket (see the module docstring)."""
    runtime: ServerRuntime = socket.app.state.keel
    await BrowserStream(runtime, socket).run()
