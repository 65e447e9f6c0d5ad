"""Deepgram speech engines through Deepgram's official Python SDK (`deepgram-sdk`).

- `DeepgramAsr`: live transcription over the WebSocket `/v1/listen`
  (`client.listen.v1.connect`): PCM16 (`encoding=linear16`) at the stream's rate, interim
  results on, `endpointing` (ms of silence before Deepgram finalises, 300 by default);
  every `Results` message with a transcript becomes a `Transcript` (`is_final` as sent,
  `start` / `duration` as offsets, the first alternative's confidence). `close` sends
  `CloseStream`, reads the finals Deepgram still sends, and ends.
- `DeepgramTts`: `POST /v1/speak` (`client.speak.v1.audio.generate`) per sentence, raw
  `linear16` without a container, streamed as it arrives. Rates Deepgram does not produce
  (22 050 Hz) are asked as 24 kHz and resampled.

The key comes from the channel config (`api_key`) or `DEEPGRAM_API_KEY`; `base_url`
(default `https://api.deepgram.com`; `ws(s)://` is derived for the socket) lets tests point
the SDK at `keel.testing.deepgram_server`. `language_map` is Mantle's:
`{<lang>: {model, language}}` for ASR, `{<lang>: {model | voice}}` for TTS. `phrases` go to
Deepgram as `keyterm` (Nova-3) or `keywords` (older models). Errors are `DeepgramError`s
with codes: `speech.deepgram.auth` (401/403), `speech.deepgram.unreachable`, `speech.deepgram`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import httpx
from deepgram import AsyncDeepgramClient
from deepgram.core.api_error import ApiError
from deepgram.environment import DeepgramClientEnvironment

from keel.speech.audio import Resampler
from keel.speech.ports import SpeechError, Transcript
from keel.speech.sentences import split_sentences

DEFAULT_BASE_URL = "https://api.deepgram.com"
DEFAULT_ASR_MODEL = "nova-3"
DEFAULT_TTS_MODEL = "aura-2-thalia-en"
DEFAULT_ENDPOINTING_MS = 300
TTS_RATES = (8000, 16000, 24000, 32000, 48000)
"""Sample rates Deepgram's `linear16` TTS produces."""


class DeepgramError(SpeechError):
    """Deepgram refused or failed a request."""

    code = "speech.deepgram"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code


def _empty() -> Mapping[str, Mapping[str, str]]:
    return MappingProxyType({})


@dataclass(frozen=True, kw_only=True)
class DeepgramSettings:
    """One engine's Deepgram settings (ASR and TTS read the ones they need)."""

    api_key: str = field(repr=False)
    base_url: str = DEFAULT_BASE_URL
    model: str | None = None
    """ASR: `nova-3` by default; TTS: the voice model, `aura-2-thalia-en` by default."""
    language_map: Mapping[str, Mapping[str, str]] = field(default_factory=_empty)
    phrases: tuple[str, ...] = ()
    endpointing_ms: int = DEFAULT_ENDPOINTING_MS
    timeout: float = 30.0

    def environment(self) -> DeepgramClientEnvironment:
        """The SDK's environment for `base_url` (REST at it, sockets at its ws(s) twin)."""
        base = self.base_url.rstrip("/")
        socket = "wss://" + base[8:] if base.startswith("https://") else "ws://" + base[7:]
        if not base.startswith(("http://", "https://")):
            raise DeepgramError(f"Deepgram base_url must be http(s)://..., got {self.base_url!r}")
        return DeepgramClientEnvironment(
            base=base, production=socket, agent=socket, agent_rest=base
        )

    def client(self) -> AsyncDeepgramClient:
        """A new SDK client."""
        return AsyncDeepgramClient(
            api_key=self.api_key, environment=self.environment(), timeout=self.timeout
        )


def _api_error(exc: Exception, what: str) -> DeepgramError:
    if isinstance(exc, ApiError):
        status = exc.status_code
        code = "speech.deepgram.auth" if status in (401, 403) else "speech.deepgram"
        return DeepgramError(f"Deepgram {what} failed with HTTP {status}: {exc.body}", code=code)
    return DeepgramError(
        f"Deepgram {what} is unreachable: {type(exc).__name__}: {exc}",
        code="speech.deepgram.unreachable",
    )


# ------------------------------------------------------------------------------ ASR


