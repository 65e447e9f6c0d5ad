"""Nightly maintenance: aging, deaths, drift against the catalog, expired anti-entries."""

from __future__ import annotations

from dataclasses import replace

from cache_kit import catalog, entry, plan, tool

from keel.plans.maintenance import (
    DAY,
    MaintenanceConfig,
    MaintenanceReport,
    drift,
    plan_maintenance,
    run_maintenance,
)
from keel.plans.memory_store import MemoryPlanStore
from keel.plans.store_port import AntiEntry, TemplateRow

CAT = catalog()


def listing(folder: str = "/tmp/docs", **row: object) -> TemplateRow:
    return entry(f"list files in {folder}", plan(("list_files", {"folder": folder})), CAT, **row)[1]


def deleting(path: str = "/tmp/a.txt", **row: object) -> TemplateRow:
    return entry(f"delete file {path}", plan(("delete_file", {"path": path})), CAT, **row)[1]


def anti(expires_at: float) -> AntiEntry:
    return AntiEntry(
        scope="s",
        intent_sig="i",
        shape_hash=str(expires_at),
        weight=1.0,
        expires_at=expires_at,
        reason="repeat",
    )


def test_l0_aging_grace_and_staleness() -> None:
    never = listing("/tmp/a", layer="l0", id="never", key="k1")
    reused_old = listing("/tmp/b", layer="l0", id="old", key="k2", n_served=3, last_served_at=DAY)
    fresh = listing("/tmp/c", layer="l0", id="fresh", key="k3", created_at=20 * DAY)
    done = plan_maintenance([never, reused_old, fresh], [], CAT, now=32 * DAY)
    assert sorted(done.delete) == ["never", "old"]
    assert (done.report.l0_never_reused, done.report.l0_unused) == (1, 1)
    assert done.report.kept == 1


def test_young_l0_entry_survives_the_grace_period() -> None:
    young = listing(layer="l0", id="young", key="k", created_at=DAY)
    assert plan_maintenance([young], [], CAT, now=10 * DAY).delete == ()


def test_l0_cap_keeps_the_most_recently_used() -> None:
    rows = [
        listing(f"/tmp/{i}", layer="l0", id=f"r{i}", key=f"k{i}", created_at=float(i))
        for i in range(4)
    ]
    done = plan_maintenance(rows, [], CAT, now=10.0, config=MaintenanceConfig(l0_max=2))
    assert sorted(done.delete) == ["r0", "r1"] and done.report.l0_over_cap == 2


def test_l1_aging() -> None:
    demoted = listing("/tmp/a", id="demoted", key="a", status="demoted", last_served_at=DAY)
    unused = listing("/tmp/b", id="unused", key="b", created_at=DAY)
    recent = listing("/tmp/c", id="recent", key="c", last_served_at=80 * DAY)
    done = plan_maintenance([demoted, unused, recent], [], CAT, now=95 * DAY)
    assert sorted(done.delete) == ["demoted", "unused"]
    assert (done.report.l1_demoted_expired, done.report.l1_unused) == (1, 1)


def test_missing_tool_kills_entries_of_both_layers() -> None:
    rows = [deleting(layer="l0", id="l0"), deleting(id="l1"), listing(id="keep")]
    done = plan_maintenance(rows, [], catalog(drop=("delete_file",)), now=1.0)
    assert sorted(done.delete) == ["l0", "l1"] and done.report.missing_tool == 2
    assert done.report.kept == 1


def test_contract_drift_deletes_l0_and_stales_l1() -> None:
    changed = catalog(tool("delete_file", "delete", code="v2", path="string"))
    rows = [
        deleting(layer="l0", id="l0"),
        deleting(id="l1"),
        deleting("/tmp/b.txt", id="stale", key="s", status="stale"),
        listing(id="other"),
    ]
    done = plan_maintenance(rows, [], changed, now=1.0)
    assert done.delete == ("l0",) and done.report.drifted == 1
    assert [(r.id, r.status) for r in done.update] == [("l1", "stale")]
    assert done.report.marked_stale == 1 and done.report.kept == 2


def test_schema_drift_is_caught_by_the_validator() -> None:
    renamed = catalog(tool("list_files", directory="string"))
    assert drift(listing(), renamed) == "invalid"
    assert drift(replace(listing(), plan_json="not json"), CAT) == "invalid"


def test_recompile_catches_what_would_no_longer_be_cached() -> None:
    # The recorded request no longer says the value (e.g. binding rules changed).
    l1 = listing(request_text="list files")
    assert drift(l1, CAT) == "uncacheable"
    assert drift(l1, CAT, recompile=False) == ""
    effectful = deleting(layer="l0", request_text="delete a file")
    assert drift(effectful, CAT) == "uncacheable"
    assert drift(listing(), CAT) == ""


def test_expired_anti_entries_are_dropped() -> None:
    done = plan_maintenance([], [anti(5.0), anti(50.0)], CAT, now=10.0)
    assert [a.expires_at for a in done.drop_anti] == [5.0]
    assert done.report.anti_expired == 1


def test_report_deleted_sums_the_causes() -> None:
    report = MaintenanceReport(l0_unused=2, missing_tool=1, drifted=3, marked_stale=5, kept=9)
    assert report.deleted == 6


async def test_run_maintenance_applies_the_plan() -> None:
    store = MemoryPlanStore()
    changed = catalog(tool("delete_file", "delete", code="v2", path="string"))
    await store.put(deleting(layer="l0", id="l0", created_at=5 * DAY))
    await store.put(deleting(id="l1", created_at=5 * DAY))
    await store.put(replace(listing(id="keep"), created_at=5 * DAY))
    await store.put_anti(anti(1.0))
    report = await run_maintenance(store, changed, now=6 * DAY)
    assert (report.drifted, report.marked_stale, report.anti_expired) == (1, 1, 1)
    assert await store.get("l0") is None
    stale = await store.get("l1")
    assert stale is not None and stale.status == "stale"
    assert await store.get("keep") is not None
    assert await store.all_anti() == []
