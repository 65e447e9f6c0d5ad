"""Helpers of the page tests: the retail demo, keyboard moves and an accessibility check.

The retail example's scripted demo (`examples/retail/scripts/cancel_order.yml`) reaches a
paused tool confirmation: sign in, pick order #W6247578, tap a reason button, and the
`cancel_pending_order` call waits for approval.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
DOC_IMAGES = ROOT / "docs" / "img"
RETAIL = ROOT / "examples" / "retail"
RETAIL_SCRIPT = (RETAIL / "scripts" / "cancel_order.yml").read_text(encoding="utf-8")

SIGN_IN = "Hi, I'd like to cancel an order. My email is yusuf.rossi7301@example.com"
ORDER = "#W6247578"
REASON_TITLE = "I no longer need it"
REASON_PAYLOAD = "set:session.cancel_order.reason=no longer needed"
TAB_LIMIT = 60
"""Tab presses a keyboard walk may take before it counts as lost."""

NAMED_ROLES = frozenset(
    {
        "button",
        "checkbox",
        "combobox",
        "link",
        "listbox",
        "menuitem",
        "option",
        "radio",
        "searchbox",
        "slider",
        "spinbutton",
        "switch",
        "tab",
        "textbox",
    }
)
"""Roles whose every element must have an accessible name."""


def is_focused(locator: Locator) -> bool:
    """Whether the element of `locator` has the keyboard focus."""
    return bool(locator.evaluate("node => node === document.activeElement"))


def tab_to(page: Page, locator: Locator, *, backwards: bool = False) -> int:
    """Press Tab (Shift+Tab) until `locator` has the focus; returns the presses it took."""
    key = "Shift+Tab" if backwards else "Tab"
    for presses in range(1, TAB_LIMIT + 1):
        page.keyboard.press(key)
        if is_focused(locator):
            return presses
    raise AssertionError(f"{TAB_LIMIT} x {key} never reached {locator}")


def unnamed_controls(page: Page) -> list[str]:
    """Controls (by role) without an accessible name, from Chromium's accessibility tree."""
    session = page.context.new_cdp_session(page)
    try:
        tree: dict[str, Any] = session.send("Accessibility.getFullAXTree")
    finally:
        session.detach()
    unnamed = []
    for node in tree["nodes"]:
        role = (node.get("role") or {}).get("value")
        if node.get("ignored") or role not in NAMED_ROLES:
            continue
        name = str((node.get("name") or {}).get("value") or "").strip()
        if not name:
            unnamed.append(f"{role} (backend node {node.get('backendDOMNodeId')})")
    return unnamed


def chat(base_url: str, key: str, conversation_id: str, text: str) -> dict[str, Any]:
    """Send one message through the JSON chat API; the answer."""
    response = httpx.post(
        f"{base_url}/v1/conversations/{conversation_id}/messages",
        json={"text": text},
        headers={"Authorization": f"Bearer {key}"},
        timeout=30,
    )
    response.raise_for_status()
    answer: dict[str, Any] = response.json()
    return answer


def drive_to_pause(base_url: str, key: str, conversation_id: str) -> dict[str, Any]:
    """Run the retail demo up to the paused `cancel_pending_order`; the pending pause."""
    for text in (SIGN_IN, ORDER, REASON_PAYLOAD):
        answer = chat(base_url, key, conversation_id, text)
    assert answer["state"] == "paused", answer
    pending: dict[str, Any] = answer["pending_confirmation"]
    return pending


def approve(base_url: str, key: str, conversation_id: str, pause_id: str) -> dict[str, Any]:
    """Approve a pause through the JSON API; the answer."""
    response = httpx.post(
        f"{base_url}/v1/conversations/{conversation_id}/approvals/{pause_id}",
        json={"approved": True},
        headers={"Authorization": f"Bearer {key}"},
        timeout=30,
    )
    response.raise_for_status()
    answer: dict[str, Any] = response.json()
    return answer


def logged_events(base_url: str, key: str, conversation_id: str) -> list[dict[str, Any]]:
    """The conversation's encoded events, through the chat API."""
    response = httpx.get(
        f"{base_url}/v1/conversations/{conversation_id}/events",
        headers={"Authorization": f"Bearer {key}"},
        timeout=30,
    )
    response.raise_for_status()
    return [item["event"] for item in response.json()["events"]]


def doc_screenshot(page: Page, name: str, *, locator: Locator | None = None) -> Path:
    """Save a screenshot of the page (or of `locator`) as `artifacts/<name>.png`, and as
    `docs/img/<name>.png` when `KEEL_DOC_SCREENSHOTS=1` (how docs/ui.md's are made)."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    target = locator if locator is not None else page
    target.screenshot(path=str(path))
    if os.environ.get("KEEL_DOC_SCREENSHOTS") == "1":
        DOC_IMAGES.mkdir(parents=True, exist_ok=True)
        (DOC_IMAGES / f"{name}.png").write_bytes(path.read_bytes())
    return path
