"""`DeepgramServer`: a local server that speaks Deepgram's wire protocol, for the adapters' tests.

    async with DeepgramServer(key="test-key", script=[Utterance(text="check my order")]) as dg:
        asr = DeepgramAsr(DeepgramSettings(api_key="test-key", base_url=dg.base_url))
        ...

Two endpoints, as Deepgram serves them (https://developers.deepgram.com/reference):

- **`WS /v1/listen`** (live ASR). The query carries `model`, `encoding` (`linear16` or
  `mulaw`), `sample_rate`, `language`, `interim_results`, `vad_events`, `keyterm`, ...; the
  `Authorization: Token <key>` header is checked (a wrong key is refused before the upgrade,
  HTTP 401). Binary messages are audio; text messages are the control messages
  `KeepAlive`, `Finalize` and `CloseStream`. The server "recognises" from its script: each
  `Utterance` says what was said and when it ends in the stream (`end_ms`, measured in audio
  received, not wall time). When half of an utterance's audio has arrived (and
  `interim_results=true`) it sends an interim `Results` (`is_final: false`) with the first
  half of its words; when all of it has arrived, the final `Results` (`is_final: true`,
  `speech_final: true`), with `SpeechStarted` first when `vad_events=true` and an
  `UtteranceEnd` after when `utterance_end_ms` is set. `Finalize` turns the next
  utterance final at once (`from_finalize: true`); `CloseStream` sends the finals left,
  then `Metadata`, then closes (code 1000).
- **`POST /v1/speak`** (TTS). JSON body `{"text": ...}`; query `model`, `encoding`,
  `sample_rate`, `container`. Answers raw `linear16` audio (or `mulaw`), streamed in
  chunks, made by `synthesize(text, sample_rate)` (a tone, 40 ms per character, unless the
  test passes the local TTS). Empty text is a 400 with Deepgram's error body.

Every connection and request is recorded (`listens`, `speaks`) for the tests to read what
crossed the wire. The server is uvicorn on 127.0.0.1, port 0, in the caller's event loop.
"""

from __future__ import annotations

import asyncio
import json
import math
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import numpy as np
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from keel.speech.audio import pcm16_to_ulaw

CHUNK_BYTES = 3200
"""Size of the pieces `/v1/speak` streams its audio in."""
REQUEST_ID = "00000000-0000-4000-8000-000000000000"


@dataclass(frozen=True, kw_only=True)
class Utterance:
    """One thing the caller says, as the server will transcribe it."""

    text: str
    end_ms: int = 1000
    """Where the utterance ends, in audio received (ms from the stream's first byte)."""
    start_ms: int = 0
    confidence: float = 0.97


@dataclass(kw_only=True)
class ListenCall:
    """One `/v1/listen` connection: its query, headers, audio and control messages."""

    query: Mapping[str, str]
    headers: Mapping[str, str]
    audio_bytes: int = 0
    controls: list[str] = field(default_factory=list)
    sent: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class SpeakCall:
    """One `/v1/speak` request."""

    query: Mapping[str, str]
    headers: Mapping[str, str]
    body: Mapping[str, Any]


def tone_speech(text: str, sample_rate: int) -> bytes:
    """Stand-in speech: a 220 Hz tone, 40 ms per character of `text`."""
    n = sample_rate * 40 * len(text) // 1000
    wave = np.sin(np.arange(n) * 2 * np.pi * 220 / sample_rate) * 8000
    return bytes(wave.astype("<i2").tobytes())


class DeepgramServer:
    """Deepgram's `/v1/listen` and `/v1/speak` on loopback (see the module docstring)."""

    def __init__(
        self,
        *,
        key: str = "test-key",
        script: Sequence[Utterance] = (),
        synthesize: Callable[[str, int], bytes] = tone_speech,
    ) -> None:
        self.key = key
        self.script = list(script)
        self.synthesize = synthesize
        self.listens: list[ListenCall] = []
        self.speaks: list[SpeakCall] = []
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None
        self._socket: socket.socket | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:PORT` (the adapters derive `ws://` from it)."""
        return f"http://127.0.0.1:{self.port}"

    def app(self) -> Starlette:
        """The ASGI app (also usable under another server)."""
        return Starlette(
            routes=[
                WebSocketRoute("/v1/listen", self._listen),
                Route("/v1/speak", self._speak, methods=["POST"]),
            ]
        )

    async def __aenter__(self) -> DeepgramServer:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self._socket = sock
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(self.app(), log_level="warning", ws="websockets-sansio")
        self._server = uvicorn.Server(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]))
        while not self._server.started:
            if self._task.done():
                self._task.result()
            await asyncio.sleep(0.005)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._task is not None:
            await self._task
        if self._socket is not None:
            self._socket.close()

    def _authorised(self, headers: Mapping[str, str]) -> bool:
        value = headers.get("authorization", "")
        return value in (f"Token {self.key}", f"Bearer {self.key}")

    # ---- /v1/listen

    async def _listen(self, websocket: WebSocket) -> None:
        query = dict(websocket.query_params)
        headers = {k.lower(): v for k, v in websocket.headers.items()}
        call = ListenCall(query=query, headers=headers)
        self.listens.append(call)
        if not self._authorised(headers):
            await websocket.send_denial_response(
                JSONResponse(_error("INVALID_AUTH", "Invalid credentials."), status_code=401)
            )
            return
        await websocket.accept()
        session = _ListenSession(call=call, script=self.script, websocket=websocket)
        try:
            await session.run()
        except WebSocketDisconnect:
            return

    # ---- /v1/speak

    async def _speak(self, request: Request) -> Response:
        query = dict(request.query_params)
        headers = {k.lower(): v for k, v in request.headers.items()}
        try:
            body = json.loads(await request.body() or b"{}")
        except json.JSONDecodeError:
            body = None
        self.speaks.append(
            SpeakCall(query=query, headers=headers, body=body if isinstance(body, dict) else {})
        )
        if not self._authorised(headers):
            return JSONResponse(_error("INVALID_AUTH", "Invalid credentials."), status_code=401)
        if not isinstance(body, dict) or not isinstance(body.get("text"), str) or not body["text"]:
            return JSONResponse(
                _error("INVALID_QUERY", "The request body needs a non-empty `text`."),
                status_code=400,
            )
        rate = int(query.get("sample_rate", "24000"))
        pcm = self.synthesize(body["text"], rate)
        if query.get("encoding") == "mulaw":
            pcm = pcm16_to_ulaw(pcm)

        async def chunks() -> Any:
            for at in range(0, len(pcm), CHUNK_BYTES):
                yield pcm[at : at + CHUNK_BYTES]
                await asyncio.sleep(0)

        media = "audio/mulaw" if query.get("encoding") == "mulaw" else "audio/l16"
        return StreamingResponse(chunks(), media_type=media, headers={"dg-request-id": REQUEST_ID})


