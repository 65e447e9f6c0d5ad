"""keel.speech.factory: engines from integrations.yml channels and legacy agent.voice."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from keel.project.config import parse_agent_config
from keel.project.integrations import parse_integrations
from keel.source.yaml import load_yaml
from keel.speech.deepgram import DeepgramAsr, DeepgramTts
from keel.speech.espeak import EspeakTts
from keel.speech.factory import build_engines, engines_for_channel
from keel.speech.pocketsphinx_asr import PocketsphinxAsr
from keel.speech.vad import WebRtcVad

INTEGRATIONS = """\
model_groups:
  - id: main
    models: [{provider: openai, model: gpt-4.1}]
llm: {model_group: main}
channels:
  twilio_media_streams:
    server_url: example.com
    asr:
      name: deepgram
      api_key: ${DG_KEY}
      eot_threshold: 0.5
      language_map: {en-US: {model: nova-3, language: en-US}}
    tts:
      name: deepgram
      language_map: {en-US: {voice: aura-2-thalia-en}}
  browser_audio:
    asr: {name: azure}
    tts: {name: my_company.speech.FancyTts}
    vad: {silence_ms: 450, aggressiveness: 3}
"""
AGENT = """\
agent:
  id: clinic
  persona: a clinic receptionist
  voice: {enabled: true, asr: deepgram, tts: deepgram}
"""


def codes(engines: object) -> list[str]:
    return [w.code for w in engines.warnings]  # type: ignore[attr-defined]


def parsed(tmp_path: Path, env: dict[str, str]) -> tuple[object, object]:
    integrations, _ = parse_integrations(load_yaml(INTEGRATIONS, "integrations.yml")[0], env=env)
    agent, _ = parse_agent_config(load_yaml(AGENT, "agent.yml")[0])
    assert integrations is not None and agent is not None
    return integrations, agent


def test_deepgram_channel_with_a_key(tmp_path: Path) -> None:
    integrations, agent = parsed(tmp_path, {"DG_KEY": "secret"})
    engines = engines_for_channel(
        integrations.channels,
        agent.legacy,
        "twilio_media_streams",
        env={},  # type: ignore[attr-defined]
    )
    assert isinstance(engines.asr, DeepgramAsr) and isinstance(engines.tts, DeepgramTts)
    assert engines.asr.settings.api_key == "secret"
    assert engines.asr.settings.language_map["en-US"]["model"] == "nova-3"
    assert engines.tts.voice("en-US") == "aura-2-thalia-en"
    assert engines.vad_settings.silence_ms == 300  # eot_threshold 0.5
    assert engines.source == "channels.twilio_media_streams" and codes(engines) == []


def test_deepgram_without_a_key_runs_locally_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    integrations, agent = parsed(tmp_path, {})
    with caplog.at_level(logging.WARNING, logger="keel.speech"):
        engines = engines_for_channel(
            integrations.channels,
            agent.legacy,
            "twilio_media_streams",
            env={},  # type: ignore[attr-defined]
        )
    assert isinstance(engines.asr, PocketsphinxAsr) and isinstance(engines.tts, EspeakTts)
    assert codes(engines) == ["speech.deepgram_no_key", "speech.deepgram_no_key"]
    assert "DEEPGRAM_API_KEY" in caplog.text
    # The key from the environment is enough.
    engines = engines_for_channel(
        integrations.channels,  # type: ignore[attr-defined]
        agent.legacy,  # type: ignore[attr-defined]
        "twilio_media_streams",
        env={"DEEPGRAM_API_KEY": "k", "KEEL_DEEPGRAM_URL": "http://127.0.0.1:9"},
    )
    assert isinstance(engines.asr, DeepgramAsr)
    assert engines.asr.settings.base_url == "http://127.0.0.1:9"


def test_unknown_engines_and_custom_classes_fall_back_to_local(tmp_path: Path) -> None:
    integrations, agent = parsed(tmp_path, {})
    engines = engines_for_channel(
        integrations.channels,
        agent.legacy,
        "browser_audio",
        env={},  # type: ignore[attr-defined]
    )
    assert isinstance(engines.asr, PocketsphinxAsr) and isinstance(engines.tts, EspeakTts)
    assert codes(engines) == ["speech.engine_unknown", "speech.engine_unknown"]
    assert "custom engine class" in engines.warnings[1].message
    assert (engines.vad_settings.silence_ms, engines.vad_settings.aggressiveness) == (450, 3)
    vad = engines.new_vad(8000)
    assert isinstance(vad, WebRtcVad) and vad.sample_rate == 8000


def test_legacy_agent_voice_is_read_when_no_channel_says(tmp_path: Path) -> None:
    integrations, agent = parsed(tmp_path, {})
    engines = engines_for_channel(
        integrations.channels,
        agent.legacy,
        "jambonz",
        env={},  # type: ignore[attr-defined]
    )
    assert engines.source == "agent.voice" and engines.enabled
    assert codes(engines) == ["speech.deepgram_no_key", "speech.deepgram_no_key"]
    with_key = engines_for_channel(
        integrations.channels,
        agent.legacy,
        "jambonz",
        env={"DEEPGRAM_API_KEY": "k"},  # type: ignore[attr-defined]
    )
    assert isinstance(with_key.tts, DeepgramTts)


def test_nothing_configured_is_local_and_bad_values_are_warned() -> None:
    engines = build_engines(env={})
    assert isinstance(engines.asr, PocketsphinxAsr) and engines.source == "default"
    assert engines.vad_settings.silence_ms == 700 and codes(engines) == []
    off = build_engines(legacy_voice={"enabled": False}, env={})
    assert not off.enabled
    bad = build_engines(
        channel={
            "asr": {"name": "local", "phrases": ["zzqx check my order"]},
            "vad": {"frame_ms": 1, "aggressiveness": 9},
        },
        env={},
    )
    assert codes(bad) == ["speech.asr.phrase_words_unknown", "speech.vad.bad_settings"]
    assert bad.vad_settings.aggressiveness == 2
    assert isinstance(bad.asr, PocketsphinxAsr) and bad.asr.phrase_model is not None