class DeepgramAsr:
    """`Asr` on Deepgram's live `/v1/listen`."""

    def __init__(self, settings: DeepgramSettings) -> None:
        self.settings = settings

    @property
    def name(self) -> str:
        """`deepgram`."""
        return "deepgram"

    def query(self, *, sample_rate: int, language: str) -> dict[str, Any]:
        """The `/v1/listen` options for a stream."""
        entry = self.settings.language_map.get(language, {})
        model = entry.get("model") or self.settings.model or DEFAULT_ASR_MODEL
        options: dict[str, Any] = {
            "model": model,
            "language": entry.get("language") or language,
            "encoding": "linear16",
            "sample_rate": str(sample_rate),
            "channels": "1",
            "interim_results": "true",
            "punctuate": "true",
            "endpointing": str(self.settings.endpointing_ms),
        }
        if self.settings.phrases:
            key = "keyterm" if model.startswith("nova-3") else "keywords"
            options[key] = list(self.settings.phrases)
        return options

    async def open(self, *, sample_rate: int, language: str = "en-US") -> DeepgramStream:
        """Connect a live transcription socket."""
        stack = contextlib.AsyncExitStack()
        try:
            socket = await stack.enter_async_context(
                self.settings.client().listen.v1.connect(
                    **self.query(sample_rate=sample_rate, language=language)
                )
            )
        except (ApiError, OSError, httpx.HTTPError) as exc:
            await stack.aclose()
            raise _api_error(exc, "live transcription") from exc
        except Exception as exc:  # the websockets library's handshake errors
            await stack.aclose()
            raise _api_error(exc, "live transcription") from exc
        return DeepgramStream(socket=socket, stack=stack)


_END = object()


class DeepgramStream:
    """One live transcription (`AsrStream`)."""

    def __init__(self, *, socket: Any, stack: contextlib.AsyncExitStack) -> None:
        self._socket = socket
        self._stack = stack
        self._queue: asyncio.Queue[Transcript | object] = asyncio.Queue()
        self._reader = asyncio.create_task(self._read())
        self._closed = False
        self.metadata: Any = None
        """Deepgram's `Metadata` message, once it came (after `close`)."""

    async def _read(self) -> None:
        try:
            async for message in self._socket:
                kind = getattr(message, "type", None)
                if kind == "Results":
                    transcript = _transcript(message)
                    if transcript is not None:
                        self._queue.put_nowait(transcript)
                elif kind == "Metadata":
                    self.metadata = message
        except Exception:  # the socket closing under us ends the stream
            pass
        finally:
            self._queue.put_nowait(_END)

    async def feed(self, pcm: bytes) -> None:
        """Send audio (PCM16 at the stream's rate)."""
        if self._closed:
            raise DeepgramError("feed after close")
        try:
            await self._socket.send_media(pcm)
        except Exception as exc:
            raise _api_error(exc, "live transcription") from exc

    async def close(self) -> None:
        """`CloseStream`, then the last finals, then the end."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(Exception):
            await self._socket.send_close_stream()
        try:
            await self._reader
        finally:
            await self._stack.aclose()

    async def results(self) -> AsyncIterator[Transcript]:
        """Transcripts until the socket closes."""
        while True:
            item = await self._queue.get()
            if item is _END:
                return
            assert isinstance(item, Transcript)
            yield item


def _transcript(message: Any) -> Transcript | None:
    alternatives = getattr(getattr(message, "channel", None), "alternatives", None) or []
    if not alternatives:
        return None
    best = alternatives[0]
    text = str(getattr(best, "transcript", "") or "").strip()
    if not text:
        return None
    start = float(getattr(message, "start", 0.0) or 0.0)
    duration = float(getattr(message, "duration", 0.0) or 0.0)
    confidence = getattr(best, "confidence", None)
    return Transcript(
        text=text,
        is_final=bool(getattr(message, "is_final", False)),
        start_ms=round(start * 1000),
        end_ms=round((start + duration) * 1000),
        confidence=float(confidence) if confidence is not None else None,
    )


# ------------------------------------------------------------------------------ TTS


class DeepgramTts:
    """`Tts` on Deepgram's `/v1/speak`."""

    def __init__(self, settings: DeepgramSettings) -> None:
        self.settings = settings

    @property
    def name(self) -> str:
        """`deepgram`."""
        return "deepgram"

    def voice(self, language: str) -> str:
        """The voice model for `language`."""
        entry = self.settings.language_map.get(language, {})
        return entry.get("voice") or entry.get("model") or self.settings.model or DEFAULT_TTS_MODEL

    async def synthesize(
        self, text: str, *, sample_rate: int, language: str = "en-US"
    ) -> AsyncIterator[bytes]:
        """PCM16 at `sample_rate`, sentence by sentence, as Deepgram streams it."""
        asked = sample_rate if sample_rate in TTS_RATES else 24000
        client = self.settings.client()
        voice = self.voice(language)
        for sentence in split_sentences(text):
            resampler = Resampler(asked, sample_rate)
            carry = b""
            try:
                async for data in client.speak.v1.audio.generate(
                    text=sentence,
                    model=voice,
                    encoding="linear16",
                    sample_rate=asked,
                    container="none",
                ):
                    data, carry = carry + data, b""
                    if len(data) % 2:
                        data, carry = data[:-1], data[-1:]
                    out = resampler.process(data)
                    if out:
                        yield out
            except (ApiError, OSError, httpx.HTTPError) as exc:
                raise _api_error(exc, "speech synthesis") from exc
            tail = resampler.flush()
            if tail:
                yield tail
