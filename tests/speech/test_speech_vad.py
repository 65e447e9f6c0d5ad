"""keel.speech.vad: WebRTC VAD, speech start and end of utterance, Mantle's eot mapping."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from keel.speech.audio import FrameBuffer, silence
from keel.speech.ports import VadEvent
from keel.speech.vad import VadError, VadSettings, WebRtcVad, silence_for_eot


def events(vad: WebRtcVad, pcm: bytes) -> list[VadEvent]:
    frames = FrameBuffer(sample_rate=vad.sample_rate, frame_ms=vad.frame_ms)
    found = [vad.process(f) for f in frames.push(pcm)]
    return [e for e in found if e is not None]


def test_eot_mapping_and_defaults() -> None:
    assert silence_for_eot() == 700
    assert silence_for_eot(0.5) == 300
    assert silence_for_eot(0.9) == 1100
    assert silence_for_eot(0.9, eot_timeout_ms=800) == 800
    assert silence_for_eot(0.3) == 200
    assert VadSettings().silence_ms == 700


@pytest.mark.parametrize("rate", [8000, 16000])
def test_speech_start_and_end_of_an_utterance(
    rate: int, spoken: Callable[[str, int], bytes]
) -> None:
    speech = spoken("I want to check my order status", rate)
    pcm = silence(500, rate) + speech + silence(1000, rate)
    vad = WebRtcVad(sample_rate=rate)
    found = events(vad, pcm)
    assert [e.kind for e in found] == ["speech_start", "speech_end"]
    start, end = found
    speech_ms = len(speech) // 2 * 1000 // rate
    assert 400 <= start.at_ms <= 700
    # espeak's own output ends with about 400 ms of silence.
    assert 500 + speech_ms - 600 <= end.at_ms <= 500 + speech_ms - 200
    assert not vad.speaking


def test_a_pause_shorter_than_the_silence_keeps_one_utterance(
    spoken: Callable[[str, int], bytes],
) -> None:
    words = spoken("yes please", 16000)
    # espeak ends each utterance with about 400 ms of silence of its own.
    pcm = words + silence(100, 16000) + words + silence(900, 16000)
    assert [e.kind for e in events(WebRtcVad(sample_rate=16000), pcm)] == [
        "speech_start",
        "speech_end",
    ]
    short = WebRtcVad(sample_rate=16000, settings=VadSettings(silence_ms=200))
    assert [e.kind for e in events(short, pcm)] == ["speech_start", "speech_end"] * 2


def test_silence_and_a_click_are_not_speech() -> None:
    vad = WebRtcVad(sample_rate=8000)
    click = b"\xff\x7f" * 40 + b"\x00\x80" * 40  # 20 ms
    assert events(vad, silence(2000, 8000) + click + silence(500, 8000)) == []


def test_same_audio_same_events(spoken: Callable[[str, int], bytes]) -> None:
    pcm = silence(200, 16000) + spoken("talk to a human", 16000) + silence(800, 16000)
    first = events(WebRtcVad(sample_rate=16000), pcm)
    assert first == events(WebRtcVad(sample_rate=16000), pcm)


def test_bad_settings_and_frames_are_coded() -> None:
    with pytest.raises(VadError) as rate:
        WebRtcVad(sample_rate=22050)
    assert rate.value.code == "speech.vad"
    for bad in (
        VadSettings(aggressiveness=4),
        VadSettings(frame_ms=25),
        VadSettings(start_ms=0),
        VadSettings(silence_ms=5),
    ):
        with pytest.raises(VadError):
            WebRtcVad(sample_rate=16000, settings=bad)
    with pytest.raises(VadError, match="640 bytes"):
        WebRtcVad(sample_rate=16000).process(b"\x00" * 100)
