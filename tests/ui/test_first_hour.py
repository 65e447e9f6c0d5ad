"""The first hour in the browser: a whole conversation across the chat, the Inspector and the
plan console with no console error and no failed request; the Inspector's readable memory
keys, its key prompt, the agent graph with the current step; the plan console's legend.

One tab and the `local` key (chat and admin scopes, like the key `keel run` prints) go
from page to page as a person would, through the navigation links. The screenshots of
docs/ui.md are taken here (`ui_kit.doc_screenshot`; `KEEL_DOC_SCREENSHOTS=1` writes them to
docs/img/). Waits are DOM conditions only.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import ServedUi
from playwright.sync_api import Locator, Page, expect
from ui_kit import (
    ORDER,
    REASON_TITLE,
    RETAIL,
    RETAIL_SCRIPT,
    SIGN_IN,
    doc_screenshot,
    drive_to_pause,
    is_focused,
)

GREETING = "Hi, I'm Sol from the store's customer service."
CANCELLED = "Order #W6247578 is cancelled, and the refund is on its way."
CONVERSATION = "inspected"


@pytest.fixture
def ui_project() -> Path:
    return RETAIL


@pytest.fixture
def ui_script() -> str:
    return RETAIL_SCRIPT


def _option(timeline: Locator, pattern: str) -> Locator:
    """Timeline rows whose accessible name matches `pattern` (`/` escaped for Playwright)."""
    return timeline.get_by_role("option", name=re.compile(re.sub(r"(?<!\\)/", r"\/", pattern)))


def _open_in_inspector(page: Page, owner: str, conversation: str) -> Locator:
    page.get_by_role("button", name=re.compile(rf"^{owner} \/ {conversation}\b")).click()
    timeline = page.get_by_role("listbox", name=f"Timeline of {owner} / {conversation}")
    expect(timeline.get_by_role("option").first).to_be_visible()
    return timeline


def _line_count(locator: Locator) -> int:
    """How many lines the element's text is laid out on."""
    return int(
        locator.evaluate(
            """node => {
                const range = document.createRange();
                range.selectNodeContents(node);
                const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
                return tops.size;
            }"""
        )
    )


def test_a_whole_conversation_has_no_console_error_or_failed_request(
    served_ui: ServedUi, page: Page, page_errors: list[str]
) -> None:
    # the chat: greeted on open, the demo to its confirmation, answered with one button
    page.goto(served_ui.url("/ui/chat", key=served_ui.local_key))
    log = page.get_by_role("log", name="Messages")
    expect(log.locator(".message-bot").first).to_contain_text(GREETING)
    expect(page.locator("#conversation-state")).to_have_text("State: idle")
    doc_screenshot(page, "chat-greeting")
    conversation = page.get_by_label("Conversation id").input_value()
    message = page.get_by_label("Message", exact=True)
    message.fill(SIGN_IN)
    message.press("Enter")
    expect(log).to_contain_text("I found your account")
    message.fill(ORDER)
    message.press("Enter")
    log.get_by_role("button", name=REASON_TITLE).click()
    confirm = log.get_by_role("group", name="Confirm")
    expect(confirm).to_be_visible()
    expect(page.locator("#conversation-state")).to_have_text("State: paused")
    doc_screenshot(page, "chat-confirmation")
    confirm.get_by_role("button", name="Yes, cancel it").click()
    expect(log).to_contain_text(CANCELLED)
    expect(page.locator("#conversation-state")).to_have_text("State: idle")

    # the Inspector, same tab and key: the conversation, an event, the graph
    page.get_by_role("link", name="Inspector").click()
    timeline = _open_in_inspector(page, "local", conversation)
    _option(timeline, rf"User message {ORDER}$").click()
    expect(page.get_by_role("table", name="Memory")).to_contain_text("project.user_id")
    expect(page.locator("#graph [aria-current='step']")).to_have_count(1)
    _option(timeline, r"Pause cancel_pending_order").click()
    expect(page.locator("#graph [aria-current='step']")).to_contain_text("cancel_it")
    page.evaluate("window.scrollTo(0, 0)")
    doc_screenshot(page, "inspector")
    doc_screenshot(page, "inspector-graph", locator=page.locator(".graph-panel"))

    # the plan console, then back to the chat: the history, no request for a missing log
    page.get_by_role("link", name="Plan console").click()
    expect(page.get_by_role("heading", name="What these terms mean")).to_be_visible()
    expect(page.locator("#count-l0")).to_have_text("0")
    doc_screenshot(page, "plans-legend", locator=page.locator("#legend"))
    page.get_by_role("link", name="Chat").click()
    expect(page.get_by_label("Conversation id")).to_have_value(conversation)
    expect(log).to_contain_text(CANCELLED)
    expect(log.locator(".message-user").last).to_have_text("You: Yes, cancel it")
    page.get_by_role("button", name="New conversation").click()
    expect(page.get_by_label("Conversation id")).not_to_have_value(conversation)
    expect(log.locator(".message-bot")).to_have_count(1)
    expect(log).to_contain_text(GREETING)
    fresh = page.get_by_label("Conversation id").input_value()
    page.get_by_role("link", name="Inspector").click()  # the new one was remembered: a log
    expect(page.get_by_role("button", name=re.compile(rf"^local \/ {fresh}\b"))).to_be_visible()
    page.get_by_role("link", name="Chat").click()
    expect(page.get_by_label("Conversation id")).to_have_value(fresh)
    expect(log).to_contain_text(GREETING)
    expect(page.locator("#conversation-state")).to_have_text("State: idle")
    assert page_errors == [], page_errors


