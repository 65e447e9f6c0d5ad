"""The Inspector (/ui/inspector) on plan-cache turns, served by `keel run` of the plan agent.

`tests/unit/loop/plans_agent` enables the plan cache. Two conversations of the chat key
`web` each open the skill `orders` ("/orders", the model greets) and ask "where is order
12?": the first through the tool-calling loop (the model calls get_order, then answers),
which records an L0 entry; the second is an exact repeat, served from that entry with no
model call. The server's one scripted model is shared by every conversation, so the script
holds the first conversation's three replies, then the second's greeting only. The
Inspector (admin key `ops`) shows the decisions and the plan run as rows and in the
selected event's details. Waits are DOM conditions only.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import ROOT, ServedUi
from playwright.sync_api import Locator, Page, expect
from ui_kit import chat, logged_events

PLANS_AGENT = ROOT / "tests" / "unit" / "loop" / "plans_agent"
GREETING = "Hi, how can I help?"
ANSWER = "Order 12 is pending."
QUESTION = "where is order 12?"
PLANS_SCRIPT = f"""\
- {GREETING}
- tool_calls: [{{name: get_order, arguments: {{order_id: "12"}}}}]
- {ANSWER}
- {GREETING}
"""
"""The first conversation's greeting, tool call and answer; the second's greeting."""
FIRST = "orders-first"
REPEAT = "orders-repeat"


@pytest.fixture
def ui_project() -> Path:
    return PLANS_AGENT


@pytest.fixture
def ui_script() -> str:
    return PLANS_SCRIPT


def _open(page: Page, conversation: str) -> Locator:
    """Choose the conversation in the open Inspector; its timeline, once it has rows."""
    page.get_by_role("button", name=re.compile(rf"^web \/ {conversation}\b")).click()
    timeline = page.get_by_role("listbox", name=f"Timeline of web / {conversation}")
    expect(timeline.get_by_role("option").first).to_be_visible()
    return timeline


def _option(scope: Locator, pattern: str) -> Locator:
    """The rows whose accessible name matches `pattern` (`/` escaped for Playwright)."""
    return scope.get_by_role("option", name=re.compile(re.sub(r"(?<!\\)/", r"\/", pattern)))


def _fact(scope: Locator, name: str) -> Locator:
    """The value (`dd`) of the fact `name` (`dt`) in `scope`."""
    return scope.locator(f"dt:text-is('{name}') + dd").first


def _recorded_entry(served: ServedUi) -> str:
    """The L0 entry the first conversation's `record` decision stored."""
    events = logged_events(served.base_url, served.chat_key, FIRST)
    record = [e for e in events if e["type"] == "plan_cache_decided" and e["layer"] == "record"]
    assert [(e["hit"], e["reason"]) for e in record] == [(False, "recorded")], record
    entry: str = record[0]["entry_id"]
    assert entry.startswith("l0-"), entry
    return entry


def test_the_timeline_shows_plan_cache_decisions_and_the_cached_plan_run(
    served_ui: ServedUi, page: Page, page_errors: list[str]
) -> None:
    for conversation in (FIRST, REPEAT):
        assert chat(served_ui.base_url, served_ui.chat_key, conversation, "/orders")
        answer = chat(served_ui.base_url, served_ui.chat_key, conversation, QUESTION)
        assert [m["text"] for m in answer["messages"]] == [ANSWER], answer
    entry = _recorded_entry(served_ui)

    page.goto(served_ui.url("/ui/inspector", key=served_ui.admin_key))
    timeline = _open(page, REPEAT)
    repeat = timeline.get_by_role("group", name="Turn 3 · end_turn")
    expect(_option(repeat, rf"User message {re.escape(QUESTION)}$")).to_have_count(1)
    hit = _option(repeat, rf"Plan cache decision l0 hit · entry {entry} · intent get:order$")
    expect(hit).to_have_count(1)
    run = _option(repeat, rf"Plan run source l0 · status ok · 1 step run · entry {entry}$")
    expect(run).to_have_count(1)
    tool = r'Tool call get_order \{"order_id":"12"\} → .*"pending".* · plan l0 step 1$'
    expect(_option(repeat, tool)).to_have_count(1)
    expect(_option(repeat, rf"Bot message {re.escape(ANSWER)}$")).to_have_count(1)
    expect(_option(repeat, r"Model call")).to_have_count(0)  # the repeat asked the model nothing
    expect(_option(repeat, r"Plan cache decision l0 miss")).to_have_count(0)

    # the selected decision and run in the details panel
    details = page.locator("#event-details")
    hit.click()
    expect(_fact(details, "Layer")).to_have_text("L0, exact entry")
    expect(_fact(details, "Outcome")).to_have_text("hit")
    expect(_fact(details, "Reason")).to_have_text("hit")
    expect(_fact(details, "Entry")).to_have_text(entry)
    run.click()
    expect(_fact(details, "Source")).to_have_text("L0, exact entry")
    expect(_fact(details, "Status")).to_have_text("ok")
    expect(_fact(details, "Steps run")).to_have_text("1")
    expect(_fact(details, "Slots")).to_have_text('order_id = "12"')
    steps = details.get_by_role("list", name="Plan steps").get_by_role("listitem")
    expect(steps.first).to_have_text('1. get_order({"order_id":"${SLOT:order_id}"})')

    # the first conversation: both lookups missed, the loop ran, and its turn was recorded
    timeline = _open(page, FIRST)
    first = timeline.get_by_role("group", name="Turn 3 · end_turn")
    misses = r"Plan cache decision l[01] miss \(no_entry\) · intent get:order$"
    expect(_option(first, misses)).to_have_count(2)  # neither L0 nor L1 had an entry
    recorded = _option(first, rf"Plan cache decision record: recorded · entry {entry} · intent")
    expect(recorded).to_have_count(1)
    expect(_option(first, r"Model call")).to_have_count(2)  # the tool call, then the answer
    expect(_option(first, r"Plan run")).to_have_count(0)
    recorded.click()
    expect(_fact(details, "Layer")).to_have_text("record, after the turn")
    expect(_fact(details, "Reason")).to_have_text("recorded")
    expect(details.locator("dt:text-is('Outcome')")).to_have_count(0)  # record is no lookup
    assert page_errors == [], page_errors
