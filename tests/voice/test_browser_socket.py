"""The browser voice socket /v1/voice/browser over a real `keel run` (its JSON and binary
protocol, keel/server/voice/browser.py): a refused key, a bad message, and a call that
outlives the HTTP read timeout (a WebSocket is not a slow HTTP client)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import websockets
from speech_kit import say
from voice_kit import VOICE_EXAMPLE, Served, serve

from keel.speech.audio import silence

RATE = 16000
FRAME = 640
"""20 ms of 16 kHz PCM16."""
ORDER_SCRIPT = "- tool_calls: [{name: activate, arguments: {target_id: check_order}}]\n"


@pytest.fixture
def served(espeak: str, tmp_path: Path) -> Iterator[Served]:
    # A one-second read timeout: the call below streams for longer than that.
    yield from serve(VOICE_EXAMPLE, ORDER_SCRIPT, tmp_path, env={"KEEL_READ_TIMEOUT": "1"})


async def _json(socket: Any) -> dict[str, Any]:
    while True:
        message = await asyncio.wait_for(socket.recv(), 60)
        if isinstance(message, str):
            decoded: dict[str, Any] = json.loads(message)
            return decoded


async def _send_pcm(socket: Any, pcm: bytes) -> None:
    """PCM16 at 16 kHz in 20 ms binary messages, paced at real time."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    for index, start in enumerate(range(0, len(pcm), FRAME)):
        await socket.send(pcm[start : start + FRAME])
        delay = started + (index + 1) * 0.02 - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)


async def test_a_refused_key_is_an_error_with_its_status(served: Served) -> None:
    async with websockets.connect(f"{served.ws_url}/v1/voice/browser") as socket:
        await socket.send(json.dumps({"event": "start", "key": "wrong"}))
        error = await _json(socket)
        assert error["event"] == "error" and error["status"] == 401
        assert str(error["code"]).startswith("auth.")
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await socket.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008


async def test_audio_before_start_is_refused(served: Served) -> None:
    async with websockets.connect(f"{served.ws_url}/v1/voice/browser") as socket:
        await socket.send(b"\x00\x00" * 160)
        error = await _json(socket)
    assert error == {
        "event": "error",
        "code": "voice.bad_message",
        "message": "audio before `start`",
        "status": 400,
    }


async def test_a_call_outlives_the_http_read_timeout_and_is_answered(served: Served) -> None:
    url = f"{served.ws_url}/v1/voice/browser"
    async with websockets.connect(url, max_size=None) as socket:
        await socket.send(json.dumps({"event": "start", "key": served.key}))
        started = await _json(socket)
        assert started["event"] == "started"
        # Silence, then the request, in real time: well past the 1 s read timeout.
        await _send_pcm(socket, silence(1500, RATE))
        await _send_pcm(socket, await say("I want to check my order status.", RATE))
        await _send_pcm(socket, silence(1200, RATE))
        said: list[str] = []
        while not any("shipped" in text for text in said):
            message = await _json(socket)
            if message["event"] == "transcript" and message["role"] == "agent":
                said.append(message["text"])
            elif message["event"] == "mark":
                await socket.send(json.dumps({"event": "mark", "name": message["name"]}))
        await socket.send(json.dumps({"event": "stop"}))
    assert said[0].startswith("Hello, this is the Juniper order line")


def test_the_voice_page_and_its_scripts_are_served_with_the_ui_policy(served: Served) -> None:
    import httpx

    page = httpx.get(f"{served.base_url}/ui/voice", timeout=30)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert page.headers["content-security-policy"] == "default-src 'self'; frame-ancestors 'none'"
    for name in ("voice.js", "voice-worklet.js"):
        assert f"/ui/static/{name}" in page.text or name == "voice-worklet.js"
        script = httpx.get(f"{served.base_url}/ui/static/{name}", timeout=30)
        assert script.status_code == 200
        assert script.headers["content-type"].startswith("text/javascript")
