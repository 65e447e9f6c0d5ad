"""The plan console (/ui/plans) against a real `keel run` whose SQLite file holds seeded
plan cache rows (written through `SqlPlanStore` before the page loads).

The seed: two L0 entries, an L1 champion, an L1 shadow, a demoted L1 entry, an
observation and an anti-entry. The tests read them in the tables, delete one, flush L1,
L0 and all through the confirmation dialog (Cancel and Escape keep everything), and watch
the counts follow. Waits are DOM conditions only.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from conftest import ServedUi
from playwright.sync_api import Locator, Page, expect
from ui_kit import is_focused, tab_to, unnamed_controls

from keel.plans.sql_store import SqlPlanStore
from keel.plans.store_port import AntiEntry, Observation, TemplateRow
from keel.stores.sqlite import SqliteEventStore

SCOPE = "brightwave-support/report_outage"
ROW = TemplateRow(
    id="l0-alpha",
    layer="l0",
    scope=SCOPE,
    key="k-alpha",
    intent_sig="report>outage",
    slot_sig="POSTCODE:postcode",
    shape_hash="9ac1f0e2b7d34c55",
    plan_json='{"version": "plan/1", "steps": []}',
    stored_intent_json='[{"verb": "report", "object": "outage"}]',
    bindings_json='{"POSTCODE": "LN4 7QP"}',
    request_text="report an outage at ln4 7qp",
    tools_sig="t",
    pool_sig="p",
    logic_sig="l",
    effectful=True,
    created_at=1767225600.0,
)
ENTRIES = (
    ROW,
    dataclasses.replace(ROW, id="l0-beta", key="k-beta", request_text="internet down at sw1a 1aa"),
    dataclasses.replace(ROW, id="l1-champion", layer="l1", key="k-l1", status="active"),
    dataclasses.replace(ROW, id="l1-shadow", layer="l1", key="k-l1s", status="shadow"),
    dataclasses.replace(ROW, id="l1-demoted", layer="l1", key="k-l1d", status="demoted"),
)
FAR_FUTURE = 4102444800.0  # 2100-01-01


def _run(coroutine: Coroutine[Any, Any, None]) -> None:
    """Run a coroutine on a loop of its own thread (the sync Playwright API owns this one)."""
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, coroutine).result()


async def _seed(db_path: Path, rows: tuple[TemplateRow, ...], *, extras: bool) -> None:
    events = await SqliteEventStore.open(db_path)
    try:
        store = SqlPlanStore(events.engine)
        for row in rows:
            await store.put(row)
        if extras:
            await store.add_observation(
                Observation(
                    turn_id="turn-obs-1",
                    scope=SCOPE,
                    intent_sig="report>outage",
                    shape_hash="9ac1f0e2b7d34c55",
                    plan_json='{"steps": []}',
                    template_id="l1-champion",
                    signal="approve",
                    signal_weight=1.0,
                    ts=1767229200.0,
                )
            )
            await store.put_anti(
                AntiEntry(
                    scope=SCOPE,
                    intent_sig="report>outage",
                    shape_hash="77d0c3a1e5b94f20",
                    weight=1.0,
                    expires_at=FAR_FUTURE,
                    reason="reject",
                )
            )
    finally:
        await events.close()


def _seed_all(served: ServedUi) -> None:
    _run(_seed(served.db_path, ENTRIES, extras=True))


def _count(page: Page, name: str) -> Locator:
    return page.locator(f"#count-{name}")


def _expect_counts(page: Page, **counts: int) -> None:
    for name, value in counts.items():
        expect(_count(page, name)).to_have_text(str(value))


def _section(page: Page, heading: str) -> Locator:
    return page.get_by_role("region", name=heading)


def _flush(page: Page, layer: str, answer: str) -> None:
    """Open Flush <layer> and answer the dialog: `confirm`, `cancel` or `escape`."""
    page.get_by_role("button", name=f"Flush {layer}", exact=True).click()
    dialog = page.get_by_role("dialog", name=f"Flush {layer}?")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()  # focus moved in
    if answer == "escape":
        page.keyboard.press("Escape")
    else:
        dialog.get_by_role("button", name=answer.capitalize()).click()
    expect(dialog).to_be_hidden()


def test_the_console_lists_deletes_and_flushes_plan_cache_entries(
    served_ui: ServedUi, page: Page, page_errors: list[str]
) -> None:
    _seed_all(served_ui)
    page.goto(served_ui.url("/ui/plans", key=served_ui.admin_key))
    _expect_counts(page, l0=2, l1_active=1, l1_shadow=1, l1_demoted=1, observations=1, anti=1)
    l0 = _section(page, "L0 entries")
    expect(l0.get_by_role("row")).to_have_count(3)  # header + 2
    expect(l0).to_contain_text("report an outage at ln4 7qp")
    expect(l0).to_contain_text("internet down at sw1a 1aa")
    expect(_section(page, "L1 champions (active)")).to_contain_text("l1-champion")
    expect(_section(page, "L1 shadows")).to_contain_text("l1-shadow")
    expect(_section(page, "Demoted and stale entries")).to_contain_text("l1-demoted")
    expect(_section(page, "Observations")).to_contain_text("turn-obs-1")
    expect(_section(page, "Observations")).to_contain_text("approve (1)")
    expect(_section(page, "Anti-entries")).to_contain_text("77d0c3a1e5b94f20")

    # delete one entry
    page.get_by_role("button", name="Delete entry l0-beta").click()
    expect(page.get_by_role("status").filter(has_text="Deleted")).to_have_text(
        "Deleted entry l0-beta."
    )
    expect(l0).not_to_contain_text("internet down at sw1a 1aa")
    _expect_counts(page, l0=1, l1_active=1)

    # Flush L1: Cancel keeps it, Confirm deletes L1 entries, observations and anti-entries
    _flush(page, "L1", "cancel")
    expect(page.locator("#status")).to_have_text("Flush L1 cancelled.")
    _expect_counts(page, l0=1, l1_active=1, l1_shadow=1, l1_demoted=1, observations=1, anti=1)
    _flush(page, "L1", "confirm")
    expect(page.locator("#status")).to_have_text("Flushed L1: 3 entries deleted.")
    _expect_counts(page, l0=1, l1_active=0, l1_shadow=0, l1_demoted=0, observations=0, anti=0)
    expect(_section(page, "L1 champions (active)")).to_contain_text("No L1 champions.")
    expect(l0).to_contain_text("l0-alpha")

    # a new L1 champion, seen after Refresh; Flush L0: Escape keeps it, Confirm removes only L0
    _run(_seed(served_ui.db_path, (ENTRIES[2],), extras=False))
    page.get_by_role("button", name="Refresh").click()
    _expect_counts(page, l0=1, l1_active=1)
    _flush(page, "L0", "escape")
    _expect_counts(page, l0=1, l1_active=1)
    _flush(page, "L0", "confirm")
    expect(page.locator("#status")).to_have_text("Flushed L0: 1 entry deleted.")
    _expect_counts(page, l0=0, l1_active=1)
    expect(l0).to_contain_text("No L0 entries.")

    # Flush all
    _flush(page, "all", "confirm")
    expect(page.locator("#status")).to_have_text("Flushed all: 1 entry deleted.")
    _expect_counts(page, l0=0, l1_active=0, l1_shadow=0, l1_demoted=0, observations=0, anti=0)
    assert page_errors == [], page_errors


def test_the_console_can_be_driven_with_the_keyboard_alone(
    served_ui: ServedUi, page: Page, page_errors: list[str]
) -> None:
    _seed_all(served_ui)
    page.goto(served_ui.url("/ui/plans"))
    tab_to(page, page.get_by_label("API key"))
    page.keyboard.type(served_ui.admin_key)
    page.keyboard.press("Enter")
    _expect_counts(page, l0=2)

    # Delete with Enter; the focus moves to the next Delete button of the table
    delete_alpha = page.get_by_role("button", name="Delete entry l0-alpha")
    tab_to(page, delete_alpha)
    page.keyboard.press("Enter")
    _expect_counts(page, l0=1)
    expect(page.get_by_role("button", name="Delete entry l0-beta")).to_be_focused()

    # Flush L0: Escape cancels and gives the focus back; Shift+Tab + Enter confirms
    flush_l0 = page.get_by_role("button", name="Flush L0", exact=True)
    tab_to(page, flush_l0, backwards=True)
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog", name="Flush L0?")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("This cannot be undone.")
    expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(flush_l0).to_be_focused()
    _expect_counts(page, l0=1)
    page.keyboard.press("Space")
    expect(dialog).to_be_visible()
    page.keyboard.press("Shift+Tab")
    assert is_focused(dialog.get_by_role("button", name="Confirm"))
    page.keyboard.press("Enter")
    expect(dialog).to_be_hidden()
    _expect_counts(page, l0=0, l1_active=1)
    expect(flush_l0).to_be_focused()
    assert page_errors == [], page_errors


def test_every_console_control_is_named(
    served_ui: ServedUi, page: Page, page_errors: list[str]
) -> None:
    _seed_all(served_ui)
    page.goto(served_ui.url("/ui/plans", key=served_ui.admin_key))
    _expect_counts(page, l0=2)
    expect(page.get_by_role("link", name="Plan console")).to_have_attribute("aria-current", "page")
    expect(page.get_by_role("link", name="Skip to content")).to_have_attribute("href", "#main")
    expect(page.get_by_role("main")).to_have_count(1)
    for name in ("Refresh", "Save key", "Flush L0", "Flush L1", "Flush all"):
        expect(page.get_by_role("button", name=name, exact=True)).to_be_visible()
    expect(page.get_by_role("button", name="Delete entry l1-champion")).to_be_visible()
    for table in ("L0 entries", "L1 champions", "Observations", "Anti-entries"):
        expect(page.get_by_role("table", name=table, exact=True)).to_be_visible()
    assert unnamed_controls(page) == []
    page.get_by_role("button", name="Flush all").click()
    assert unnamed_controls(page) == []  # the dialog's buttons too
    expect(page.get_by_role("dialog", name="Flush all?")).to_contain_text(
        "every observation and anti-entry"
    )
    assert page_errors == [], page_errors
