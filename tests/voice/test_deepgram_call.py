"""A voice project naming Deepgram, with a key, runs on Deepgram's engines: a real `keel
run` reaches the loopback Deepgram server (`keel.testing.deepgram_server`, through
`KEEL_DEEPGRAM_URL`) for live recognition and for speech. Its scripted transcripts also
show that a final that comes late, after the end-of-speech decision and after the answer
to the first part has started, is not lost: it is the next user message, answered."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from speech_kit import say
from twilio_client import RATE, FakeTwilio
from voice_kit import serve

from keel.speech.audio import duration_ms
from keel.testing.deepgram_server import DeepgramServer, Utterance

MANTLE_VOICE = Path(__file__).resolve().parent / "mantle_voice"
DG_KEY = "dg-loopback-key"
TWO_ANSWERS = "- text: Let me check that for you.\n- text: Your booking is on Monday.\n"
GREETING_SILENCE_MS = 400


def _events(db: Path) -> list[dict[str, object]]:
    with sqlite3.connect(db) as connection:
        rows = connection.execute("SELECT data FROM events ORDER BY seq").fetchall()
    return [json.loads(row[0]) for row in rows]


async def test_deepgram_with_a_key_is_used_and_a_late_final_is_answered(
    espeak: str, tmp_path: Path
) -> None:
    speech = await say("I want to check my order status.", RATE)
    spoken_ms = duration_ms(speech, RATE)
    speech_end = GREETING_SILENCE_MS + spoken_ms
    script = [
        # A first final within the speech, then one 1.2 s after it ended: later than the
        # VAD's end of speech (700 ms of silence), so the first part is answered first.
        Utterance(text="i want to check", start_ms=GREETING_SILENCE_MS, end_ms=speech_end - 600),
        Utterance(text="my order status", start_ms=speech_end - 600, end_ms=speech_end + 1200),
    ]
    async with DeepgramServer(key=DG_KEY, script=script) as deepgram:
        env = {"DEEPGRAM_API_KEY": DG_KEY, "KEEL_DEEPGRAM_URL": deepgram.base_url}
        for served in serve(MANTLE_VOICE, TWO_ANSWERS, tmp_path, env=env):
            url = f"{served.ws_url}/v1/voice/twilio"
            async with FakeTwilio(url, call_sid="CA0300", key=served.key) as twilio:
                await twilio.send_silence(GREETING_SILENCE_MS, realtime=True)
                await twilio.send_pcm(speech, realtime=True)
                await twilio.send_silence(2500, realtime=True)
                # The greeting, then one answer per user message.
                await twilio.wait_for(lambda: len(twilio.got.marks) >= 3)
                await twilio.stop()
                await twilio.closed_by_server.wait()
            log = served.log_path.read_text(encoding="utf-8")
            events = _events(served.db_path)
    assert "speech.deepgram_no_key" not in log, log
    # Deepgram heard the call (our key, μ-law at 8 kHz as PCM16 linear16) and spoke it.
    assert deepgram.listens and deepgram.listens[0].headers["authorization"] == f"Token {DG_KEY}"
    assert deepgram.listens[0].query["sample_rate"] == str(RATE)
    spoken = [call.body["text"] for call in deepgram.speaks]
    assert spoken[:2] == ["Hello, this is the clinic.", "How can I help?"]  # by sentence
    said = [e["text"] for e in events if e["type"] == "user_message"]
    # Nothing said was dropped: the late final is the next user message.
    answers = [e["text"] for e in events if e["type"] == "bot_message"]
    assert "Let me check that for you." in answers and "Let me check that for you." in spoken
    assert said[1] == "i want to check" and said[2] == "my order status", said
    assert "Your booking is on Monday." in answers
