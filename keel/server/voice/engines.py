"""The speech engines a voice channel uses, chosen once per server from the project.

`SpeechEngines` holds one `Asr` and one `Tts` (shared by every call: they open a stream or
a synthesis per use) and makes a fresh `Vad` per call. `speech_for` builds them from a
voice channel's settings in integrations.yml (`channels.twilio_media_streams` /
`browser_audio`: `asr`, `tts`, `interruptions`, the end-of-utterance settings) or the
legacy `agent.voice`, through `keel.speech.factory`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from keel.project.definition import AgentDefinition
from keel.speech.espeak import EspeakTts
from keel.speech.pocketsphinx_asr import PocketsphinxAsr, PocketsphinxSettings
from keel.speech.ports import Asr, Tts, Vad
from keel.speech.vad import WebRtcVad

TWILIO_CHANNEL = "twilio_media_streams"
BROWSER_CHANNEL = "browser_audio"
"""The integrations.yml channel names of the two voice channels (Rasa's names)."""


@dataclass(frozen=True, kw_only=True)
class SpeechEngines:
    """A channel's recogniser, synthesiser and VAD maker."""

    asr: Asr
    tts: Tts
    vad: Callable[[int], Vad]
    """A new VAD for a stream at this sample rate."""
    barge_in: bool = True
    """`interruptions.enabled` of the channel (on unless it says false)."""

    def new_vad(self, sample_rate: int) -> Vad:
        """A VAD for one call's inbound audio."""
        return self.vad(sample_rate)


def channel_settings(definition: AgentDefinition, channel: str) -> Mapping[str, object]:
    """The channel's block of integrations.yml (empty when it is not declared)."""
    return definition.integrations.channels.get(channel, {})


def barge_in_enabled(settings: Mapping[str, object]) -> bool:
    """`interruptions.enabled`, on unless the channel turns it off."""
    interruptions = settings.get("interruptions")
    if isinstance(interruptions, Mapping):
        return interruptions.get("enabled") is not False
    return True


_CHOSEN: dict[str, tuple[AgentDefinition, SpeechEngines]] = {}
"""The engines last built per channel, with the definition they were built for: calls of
one definition share them (a recogniser's model loads once); a reloaded project gets new
ones."""


def speech_for(definition: AgentDefinition, channel: str) -> SpeechEngines:
    """The engines for `channel` (`TWILIO_CHANNEL` or `BROWSER_CHANNEL`), shared by the
    calls of one definition."""
    found = _CHOSEN.get(channel)
    if found is None or found[0] is not definition:
        found = (definition, build_speech(definition, channel))
        _CHOSEN[channel] = found
    return found[1]


def build_speech(definition: AgentDefinition, channel: str) -> SpeechEngines:
    """New engines for `channel`."""
    settings = channel_settings(definition, channel)

    def vad(sample_rate: int) -> Vad:
        return WebRtcVad(sample_rate=sample_rate)

    asr = settings.get("asr")
    phrases = asr.get("phrases") if isinstance(asr, Mapping) else None
    bias = tuple(str(p) for p in phrases) if isinstance(phrases, list | tuple) else ()
    return SpeechEngines(
        asr=PocketsphinxAsr(PocketsphinxSettings(phrases=bias)),
        tts=EspeakTts(),
        vad=vad,
        barge_in=barge_in_enabled(settings),
    )
