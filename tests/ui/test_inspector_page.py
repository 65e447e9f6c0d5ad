"""The Inspector (/ui/inspector) on a conversation of the retail demo, served by `keel run`.

The conversation (sign in, pick an order, tap a reason, approve the paused cancellation)
is driven through the chat API with the chat key `web`; the Inspector reads it with the
admin key `ops`: the timeline rows by turn, the state (stack, memory) at a chosen event, the
stage-timing waterfall, the model call's prompt, and new events arriving over the admin
stream. Waits are DOM conditions only.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import ServedUi
from playwright.sync_api import Locator, Page, expect
from ui_kit import (
    ORDER,
    RETAIL,
    RETAIL_SCRIPT,
    SIGN_IN,
    approve,
    chat,
    drive_to_pause,
    is_focused,
    tab_to,
    unnamed_controls,
)

CONVERSATION = "inspected"


@pytest.fixture
def ui_project() -> Path:
    return RETAIL


@pytest.fixture
def ui_script() -> str:
    return RETAIL_SCRIPT


def _open(page: Page, served: ServedUi) -> Locator:
    """Open the Inspector with the admin key and choose the conversation; the timeline."""
    page.goto(served.url("/ui/inspector", key=served.admin_key))
    page.get_by_role("button", name=re.compile(rf"^web \/ {CONVERSATION}\b")).click()
    timeline = page.get_by_role("listbox", name=f"Timeline of web / {CONVERSATION}")
    expect(timeline.get_by_role("option").first).to_be_visible()
    return timeline


def _option(timeline: Locator, pattern: str) -> Locator:
    """The rows whose accessible name matches `pattern` (a `/` is escaped: Playwright sends
    the pattern as a JavaScript regex literal)."""
    return timeline.get_by_role("option", name=re.compile(re.sub(r"(?<!\\)/", r"\/", pattern)))


def _fact(scope: Locator, name: str) -> Locator:
    """The value (`dd`) of the fact `name` (`dt`) in `scope`."""
    return scope.locator(f"dt:text-is('{name}') + dd").first


def _memory_keys(page: Page) -> list[str]:
    table = page.get_by_role("table", name="Memory")
    return table.locator("tbody th").all_inner_texts()


def test_timeline_rows_state_at_an_event_and_the_stage_waterfall(
    served_ui: ServedUi, page: Page, page_errors: list[str]
) -> None:
    pending = drive_to_pause(served_ui.base_url, served_ui.chat_key, CONVERSATION)
    approve(served_ui.base_url, served_ui.chat_key, CONVERSATION, pending["pause_id"])
    timeline = _open(page, served_ui)

    # one row per event, grouped by turn
    expect(timeline.get_by_role("group", name="Turn 1 · end_turn")).to_be_visible()
    expect(timeline.get_by_role("group", name="Turn 4 · paused")).to_be_visible()
    expect(timeline.get_by_role("group", name="Turn 5 · end_turn")).to_be_visible()
    expect(_option(timeline, r"User message Hi, I'd like to cancel an order")).to_have_count(1)
    expect(_option(timeline, r"Routing decision router → authenticate")).to_have_count(1)
    expect(_option(timeline, r"Routing decision sticky → pick_order")).to_have_count(1)
    cancel_call = re.escape(
        'Tool call cancel_pending_order {"order_id":"#W6247578","reason":"no longer needed"}'
    )
    expect(_option(timeline, cancel_call)).to_have_count(1)
    expect(_option(timeline, r"Tool call set_fields \{\"fields\":\{\"order_id\"")).to_have_count(1)
    reason_write = r'Memory write cancel_order\.reason = "no longer needed"'
    expect(_option(timeline, reason_write)).to_have_count(1)
    expect(
        _option(timeline, r"Pause cancel_pending_order .* waits for confirmation")
    ).to_have_count(1)
    expect(_option(timeline, r"Pause resolved approved")).to_have_count(1)
    expect(_option(timeline, r"Stop reason paused")).to_have_count(1)
    expect(_option(timeline, r"Stop reason end_turn")).to_have_count(4)
    model_calls = _option(timeline, r"Model call scripted \(router\) · tokens 0 in / 0 out")
    expect(model_calls).to_have_count(2)
    expect(_option(timeline, r"Flow started")).to_have_count(0)  # bookkeeping is hidden

    # the state at the user's "#W6247578": signed in, no order picked, no reason yet
    order_message = _option(timeline, rf"User message {ORDER}$")
    order_message.click()
    expect(order_message).to_have_attribute("aria-selected", "true")
    seq = order_message.get_attribute("data-seq")
    state = page.locator("#state-view")
    expect(_fact(state, "At event")).to_have_text(f"#{seq}")
    expect(page.get_by_role("table", name="Memory")).to_contain_text("project.user_id")
    keys = _memory_keys(page)
    assert "project.user_id" in keys
    assert "pick_order.order_id" not in keys
    assert "cancel_order.reason" not in keys
    expect(_fact(state, "Active skill")).to_have_text("pick_order")

    # a later event: the reason is in memory, and the pause is pending at the pause row
    _option(timeline, reason_write).click()
    expect(page.get_by_role("table", name="Memory")).to_contain_text("cancel_order.reason")
    assert {"pick_order.order_id", "cancel_order.reason"} <= set(_memory_keys(page))
    _option(timeline, r"Pause cancel_pending_order").click()
    expect(_fact(state, "Pending confirmation")).to_contain_text("cancel_pending_order")

    # the waterfall of the turn of the selected event: one bar per stage_timed, labelled in ms
    order_message.click()
    waterfall = page.get_by_role("list", name=re.compile(r"^Stage timing, turn 3$"))
    stages = waterfall.get_by_role("listitem")
    expect(stages.first).to_be_visible()
    names = waterfall.locator(".stage-name").all_inner_texts()
    assert {"load", "model", "persist", "route"} <= set(names)
    for label in waterfall.locator(".stage-ms").all_inner_texts():
        assert re.fullmatch(r"\d+\.\d+ ms", label)
    widths = waterfall.locator(".bar").evaluate_all(
        "bars => bars.map(b => b.getBoundingClientRect().width)"
    )
    durations = [float(t.split()[0]) for t in waterfall.locator(".stage-ms").all_inner_texts()]
    assert widths.index(max(widths)) == durations.index(max(durations))

    # a model call shows the prompt that was sent (metadata.request) and the reply
    model_calls.first.click()
    details = page.locator("#event-details")
    expect(_fact(details, "Tokens")).to_have_text("0 in, 0 out")
    expect(details).to_contain_text(re.compile(r"Prompt \(\d+ messages\)"))
    expect(details).to_contain_text("Offered tools:")
    expect(details).to_contain_text(SIGN_IN)
    expect(details).to_contain_text("→ activate(")
    assert page_errors == [], page_errors


def test_the_inspector_follows_the_conversation_live(
    served_ui: ServedUi, page: Page, page_errors: list[str]
) -> None:
    chat(served_ui.base_url, served_ui.chat_key, CONVERSATION, SIGN_IN)
    timeline = _open(page, served_ui)
    expect(page.locator("#follow-status")).to_have_text("Following live.")
    expect(_option(timeline, rf"User message {ORDER}$")).to_have_count(0)

    chat(served_ui.base_url, served_ui.chat_key, CONVERSATION, ORDER)
    expect(_option(timeline, rf"User message {ORDER}$")).to_have_count(1)  # no reload
    expect(timeline.get_by_role("group", name="Turn 3 · end_turn")).to_be_visible()
    expect(_option(timeline, r"Memory write pick_order\.order_id")).not_to_have_count(0)

    page.get_by_label("Follow live").uncheck()
    expect(page.locator("#follow-status")).to_have_text("")
    assert page_errors == [], page_errors


def test_the_inspector_can_be_driven_with_the_keyboard_alone(
    served_ui: ServedUi, page: Page, page_errors: list[str]
) -> None:
    drive_to_pause(served_ui.base_url, served_ui.chat_key, CONVERSATION)
    page.goto(served_ui.url("/ui/inspector"))
    key_input = page.get_by_label("API key")
    tab_to(page, key_input)
    page.keyboard.type(served_ui.admin_key)
    page.keyboard.press("Enter")

    conversation = page.get_by_role("button", name=re.compile(rf"^web \/ {CONVERSATION}\b"))
    tab_to(page, conversation)
    page.keyboard.press("Enter")
    expect(conversation).to_have_attribute("aria-pressed", "true")
    timeline = page.get_by_role("listbox", name=f"Timeline of web / {CONVERSATION}")
    options = timeline.get_by_role("option")
    expect(options.first).to_be_visible()
    tab_to(page, options.first)  # the list is one tab stop

    page.keyboard.press("ArrowDown")
    expect(options.nth(1)).to_have_attribute("aria-selected", "true")
    expect(options.nth(1)).to_be_focused()
    expect(page.locator("#event-details")).to_contain_text(
        f"#{options.nth(1).get_attribute('data-seq')} "
    )
    page.keyboard.press("End")
    last = options.last
    expect(last).to_be_focused()
    expect(last).to_have_attribute("aria-selected", "true")
    expect(last).to_contain_text("Stop reason paused")
    expect(_fact(page.locator("#state-view"), "At event")).to_have_text(
        f"#{last.get_attribute('data-seq')}"
    )
    page.keyboard.press("ArrowUp")
    expect(options.nth(options.count() - 2)).to_be_focused()
    page.keyboard.press("Home")
    expect(options.first).to_have_attribute("aria-selected", "true")
    assert timeline.locator('[aria-selected="true"]').count() == 1

    # Tab leaves the list; Shift+Tab comes back to the selected row
    page.keyboard.press("Tab")
    assert not is_focused(options.first)
    page.keyboard.press("Shift+Tab")
    expect(options.first).to_be_focused()

    # bookkeeping events appear with the checkbox, toggled by Space
    shown = options.count()
    minor = page.get_by_role("checkbox", name="Show bookkeeping events")
    tab_to(page, minor, backwards=True)
    page.keyboard.press("Space")
    expect(minor).to_be_checked()
    expect(_option(timeline, r"Flow started")).not_to_have_count(0)
    assert options.count() > shown
    assert unnamed_controls(page) == []
    assert page_errors == [], page_errors
