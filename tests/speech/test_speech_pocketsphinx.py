"""keel.speech.pocketsphinx_asr: local streaming ASR, and the espeak -> pocketsphinx round trip."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from keel.speech.audio import pcm16_to_ulaw, resample, silence, ulaw_to_pcm16
from keel.speech.pocketsphinx_asr import (
    PhraseModel,
    PocketsphinxAsr,
    PocketsphinxError,
    PocketsphinxSettings,
)
from keel.speech.ports import Transcript

Spoken = Callable[[str, int], bytes]
PHRASES = (
    "I want to check my order status",
    "yes please",
    "no thanks",
    "talk to a human",
    "where is my parcel",
)


async def recognise(asr: PocketsphinxAsr, pcm: bytes, rate: int) -> list[Transcript]:
    """Feed `pcm` in 20 ms chunks as a channel would; every transcript, in order."""
    stream = await asr.open(sample_rate=rate)
    got: list[Transcript] = []

    async def read() -> None:
        async for transcript in stream.results():
            got.append(transcript)

    reader = asyncio.create_task(read())
    step = rate // 50 * 2
    for at in range(0, len(pcm), step):
        await stream.feed(pcm[at : at + step])
    await stream.close()
    await reader
    return got


def finals(transcripts: list[Transcript]) -> list[str]:
    return [t.text for t in transcripts if t.is_final]


@pytest.fixture(scope="module")
def general() -> PocketsphinxAsr:
    return PocketsphinxAsr()


@pytest.fixture(scope="module")
def biased() -> PocketsphinxAsr:
    return PocketsphinxAsr(PocketsphinxSettings(phrases=PHRASES))


async def test_round_trip_espeak_to_pocketsphinx(general: PocketsphinxAsr, spoken: Spoken) -> None:
    """The local TTS says it, the local ASR (general model, no bias) hears the key words."""
    pcm = silence(300, 16000) + spoken("I want to check my order status", 16000)
    got = await recognise(general, pcm + silence(600, 16000), 16000)
    words = set(" ".join(finals(got)).split())
    # ASR errors allowed: most of the key words are heard.
    assert len({"want", "check", "order", "status"} & words) >= 2, words


async def test_interim_then_final_with_offsets(general: PocketsphinxAsr, spoken: Spoken) -> None:
    pcm = silence(500, 16000) + spoken("where is my parcel", 16000) + silence(700, 16000)
    got = await recognise(general, pcm, 16000)
    assert got and got[-1].is_final
    assert any(not t.is_final for t in got[:-1])
    final = got[-1]
    assert 300 <= final.start_ms <= 700
    assert final.start_ms < final.end_ms <= len(pcm) // 32
    assert all(t.start_ms == final.start_ms for t in got)


async def test_phrase_bias_on_telephone_audio(biased: PocketsphinxAsr, spoken: Spoken) -> None:
    """8 kHz μ-law, as Twilio sends it: with the phrase model the key words come back (the
    general model hears little of telephone-band espeak; docs/voice.md has the figures)."""
    heard = []
    for phrase in ("yes please", "talk to a human", "where is my parcel"):
        phone = ulaw_to_pcm16(pcm16_to_ulaw(resample(spoken(phrase, 16000), 16000, 8000)))
        got = await recognise(biased, silence(300, 8000) + phone + silence(600, 8000), 8000)
        heard.append(" ".join(finals(got)))
    assert [k in h.split() for k, h in zip(("please", "human", "parcel"), heard, strict=True)] == [
        True,
        True,
        True,
    ], heard
    assert heard.count("yes please") + heard.count("where is my parcel") >= 1, heard


async def test_two_utterances_two_finals(biased: PocketsphinxAsr, spoken: Spoken) -> None:
    pcm = spoken("yes please", 16000) + silence(500, 16000) + spoken("no thanks", 16000)
    got = finals(await recognise(biased, pcm, 16000))  # close flushes the second one
    assert len(got) == 2, got
    assert "please" in got[0].split() and "thanks" in got[1].split(), got


async def test_silence_gives_nothing_and_decoders_are_reused(general: PocketsphinxAsr) -> None:
    assert await recognise(general, silence(1500, 8000), 8000) == []
    before = len(general._idle)
    stream = await general.open(sample_rate=16000)
    assert len(general._idle) == max(0, before - 1)
    await stream.close()
    await stream.close()  # idempotent
    assert len(general._idle) == max(1, before)
    with pytest.raises(PocketsphinxError, match="feed after close"):
        await stream.feed(b"\x00\x00")


def test_phrase_model_lists_unknown_words() -> None:
    model = PhraseModel(["check my order", "zzqx blorft"])
    assert model.unknown == ("blorft", "zzqx")
    assert "order" in model.words
    assert model.lm_path.read_text().startswith("Corpus") or "\\data\\" in model.lm_path.read_text()
    with pytest.raises(PocketsphinxError):
        PhraseModel(["..."])
