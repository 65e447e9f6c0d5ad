"""Speech helpers of the voice tests: say a phrase with the local TTS, hear audio with the
local ASR (both real engines)."""

from __future__ import annotations

import re

from keel.speech.espeak import EspeakSettings, EspeakTts
from keel.speech.pocketsphinx_asr import PocketsphinxAsr, PocketsphinxSettings

PHRASES = (
    "hello this is the juniper order line how can i help you today",
    "good news your order has shipped and it will arrive tomorrow",
    "i want to check my order status",
    "tell me about your shop",
    "thank you goodbye",
    "yes",
    "no",
)
"""What the tests listen for: the example's lines and the callers' (phrase bias, so that
the small synthetic voice is recognised reliably; other words are out of vocabulary)."""
_ASR = PocketsphinxAsr(PocketsphinxSettings(phrases=PHRASES))


async def say(text: str, sample_rate: int) -> bytes:
    """`text` spoken by espeak-ng, PCM16 at `sample_rate`."""
    out = bytearray()
    # The caller's voice: en-us at 140 words a minute (pocketsphinx hears it best).
    caller = EspeakTts(EspeakSettings(voice="en-us", speed_wpm=140))
    async for chunk in caller.synthesize(text, sample_rate=sample_rate):
        out += chunk
    return bytes(out)


async def hear(pcm: bytes, sample_rate: int) -> str:
    """What pocketsphinx recognises in `pcm` (its final transcripts, joined)."""
    stream = await _ASR.open(sample_rate=sample_rate)
    finals: list[str] = []

    async def read() -> None:
        async for result in stream.results():
            if result.is_final:
                finals.append(result.text)

    import asyncio

    reader = asyncio.ensure_future(read())
    await stream.feed(pcm)
    await stream.close()
    await reader
    return " ".join(finals).lower()


def words(text: str) -> set[str]:
    """The words of `text`, lower-cased."""
    return set(re.findall(r"[a-z']+", text.lower()))
