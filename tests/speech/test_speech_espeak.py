"""keel.speech.espeak: local TTS streamed sentence by sentence."""

from __future__ import annotations

import asyncio
import contextlib

import numpy as np
import pytest

from keel.speech.espeak import EspeakMissing, EspeakSettings, EspeakTts, voice_for


async def collect(tts: EspeakTts, text: str, rate: int, language: str = "en-US") -> list[bytes]:
    return [c async for c in tts.synthesize(text, sample_rate=rate, language=language)]


@pytest.mark.parametrize("rate", [8000, 16000, 24000])
async def test_speaks_pcm16_at_the_asked_rate(espeak_path: str, rate: int) -> None:
    chunks = await collect(EspeakTts(), "Your parcel arrives tomorrow.", rate)
    pcm = b"".join(chunks)
    seconds = len(pcm) / 2 / rate
    assert 1.0 < seconds < 4.0
    assert all(len(c) % 2 == 0 for c in chunks)
    samples = np.frombuffer(pcm, dtype="<i2").astype(np.float64)
    assert np.sqrt((samples**2).mean()) > 300  # not silence


async def test_streams_sentence_by_sentence(espeak_path: str) -> None:
    tts = EspeakTts()
    one = b"".join(await collect(tts, "Hello there.", 16000))
    both = await collect(tts, "Hello there. " + "This second sentence is much longer. " * 4, 16000)
    # The first sentence's audio comes first and on its own: more than one chunk in all,
    # and the first bytes equal the first sentence spoken alone.
    assert len(both) > 2
    assert b"".join(both).startswith(one)


async def test_closing_early_stops_the_process(espeak_path: str) -> None:
    tts = EspeakTts()
    stream = tts.synthesize("One. Two. Three. Four.", sample_rate=8000)
    first = await anext(stream)
    assert first
    await stream.aclose()
    # No espeak child is left behind (the process is killed and reaped on close).
    await asyncio.sleep(0)
    with contextlib.suppress(ChildProcessError):
        import os

        assert os.waitpid(-1, os.WNOHANG) == (0, 0)


def test_voice_from_language() -> None:
    voices = ("en-us", "en-gb", "de", "fr-fr", "fr-be", "pt-br")
    assert voice_for("en-US", voices) == "en-us"
    assert voice_for("en-GB", voices) == "en-gb"
    assert voice_for("de-DE", voices) == "de"
    assert voice_for("fr-CA", voices) == "fr-fr"
    assert voice_for("pt-PT", voices) == "pt-br"
    assert voice_for("tlh", voices) == "en-us"
    tts = EspeakTts(EspeakSettings(language_map={"en-GB": "en-gb-scotland"}), binary="")
    assert tts.voice("en-GB") == "en-gb-scotland"
    assert EspeakTts(EspeakSettings(voice="en-us+m3"), binary="").voice("de-DE") == "en-us+m3"


async def test_missing_binary_is_a_coded_error() -> None:
    tts = EspeakTts(binary=None)
    tts._binary = None  # as on a machine without espeak-ng
    assert not tts.available
    with pytest.raises(EspeakMissing) as missing:
        await collect(tts, "hello", 16000)
    assert missing.value.code == "speech.tts.espeak_missing"
    assert "apt-get install espeak-ng" in str(missing.value)