def test_inspector_memory_keys_read_on_one_line_and_the_graph_marks_the_current_step(
    served_ui: ServedUi, page: Page, page_errors: list[str]
) -> None:
    drive_to_pause(served_ui.base_url, served_ui.chat_key, CONVERSATION)
    page.goto(served_ui.url("/ui/inspector", key=served_ui.admin_key))
    timeline = _open_in_inspector(page, "web", CONVERSATION)
    graph = page.locator("#graph")
    current = graph.locator("[aria-current='step']")
    expect(current).to_have_count(1)  # after the last event: the held cancellation
    expect(current).to_contain_text("cancel_it")
    expect(current).to_contain_text("execute_tool cancel_pending_order")
    expect(graph.locator(".graph-skill[open]")).to_have_count(1)  # its skill, opened
    expect(graph.locator(".graph-skill[open] > summary")).to_contain_text("Cancel an order")
    expect(page.locator("#graph-status")).to_contain_text("cancel_order / cancel / cancel_it")
    mermaid = page.locator("#graph-mermaid")
    expect(mermaid).to_contain_text("class s_cancel_order__cancel__cancel_it current")

    # the memory at the pause: every key on one line, the values beside them
    _option(timeline, r"Pause cancel_pending_order").click()
    keys = page.get_by_role("table", name="Memory").locator("tbody th")
    expect(keys.first).to_be_visible()
    assert keys.count() >= 5
    for index in range(keys.count()):
        key = keys.nth(index)
        assert _line_count(key) == 1, f"{key.inner_text()!r} wraps"

    # an earlier event moves the mark to the step the stack held then
    _option(timeline, rf"User message {ORDER}$").click()
    stack = page.get_by_role("list", name="Stack").get_by_role("listitem")
    expect(stack.last).to_contain_text(" at ")
    held = stack.last.inner_text().rsplit(" at ", 1)[1]
    expect(current).to_have_count(1)
    expect(current.locator("strong")).to_have_text(held)
    expect(current).not_to_contain_text("cancel_it")
    assert page_errors == [], page_errors


def test_the_inspector_and_the_plan_console_prompt_for_a_missing_key(
    served_ui: ServedUi, page: Page, page_errors: list[str]
) -> None:
    page.goto(served_ui.url("/ui/inspector"))
    prompt = page.get_by_role("region", name="A key is needed")
    expect(prompt).to_be_visible()
    expect(prompt).to_contain_text("No API key is saved for this tab yet.")
    expect(prompt).to_contain_text("admin")
    expect(page.get_by_role("heading", name="Conversations")).to_be_hidden()
    expect(page.get_by_role("heading", name="Timeline")).to_be_hidden()
    doc_screenshot(page, "inspector-key-prompt")
    prompt.get_by_role("button", name="Enter a key").click()
    key_input = page.get_by_label("API key")
    assert is_focused(key_input)
    key_input.fill(served_ui.admin_key)
    key_input.press("Enter")
    expect(prompt).to_be_hidden()
    expect(page.get_by_role("heading", name="Conversations")).to_be_visible()
    expect(page.get_by_role("button", name=re.compile(r"^web \/ "))).to_have_count(0)
    expect(page.get_by_text("No conversations yet.")).to_be_visible()  # the list has loaded

    page.goto(served_ui.url("/ui/plans"))  # the same tab keeps the key
    expect(page.get_by_role("region", name="A key is needed")).to_be_hidden()
    legend = page.locator("#legend")
    for term in ("L0 entry", "L1 champion", "L1 shadow", "Demoted", "Stale", "Observation"):
        expect(legend.locator(f"dt:text-is('{term}')")).to_have_count(1)
    expect(legend).to_contain_text("plan_cache")
    expect(page.locator("#count-l0")).to_have_text("0")  # loaded
    assert page_errors == [], page_errors

    # a key without the admin scope: refused, and the prompt says so
    page.get_by_label("API key").fill(served_ui.chat_key)
    page.get_by_label("API key").press("Enter")
    prompt = page.get_by_role("region", name="A key is needed")
    expect(prompt).to_contain_text("The saved key was refused")
    expect(page.get_by_role("heading", name="Counts")).to_be_hidden()
    assert [e for e in page_errors if "403" not in e] == [], page_errors
