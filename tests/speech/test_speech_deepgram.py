"""keel.speech.deepgram through the official SDK, against keel.testing.deepgram_server."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from keel.speech.audio import silence
from keel.speech.deepgram import DeepgramAsr, DeepgramError, DeepgramSettings, DeepgramTts
from keel.speech.ports import Transcript
from keel.testing.deepgram_server import DeepgramServer, Utterance

KEY = "dg-test-key"


async def transcribe(asr: DeepgramAsr, pcm: bytes, rate: int) -> list[Transcript]:
    stream = await asr.open(sample_rate=rate, language="en-US")
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


async def test_live_transcription_interim_final_and_close() -> None:
    script = [
        Utterance(text="I want to check my order", start_ms=200, end_ms=1200, confidence=0.91),
        Utterance(text="yes please", start_ms=1500, end_ms=5000),
    ]
    async with DeepgramServer(key=KEY, script=script) as dg:
        settings = DeepgramSettings(api_key=KEY, base_url=dg.base_url, phrases=("order status",))
        got = await transcribe(DeepgramAsr(settings), silence(1600, 16000), 16000)
        call = dg.listens[0]
    assert [(t.text, t.is_final) for t in got] == [
        ("I want to", False),
        ("I want to check my order", True),
        ("yes please", True),  # its audio never came: final at CloseStream, no interim
    ]
    assert (got[1].start_ms, got[1].end_ms, got[1].confidence) == (200, 1200, 0.91)
    # What crossed the wire: the SDK's query, our key, the audio and CloseStream.
    assert call.headers["authorization"] == f"Token {KEY}"
    assert call.query["model"] == "nova-3"
    assert call.query["encoding"] == "linear16"
    assert call.query["sample_rate"] == "16000"
    assert call.query["language"] == "en-US"
    assert call.query["interim_results"] == "true"
    assert call.query["keyterm"] == "order status"
    assert call.audio_bytes == 1600 * 32
    assert call.controls == ["CloseStream"]
    assert call.sent[-1]["type"] == "Metadata"
    assert call.sent[1]["channel"]["alternatives"][0]["transcript"] == "I want to check my order"
    assert call.sent[1]["is_final"] is True and call.sent[1]["speech_final"] is True


async def test_language_map_picks_model_and_language() -> None:
    async with DeepgramServer(key=KEY) as dg:
        settings = DeepgramSettings(
            api_key=KEY,
            base_url=dg.base_url,
            language_map={"de-DE": {"model": "nova-2", "language": "de"}},
            phrases=("Bestellung",),
        )
        stream = await DeepgramAsr(settings).open(sample_rate=8000, language="de-DE")
        await stream.close()
        query = dg.listens[0].query
    assert (query["model"], query["language"], query["sample_rate"]) == ("nova-2", "de", "8000")
    assert query["keywords"] == "Bestellung"


async def test_wrong_key_is_a_coded_error() -> None:
    async with DeepgramServer(key=KEY) as dg:
        settings = DeepgramSettings(api_key="wrong", base_url=dg.base_url)
        with pytest.raises(DeepgramError) as refused:
            await DeepgramAsr(settings).open(sample_rate=16000)
        assert refused.value.code in ("speech.deepgram.auth", "speech.deepgram")
        with pytest.raises(DeepgramError) as tts_refused:
            async for _ in DeepgramTts(settings).synthesize("hello", sample_rate=16000):
                pass
        assert tts_refused.value.code == "speech.deepgram.auth"


async def test_unreachable_server_is_a_coded_error() -> None:
    async with DeepgramServer(key=KEY) as dg:
        url = dg.base_url
    settings = DeepgramSettings(api_key=KEY, base_url=url, timeout=2)
    with pytest.raises(DeepgramError) as down:
        await DeepgramAsr(settings).open(sample_rate=16000)
    assert down.value.code == "speech.deepgram.unreachable"
    with pytest.raises(DeepgramError) as bad_url:
        DeepgramSettings(api_key=KEY, base_url="ftp://x").environment()
    assert bad_url.value.code == "speech.deepgram"


@pytest.mark.parametrize(("rate", "asked"), [(16000, "16000"), (8000, "8000"), (22050, "24000")])
async def test_speak_streams_pcm_sentence_by_sentence(rate: int, asked: str) -> None:
    async with DeepgramServer(key=KEY) as dg:
        settings = DeepgramSettings(
            api_key=KEY,
            base_url=dg.base_url,
            language_map={"en-GB": {"voice": "aura-2-draco-en"}},
        )
        tts = DeepgramTts(settings)
        chunks = [c async for c in tts.synthesize("Hello there. Bye.", sample_rate=rate)]
        [c async for c in tts.synthesize("Cheerio.", sample_rate=rate, language="en-GB")]
        speaks = list(dg.speaks)
    assert [s.body["text"] for s in speaks] == ["Hello there.", "Bye.", "Cheerio."]
    assert speaks[0].query == {
        "model": "aura-2-thalia-en",
        "encoding": "linear16",
        "sample_rate": asked,
        "container": "none",
    }
    assert speaks[2].query["model"] == "aura-2-draco-en"
    assert speaks[0].headers["authorization"] == f"Token {KEY}"
    pcm = b"".join(chunks)
    # The server's stand-in speech is 40 ms per character: 12 + 4 characters.
    assert abs(len(pcm) / 2 / rate - 0.04 * 16) < 0.01
    assert len(chunks) > 2
    assert np.abs(np.frombuffer(pcm, dtype="<i2")).max() > 1000


async def test_speak_rejects_empty_text_with_deepgrams_error() -> None:
    async with DeepgramServer(key=KEY) as dg:
        settings = DeepgramSettings(api_key=KEY, base_url=dg.base_url)
        client = settings.client()
        with pytest.raises(Exception) as empty:
            async for _ in client.speak.v1.audio.generate(text=""):
                pass
        assert "400" in str(empty.value) or getattr(empty.value, "status_code", 0) == 400
        # Keel never sends empty text: nothing to say is no request at all.
        assert [c async for c in DeepgramTts(settings).synthesize(" ... ", sample_rate=8000)] == []
        assert len(dg.speaks) == 1
