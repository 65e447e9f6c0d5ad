"""Nightly, model-free maintenance of the plan cache (plan-cache spec §1.5, §1.6, §3.13).

    report = await run_maintenance(store, catalog, now=now)

In order, over every entry of the store:

1. aging (Metnos's numbers): an L0 entry never reused after 14 days, or unused for 30 days,
   is deleted, then L0 is capped at the 500 most recently used; an L1 entry demoted 30
   days ago, or unused for 90 days, is deleted;
2. deaths: an entry naming a tool that is no longer in the catalog is deleted;
3. drift against the current catalog: the template is re-validated (L2 validator on the
   template with its recorded bindings), re-compiled (would this plan still be cached, and
   still beyond its exact request?) and its signatures recomputed; a drifted L0 entry is
   deleted, a drifted L1 entry marked `stale` (a fresh success re-validates it);
4. expired anti-entries are dropped.

`plan_maintenance` decides (pure); `run_maintenance` reads the store and applies. Aging
reads the last activity of an entry: its last serve, or its creation.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from keel.plans.admission import bound_plan
from keel.plans.catalog import Catalog
from keel.plans.compiler import Uncacheable
from keel.plans.entries import DEFAULT_OPTIONS, CompileOptions
from keel.plans.intent import Intent
from keel.plans.plan import parse_plan
from keel.plans.signatures import LOGIC_SIG, pool_sig, tools_sig
from keel.plans.store_port import AntiEntry, PlanStore, TemplateRow
from keel.plans.validator import validate

DAY: Final = 86_400.0


@dataclass(frozen=True, kw_only=True, slots=True)
class MaintenanceConfig:
    """Aging knobs (Metnos's defaults, spec §1.14)."""

    l0_grace_days: float = 14.0
    l0_stale_days: float = 30.0
    l0_max: int = 500
    l1_stale_days: float = 90.0
    l1_demoted_days: float = 30.0
    recompile: bool = True
    scan_limit: int = 1_000_000


@dataclass(frozen=True, kw_only=True, slots=True)
class MaintenanceReport:
    """What one maintenance run changed, by cause."""

    l0_never_reused: int = 0
    l0_unused: int = 0
    l0_over_cap: int = 0
    l1_unused: int = 0
    l1_demoted_expired: int = 0
    missing_tool: int = 0
    invalid: int = 0
    uncacheable: int = 0
    drifted: int = 0
    marked_stale: int = 0
    anti_expired: int = 0
    kept: int = 0

    @property
    def deleted(self) -> int:
        """Entries deleted."""
        return (
            self.l0_never_reused
            + self.l0_unused
            + self.l0_over_cap
            + self.l1_unused
            + self.l1_demoted_expired
            + self.missing_tool
            + self.invalid
            + self.uncacheable
            + self.drifted
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class MaintenancePlan:
    """What to do: entries to delete, entries to rewrite, anti-entries to drop."""

    delete: tuple[str, ...] = ()
    update: tuple[TemplateRow, ...] = ()
    drop_anti: tuple[AntiEntry, ...] = ()
    report: MaintenanceReport = field(default_factory=MaintenanceReport)


def last_activity(row: TemplateRow) -> float:
    """When the entry was last served, or created."""
    return max(row.created_at, row.last_served_at)


def plan_maintenance(
    rows: Sequence[TemplateRow],
    anti: Iterable[AntiEntry],
    catalog: Catalog,
    *,
    now: float,
    config: MaintenanceConfig = MaintenanceConfig(),
    options: CompileOptions = DEFAULT_OPTIONS,
    logic: str = LOGIC_SIG,
) -> MaintenancePlan:
    """Decide one maintenance run (pure)."""
    counts: dict[str, int] = {}
    delete, survivors = _age(rows, now, config, counts)
    update: list[TemplateRow] = []
    for row in survivors:
        cause = drift(row, catalog, recompile=config.recompile, options=options, logic=logic)
        if cause and (row.layer == "l0" or cause == "missing_tool"):
            delete.append(row.id)
        elif cause and row.status != "stale":
            update.append(replace(row, status="stale"))
            cause = "marked_stale"
        else:
            cause = "kept"
        counts[cause] = counts.get(cause, 0) + 1
    expired = tuple(a for a in anti if a.expires_at <= now)
    counts["anti_expired"] = len(expired)
    return MaintenancePlan(
        delete=tuple(delete),
        update=tuple(update),
        drop_anti=expired,
        report=MaintenanceReport(**counts),
    )


def _age(
    rows: Sequence[TemplateRow], now: float, config: MaintenanceConfig, counts: dict[str, int]
) -> tuple[list[str], list[TemplateRow]]:
    """Aging and the L0 cap: the ids to delete and the surviving rows."""
    delete: list[str] = []
    survivors: list[TemplateRow] = []
    for row in rows:
        cause = _aged(row, now, config)
        if cause:
            counts[cause] = counts.get(cause, 0) + 1
            delete.append(row.id)
        else:
            survivors.append(row)
    l0 = sorted((r for r in survivors if r.layer == "l0"), key=lambda r: (-last_activity(r), r.id))
    over = {r.id for r in l0[max(config.l0_max, 0) :]}
    counts["l0_over_cap"] = len(over)
    return delete + sorted(over), [r for r in survivors if r.id not in over]


def _aged(row: TemplateRow, now: float, config: MaintenanceConfig) -> str:
    idle = now - last_activity(row)
    if row.layer == "l0":
        if row.n_served == 0 and now - row.created_at > config.l0_grace_days * DAY:
            return "l0_never_reused"
        return "l0_unused" if idle > config.l0_stale_days * DAY else ""
    if row.status == "demoted":
        return "l1_demoted_expired" if idle > config.l1_demoted_days * DAY else ""
    return "l1_unused" if idle > config.l1_stale_days * DAY else ""


def drift(
    row: TemplateRow,
    catalog: Catalog,
    *,
    recompile: bool = True,
    options: CompileOptions = DEFAULT_OPTIONS,
    logic: str = LOGIC_SIG,
) -> str:
    """Why an entry no longer fits the catalog: `missing_tool`, `invalid` (unreadable, or
    the validator fails), `uncacheable` (re-compiling would not cache it, or an L1 entry
    would now be exact-only), `drifted` (a signature moved); empty when it still fits."""
    plan, errors = parse_plan(row.plan_json)
    if plan is None or errors:
        return "invalid"
    if any(name not in catalog for name in plan.tools):
        return "missing_tool"
    try:
        intent = Intent.from_json(json.loads(row.stored_intent_json))
        bindings = json.loads(row.bindings_json or "{}")
    except ValueError:
        return "invalid"
    if not isinstance(bindings, dict):
        return "invalid"
    executed = bound_plan(plan, bindings)
    if validate(executed, catalog):
        return "invalid"
    if (row.tools_sig, row.pool_sig, row.logic_sig) != (
        tools_sig(plan, catalog),
        pool_sig(intent, catalog),
        logic,
    ):
        return "drifted"
    if recompile:
        compiled = options.compile(
            executed, request=row.request_text, catalog=catalog, intent=intent
        )
        if isinstance(compiled, Uncacheable) or (row.layer == "l1" and compiled.exact_only):
            return "uncacheable"
    return ""


async def run_maintenance(
    store: PlanStore,
    catalog: Catalog,
    *,
    now: float,
    config: MaintenanceConfig = MaintenanceConfig(),
    options: CompileOptions = DEFAULT_OPTIONS,
    scope: str | None = None,
    logic: str = LOGIC_SIG,
) -> MaintenanceReport:
    """Read every entry and anti-entry (of `scope`, when given: `catalog` is that scope's
    tools, so entries of other skills or agents are none of its business), decide, apply;
    the report of what changed."""
    rows = await store.entries(limit=config.scan_limit)
    anti = await store.all_anti()
    if scope is not None:
        rows = [r for r in rows if r.scope == scope]
        anti = [a for a in anti if a.scope == scope]
    decided = plan_maintenance(
        rows, anti, catalog, now=now, config=config, options=options, logic=logic
    )
    if decided.delete:
        await store.delete_many(decided.delete)
    for row in decided.update:
        await store.put(row)
    for entry in decided.drop_anti:
        await store.delete_anti(entry.scope, entry.intent_sig, entry.shape_hash)
    return decided.report