def _error(code: str, message: str) -> dict[str, str]:
    return {"err_code": code, "err_msg": message, "request_id": REQUEST_ID}


class _ListenSession:
    """One live transcription: audio in, Results out, from the script."""

    def __init__(
        self, *, call: ListenCall, script: Sequence[Utterance], websocket: WebSocket
    ) -> None:
        self.call = call
        self.ws = websocket
        self.pending = list(script)
        self.interim_sent = False
        query = call.query
        rate = int(query.get("sample_rate", "16000"))
        width = 1 if query.get("encoding") == "mulaw" else 2
        self.bytes_per_ms = rate * width / 1000
        self.interim = query.get("interim_results") == "true"
        self.vad_events = query.get("vad_events") == "true"
        self.utterance_end = "utterance_end_ms" in query
        self.finalize_next = False

    @property
    def received_ms(self) -> float:
        return self.call.audio_bytes / self.bytes_per_ms

    async def send(self, message: dict[str, Any]) -> None:
        self.call.sent.append(message)
        await self.ws.send_text(json.dumps(message))

    async def run(self) -> None:
        while True:
            message = await self.ws.receive()
            if message["type"] == "websocket.disconnect":
                return
            if message.get("bytes") is not None:
                self.call.audio_bytes += len(message["bytes"])
                await self.advance()
                continue
            text = message.get("text") or "{}"
            try:
                kind = json.loads(text).get("type", "")
            except (json.JSONDecodeError, AttributeError):
                kind = "invalid"
            self.call.controls.append(kind)
            if kind == "Finalize":
                if self.pending:
                    await self.final(self.pending.pop(0), from_finalize=True)
            elif kind == "CloseStream":
                while self.pending:
                    await self.final(self.pending.pop(0), from_finalize=False)
                await self.send(self.metadata())
                await self.ws.close(code=1000)
                return

    async def advance(self) -> None:
        while self.pending:
            utterance = self.pending[0]
            half = (utterance.start_ms + utterance.end_ms) / 2
            if self.interim and not self.interim_sent and self.received_ms >= half:
                self.interim_sent = True
                if self.vad_events:
                    await self.send(
                        {
                            "type": "SpeechStarted",
                            "channel": [0],
                            "timestamp": utterance.start_ms / 1000,
                        }
                    )
                words = utterance.text.split()
                await self.send(self.results(utterance, words[: max(1, len(words) // 2)], False))
            if self.received_ms < utterance.end_ms:
                return
            await self.final(self.pending.pop(0), from_finalize=False)

    async def final(self, utterance: Utterance, *, from_finalize: bool) -> None:
        message = self.results(utterance, utterance.text.split(), True)
        message["from_finalize"] = from_finalize
        await self.send(message)
        self.interim_sent = False
        if self.utterance_end:
            await self.send(
                {
                    "type": "UtteranceEnd",
                    "channel": [0, 1],
                    "last_word_end": utterance.end_ms / 1000,
                }
            )

    def results(self, utterance: Utterance, words: list[str], final: bool) -> dict[str, Any]:
        start = utterance.start_ms / 1000
        duration = (utterance.end_ms - utterance.start_ms) / 1000
        step = duration / max(1, len(utterance.text.split()))
        return {
            "type": "Results",
            "channel_index": [0, 1],
            "duration": duration,
            "start": start,
            "is_final": final,
            "speech_final": final,
            "channel": {
                "alternatives": [
                    {
                        "transcript": " ".join(words),
                        "confidence": utterance.confidence,
                        "words": [
                            {
                                "word": w.lower(),
                                "start": round(start + i * step, 3),
                                "end": round(start + (i + 1) * step, 3),
                                "confidence": utterance.confidence,
                                "punctuated_word": w,
                            }
                            for i, w in enumerate(words)
                        ],
                    }
                ]
            },
            "metadata": {
                "request_id": REQUEST_ID,
                "model_info": {
                    "name": self.call.query.get("model", "general"),
                    "version": "test",
                    "arch": "test",
                },
                "model_uuid": REQUEST_ID,
            },
        }

    def metadata(self) -> dict[str, Any]:
        return {
            "type": "Metadata",
            "transaction_key": "deprecated",
            "request_id": REQUEST_ID,
            "sha256": "0" * 64,
            "created": "2026-01-01T00:00:00.000Z",
            "duration": math.floor(self.received_ms) / 1000,
            "channels": 1,
            "models": [REQUEST_ID],
            "model_info": {},
        }
