"""keel.speech.audio: μ-law, resampling, WAV files, framing."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keel.speech.audio import (
    AudioError,
    FrameBuffer,
    Resampler,
    duration_ms,
    pcm16_to_ulaw,
    read_wav,
    resample,
    silence,
    ulaw_to_pcm16,
    wav_bytes,
    write_wav,
)


def tone(freq: float, rate: int, seconds: float = 1.0, amplitude: float = 10000) -> bytes:
    n = int(rate * seconds)
    return (np.sin(np.arange(n) * 2 * np.pi * freq / rate) * amplitude).astype("<i2").tobytes()


def samples(pcm: bytes) -> np.ndarray:
    return np.frombuffer(pcm, dtype="<i2").astype(np.float64)


def test_ulaw_known_codes() -> None:
    decoded = samples(ulaw_to_pcm16(bytes([0x00, 0x80, 0xFF, 0x7F, 0xF0, 0x70])))
    assert decoded.tolist() == [-32124, 32124, 0, 0, 120, -120]


def test_ulaw_round_trip_every_code() -> None:
    codes = bytes(range(256))
    back = pcm16_to_ulaw(ulaw_to_pcm16(codes))
    # 0x7F and 0xFF both decode to 0, which encodes as 0xFF; every other code survives.
    assert [(a, b) for a, b in zip(codes, back, strict=True) if a != b] == [(0x7F, 0xFF)]


def test_ulaw_matches_the_standard_library_where_it_still_exists() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        audioop = pytest.importorskip("audioop")  # removed in Python 3.13
    pcm = np.arange(-32768, 32768, 7, dtype="<i2").tobytes()
    assert pcm16_to_ulaw(pcm) == audioop.lin2ulaw(pcm, 2)
    codes = bytes(range(256))
    assert ulaw_to_pcm16(codes) == audioop.ulaw2lin(codes, 2)


@given(st.lists(st.integers(-32768, 32767), min_size=1, max_size=400))
@settings(max_examples=200, deadline=None)
def test_ulaw_quantisation_error_is_bounded(values: list[int]) -> None:
    pcm = np.array(values, dtype="<i2").tobytes()
    back = samples(ulaw_to_pcm16(pcm16_to_ulaw(pcm)))
    original = np.array(values, dtype=np.float64)
    # G.711 keeps 4 mantissa bits: the error is at most half a step of the sample's segment.
    bound = np.maximum(8.0, np.abs(original) / 16 + 132)
    assert np.all(np.abs(back - original) <= bound)


@pytest.mark.parametrize(
    ("source", "target"),
    [(8000, 16000), (16000, 8000), (22050, 16000), (22050, 8000), (24000, 8000), (16000, 24000)],
)
def test_resampling_keeps_a_tone(source: int, target: int) -> None:
    out = samples(resample(tone(440, source), source, target))
    assert len(out) == target
    expected = np.sin(np.arange(len(out)) * 2 * np.pi * 440 / target) * 10000
    assert np.abs(out[64:-64] - expected[64:-64]).max() < 5


def test_downsampling_removes_what_the_lower_rate_cannot_hold() -> None:
    # 6 kHz is above 8 kHz's Nyquist frequency: it must not fold back as a 2 kHz alias.
    out = samples(resample(tone(6000, 16000), 16000, 8000))
    assert np.sqrt((out[200:-200] ** 2).mean()) < 10


@given(st.lists(st.integers(1, 900), min_size=1, max_size=12))
@settings(max_examples=60, deadline=None)
def test_streaming_resampler_equals_one_shot(cuts: list[int]) -> None:
    pcm = tone(300, 22050, 0.5) + tone(1200, 22050, 0.3)
    resampler = Resampler(22050, 8000)
    out, at = b"", 0
    for size in cuts:
        out += resampler.process(pcm[at : at + 2 * size])
        at += 2 * size
    out += resampler.process(pcm[at:]) + resampler.flush()
    assert out == resample(pcm, 22050, 8000)
    assert len(out) // 2 == math.ceil(len(pcm) // 2 * 8000 / 22050)


def test_same_rate_passes_through_and_bad_input_is_coded() -> None:
    pcm = tone(440, 16000, 0.1)
    assert resample(pcm, 16000, 16000) == pcm
    with pytest.raises(AudioError) as odd:
        Resampler(16000, 8000).process(b"\x00\x01\x02")
    assert odd.value.code == "speech.audio"
    with pytest.raises(AudioError):
        Resampler(0, 8000)
    flushed = Resampler(16000, 8000)
    flushed.flush()
    with pytest.raises(AudioError):
        flushed.process(pcm)


def test_wav_round_trip_and_stereo_mixdown(tmp_path: Path) -> None:
    pcm = tone(440, 16000, 0.25)
    write_wav(tmp_path / "a.wav", pcm, 16000)
    assert read_wav(tmp_path / "a.wav") == (pcm, 16000)
    assert read_wav(wav_bytes(pcm, 8000)) == (pcm, 8000)
    import wave

    left = np.full(100, 1000, dtype="<i2")
    right = np.full(100, 3000, dtype="<i2")
    with wave.open(str(tmp_path / "s.wav"), "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(np.column_stack((left, right)).astype("<i2").tobytes())
    mixed, rate = read_wav(tmp_path / "s.wav")
    assert rate == 16000 and set(samples(mixed).tolist()) == {2000.0}


def test_bad_wav_is_a_coded_error(tmp_path: Path) -> None:
    (tmp_path / "bad.wav").write_bytes(b"not a wav file at all")
    with pytest.raises(AudioError, match="not a PCM WAV"):
        read_wav(tmp_path / "bad.wav")
    with pytest.raises(AudioError, match="cannot open"):
        read_wav(tmp_path / "missing.wav")


def test_frame_buffer_and_durations() -> None:
    frames = FrameBuffer(sample_rate=16000, frame_ms=20)
    assert frames.frame_bytes == 640
    assert frames.push(b"\x01\x00" * 500) == [b"\x01\x00" * 320]
    got = frames.push(b"\x02\x00" * 500)
    assert got == [b"\x01\x00" * 180 + b"\x02\x00" * 140, b"\x02\x00" * 320]
    rest = frames.rest()
    assert rest == b"\x02\x00" * 40 + b"\x00\x00" * 280 and frames.rest() == b""
    assert duration_ms(silence(250, 8000), 8000) == 250
