"""Which engines a voice channel gets (`keel.server.voice.engines.speech_for`, through
`keel.speech.factory`): the channel block, else the legacy `agent.voice`; Deepgram with
a key, else the local engines with the warning; `interruptions.enabled`."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from voice_kit import VOICE_EXAMPLE

from keel.project.definition import AgentDefinition
from keel.project.load import load_project
from keel.server.voice.engines import BROWSER_CHANNEL, TWILIO_CHANNEL, build_speech, speech_for
from keel.speech.deepgram import DeepgramAsr, DeepgramTts
from keel.speech.espeak import EspeakTts
from keel.speech.pocketsphinx_asr import PocketsphinxAsr

MANTLE_VOICE = Path(__file__).resolve().parent / "mantle_voice"


def _definition(path: Path) -> AgentDefinition:
    definition, diagnostics = load_project(path, env={})
    assert definition is not None, diagnostics
    return definition


def test_deepgram_without_a_key_runs_the_local_engines_and_warns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="keel.speech"):
        engines = build_speech(_definition(MANTLE_VOICE), TWILIO_CHANNEL, env={})
    assert isinstance(engines.asr, PocketsphinxAsr) and isinstance(engines.tts, EspeakTts)
    assert [w.code for w in engines.warnings] == ["speech.deepgram_no_key"] * 2
    assert engines.source == "channels.twilio_media_streams" and engines.barge_in
    assert "speech.deepgram_no_key: asr asks for Deepgram" in caplog.text


def test_deepgram_with_a_key_is_used() -> None:
    env = {"DEEPGRAM_API_KEY": "k", "KEEL_DEEPGRAM_URL": "http://127.0.0.1:9"}
    engines = build_speech(_definition(MANTLE_VOICE), TWILIO_CHANNEL, env=env)
    assert isinstance(engines.asr, DeepgramAsr) and isinstance(engines.tts, DeepgramTts)
    assert engines.warnings == ()


def test_a_channel_without_a_block_reads_the_legacy_agent_voice() -> None:
    # The fixture declares only twilio_media_streams: the browser channel falls back to
    # agent.voice (deepgram, no key here).
    engines = build_speech(_definition(MANTLE_VOICE), BROWSER_CHANNEL, env={})
    assert engines.source == "agent.voice"
    assert [w.code for w in engines.warnings] == ["speech.deepgram_no_key"] * 2


def test_the_example_runs_local_engines_shared_by_its_calls() -> None:
    definition = _definition(VOICE_EXAMPLE)
    first = speech_for(definition, TWILIO_CHANNEL, env={})
    assert isinstance(first.asr, PocketsphinxAsr) and first.warnings == ()
    assert speech_for(definition, TWILIO_CHANNEL, env={}) is first
    vad = first.new_vad(8000)
    assert vad.sample_rate == 8000 and first.new_vad(8000) is not vad
