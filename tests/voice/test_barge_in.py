"""Barge-in over the phone channel (seed 002): caller speech while the agent answers stops
playback at once (`clear`), cancels the answer's turn when it still runs (here at a tool's
await: no call record; the step runs again next turn), is recorded as `barge_in` with what
was cut, and the new utterance is answered. Also: a Mantle-style voice project naming
Deepgram with no key runs in voice mode on the local engines, its filler spoken while the
slow tool runs."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from speech_kit import hear, say, words
from twilio_client import RATE, FakeTwilio
from voice_kit import VOICE_EXAMPLE, Served, serve

MANTLE_VOICE = Path(__file__).resolve().parent / "mantle_voice"
STORY_THEN_ORDER = "- tool_calls: [{name: activate, arguments: {target_id: store_story}}]\n" + (
    "- tool_calls: [{name: activate, arguments: {target_id: check_order}}]\n"
)
FILLER_AND_SLOW_TOOL = (
    "- text: One moment while I look that up.\n"
    "  tool_calls: [{name: activate, arguments: {target_id: find_booking}}]\n"
)


def _events(db: Path, call_sid: str) -> list[dict[str, object]]:
    with sqlite3.connect(db) as connection:
        rows = connection.execute(
            "SELECT data FROM events WHERE conversation_id LIKE ? ORDER BY seq", (f"%{call_sid}",)
        ).fetchall()
    return [json.loads(row[0]) for row in rows]


@pytest.fixture
def story_server(espeak: str, tmp_path: Path) -> Iterator[Served]:
    yield from serve(VOICE_EXAMPLE, STORY_THEN_ORDER, tmp_path)


@pytest.fixture
def mantle_server(espeak: str, tmp_path: Path) -> Iterator[Served]:
    yield from serve(MANTLE_VOICE, FILLER_AND_SLOW_TOOL, tmp_path)


async def _greeted(twilio: FakeTwilio) -> None:
    await twilio.send_silence(400)
    await twilio.wait_for(lambda: len(twilio.got.marks) >= 1)
    await twilio.release_marks()
    twilio.take_audio()


async def test_speech_during_a_long_answer_clears_it_and_is_answered(story_server: Served) -> None:
    url = f"{story_server.ws_url}/v1/voice/twilio"
    async with FakeTwilio(url, call_sid="CA0100", key=story_server.key, echo_marks=False) as twilio:
        await _greeted(twilio)
        await twilio.send_pcm(await say("Tell me about your shop.", RATE))
        await twilio.send_silence(1200)
        # The long story and the question after it are sent (and, as Twilio holds them,
        # being played): the caller speaks.
        await twilio.wait_for(lambda: len(twilio.got.marks) >= 3)
        assert not twilio.got.clears
        await twilio.send_pcm(await say("I want to check my order status.", RATE))
        await twilio.wait_for(lambda: len(twilio.got.clears) == 1)
        twilio.take_audio()
        await twilio.send_silence(1500)
        await twilio.wait_for(lambda: len(twilio.got.marks) >= 5)  # the answer, the question
        answer = await hear(twilio.take_audio(), RATE)
        assert len(words(answer) & {"order", "shipped", "arrive", "tomorrow", "news"}) >= 2, answer
        await twilio.stop()
        await twilio.closed_by_server.wait()
    events = _events(story_server.db_path, "CA0100")
    barge = [e for e in events if e["type"] == "barge_in"]
    assert len(barge) == 1
    assert str(barge[0]["cut_text"]).startswith("Juniper Goods started in a small garden shed")
    assert str(barge[0]["cut_text"]).endswith("Is there something else I can do for you?")
    assert barge[0]["cut_messages"] == 2 and barge[0]["turn_cancelled"] is False
    kinds = [e["type"] for e in events]
    # Recorded between the story's turn and the next user message.
    assert kinds.index("barge_in") < max(i for i, k in enumerate(kinds) if k == "user_message")


async def test_a_mantle_voice_project_says_its_filler_and_a_barge_in_cancels_the_slow_tool(
    mantle_server: Served,
) -> None:
    url = f"{mantle_server.ws_url}/v1/voice/twilio"
    question, interruption = (
        await say("Where is my booking?", RATE),
        await say("Thank you, goodbye.", RATE),
    )
    async with FakeTwilio(url, call_sid="CA0200", key=mantle_server.key) as twilio:
        await _greeted(twilio)
        await twilio.send_pcm(question)
        await twilio.send_silence(1200)
        await twilio.wait_for(lambda: len(twilio.got.marks) >= 2)  # the filler was played
        filler_audio = twilio.take_audio()
        await twilio.send_pcm(interruption)
        await twilio.wait_for(lambda: len(twilio.got.clears) == 1)
        await twilio.send_silence(1500)
        await twilio.wait_for(lambda: len(twilio.got.marks) >= 4)  # the answer, the question
        await twilio.stop()
        await twilio.closed_by_server.wait()
    assert words(await hear(filler_audio, RATE))  # the filler was spoken while the tool hung
    # Deepgram was asked for with no key: the local engines ran, and the server said so.
    log = mantle_server.log_path.read_text(encoding="utf-8")
    assert "speech.deepgram_no_key: asr asks for Deepgram" in log, log
    assert "speech.deepgram_no_key: tts asks for Deepgram" in log, log
    events = _events(mantle_server.db_path, "CA0200")
    metadata = next(e for e in events if e.get("key") == "session_started_metadata")
    assert metadata["value"]["channel"] == "voice"  # type: ignore[index]
    request = next(e for e in events if e["type"] == "model_called")
    assert "FIXTURE VOICE RULES" in json.dumps(request)
    filler_message = next(
        e for e in events if e["type"] == "bot_message" and e["response_source"] == "filler"
    )
    assert filler_message["text"] == "One moment while I look that up."
    ended = [e for e in events if e["type"] == "turn_ended"]
    assert "cancelled" in [e["stop_reason"] for e in ended]
    barge = next(e for e in events if e["type"] == "barge_in")
    # The filler had been played (its mark echoed): nothing unheard was cut, the running
    # turn was; the barge-in follows the cancelled turn's end.
    assert barge["turn_cancelled"] is True and barge["cut_text"] == ""
    cancelled = next(e for e in ended if e["stop_reason"] == "cancelled")
    assert barge["turn_id"] == cancelled["turn_id"]
    assert events.index(barge) > events.index(cancelled)
    # Memory the tool wrote before its await was cut is kept (written before the cancelled
    # turn ended), and written again by the step's second run.
    key = "find_booking.lookup_started"
    started = [e for e in events if e["type"] == "memory_set" and e["key"] == key]
    assert [e["value"] for e in started] == ["call 1", "call 2"]
    assert events.index(started[0]) < events.index(cancelled)
    runs = [e for e in events if e["type"] == "tool_executed" and e["tool_name"] == "slow_lookup"]
    assert len(runs) == 1  # the cancelled await left no record; the step ran again next turn
    said = [e["text"] for e in events if e["type"] == "bot_message"]
    assert said[-2:] == [
        "Your booking is on Monday morning.",
        "Is there something else I can do for you?",
    ]
