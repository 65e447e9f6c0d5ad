"""Audio helpers for the speech ports: G.711 μ-law, resampling, WAV files, framing.

Everything here works on PCM16 (signed 16-bit little-endian, mono), the ports' format.

- `ulaw_to_pcm16` / `pcm16_to_ulaw`: G.711 μ-law, the 8 kHz codec of Twilio Media Streams.
- `Resampler`: a streaming band-limited resampler (windowed-sinc polyphase filter) between
  any two rates (8 000, 16 000, 22 050, 24 000 ...); chunks fed one after another give the
  same samples as the whole signal at once. `resample` is the one-shot form.
- `read_wav` / `write_wav` / `wav_bytes`: PCM16 WAV files (stereo is mixed down on reading).
- `FrameBuffer`: collects chunks of any size and hands out fixed-length frames (for the VAD).
"""

from __future__ import annotations

import io
import math
import wave
from pathlib import Path
from typing import BinaryIO

import numpy as np
from numpy.typing import NDArray

from keel.speech.ports import PCM_SAMPLE_WIDTH, SpeechError

SUPPORTED_RATES = (8000, 16000, 22050, 24000, 44100, 48000)
"""Sample rates the engines and channels use; `Resampler` takes any positive rates."""

_ULAW_BIAS = 0x84
_ULAW_CLIP_14 = 8159
"""Largest 14-bit magnitude μ-law encodes (Sun's g711.c)."""
_ULAW_SEGMENT_ENDS = np.array(
    [0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF, 0x1FFF], dtype=np.int32
)


class AudioError(SpeechError):
    """Audio that cannot be read: a malformed WAV, an odd number of PCM16 bytes."""

    code = "speech.audio"


def _samples(pcm: bytes) -> NDArray[np.int16]:
    if len(pcm) % PCM_SAMPLE_WIDTH:
        raise AudioError(f"PCM16 audio needs an even number of bytes, got {len(pcm)}")
    return np.frombuffer(pcm, dtype="<i2")


def _to_pcm(samples: NDArray[np.floating] | NDArray[np.integer]) -> bytes:
    clipped = np.clip(np.rint(samples), -32768, 32767)
    return bytes(clipped.astype("<i2").tobytes())


def duration_ms(pcm: bytes, sample_rate: int) -> int:
    """Length of `pcm` in whole milliseconds."""
    return len(pcm) // PCM_SAMPLE_WIDTH * 1000 // sample_rate


