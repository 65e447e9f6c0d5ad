"""The web chat (/ui/chat) against a real `keel run` of the retail example.

The scripted demo cancels order #W6247578: a new conversation opens with the greeting, the
page streams the bot's messages (tool runs show as "Working on it…", never by name), shows
the reason buttons, and the paused `cancel_pending_order` call is approved (or denied) with
the one pair of confirmation buttons under the question. Every wait is a DOM condition
(Playwright's auto-waiting `expect`), never a sleep.
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from conftest import ServedUi
from playwright.sync_api import Page, expect
from ui_kit import (
    ORDER,
    REASON_TITLE,
    RETAIL,
    RETAIL_SCRIPT,
    SIGN_IN,
    drive_to_pause,
    is_focused,
    logged_events,
    tab_to,
    unnamed_controls,
)

GREETING = "Hi, I'm Sol from the store's customer service."
FOUND = "Thanks, Yusuf, I found your account."
CANCELLED = "Order #W6247578 is cancelled, and the refund is on its way."


@pytest.fixture
def ui_project() -> Path:
    return RETAIL


@pytest.fixture
def ui_script() -> str:
    return RETAIL_SCRIPT


def _tool_runs(served: ServedUi, conversation_id: str, tool: str) -> int:
    events = logged_events(served.base_url, served.chat_key, conversation_id)
    return sum(1 for e in events if e["type"] == "tool_executed" and e["tool_name"] == tool)


def _no_internal_names(page: Page) -> None:
    """The page shows no tool name, no raw arguments and no approval jargon."""
    text = page.locator("main").inner_text()
    internals = ("cancel_pending_order", "set_fields", "activate", '"reason"', "Tool ", "approved")
    for internal in internals:
        assert internal not in text, f"{internal!r} is shown to the user:\n{text}"


def test_chat_streams_the_cancellation_and_approve_runs_the_paused_tool(
    served_ui: ServedUi, page: Page, page_errors: list[str]
) -> None:
    page.goto(served_ui.url("/ui/chat", key=served_ui.chat_key))
    expect(page).to_have_url(re.compile(r"/ui/chat$"))  # the #key= fragment is gone
    expect(page.locator("#key-status")).to_have_text("A key is saved for this tab.")
    conversation_id = page.get_by_label("Conversation id").input_value()
    assert re.fullmatch(r"web-[0-9a-f]{10}", conversation_id)
    log = page.get_by_role("log", name="Messages")
    state = page.locator("#conversation-state")
    expect(log.locator(".message-bot").first).to_contain_text(GREETING)  # greeted on open
    expect(state).to_have_text("State: idle")
    expect(log.locator(".message-user")).to_have_count(0)

    page.get_by_label("Message", exact=True).fill(SIGN_IN)
    page.get_by_role("button", name="Send").click()
    expect(log).to_contain_text(FOUND)
    expect(log.get_by_text(GREETING)).to_have_count(1)  # the greeting once, not again
    expect(state).to_have_text("State: idle")

    page.get_by_label("Message", exact=True).fill(ORDER)
    page.get_by_label("Message", exact=True).press("Enter")  # Enter sends
    reason = log.get_by_role("button", name=REASON_TITLE)
    expect(reason).to_be_visible()
    expect(log.get_by_role("button", name="I ordered it by mistake")).to_be_visible()
    reason.click()  # sends the payload, shows the title
    expect(log.locator(".message-user").last).to_have_text(f"You: {REASON_TITLE}")

    # one confirmation: the question, and one pair of buttons under it
    question = log.locator(".message-bot").last
    expect(question).to_contain_text("Please confirm: cancel order #W6247578")
    confirm = question.get_by_role("group", name="Confirm")
    expect(confirm.get_by_role("button")).to_have_text(["Yes, cancel it", "No, keep it"])
    expect(page.get_by_role("button", name="Yes, cancel it")).to_have_count(1)
    expect(page.get_by_role("button", name="No, keep it")).to_have_count(1)
    expect(page.get_by_role("region", name="Approval needed")).to_have_count(0)
    expect(state).to_have_text("State: paused")
    _no_internal_names(page)
    assert _tool_runs(served_ui, conversation_id, "cancel_pending_order") == 0

    confirm.get_by_role("button", name="Yes, cancel it").click()
    expect(log.locator(".message-user").last).to_have_text("You: Yes, cancel it")
    expect(log).to_contain_text(CANCELLED)
    expect(log).to_contain_text("Is there anything else I can help you with, Yusuf Rossi?")
    expect(log.get_by_role("group", name="Confirm")).to_have_count(0)
    expect(page.get_by_role("button", name="Yes, cancel it")).to_have_count(0)
    expect(state).to_have_text("State: idle")
    expect(page.get_by_role("button", name="Cancel turn")).to_be_disabled()
    expect(page.get_by_role("alert")).to_be_hidden()
    _no_internal_names(page)
    assert _tool_runs(served_ui, conversation_id, "cancel_pending_order") == 1
    assert page_errors == [], page_errors


def test_chat_can_be_driven_with_the_keyboard_alone(
    served_ui: ServedUi, page: Page, page_errors: list[str]
) -> None:
    page.goto(served_ui.url("/ui/chat"))
    skip = page.get_by_role("link", name="Skip to content")
    page.keyboard.press("Tab")
    expect(skip).to_be_focused()
    expect(skip).to_be_in_viewport()  # visible when focused
    page.keyboard.press("Enter")
    expect(page.get_by_role("main")).to_be_focused()

    key_input = page.get_by_label("API key")
    tab_to(page, key_input, backwards=True)
    page.keyboard.type(served_ui.chat_key)
    page.keyboard.press("Enter")
    expect(page.locator("#key-status")).to_have_text("A key is saved for this tab.")

    message = page.get_by_label("Message", exact=True)
    tab_to(page, message)
    page.keyboard.type("first line")
    page.keyboard.press("Shift+Enter")  # a new line, not a send
    page.keyboard.type("second line")
    expect(message).to_have_value("first line\nsecond line")
    page.keyboard.press("Control+A")
    page.keyboard.type(SIGN_IN)
    page.keyboard.press("Enter")
    log = page.get_by_role("log", name="Messages")
    expect(log).to_contain_text(FOUND)
    expect(message).to_have_value("")
    assert is_focused(message)
    page.keyboard.type(ORDER)
    page.keyboard.press("Enter")

    reason = log.get_by_role("button", name=REASON_TITLE)
    expect(reason).to_be_enabled()
    tab_to(page, reason, backwards=True)
    page.keyboard.press("Enter")
    approve = page.get_by_role("button", name="Yes, cancel it")
    expect(approve).to_be_enabled()
    tab_to(page, approve, backwards=True)
    page.keyboard.press("Space")
    expect(log).to_contain_text(CANCELLED)
    expect(page.locator("#conversation-state")).to_have_text("State: idle")
    assert page_errors == [], page_errors


def test_every_chat_control_is_named_and_errors_show_in_the_alert(
    served_ui: ServedUi, page: Page, page_errors: list[str]
) -> None:
    page.goto(served_ui.url("/ui/chat", key="not-a-key"))
    expect(page.get_by_role("navigation", name="Pages")).to_be_visible()
    expect(page.get_by_role("link", name="Chat")).to_have_attribute("aria-current", "page")
    expect(page.get_by_label("API key")).to_have_attribute("type", "password")
    expect(page.get_by_role("button", name="Save key")).to_be_visible()
    expect(page.get_by_role("textbox", name="Conversation id")).to_be_visible()
    expect(page.get_by_role("button", name="New conversation")).to_be_visible()
    expect(page.get_by_role("textbox", name="Message", exact=True)).to_be_visible()
    expect(page.get_by_role("button", name="Send")).to_be_enabled()
    expect(page.get_by_role("button", name="Cancel turn")).to_be_disabled()
    expect(page.get_by_role("log", name="Messages")).to_have_attribute("aria-live", "polite")
    assert unnamed_controls(page) == []

    # an unknown key: the history load and a send are refused, shown in the alert region
    alert = page.get_by_role("alert")
    page.get_by_label("Message", exact=True).fill("hello")
    page.get_by_role("button", name="Send").click()
    expect(alert).to_contain_text("auth.invalid_key")
    expect(alert).to_contain_text("HTTP 401")
    old = page.get_by_label("Conversation id").input_value()
    page.get_by_role("button", name="New conversation").click()
    expect(page.get_by_label("Conversation id")).not_to_have_value(old)
    assert all("Content Security Policy" not in error for error in page_errors)


def test_a_reload_shows_the_history_and_the_pending_pause_which_deny_resolves(
    served_ui: ServedUi, page: Page, page_errors: list[str]
) -> None:
    pending = drive_to_pause(served_ui.base_url, served_ui.chat_key, "reloaded")
    page.goto(served_ui.url("/ui/chat?conversation=reloaded", key=served_ui.chat_key))
    log = page.get_by_role("log", name="Messages")
    expect(log).to_contain_text(GREETING)
    expect(log).to_contain_text(FOUND)
    expect(log.locator(".message-user").last).to_have_text(f"You: {REASON_TITLE}")
    question = log.locator(".message-bot").last
    expect(question).to_contain_text(pending["ask"])
    confirm = question.get_by_role("group", name="Confirm")
    expect(confirm.get_by_role("button")).to_have_text(["Yes, cancel it", "No, keep it"])
    expect(question.get_by_role("group", name="Suggested replies")).to_have_count(0)
    expect(page.locator("#conversation-state")).to_have_text("State: paused")

    confirm.get_by_role("button", name="No, keep it").click()
    expect(log.locator(".message-user").last).to_have_text("You: No, keep it")
    expect(log.get_by_role("group", name="Confirm")).to_have_count(0)
    expect(page.locator("#conversation-state")).to_have_text("State: idle")
    _no_internal_names(page)
    view = httpx.get(
        f"{served_ui.base_url}/v1/conversations/reloaded",
        headers=served_ui.headers(served_ui.chat_key),
    ).json()
    assert view["pending_confirmation"] is None
    assert _tool_runs(served_ui, "reloaded", "cancel_pending_order") == 0

    # the answer is in the history as it was shown, and the question has no buttons left
    page.reload()
    expect(log.locator(".message-user")).to_have_count(4)
    expect(log.locator(".message-user").last).to_have_text("You: No, keep it")
    expect(log.get_by_role("button", name="Yes, cancel it")).to_have_count(0)
    expect(page.locator("#conversation-state")).to_have_text("State: idle")
    assert page_errors == [], page_errors
