"""Voice activity and end-of-utterance detection with WebRTC's VAD (`webrtcvad-wheels`).

`WebRtcVad` classifies each frame (10, 20 or 30 ms at 8, 16, 32 or 48 kHz) as voiced or
not and turns that into two events:

- `speech_start` once `start_ms` of voiced frames fall within the last `start_window_ms`
  (a cough or a click shorter than that is not speech); `at_ms` is the first voiced frame
  of that window.
- `speech_end` once `silence_ms` of unvoiced frames follow the speech; `at_ms` is where
  the last voiced frame ended. This is the end-of-utterance decision a voice channel acts on.

Offsets count the frames processed, so the same audio always gives the same events.

Mantle's ASR settings `eot_threshold` (0.5-0.9, Deepgram Flux's end-of-turn confidence,
default 0.7) and `eot_timeout_ms` (default 5000) map to the trailing silence with
`silence_for_eot`: 0.5 -> 300 ms, 0.7 -> 700 ms, 0.9 -> 1100 ms, never above the timeout.
A channel's `vad: {silence_ms}` sets it directly.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np
import webrtcvad

from keel.speech.ports import PCM_SAMPLE_WIDTH, SpeechError, VadEvent

VAD_RATES = (8000, 16000, 32000, 48000)
"""Sample rates WebRTC's VAD reads."""
VAD_FRAME_MS = (10, 20, 30)
"""Frame lengths WebRTC's VAD reads."""

DEFAULT_EOT_THRESHOLD = 0.7
"""Mantle / Deepgram Flux default end-of-turn confidence."""
DEFAULT_EOT_TIMEOUT_MS = 5000
"""Mantle / Deepgram Flux default: end the turn after this much silence whatever else."""
MIN_SILENCE_MS = 200
"""The shortest trailing silence `silence_for_eot` gives."""


class VadError(SpeechError):
    """Bad VAD settings or a frame of the wrong size."""

    code = "speech.vad"


def silence_for_eot(
    eot_threshold: float = DEFAULT_EOT_THRESHOLD, eot_timeout_ms: int = DEFAULT_EOT_TIMEOUT_MS
) -> int:
    """Trailing silence (ms) that ends an utterance, from Mantle's end-of-turn settings.

    A higher threshold asks for more confidence that the caller is done, which a VAD can
    only buy with a longer pause: linear from 300 ms at 0.5 to 1100 ms at 0.9 (700 ms at
    the default 0.7), at least `MIN_SILENCE_MS` and at most `eot_timeout_ms`.
    """
    silence = round(300 + (eot_threshold - 0.5) * 2000)
    return max(MIN_SILENCE_MS, min(silence, eot_timeout_ms))


@dataclass(frozen=True, kw_only=True)
class VadSettings:
    """How `WebRtcVad` decides (defaults written down in docs/voice.md)."""

    aggressiveness: int = 2
    """WebRTC's mode, 0 (lets most audio through as speech) to 3 (strictest)."""
    frame_ms: int = 20
    start_ms: int = 60
    """Voiced audio within `start_window_ms` that makes speech start."""
    start_window_ms: int = 100
    silence_ms: int = silence_for_eot()
    """Trailing unvoiced audio that ends the utterance (700 ms by default)."""
    energy_floor: float = 100.0
    """RMS (of 32768) below which a frame is unvoiced whatever WebRTC says (about -50 dBFS):
    WebRTC's detector keeps saying "speech" for 80-100 ms after a sound stops (its hangover),
    which alone would make a click look like the start of speech."""

    def check(self) -> None:
        """Raise `VadError` when a value is out of range."""
        if self.aggressiveness not in (0, 1, 2, 3):
            raise VadError(f"VAD aggressiveness is 0..3, got {self.aggressiveness}")
        if self.frame_ms not in VAD_FRAME_MS:
            raise VadError(f"VAD frames are 10, 20 or 30 ms, got {self.frame_ms}")
        if not 0 < self.start_ms <= self.start_window_ms:
            raise VadError("VAD start_ms must be positive and at most start_window_ms")
        if self.silence_ms < self.frame_ms:
            raise VadError(f"VAD silence_ms must be at least one frame ({self.frame_ms} ms)")


class WebRtcVad:
    """`Vad` on WebRTC's detector; one instance per audio stream."""

    def __init__(self, *, sample_rate: int, settings: VadSettings | None = None) -> None:
        self.settings = settings or VadSettings()
        self.settings.check()
        if sample_rate not in VAD_RATES:
            raise VadError(f"WebRTC VAD reads 8, 16, 32 or 48 kHz audio, not {sample_rate} Hz")
        self._sample_rate = sample_rate
        self._detector = webrtcvad.Vad(self.settings.aggressiveness)
        self.frame_bytes = sample_rate * self.settings.frame_ms // 1000 * PCM_SAMPLE_WIDTH
        self._window_frames = max(1, self.settings.start_window_ms // self.settings.frame_ms)
        self._start_frames = -(-self.settings.start_ms // self.settings.frame_ms)
        self._end_frames = -(-self.settings.silence_ms // self.settings.frame_ms)
        self._frames = 0
        self._recent: deque[tuple[int, bool]] = deque(maxlen=self._window_frames)
        self._speaking = False
        self._silent_run = 0
        self._last_voiced_end = 0

    @property
    def frame_ms(self) -> int:
        """Length of the frames `process` reads."""
        return self.settings.frame_ms

    @property
    def sample_rate(self) -> int:
        """Sample rate of the frames."""
        return self._sample_rate

    @property
    def speaking(self) -> bool:
        """True between `speech_start` and `speech_end`."""
        return self._speaking

    @property
    def position_ms(self) -> int:
        """Audio processed so far, in ms."""
        return self._frames * self.settings.frame_ms

    def is_voiced(self, pcm_frame: bytes) -> bool:
        """WebRTC's verdict on one frame, gated by `energy_floor` (no state changes)."""
        if len(pcm_frame) != self.frame_bytes:
            raise VadError(
                f"a VAD frame is {self.frame_bytes} bytes ({self.settings.frame_ms} ms at "
                f"{self._sample_rate} Hz), got {len(pcm_frame)}"
            )
        if not self._detector.is_speech(pcm_frame, self._sample_rate):
            return False
        samples = np.frombuffer(pcm_frame, dtype="<i2").astype(np.float64)
        return bool(np.sqrt(np.mean(samples * samples)) >= self.settings.energy_floor)

    def process(self, pcm_frame: bytes) -> VadEvent | None:
        """Classify one frame; the event it causes, if any."""
        voiced = self.is_voiced(pcm_frame)
        start = self._frames * self.settings.frame_ms
        self._frames += 1
        self._recent.append((start, voiced))
        if voiced:
            self._silent_run = 0
            self._last_voiced_end = start + self.settings.frame_ms
        else:
            self._silent_run += 1
        if not self._speaking:
            voiced_starts = [at for at, v in self._recent if v]
            if len(voiced_starts) >= self._start_frames:
                self._speaking = True
                return VadEvent(kind="speech_start", at_ms=voiced_starts[0])
            return None
        if self._silent_run >= self._end_frames:
            self._speaking = False
            self._recent.clear()
            return VadEvent(kind="speech_end", at_ms=self._last_voiced_end)
        return None

    def reset(self) -> None:
        """Forget the utterance in progress (offsets keep counting)."""
        self._speaking = False
        self._silent_run = 0
        self._recent.clear()
