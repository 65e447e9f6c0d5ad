"""The browser voice page (/ui/voice) in Debian's Chromium against a real `keel run`.

Chromium's fake microphone plays a WAV file made here by espeak-ng (16-bit PCM, looped by
Chromium): the page streams it as 16 kHz PCM16 over /v1/voice/browser, the server
recognises it with the local ASR, the agent answers, and the page shows both sides and
plays the answer. The barge-in test speaks over a long answer: the page stops its audio
and the conversation's log has a `barge_in`. Every wait is a DOM condition (Playwright's
`expect`) with a hang guard, never a sleep; console errors and failed requests are
collected and must stay empty.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from speech_kit import say
from voice_kit import VOICE_EXAMPLE, Served, serve

from keel.speech.audio import silence, write_wav

playwright_sync = pytest.importorskip("playwright.sync_api")
expect = playwright_sync.expect

_UI_CONFTEST = Path(__file__).resolve().parents[1] / "ui" / "conftest.py"
_spec = importlib.util.spec_from_file_location("ui_conftest_for_voice", _UI_CONFTEST)
assert _spec is not None and _spec.loader is not None
ui_conftest = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = ui_conftest
_spec.loader.exec_module(ui_conftest)

RATE = 16000
ANSWER_WAIT_MS = 60_000
"""Hang guard for the answer (recognition and synthesis run on a shared 2-core machine)."""
GREETING_MS = 9000
"""Silence at the start of the caller's audio: the greeting is heard out (about 5 s)."""
ORDER_SCRIPT = "- tool_calls: [{name: activate, arguments: {target_id: check_order}}]\n"
STORY_SCRIPT = (
    "- tool_calls: [{name: activate, arguments: {target_id: store_story}}]\n"
    "- tool_calls: [{name: activate, arguments: {target_id: check_order}}]\n"
)


def _wav(tmp_path: Path, name: str, parts: list[tuple[str, int]]) -> Path:
    """A 16 kHz 16-bit WAV: silence while the greeting plays, then each (phrase, silence
    after it in ms)."""
    pcm = bytearray(silence(GREETING_MS, RATE))
    for text, pause_ms in parts:
        pcm += asyncio.run(say(text, RATE))
        pcm += silence(pause_ms, RATE)
    path = tmp_path / name
    write_wav(path, bytes(pcm), RATE)
    return path


@pytest.fixture(scope="module")
def chromium() -> str:
    """Debian's Chromium (installed by tests/ui's fixture logic when missing, as root)."""
    found: str | None = ui_conftest.find_chromium()
    if found is None and hasattr(os, "geteuid") and os.geteuid() == 0:
        ui_conftest.install_chromium()
        found = ui_conftest.find_chromium()
    if found is None:
        if ui_conftest.REQUIRE_UI:
            pytest.fail("Chromium is not installed and could not be installed")
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    return found


def _page(chromium: str, wav: Path) -> Iterator[tuple[Any, list[str]]]:
    """A page of headless Chromium whose microphone plays `wav`; its collected errors."""
    args = [
        "--use-fake-ui-for-media-stream",
        "--use-fake-device-for-media-stream",
        f"--use-file-for-fake-audio-capture={wav}",
        "--autoplay-policy=no-user-gesture-required",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--no-sandbox")
    with playwright_sync.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True, args=args)
        try:
            context = browser.new_context(permissions=["microphone"])
            page = context.new_page()
            page.set_default_timeout(ANSWER_WAIT_MS)
            expect.set_options(timeout=ANSWER_WAIT_MS)
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(f"pageerror: {error}"))
            page.on(
                "console",
                lambda m: errors.append(f"console: {m.text}") if m.type == "error" else None,
            )
            page.on(
                "response",
                lambda r: (
                    errors.append(f"response: {r.status} {r.url}") if r.status >= 400 else None
                ),
            )
            page.on("requestfailed", lambda r: errors.append(f"requestfailed: {r.url}"))
            yield page, errors
        finally:
            browser.close()


