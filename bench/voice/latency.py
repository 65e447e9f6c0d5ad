"""Voice latency over the phone channel: end of speech to first agent audio, and barge-in.

    .venv/bin/python bench/voice/latency.py [--turns 10] [--barge-ins 5] [--write bench/RESULTS.md]

A real `keel run examples/voice --model scripted:...` (a subprocess; the scripted model
answers at once, so the model costs nothing) is called over Twilio's Media Streams
protocol by a client here that sends utterances synthesised by the local TTS (espeak-ng,
8 kHz μ-law, 20 ms `media` messages) paced at real time, as Twilio does. Measured:

- **end-of-speech decision -> first agent audio frame sent**: the server's own figure per
  turn (`VoiceCall.timings`, logged on `keel.voice`): from the moment the call decided the
  caller had finished (the VAD's trailing silence seen and the final transcript in) to the
  first `media` frame of the answer written to the socket;
- **client: last voiced frame sent -> first answer frame received**: what a caller waits,
  which also holds the VAD's end-of-utterance silence (`vad.silence_ms`, 700 ms by default)
  and the ASR's final;
- **barge-in: speech start detected -> `clear` sent** (the server's `barge_in.reaction_ms`)
  and **client: first voiced frame of the interruption sent -> `clear` received** (which
  also holds the VAD's speech-start window, 60 of 100 ms voiced).

The engines' real-time factors are measured in the same run (bench/voice/engines.py).
Goal (issue 20): p50 at most 250 ms to the first audio and at most 150 ms to `clear`.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import platform
import re
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import websockets

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import engines as engine_bench
from results_md import write_section

from keel.speech.audio import pcm16_to_ulaw, silence
from keel.speech.espeak import EspeakSettings, EspeakTts

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "voice"
KEY = "bench-voice-secret"
RATE = 8000
FRAME = 160
"""20 ms of 8 kHz μ-law."""
ORDER = "I want to check my order status."
STORY = "Tell me about your shop."
CHECK = "- tool_calls: [{name: activate, arguments: {target_id: check_order}}]\n"
TELL = "- tool_calls: [{name: activate, arguments: {target_id: store_story}}]\n"
FIRST_AUDIO = re.compile(r"voice turn: first audio ([0-9.]+) ms")
VOICED_RMS = 300.0


def clock() -> float:
    return time.perf_counter()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _onset_ms(pcm: bytes) -> int:
    """Where the first voiced 20 ms frame of `pcm` (PCM16 8 kHz) starts."""
    import numpy as np

    samples = np.frombuffer(pcm, dtype="<i2").astype(np.float64)
    step = RATE // 50
    for index in range(0, len(samples) - step, step):
        if float(np.sqrt(np.mean(samples[index : index + step] ** 2))) > VOICED_RMS:
            return index * 1000 // RATE
    return 0


def _last_voiced_ms(pcm: bytes) -> int:
    import numpy as np

    samples = np.frombuffer(pcm, dtype="<i2").astype(np.float64)
    step = RATE // 50
    last = 0
    for index in range(0, len(samples) - step, step):
        if float(np.sqrt(np.mean(samples[index : index + step] ** 2))) > VOICED_RMS:
            last = index + step
    return last * 1000 // RATE


class Caller:
    """Twilio's side of one call (see tests/voice/twilio_client.py for the full stand-in)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.sid = "CABENCH0001"
        self.stream = "MZBENCH0001"
        self.media_at: list[float] = []
        self.clear_at: list[float] = []
        self.marks: list[str] = []
        self.hold_marks = False
        self.held: list[str] = []
        self.socket: Any = None
        self.reader: asyncio.Task[None] | None = None
        self.changed = asyncio.Event()

    async def __aenter__(self) -> Caller:
        self.socket = await websockets.connect(self.url, max_size=None)
        await self.send({"event": "connected", "protocol": "Call", "version": "1.0.0"})
        start = {
            "streamSid": self.stream,
            "callSid": self.sid,
            "tracks": ["inbound"],
            "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": RATE, "channels": 1},
            "customParameters": {"key": KEY},
        }
        await self.send({"event": "start", "start": start, "streamSid": self.stream})
        self.reader = asyncio.ensure_future(self.read())
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.send({"event": "stop", "streamSid": self.stream, "stop": {}})
        if self.reader is not None:
            await asyncio.wait_for(self.reader, 30)
        await self.socket.close()

    async def send(self, message: dict[str, Any]) -> None:
        await self.socket.send(json.dumps(message))

    async def read(self) -> None:
        try:
            async for raw in self.socket:
                message = json.loads(raw)
                event = message["event"]
                if event == "media":
                    self.media_at.append(clock())
                elif event == "mark":
                    name = message["mark"]["name"]
                    self.marks.append(name)
                    if self.hold_marks:
                        self.held.append(name)
                    else:
                        await self.played(name)
                elif event == "clear":
                    self.clear_at.append(clock())
                    held, self.held = self.held, []
                    for name in held:
                        await self.played(name)
                self.changed.set()
        except websockets.ConnectionClosed:
            pass

    async def played(self, name: str) -> None:
        await self.send({"event": "mark", "streamSid": self.stream, "mark": {"name": name}})

    async def audio(self, pcm: bytes) -> float:
        """PCM16 8 kHz sent as μ-law media at real time; when its first frame was sent."""
        ulaw = pcm16_to_ulaw(pcm)
        started = clock()
        for index, at in enumerate(range(0, len(ulaw), FRAME)):
            chunk = ulaw[at : at + FRAME].ljust(FRAME, b"\xff")
            payload = base64.b64encode(chunk).decode("ascii")
            await self.send(
                {"event": "media", "streamSid": self.stream, "media": {"payload": payload}}
            )
            delay = started + (index + 1) * 0.02 - clock()
            if delay > 0:
                await asyncio.sleep(delay)
        return started

    async def silence_until(self, done: Any, limit_ms: int = 30_000) -> None:
        """Real-time silence, 20 ms at a time, until `done()` (or the limit)."""
        frame = silence(20, RATE)
        for _ in range(limit_ms // 20):
            if done():
                return
            await self.audio(frame)
        raise TimeoutError("the server did not answer in time")


async def _say(text: str) -> bytes:
    caller = EspeakTts(EspeakSettings(voice="en-us", speed_wpm=140))
    out = bytearray()
    async for chunk in caller.synthesize(text, sample_rate=RATE):
        out += chunk
    return bytes(out)


async def _call(url: str, turns: int, barge_ins: int) -> dict[str, list[float]]:
    order, story = await _say(ORDER), await _say(STORY)
    order_end = _last_voiced_ms(order)
    order_onset = _onset_ms(order)
    waits: list[float] = []
    clears: list[float] = []
    async with Caller(url) as caller:
        await caller.silence_until(lambda: len(caller.marks) >= 1)  # the greeting
        await caller.audio(silence(300, RATE))
        for _ in range(turns):
            marks, frames = len(caller.marks), len(caller.media_at)
            started = await caller.audio(order)
            await caller.silence_until(lambda n=frames: len(caller.media_at) > n)
            waits.append((caller.media_at[frames] - (started + order_end / 1000)) * 1000)
            await caller.silence_until(lambda n=marks: len(caller.marks) >= n + 2)
            await caller.audio(silence(300, RATE))
        for _ in range(barge_ins):
            marks, frames = len(caller.marks), len(caller.media_at)
            caller.hold_marks = True  # the story is being played: its marks are not echoed
            await caller.audio(story)
            await caller.silence_until(lambda n=marks: len(caller.marks) >= n + 2)
            await caller.audio(silence(500, RATE))
            cleared = len(caller.clear_at)
            started = await caller.audio(order)
            caller.hold_marks = False
            await caller.silence_until(lambda n=cleared: len(caller.clear_at) > n)
            clears.append((caller.clear_at[cleared] - (started + order_onset / 1000)) * 1000)
            marks = len(caller.marks)
            await caller.silence_until(lambda n=marks: len(caller.marks) >= n + 2)
            await caller.audio(silence(300, RATE))
    return {"client_first_audio_ms": waits, "client_clear_ms": clears}


def _wait_ready(process: subprocess.Popen[bytes], base: str) -> None:
    for _ in range(400):
        if process.poll() is not None:
            raise SystemExit(f"keel run exited with {process.returncode}")
        try:
            if httpx.get(f"{base}/health", timeout=1.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    raise SystemExit("keel run did not become ready")


def run(turns: int, barge_ins: int) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory(prefix="keel-voice-bench-") as folder:
        tmp = Path(folder)
        script = tmp / "script.yml"
        script.write_text(CHECK * turns + (TELL + CHECK) * barge_ins, encoding="utf-8")
        db = tmp / "voice.db"
        log = tmp / "server.log"
        port = _free_port()
        env = {
            **os.environ,
            "KEEL_API_KEYS": f"bench:chat:{KEY}",
            "KEEL_DATABASE_URL": f"sqlite:///{db}",
            "KEEL_RATE_LIMIT": "off",
            "DEEPGRAM_API_KEY": "",
        }
        command = [sys.executable, "-m", "keel", "run", str(EXAMPLE), "--model"]
        command += [f"scripted:{script}", "--port", str(port), "--log-level", "info"]
        with log.open("w") as out:
            process = subprocess.Popen(command, cwd=tmp, env=env, stdout=out, stderr=out)
        try:
            base = f"http://127.0.0.1:{port}"
            _wait_ready(process, base)
            url = f"ws://127.0.0.1:{port}/v1/voice/twilio"
            found = asyncio.run(_call(url, turns, barge_ins))
        finally:
            process.terminate()
            process.wait(timeout=20)
        text = log.read_text(encoding="utf-8")
        server = [float(m) for m in FIRST_AUDIO.findall(text)]
        with sqlite3.connect(db) as connection:
            rows = connection.execute("SELECT data FROM events ORDER BY seq").fetchall()
        events = [json.loads(row[0]) for row in rows]
    found["server_first_audio_ms"] = server
    found["server_clear_ms"] = [float(e["reaction_ms"]) for e in events if e["type"] == "barge_in"]
    found["barge_in_cancelled"] = [
        float(bool(e["turn_cancelled"])) for e in events if e["type"] == "barge_in"
    ]
    return found


def _p(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def report(found: dict[str, list[float]], rtf: str, args: argparse.Namespace) -> str:
    rows = [
        ("end-of-speech decision -> first audio frame sent (server)", "server_first_audio_ms"),
        ("last voiced frame sent -> first audio frame received (client)", "client_first_audio_ms"),
        ("speech start detected -> clear sent (server, barge_in.reaction_ms)", "server_clear_ms"),
        ("first voiced frame sent -> clear received (client)", "client_clear_ms"),
    ]
    goals = {"server_first_audio_ms": 250, "server_clear_ms": 150}
    lines = [
        f"Measured on {time.strftime('%Y-%m-%d')}: {os.cpu_count()} CPU(s); Python "
        f"{platform.python_version()} on {platform.system()} {platform.release()}; "
        f"{args.turns} request turns and {args.barge_ins} barge-ins in one call to `keel run "
        "examples/voice` (scripted model, local engines: pocketsphinx with the example's "
        "phrase model at 8 kHz, espeak-ng, WebRTC VAD with 700 ms end-of-utterance silence).",
        "",
        "```sh",
        f"python bench/voice/latency.py --turns {args.turns} --barge-ins {args.barge_ins} "
        "--write bench/RESULTS.md",
        "```",
        "",
        "| measure | n | p50 ms | p95 ms | goal (p50) |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    for label, key in rows:
        values = found.get(key, [])
        p50, p95, goal = _p(values, 0.5), _p(values, 0.95), goals.get(key)
        verdict = "" if goal is None else f"<= {goal} ms: {'met' if p50 <= goal else 'MISSED'}"
        lines.append(f"| {label} | {len(values)} | {p50:.1f} | {p95:.1f} | {verdict} |")
    cancelled = found.get("barge_in_cancelled", [])
    lines += [
        "",
        "The client's figures include what the server's exclude: the VAD's end-of-utterance "
        "silence (700 ms, `vad.silence_ms` / `asr.eot_threshold`) before the decision, and "
        "the VAD's speech-start window (60 ms voiced) before a barge-in is detected. "
        f"Barge-ins that cancelled a running turn: {int(sum(cancelled))} of {len(cancelled)} "
        "(the story's turn had ended; its audio was cut). The server's first-audio row counts "
        "every answered turn, the ones after the barge-ins too.",
        "",
        "Engines in the same run (bench/voice/engines.py, one repeat):",
        "",
        rtf,
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--barge-ins", type=int, default=5)
    parser.add_argument("--write", type=Path, help="rewrite the 'Voice' section here")
    args = parser.parse_args()
    found = run(args.turns, args.barge_ins)
    table = asyncio.run(engine_bench.main(1))
    rtf = "\n".join(line for line in table.splitlines() if line.startswith("|"))
    body = report(found, rtf, args)
    print(body)
    if args.write:
        write_section(args.write, "Voice", body)


if __name__ == "__main__":
    main()
