"""The speech engines a voice channel uses, chosen once per project definition.

`SpeechEngines` holds one `Asr` and one `Tts` (shared by every call: they open a stream or
a synthesis per use) and makes a fresh `Vad` per call. `speech_for` builds them with
`keel.speech.factory` from the voice channel's block in integrations.yml
(`channels.twilio_media_streams` / `browser_audio`: `asr`, `tts`, `vad`, the
end-of-utterance settings) or, when that block names no engine, the legacy `agent.voice`
of agent.yml. Deepgram with no key, and engines Keel does not have, run the local engines
with a warning logged on `keel.speech` (`speech.deepgram_no_key`, `speech.engine_unknown`).
`interruptions.enabled` of the channel block turns barge-in off.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from keel.project.definition import AgentDefinition
from keel.speech import factory
from keel.speech.ports import Asr, Tts, Vad

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
    warnings: tuple[factory.SpeechWarning, ...] = ()
    """What the factory warned about while choosing (also logged on `keel.speech`)."""
    source: str = "default"
    """Where the settings came from: `channels.<name>`, `agent.voice` or `default`."""

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
one definition share them (a recogniser's model loads once, the warnings are logged once);
a reloaded project gets new ones."""


def speech_for(
    definition: AgentDefinition, channel: str, env: Mapping[str, str] | None = None
) -> SpeechEngines:
    """The engines for `channel` (`TWILIO_CHANNEL` or `BROWSER_CHANNEL`), shared by the
    calls of one definition. `env` defaults to the process environment (the Deepgram key
    `DEEPGRAM_API_KEY`, `KEEL_DEEPGRAM_URL`)."""
    found = _CHOSEN.get(channel)
    if found is None or found[0] is not definition:
        found = (definition, build_speech(definition, channel, env))
        _CHOSEN[channel] = found
    return found[1]


def build_speech(
    definition: AgentDefinition, channel: str, env: Mapping[str, str] | None = None
) -> SpeechEngines:
    """New engines for `channel`, through `keel.speech.factory`."""
    chosen = factory.engines_for_channel(
        definition.integrations.channels,
        definition.config.legacy,
        channel,
        env=os.environ if env is None else env,
    )
    return SpeechEngines(
        asr=chosen.asr,
        tts=chosen.tts,
        vad=chosen.new_vad,
        barge_in=barge_in_enabled(channel_settings(definition, channel)),
        warnings=chosen.warnings,
        source=chosen.source,
    )
