"""A test stand-in for Twilio: speaks the Media Streams protocol to `/v1/voice/twilio`.

It sends `connected`, `start` (stream and call SIDs, custom parameters), `media` (base64
μ-law 8 kHz, 20 ms a message) and `stop`; it keeps what the server sends back: agent
audio (`media`), `mark`s and `clear`s, in arrival order with their arrival times. Marks
are echoed back as "played" when `echo_marks` is on (Twilio echoes a mark once the audio
before it was played); a `clear` returns the marks still pending, as Twilio does.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from dataclasses import dataclass, field
from typing import Any

import websockets

from keel.speech.audio import pcm16_to_ulaw, silence, ulaw_to_pcm16

FRAME = 160
"""20 ms of 8 kHz μ-law."""
RATE = 8000


@dataclass
class Received:
    """What came back from the server."""

    audio: bytearray = field(default_factory=bytearray)
    """Agent audio since the last `take_audio`, μ-law."""
    marks: list[str] = field(default_factory=list)
    clears: list[float] = field(default_factory=list)
    first_media_at: list[float] = field(default_factory=list)
    """Arrival time of the first media message after each `expect_answer`."""


class FakeTwilio:
    """One call's stream, as Twilio would run it."""

    def __init__(self, url: str, *, call_sid: str, key: str, echo_marks: bool = True) -> None:
        self.url = url
        self.call_sid = call_sid
        self.stream_sid = "MZ" + call_sid.removeprefix("CA")
        self.key = key
        self.echo_marks = echo_marks
        self.got = Received()
        self._socket: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._pending_marks: list[str] = []
        self._changed = asyncio.Event()
        self._want_first = False
        self.closed_by_server = asyncio.Event()

    async def __aenter__(self) -> FakeTwilio:
        self._socket = await websockets.connect(self.url, max_size=None)
        await self._send({"event": "connected", "protocol": "Call", "version": "1.0.0"})
        await self._send(
            {
                "event": "start",
                "sequenceNumber": "1",
                "start": {
                    "accountSid": "AC00000000000000000000000000000000",
                    "streamSid": self.stream_sid,
                    "callSid": self.call_sid,
                    "tracks": ["inbound"],
                    "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1},
                    "customParameters": {"key": self.key, "user_phone": "+15550100"},
                },
                "streamSid": self.stream_sid,
            }
        )
        self._reader = asyncio.ensure_future(self._read())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._reader is not None:
            self._reader.cancel()
        await self._socket.close()

    async def _send(self, message: dict[str, Any]) -> None:
        await self._socket.send(json.dumps(message))

    async def _read(self) -> None:
        try:
            async for raw in self._socket:
                message = json.loads(raw)
                event = message["event"]
                if event == "media":
                    if self._want_first:
                        self._want_first = False
                        self.got.first_media_at.append(time.perf_counter())
                    self.got.audio += base64.b64decode(message["media"]["payload"])
                elif event == "mark":
                    name = message["mark"]["name"]
                    self.got.marks.append(name)
                    if self.echo_marks:
                        await self.played(name)
                    else:
                        self._pending_marks.append(name)
                elif event == "clear":
                    self.got.clears.append(time.perf_counter())
                    pending, self._pending_marks = self._pending_marks, []
                    for name in pending:
                        await self.played(name)
                self._changed.set()
        except websockets.ConnectionClosed:
            pass
        finally:
            self.closed_by_server.set()
            self._changed.set()

    async def played(self, name: str) -> None:
        """Report mark `name` as played."""
        await self._send({"event": "mark", "streamSid": self.stream_sid, "mark": {"name": name}})

    async def release_marks(self) -> None:
        """Report every held mark as played."""
        pending, self._pending_marks = self._pending_marks, []
        for name in pending:
            await self.played(name)

    def expect_answer(self) -> None:
        """Time the next media message (the first frame of the next answer)."""
        self._want_first = True

    async def send_pcm(self, pcm: bytes, *, realtime: bool = False) -> float:
        """Caller audio (PCM16 8 kHz) as 20 ms media messages; paced at real time when
        asked. Returns when the last frame was sent (perf_counter)."""
        ulaw = pcm16_to_ulaw(pcm)
        started = time.perf_counter()
        for index, start in enumerate(range(0, len(ulaw), FRAME)):
            chunk = ulaw[start : start + FRAME].ljust(FRAME, b"\xff")
            await self._send(
                {
                    "event": "media",
                    "sequenceNumber": str(index + 2),
                    "streamSid": self.stream_sid,
                    "media": {
                        "track": "inbound",
                        "chunk": str(index + 1),
                        "timestamp": str(index * 20),
                        "payload": base64.b64encode(chunk).decode("ascii"),
                    },
                }
            )
            if realtime:
                delay = started + (index + 1) * 0.02 - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
        return time.perf_counter()

    async def send_silence(self, ms: int, *, realtime: bool = False) -> float:
        """`ms` of silence."""
        return await self.send_pcm(silence(ms, RATE), realtime=realtime)

    async def stop(self) -> None:
        """The caller hangs up."""
        await self._send(
            {
                "event": "stop",
                "sequenceNumber": "999",
                "streamSid": self.stream_sid,
                "stop": {"accountSid": "AC0", "callSid": self.call_sid},
            }
        )

    async def wait_for(self, predicate: Any, timeout: float = 60.0) -> None:
        """Until `predicate()` holds (a hang guard, not a timing assertion)."""

        async def until() -> None:
            while not predicate():
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(until(), timeout)

    def take_audio(self) -> bytes:
        """The agent audio received so far as PCM16 8 kHz, and forget it."""
        pcm = ulaw_to_pcm16(bytes(self.got.audio))
        self.got.audio.clear()
        return pcm
