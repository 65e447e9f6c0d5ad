"""The chat page's Cancel button on a turn held open by a tool, against a real `keel run`.

The agent `tests/ui/hold_agent` is copied into the test's temporary folder with a named pipe
(`os.mkfifo`) beside it; its one tool, `wait_for_release`, waits until a line is written to
that pipe. "/hold" opens its skill and the model calls the tool, so the turn stays open,
with no timing involved, until the test writes to the pipe, and the test writes only
after Cancel (and only if the tool is still waiting, which would fail the test). Waits are
DOM conditions only.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
from pathlib import Path

import pytest
from conftest import ServedUi
from playwright.sync_api import Page, expect
from ui_kit import logged_events

HOLD_AGENT = Path(__file__).resolve().parent / "hold_agent"
HOLD_SCRIPT = """\
- tool_calls: [{name: wait_for_release, arguments: {}}]
- Still here.
"""
"""The model calls the holding tool; after the cancel, it answers the next message."""


@pytest.fixture
def ui_project(tmp_path: Path) -> Path:
    project = tmp_path / "hold_agent"
    shutil.copytree(HOLD_AGENT, project, ignore=shutil.ignore_patterns("__pycache__"))
    os.mkfifo(project / "hold.fifo")
    return project


@pytest.fixture
def ui_script() -> str:
    return HOLD_SCRIPT


def _release_if_held(pipe: Path) -> bool:
    """Write a line to the pipe if the tool still reads it (the turn then ends); whether it did.

    The open is non-blocking: with no reader left it fails with ENXIO at once.
    """
    try:
        fd = os.open(pipe, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            return False
        raise
    try:
        os.write(fd, b"released\n")
    finally:
        os.close(fd)
    return True


def test_cancel_stops_the_running_turn_and_the_log_records_it_cancelled(
    served_ui: ServedUi, ui_project: Path, page: Page, page_errors: list[str]
) -> None:
    page.goto(served_ui.url("/ui/chat", key=served_ui.chat_key))
    state = page.locator("#conversation-state")
    expect(state).to_have_text("State: idle")  # the session started on open
    conversation_id = page.get_by_label("Conversation id").input_value()
    send = page.get_by_role("button", name="Send")
    cancel = page.get_by_role("button", name="Cancel turn")
    expect(cancel).to_be_disabled()

    page.get_by_label("Message", exact=True).fill("/hold")
    send.click()
    log = page.get_by_role("log", name="Messages")
    expect(log.get_by_text("Working on it…")).to_be_visible()  # held in the tool
    expect(state).to_have_text("State: running")
    expect(send).to_be_disabled()
    expect(cancel).to_be_enabled()

    cancel.click()
    expect(log.locator(".activity-cancelled")).to_have_text("Turn cancelled.")
    expect(log.get_by_text("Working on it…")).to_have_count(0)
    expect(log).not_to_contain_text("wait_for_release")  # no tool name for the user
    expect(state).to_have_text("State: idle")
    expect(cancel).to_be_disabled()
    expect(send).to_be_enabled()
    expect(page.locator("#status")).to_have_text("Turn cancelled.")  # announced politely
    expect(page.get_by_role("alert")).to_be_hidden()

    # the tool was stopped with the turn: nothing reads the pipe any more
    assert not _release_if_held(ui_project / "hold.fifo"), "the tool still waited"
    events = logged_events(served_ui.base_url, served_ui.chat_key, conversation_id)
    stops = [e["stop_reason"] for e in events if e["type"] == "turn_ended"]
    assert stops == ["end_turn", "cancelled"], stops  # the greeting on open, the held turn
    assert [e for e in events if e["type"] == "tool_executed"] == []  # no call record

    # a reload (same tab: same conversation) shows the cancelled turn; the conversation goes on
    page.reload()
    expect(page.get_by_label("Conversation id")).to_have_value(conversation_id)
    expect(log.locator(".message-user")).to_have_text(["You: /hold"])
    expect(log.locator(".activity-cancelled")).to_have_text("Turn cancelled.")
    expect(state).to_have_text("State: idle")
    page.get_by_label("Message", exact=True).fill("are you there?")
    send.click()
    expect(log.locator(".message-bot").last).to_have_text(re.compile(r"Still here\.$"))
    expect(state).to_have_text("State: idle")
    assert page_errors == [], page_errors