def _events(served: Served, conversation_id: str) -> list[dict[str, Any]]:
    import httpx

    response = httpx.get(
        f"{served.base_url}/v1/conversations/{conversation_id}/events",
        headers={"Authorization": f"Bearer {served.key}"},
        timeout=30,
    )
    response.raise_for_status()
    return [item["event"] for item in response.json()["events"]]


def _start(page: Any, served: Served) -> str:
    page.goto(f"{served.base_url}/ui/voice#key={served.key}")
    expect(page).to_have_url(re.compile(r"/ui/voice$"))  # the #key= fragment is gone
    expect(page.locator("#key-status")).to_have_text("A key is saved for this tab.")
    page.get_by_role("button", name="Start call").click()
    expect(page.locator("#call-state")).to_have_text("In call")
    return str(page.get_by_label("Conversation id").input_value())


@pytest.fixture
def order_call(
    espeak: str, chromium: str, tmp_path: Path
) -> Iterator[tuple[Served, Any, list[str]]]:
    wav = _wav(tmp_path, "order.wav", [("I want to check my order status.", 20_000)])
    for served in serve(VOICE_EXAMPLE, ORDER_SCRIPT, tmp_path):
        for page, errors in _page(chromium, wav):
            yield served, page, errors


@pytest.fixture
def story_call(
    espeak: str, chromium: str, tmp_path: Path
) -> Iterator[tuple[Served, Any, list[str]]]:
    wav = _wav(
        tmp_path,
        "story.wav",
        [("Tell me about your shop.", 6_000), ("I want to check my order status.", 30_000)],
    )
    for served in serve(VOICE_EXAMPLE, STORY_SCRIPT, tmp_path):
        for page, errors in _page(chromium, wav):
            yield served, page, errors


def test_the_voice_page_hears_the_caller_and_speaks_the_answer(
    order_call: tuple[Served, Any, list[str]],
) -> None:
    served, page, errors = order_call
    conversation_id = _start(page, served)
    log = page.get_by_role("log", name="Transcript")
    agent = log.locator(".message-bot")
    expect(agent.first).to_contain_text("Juniper order line")  # the greeting, spoken
    expect(log.locator(".message-user:not(.preview)").first).to_contain_text("order status")
    expect(log).to_contain_text("Your order has shipped and it will arrive tomorrow")
    audio = page.locator("#audio-state")
    expect(audio).to_have_attribute("data-playing", "true")
    assert int(audio.get_attribute("data-chunks") or 0) > 0
    assert int(page.locator("#mic-state").get_attribute("data-sent") or 0) > 0
    page.get_by_role("button", name="Hang up").click()
    expect(page.locator("#call-state")).to_have_text("Call ended")
    said = [e["text"] for e in _events(served, conversation_id) if e["type"] == "user_message"]
    assert said[0] == "/session_start" and "order status" in said[1], said
    assert errors == []


def test_speaking_over_a_long_answer_stops_its_audio(
    story_call: tuple[Served, Any, list[str]],
) -> None:
    served, page, errors = story_call
    conversation_id = _start(page, served)
    log = page.get_by_role("log", name="Transcript")
    audio = page.locator("#audio-state")
    expect(log).to_contain_text("Juniper Goods started in a small garden shed")
    expect(audio).to_have_attribute("data-playing", "true")
    # The caller speaks over the story: the server says clear, the page stops at once.
    expect(audio).to_have_attribute("data-clears", "1")
    assert int(audio.get_attribute("data-cut") or 0) > 0  # what was playing or queued
    expect(log).to_contain_text("You interrupted the agent.")
    expect(log).to_contain_text("Your order has shipped and it will arrive tomorrow")
    events = _events(served, conversation_id)
    barge = [e for e in events if e["type"] == "barge_in"]
    assert len(barge) == 1, [e["type"] for e in events]
    assert str(barge[0]["cut_text"]).startswith("Juniper Goods started in a small garden shed")
    page.get_by_role("button", name="Hang up").click()
    assert errors == []
