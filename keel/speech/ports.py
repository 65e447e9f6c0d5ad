"""The speech ports: streaming speech recognition (`Asr`), synthesis (`Tts`) and voice
activity / end-of-utterance detection (`Vad`).

Audio crossing these ports is always **PCM16**: signed 16-bit little-endian, mono, at the
sample rate the caller names. Channels convert their wire formats (Twilio's 8 kHz μ-law,
the browser's 16 kHz PCM) with `keel.speech.audio` before and after.

- `Asr.open` starts one recognition stream for one caller. The channel `feed`s audio as it
  arrives and reads `results()`: interim transcripts (`is_final=False`, may change) and final
  ones (`is_final=True`, never revised). `close` flushes: the remaining finals are delivered,
  then `results()` ends.
- `Tts.synthesize` yields PCM chunks; the first one comes as early as the engine allows
  (engines synthesise sentence by sentence), so playback can start before the whole text
  is rendered.
- `Vad.process` reads fixed-size frames (10, 20 or 30 ms) and reports the moment speech
  starts and the moment the utterance ends (enough trailing silence), with stream offsets.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Literal, Protocol

from keel.errors import KeelError

PCM_SAMPLE_WIDTH = 2
"""Bytes per sample of the ports' PCM16 audio."""


class SpeechError(KeelError):
    """A speech engine failed or was misused (bad audio, a missing binary, a remote error)."""

    code = "speech.error"


@dataclass(frozen=True, kw_only=True)
class Transcript:
    """One recognition result of an `AsrStream`."""

    text: str
    is_final: bool
    start_ms: int
    """Offset in the stream (from its first fed sample) where the speech began."""
    end_ms: int
    """Offset in the stream where the speech recognised so far ends."""
    confidence: float | None = None


@dataclass(frozen=True, kw_only=True)
class VadEvent:
    """Speech started, or the utterance ended, at `at_ms` (offset from the first frame)."""

    kind: Literal["speech_start", "speech_end"]
    at_ms: int
    """For `speech_start`: where the speech began (the first voiced frame of the onset).
    For `speech_end`: where the voiced audio ended (before the trailing silence)."""


class AsrStream(Protocol):
    """One open recognition stream."""

    async def feed(self, pcm: bytes) -> None:
        """Recognise more audio (PCM16 at the stream's sample rate, any length)."""
        ...

    def results(self) -> AsyncIterator[Transcript]:
        """Interim and final transcripts in stream order; ends after `close`."""
        ...

    async def close(self) -> None:
        """No more audio: deliver the remaining finals, then end `results()`."""
        ...


class Asr(Protocol):
    """A speech recogniser: opens streams."""

    @property
    def name(self) -> str:
        """The engine's name, e.g. `pocketsphinx` or `deepgram`."""
        ...

    async def open(self, *, sample_rate: int, language: str = "en-US") -> AsrStream:
        """A new stream for audio at `sample_rate` Hz in `language` (BCP 47)."""
        ...


class Tts(Protocol):
    """A speech synthesiser."""

    @property
    def name(self) -> str:
        """The engine's name, e.g. `espeak` or `deepgram`."""
        ...

    def synthesize(
        self, text: str, *, sample_rate: int, language: str = "en-US"
    ) -> AsyncIterator[bytes]:
        """PCM16 chunks of `text` spoken at `sample_rate` Hz, the first as early as possible."""
        ...


class Vad(Protocol):
    """Voice activity and end of utterance, frame by frame (one instance per stream)."""

    @property
    def frame_ms(self) -> int:
        """The frame length `process` expects (10, 20 or 30 ms)."""
        ...

    @property
    def sample_rate(self) -> int:
        """The sample rate of the frames."""
        ...

    @property
    def speaking(self) -> bool:
        """Whether an utterance is in progress (after `speech_start`, before `speech_end`)."""
        ...

    def process(self, pcm_frame: bytes) -> VadEvent | None:
        """Read one frame of exactly `frame_ms`; an event when speech starts or ends."""
        ...

    def reset(self) -> None:
        """Forget the current utterance (after barge-in handling, a new stream)."""
        ...