def silence(ms: int, sample_rate: int) -> bytes:
    """`ms` milliseconds of digital silence."""
    return b"\x00\x00" * (sample_rate * ms // 1000)


# ------------------------------------------------------------------------------ μ-law


def _build_ulaw_decode() -> NDArray[np.int16]:
    u = ~np.arange(256, dtype=np.int32) & 0xFF
    sign = u & 0x80
    exponent = (u >> 4) & 0x07
    mantissa = u & 0x0F
    magnitude = (((mantissa << 3) + _ULAW_BIAS) << exponent) - _ULAW_BIAS
    return np.where(sign != 0, -magnitude, magnitude).astype(np.int16)


_ULAW_DECODE = _build_ulaw_decode()


def ulaw_to_pcm16(ulaw: bytes) -> bytes:
    """G.711 μ-law bytes (one per sample) to PCM16."""
    codes = np.frombuffer(ulaw, dtype=np.uint8)
    return _ULAW_DECODE[codes].astype("<i2").tobytes()


def pcm16_to_ulaw(pcm: bytes) -> bytes:
    """PCM16 to G.711 μ-law, one byte per sample (bit for bit what CPython's audioop gave:
    Sun's g711.c on the sample's top 14 bits)."""
    value = _samples(pcm).astype(np.int32) >> 2
    negative = value < 0
    magnitude = np.minimum(np.where(negative, -value, value), _ULAW_CLIP_14) + (_ULAW_BIAS >> 2)
    segment = np.searchsorted(_ULAW_SEGMENT_ENDS, magnitude, side="left")
    mantissa = (magnitude >> np.minimum(segment + 1, 8)) & 0x0F
    code = np.where(segment >= 8, 0x7F, (segment << 4) | mantissa)
    mask = np.where(negative, 0x7F, 0xFF)
    return bytes((code ^ mask).astype(np.uint8).tobytes())


# ------------------------------------------------------------------------------ resampling

_ZERO_CROSSINGS = 16
"""Half-width of the sinc filter, in zero crossings of the (lower) output band."""
_BANDWIDTH = 0.92
"""Passband as a share of the lower Nyquist frequency (room for the filter's roll-off)."""


class Resampler:
    """Streaming resampler from `source_rate` to `target_rate` (PCM16 mono).

    `process` takes chunks of any length and returns what can be computed so far (the
    filter looks a few samples ahead, so output lags input by about 1 ms); `flush` ends the
    stream and returns the rest. Output length over the whole stream is
    `ceil(input_samples * target_rate / source_rate)`.
    """

    def __init__(self, source_rate: int, target_rate: int) -> None:
        if source_rate <= 0 or target_rate <= 0:
            raise AudioError(f"sample rates must be positive, got {source_rate} -> {target_rate}")
        self.source_rate = source_rate
        self.target_rate = target_rate
        g = math.gcd(source_rate, target_rate)
        self._up = target_rate // g
        self._down = source_rate // g
        cutoff = min(1.0, self._up / self._down) * _BANDWIDTH
        self._half = math.ceil(_ZERO_CROSSINGS / cutoff)
        self._table = self._filter_table(cutoff)
        self._buffer: NDArray[np.float64] = np.zeros(self._half, dtype=np.float64)
        self._base = -self._half
        """Stream index of `_buffer[0]` (it starts with `_half` samples of zero history)."""
        self._next = 0
        """Index of the next output sample."""
        self._consumed = 0
        """Input samples received so far."""
        self._done = False

    @property
    def passthrough(self) -> bool:
        """True when both rates are equal (audio goes through unchanged)."""
        return self._up == self._down

    def _filter_table(self, cutoff: float) -> NDArray[np.float64]:
        taps = np.arange(-self._half + 1, self._half + 1, dtype=np.float64)
        phases = np.arange(self._up, dtype=np.float64)[:, None] / self._up
        t = phases - taps[None, :]
        window = np.where(
            np.abs(t) < self._half,
            0.42 + 0.5 * np.cos(np.pi * t / self._half) + 0.08 * np.cos(2 * np.pi * t / self._half),
            0.0,
        )
        table = cutoff * np.sinc(cutoff * t) * window
        sums: NDArray[np.float64] = table.sum(axis=1, keepdims=True)
        return np.asarray(table / sums, dtype=np.float64)

    def process(self, pcm: bytes) -> bytes:
        """Resample one more chunk; returns the output samples that are complete."""
        if self._done:
            raise AudioError("the resampler was flushed; make a new one for a new stream")
        if self.passthrough:
            _samples(pcm)
            return pcm
        x = _samples(pcm).astype(np.float64)
        self._buffer = np.concatenate((self._buffer, x))
        self._consumed += len(x)
        return self._emit(limit=None)

    def flush(self) -> bytes:
        """End of the stream: the remaining output samples."""
        if self._done or self.passthrough:
            self._done = True
            return b""
        self._done = True
        self._buffer = np.concatenate((self._buffer, np.zeros(self._half, dtype=np.float64)))
        total = -(-self._consumed * self._up // self._down)
        return self._emit(limit=total)

    def _emit(self, *, limit: int | None) -> bytes:
        available = self._base + len(self._buffer)
        # Output n needs input up to floor(n * down / up) + half.
        last = ((available - self._half) * self._up - 1) // self._down
        stop = last + 1 if limit is None else min(last + 1, limit)
        if stop <= self._next:
            return b""
        n = np.arange(self._next, stop, dtype=np.int64)
        position = n * self._down
        index = position // self._up
        phase = position % self._up
        offsets = np.arange(-self._half + 1, self._half + 1, dtype=np.int64)
        window = self._buffer[index[:, None] + offsets[None, :] - self._base]
        out = np.einsum("ij,ij->i", window, self._table[phase])
        self._next = stop
        keep_from = (stop * self._down) // self._up - self._half + 1
        drop = max(0, keep_from - self._base)
        self._buffer = self._buffer[drop:]
        self._base += drop
        return _to_pcm(out)


def resample(pcm: bytes, source_rate: int, target_rate: int) -> bytes:
    """`pcm` at `source_rate` resampled to `target_rate` in one go."""
    resampler = Resampler(source_rate, target_rate)
    return resampler.process(pcm) + resampler.flush()


# ------------------------------------------------------------------------------ WAV files


def read_wav(source: str | Path | bytes) -> tuple[bytes, int]:
    """A WAV file (a path or its bytes) as (PCM16 mono, sample rate); channels are mixed."""
    if isinstance(source, bytes):
        stream: BinaryIO = io.BytesIO(source)
    else:
        try:
            stream = open(source, "rb")  # closed by the `with` below
        except OSError as exc:
            raise AudioError(f"cannot open WAV file {source}: {exc}") from exc
    try:
        with stream, wave.open(stream, "rb") as wav:
            width, channels, rate = wav.getsampwidth(), wav.getnchannels(), wav.getframerate()
            data = wav.readframes(wav.getnframes())
    except (wave.Error, EOFError) as exc:
        raise AudioError(f"not a PCM WAV file: {exc}") from exc
    if width != PCM_SAMPLE_WIDTH:
        raise AudioError(f"WAV sample width is {8 * width} bits; only 16-bit PCM is read")
    usable = len(data) - len(data) % (PCM_SAMPLE_WIDTH * channels)
    samples = np.frombuffer(data[:usable], dtype="<i2")
    if channels > 1:
        mixed = samples.reshape(-1, channels).astype(np.float64).mean(axis=1)
        return _to_pcm(mixed), rate
    return samples.tobytes(), rate


def wav_bytes(pcm: bytes, sample_rate: int) -> bytes:
    """PCM16 mono as the bytes of a WAV file."""
    _samples(pcm)
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(PCM_SAMPLE_WIDTH)
        wav.setframerate(sample_rate)
        wav.writeframes(pcm)
    return out.getvalue()


def write_wav(path: str | Path, pcm: bytes, sample_rate: int) -> None:
    """Write PCM16 mono to a WAV file."""
    Path(path).write_bytes(wav_bytes(pcm, sample_rate))


# ------------------------------------------------------------------------------ framing


class FrameBuffer:
    """Chunks in, frames of exactly `frame_ms` out (the remainder waits for more audio)."""

    def __init__(self, *, sample_rate: int, frame_ms: int) -> None:
        self.frame_bytes = sample_rate * frame_ms // 1000 * PCM_SAMPLE_WIDTH
        self._pending = bytearray()

    def push(self, pcm: bytes) -> list[bytes]:
        """Add audio; the complete frames it makes, in order."""
        self._pending += pcm
        count = len(self._pending) // self.frame_bytes
        size = count * self.frame_bytes
        frames = [
            bytes(self._pending[i : i + self.frame_bytes]) for i in range(0, size, self.frame_bytes)
        ]
        del self._pending[:size]
        return frames

    def rest(self) -> bytes:
        """The incomplete frame left over, padded with silence to a full frame ('' if none)."""
        if not self._pending:
            return b""
        padded = bytes(self._pending) + b"\x00" * (self.frame_bytes - len(self._pending))
        self._pending.clear()
        return padded
