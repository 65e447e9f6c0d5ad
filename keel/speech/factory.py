"""Choosing the speech engines of a voice channel from a project's configuration.

Where the settings come from, first found wins:

1. the voice channel's block in integrations.yml (`channels.twilio_media_streams`,
   `channels.browser_audio`, ...): `asr: {name, language_map, eot_threshold,
   eot_timeout_ms, phrases, api_key, base_url}`, `tts: {name, language_map, voice, ...}`,
   and Keel's `vad: {aggressiveness, silence_ms, start_ms, energy_floor}`;
2. the legacy `agent.voice: {enabled, asr: deepgram, tts: deepgram}` of agent.yml
   (`asr` / `tts` a name or a block as above).

Names: `local`, `pocketsphinx` (ASR), `local`, `espeak`, `espeak-ng` (TTS) and `deepgram`.
No name means `local`. Deepgram needs a key (`api_key` in the block, else the other
block's, else `DEEPGRAM_API_KEY`); without one the local engine runs and a
`speech.deepgram_no_key` warning says so, so a Mantle voice project runs unchanged on a
laptop. Engines Keel does not have (`azure`, `cartesia`, `rime`, a dotted class path)
are `speech.engine_unknown`
warnings, and the local engine runs. `base_url` (or `KEEL_DEEPGRAM_URL`) points Deepgram
elsewhere (tests, a proxy, a self-hosted Deepgram).

Warnings are logged on `keel.speech` and returned in `SpeechEngines.warnings`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from keel.speech.deepgram import DEFAULT_BASE_URL, DeepgramAsr, DeepgramSettings, DeepgramTts
from keel.speech.espeak import DEFAULT_SPEED_WPM, INSTALL_HINT, EspeakSettings, EspeakTts
from keel.speech.pocketsphinx_asr import PocketsphinxAsr, PocketsphinxError, PocketsphinxSettings
from keel.speech.ports import Asr, Tts, Vad
from keel.speech.vad import (
    DEFAULT_EOT_THRESHOLD,
    DEFAULT_EOT_TIMEOUT_MS,
    VadError,
    VadSettings,
    WebRtcVad,
    silence_for_eot,
)

logger = logging.getLogger("keel.speech")

VOICE_CHANNELS = ("twilio_media_streams", "browser_audio", "jambonz", "audiocodes")
"""integrations.yml channels that carry speech settings (Mantle's built-in voice channels)."""
LOCAL_ASR_NAMES = frozenset({"local", "pocketsphinx"})
LOCAL_TTS_NAMES = frozenset({"local", "espeak", "espeak-ng"})
DEEPGRAM = "deepgram"
DEEPGRAM_KEY_ENV = "DEEPGRAM_API_KEY"
DEEPGRAM_URL_ENV = "KEEL_DEEPGRAM_URL"


@dataclass(frozen=True, kw_only=True)
class SpeechWarning:
    """Something about the speech settings worth telling (also logged)."""

    code: str
    message: str


@dataclass(frozen=True, kw_only=True)
class SpeechEngines:
    """A voice channel's engines: one ASR and one TTS shared by its calls, and VAD settings
    (a VAD keeps per-stream state: make one per call with `new_vad`)."""

    asr: Asr
    tts: Tts
    vad_settings: VadSettings
    warnings: tuple[SpeechWarning, ...] = ()
    source: str = "default"
    """Where the settings came from: `channels.<name>`, `agent.voice` or `default`."""
    enabled: bool = True
    """False when the legacy `agent.voice.enabled` says so (channel blocks are enabled)."""

    def new_vad(self, sample_rate: int) -> Vad:
        """A fresh VAD for one stream at `sample_rate` (8, 16, 32 or 48 kHz)."""
        return WebRtcVad(sample_rate=sample_rate, settings=self.vad_settings)


def _block(value: object) -> Mapping[str, Any]:
    """`asr: deepgram` and `asr: {name: deepgram, ...}` alike, as a mapping."""
    if isinstance(value, str):
        return MappingProxyType({"name": value})
    if isinstance(value, Mapping):
        return value
    return MappingProxyType({})


def _name(block: Mapping[str, Any]) -> str:
    name = block.get("name")
    return str(name).strip().lower() if isinstance(name, str) and name.strip() else "local"


def _phrases(block: Mapping[str, Any]) -> tuple[str, ...]:
    raw = block.get("phrases") or ()
    if isinstance(raw, str):
        return (raw,)
    if isinstance(raw, list | tuple):
        return tuple(str(p) for p in raw if str(p).strip())
    return ()


def _language_map(block: Mapping[str, Any]) -> Mapping[str, Mapping[str, str]]:
    raw = block.get("language_map")
    if not isinstance(raw, Mapping):
        return MappingProxyType({})
    found: dict[str, Mapping[str, str]] = {}
    for language, entry in raw.items():
        if isinstance(entry, Mapping):
            found[str(language)] = MappingProxyType({str(k): str(v) for k, v in entry.items()})
        elif isinstance(entry, str):
            found[str(language)] = MappingProxyType({"model": entry, "voice": entry})
    return MappingProxyType(found)


def _number(block: Mapping[str, Any], key: str, default: float) -> float:
    value = block.get(key)
    return (
        float(value) if isinstance(value, int | float) and not isinstance(value, bool) else default
    )


class _Builder:
    def __init__(self, env: Mapping[str, str], shared_key: str = "") -> None:
        self.env = env
        self.shared_key = shared_key
        """A Deepgram key written in the other block (one account serves ASR and TTS)."""
        self.warnings: list[SpeechWarning] = []

    def warn(self, code: str, message: str) -> None:
        logger.warning("%s: %s", code, message)
        self.warnings.append(SpeechWarning(code=code, message=message))

    def deepgram(self, block: Mapping[str, Any], role: str) -> DeepgramSettings | None:
        key = block.get("api_key")
        key = key if isinstance(key, str) and key else self.shared_key
        key = key or self.env.get(DEEPGRAM_KEY_ENV, "")
        if not key:
            self.warn(
                "speech.deepgram_no_key",
                f"{role} asks for Deepgram but no key is set ({DEEPGRAM_KEY_ENV} or "
                f"`{role}.api_key`); the local engine runs instead",
            )
            return None
        base = block.get("base_url")
        base_url = base if isinstance(base, str) and base else self.env.get(DEEPGRAM_URL_ENV, "")
        model = block.get("model")
        return DeepgramSettings(
            api_key=key,
            base_url=base_url or DEFAULT_BASE_URL,
            model=model if isinstance(model, str) and model else None,
            language_map=_language_map(block),
            phrases=_phrases(block),
        )

    def unknown(self, name: str, role: str, local: str) -> None:
        kind = "a custom engine class" if "." in name else f"the {role} engine `{name}`"
        self.warn(
            "speech.engine_unknown",
            f"Keel has no {kind} (`{role}: {name}`); the local {role} ({local}) runs instead",
        )

    def asr(self, block: Mapping[str, Any]) -> Asr:
        name = _name(block)
        if name == DEEPGRAM:
            settings = self.deepgram(block, "asr")
            if settings is not None:
                return DeepgramAsr(settings)
        elif name not in LOCAL_ASR_NAMES:
            self.unknown(name, "asr", "pocketsphinx")
        return self.local_asr(block)

    def local_asr(self, block: Mapping[str, Any]) -> Asr:
        phrases = _phrases(block)
        try:
            asr = PocketsphinxAsr(PocketsphinxSettings(phrases=phrases))
        except PocketsphinxError as exc:
            self.warn("speech.asr.phrases_unusable", f"{exc}; the general model runs instead")
            return PocketsphinxAsr()
        if asr.phrase_model is not None and asr.phrase_model.unknown:
            words = ", ".join(asr.phrase_model.unknown)
            self.warn(
                "speech.asr.phrase_words_unknown",
                f"pocketsphinx's dictionary has no {words}: those words cannot be recognised",
            )
        return asr

    def tts(self, block: Mapping[str, Any]) -> Tts:
        name = _name(block)
        if name == DEEPGRAM:
            settings = self.deepgram(block, "tts")
            if settings is not None:
                return DeepgramTts(settings)
        elif name not in LOCAL_TTS_NAMES:
            self.unknown(name, "tts", "espeak-ng")
        return self.local_tts(block)

    def local_tts(self, block: Mapping[str, Any]) -> Tts:
        voice = block.get("voice")
        voices = {
            lang: e.get("voice") or e.get("model", "") for lang, e in _language_map(block).items()
        }
        speed = block.get("speed_wpm")
        settings = EspeakSettings(
            voice=voice if isinstance(voice, str) and voice else None,
            language_map=MappingProxyType({k: v for k, v in voices.items() if v}),
            speed_wpm=speed if isinstance(speed, int) and speed > 0 else DEFAULT_SPEED_WPM,
        )
        tts = EspeakTts(settings)
        if not tts.available:
            self.warn("speech.tts.espeak_missing", f"espeak-ng is not installed; {INSTALL_HINT}")
        return tts

    def vad(self, asr: Mapping[str, Any], vad: Mapping[str, Any]) -> VadSettings:
        threshold = _number(asr, "eot_threshold", DEFAULT_EOT_THRESHOLD)
        timeout = int(_number(asr, "eot_timeout_ms", DEFAULT_EOT_TIMEOUT_MS))
        defaults = VadSettings()
        settings = VadSettings(
            aggressiveness=int(_number(vad, "aggressiveness", defaults.aggressiveness)),
            start_ms=int(_number(vad, "start_ms", defaults.start_ms)),
            start_window_ms=int(_number(vad, "start_window_ms", defaults.start_window_ms)),
            silence_ms=int(_number(vad, "silence_ms", silence_for_eot(threshold, timeout))),
            energy_floor=_number(vad, "energy_floor", defaults.energy_floor),
        )
        try:
            settings.check()
        except VadError as exc:
            self.warn("speech.vad.bad_settings", f"{exc}; the default VAD settings apply")
            return VadSettings(silence_ms=silence_for_eot(threshold, timeout))
        return settings


def build_engines(
    *,
    channel: Mapping[str, object] | None = None,
    legacy_voice: Mapping[str, object] | None = None,
    env: Mapping[str, str],
    source: str | None = None,
) -> SpeechEngines:
    """The engines for a voice channel's block, else the legacy `agent.voice` block."""
    settings: Mapping[str, object] = MappingProxyType({})
    where = "default"
    enabled = True
    if channel is not None and ("asr" in channel or "tts" in channel):
        settings, where = channel, source or "channel"
    elif legacy_voice:
        settings, where = legacy_voice, "agent.voice"
        enabled = legacy_voice.get("enabled") is not False
    elif channel is not None:
        settings, where = channel, source or "channel"
    asr_block = _block(settings.get("asr"))
    tts_block = _block(settings.get("tts"))
    keys = [b.get("api_key") for b in (asr_block, tts_block)]
    builder = _Builder(env, next((k for k in keys if isinstance(k, str) and k), ""))
    asr = builder.asr(asr_block)
    tts = builder.tts(tts_block)
    vad = builder.vad(asr_block, _block(settings.get("vad")))
    return SpeechEngines(
        asr=asr,
        tts=tts,
        vad_settings=vad,
        warnings=tuple(builder.warnings),
        source=where,
        enabled=enabled,
    )


def engines_for_channel(
    channels: Mapping[str, Mapping[str, object]],
    legacy: Mapping[str, object],
    channel_name: str,
    *,
    env: Mapping[str, str],
) -> SpeechEngines:
    """`build_engines` from a project's parsed config: `IntegrationsConfig.channels` and
    `AgentConfig.legacy` (whose `voice` is the legacy block)."""
    voice = legacy.get("voice")
    return build_engines(
        channel=channels.get(channel_name),
        legacy_voice=voice if isinstance(voice, Mapping) else None,
        env=env,
        source=f"channels.{channel_name}",
    )
