"""The plan cache facade over `MemoryPlanStore`: L0, L1, records, feedback, invalidation."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from cache_kit import SCOPE, catalog, plan, tool

from keel.plans.cache import CacheConfig, Decision, Hit, Miss, PlanCache, TurnRecord
from keel.plans.catalog import Catalog
from keel.plans.entries import CompileOptions
from keel.plans.feedback import DAY
from keel.plans.intent import Intent
from keel.plans.memory_store import MemoryPlanStore
from keel.plans.plan import Plan
from keel.plans.sql_store import SqlPlanStore
from keel.plans.store_port import PlanStore
from keel.stores.sql import SqlEventStore
from keel.stores.sqlite import SqliteEventStore

CAT = catalog()


class CountingCache(PlanCache):
    """Counts intent extractions."""

    extractions = 0

    def extract(self, request: str, catalog: Catalog, *, lang: str = "en") -> Intent:
        self.extractions += 1
        return super().extract(request, catalog, lang=lang)


BACKEND: dict[str, Any] = {}
"""The store backend of the running test (set by the `backend` fixture)."""


@pytest.fixture(autouse=True, params=["memory", "sqlite"])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[None]:
    """Every test runs on `MemoryPlanStore` and on `SqlPlanStore` over a SQLite file."""
    opened: list[SqlEventStore] = []
    BACKEND.update(kind=request.param, tmp=tmp_path, opened=opened)
    yield
    for events in opened:
        await events.close()
    BACKEND.clear()


async def make(config: CacheConfig | None = None) -> tuple[CountingCache, PlanStore]:
    store: PlanStore = MemoryPlanStore()
    if BACKEND["kind"] == "sqlite":
        opened: list[SqlEventStore] = BACKEND["opened"]
        events = await SqliteEventStore.open(BACKEND["tmp"] / f"plans{len(opened)}.db")
        opened.append(events)
        store = SqlPlanStore(events.engine)
    return CountingCache(store=store, scope=SCOPE, config=config), store


def listing(folder: str) -> tuple[str, Plan]:
    return f"list files in {folder}", plan(("list_files", {"folder": folder}))


def deleting(path: str) -> tuple[str, Plan]:
    return f"delete file {path}", plan(("delete_file", {"path": path}))


async def record(
    cache: PlanCache,
    request: str,
    executed: Plan,
    *,
    turn: str,
    cat: Catalog = CAT,
    now: float = 0.0,
    served: Hit | None = None,
    **kw: Any,
) -> tuple[Decision, ...]:
    intent = served.intent if served is not None else cache.extract(request, cat)
    return await cache.record_all(
        TurnRecord(
            request=request,
            executed=executed,
            intent=intent,
            catalog=cat,
            now=now,
            turn_id=turn,
            origin="planner",
            served=served,
            **kw,
        )
    )


async def lookup(
    cache: PlanCache, request: str, *, cat: Catalog = CAT, now: float = 1.0
) -> Hit | Miss:
    return await cache.lookup(request, catalog=cat, now=now)


def reasons(found: Hit | Miss) -> list[tuple[str, bool, str]]:
    return [(d.layer, d.hit, d.reason) for d in found.decisions]


async def promoted_listing(cache: PlanCache) -> None:
    """Record `list files in /tmp/docs` (turn t1) and approve it: a read-only L1 champion."""
    await record(cache, *listing("/tmp/docs"), turn="t1")
    assert await cache.feedback("t1", "approve", now=0.5) == "promoted"


# -- L0 ------------------------------------------------------------------------------------


async def test_exact_repeat_hits_l0_with_the_stored_intent_and_no_extraction() -> None:
    cache, _ = await make()
    decisions = await record(cache, *listing("/tmp/docs"), turn="t1")
    assert [(d.layer, d.hit, d.reason) for d in decisions] == [
        ("l0", True, "recorded"),
        ("l1", True, "recorded"),
    ]
    cache.extractions = 0
    found = await lookup(cache, "List files in /tmp/docs!")
    assert isinstance(found, Hit) and found.layer == "l0"
    assert found.intent.signature == "list:files"
    assert dict(found.slots) == {"folder": "/tmp/docs"}
    assert cache.extractions == 0 and not found.intent_extracted
    assert reasons(found) == [("l0", True, "hit")]
    assert found.entry.n_served == 1 and found.entry.last_served_at == 1.0


async def test_l0_keys_keep_language_and_path_case() -> None:
    cache, _ = await make()
    await record(cache, *listing("/tmp/docs"), turn="t1")
    assert isinstance(await lookup(cache, "list files in /tmp/Docs"), Miss)
    miss = await cache.lookup("list files in /tmp/docs", catalog=CAT, now=1.0, lang="it")
    assert isinstance(miss, Miss) and reasons(miss)[0] == ("l0", False, "no_entry")


async def test_last_success_wins_on_the_same_request() -> None:
    cache, store = await make()
    request, _ = listing("/tmp/docs")
    await record(cache, request, plan(("find_orders", {"customer": "x"})), turn="t0")
    await record(cache, *listing("/tmp/docs"), turn="t1")
    rows = await store.entries(layer="l0")
    assert len(rows) == 1 and "list_files" in rows[0].plan_json


# -- L1 ------------------------------------------------------------------------------------


async def test_slot_variant_is_served_by_l1_only_after_promotion() -> None:
    cache, _ = await make()
    await record(cache, *listing("/tmp/docs"), turn="t1")
    before = await lookup(cache, "list files in /tmp/other")
    assert isinstance(before, Miss)
    assert reasons(before) == [("l0", False, "no_entry"), ("l1", False, "no_entry")]
    assert before.intent.signature == "list:files" and before.intent_extracted
    assert await cache.feedback("t1", "approve", now=0.5) == "promoted"
    after = await lookup(cache, "list files in /tmp/other")
    assert isinstance(after, Hit) and after.layer == "l1"
    assert dict(after.slots) == {"folder": "/tmp/other"}
    assert reasons(after) == [("l0", False, "no_entry"), ("l1", True, "hit")]


async def test_implicit_signals_alone_do_not_promote_quickly() -> None:
    cache, _ = await make()
    await record(cache, *listing("/tmp/docs"), turn="t1")
    assert await cache.feedback("t1", "implicit_ok", now=0.5) == "none"
    assert isinstance(await lookup(cache, "list files in /tmp/other"), Miss)


async def test_effectful_template_needs_more_than_one_approve() -> None:
    cache, _ = await make()
    await record(cache, *deleting("/tmp/f0.txt"), turn="t0")
    assert await cache.feedback("t0", "approve", now=0.5) == "none"
    assert isinstance(await lookup(cache, "delete file /tmp/new.txt"), Miss)
    for i in range(1, 30):
        await record(cache, *deleting(f"/tmp/f{i}.txt"), turn=f"t{i}", now=i)
        change = await cache.feedback(f"t{i}", "approve", now=i)
        if change == "promoted":
            break
    assert change == "promoted" and i > 10
    found = await lookup(cache, "delete file /tmp/new.txt", now=100.0)
    assert isinstance(found, Hit) and dict(found.slots) == {"path": "/tmp/new.txt"}


async def test_polarity_and_coverage_rejections_carry_reason_codes() -> None:
    cache, _ = await make()
    await promoted_listing(cache)
    negated = await lookup(cache, "list files not in /tmp/docs")
    assert isinstance(negated, Miss) and reasons(negated)[-1] == ("l1", False, "polarity")
    assert negated.decisions[-1].entry_id is not None
    extra = await lookup(cache, "list files in /tmp/docs and /tmp/x")
    assert isinstance(extra, Miss) and reasons(extra)[-1] == ("l1", False, "binder_coverage")
    missing = await lookup(cache, "list files")
    assert isinstance(missing, Miss) and reasons(missing)[-1] == (
        "l1",
        False,
        "binder_missing_slot",
    )


async def test_anti_entry_blocks_l1_and_is_passed_as_exclusion() -> None:
    cache, _ = await make()
    await promoted_listing(cache)
    served = await lookup(cache, "list files in /tmp/other", now=10.0)
    assert isinstance(served, Hit)
    await record(cache, "list files in /tmp/other", served.plan, turn="t2", served=served, now=10.0)
    assert await cache.feedback("t2", "repeat", now=11.0) == "anti_repeat"
    blocked = await lookup(cache, "list files in /tmp/third", now=12.0)
    assert isinstance(blocked, Miss)
    assert reasons(blocked)[-1] == ("l1", False, "anti_entry")
    assert blocked.exclusions == (served.entry.shape_hash,)
    later = await lookup(cache, "list files in /tmp/third", now=11.0 + 3601.0)
    assert isinstance(later, Hit) and later.layer == "l1"


async def test_anti_entry_also_blocks_an_exact_l0_replay() -> None:
    cache, _ = await make()
    await record(cache, *listing("/tmp/docs"), turn="t1")
    served = await lookup(cache, "list files in /tmp/docs", now=2.0)
    assert isinstance(served, Hit)
    await record(cache, "list files in /tmp/docs", served.plan, turn="t2", served=served, now=2.0)
    await cache.feedback("t2", "repeat", now=3.0)
    again = await lookup(cache, "list files in /tmp/docs", now=4.0)
    assert isinstance(again, Miss) and reasons(again)[0] == ("l0", False, "anti_entry")


async def test_approve_lifts_the_anti_entry() -> None:
    cache, store = await make()
    await promoted_listing(cache)
    await cache.feedback("t1", "repeat", now=1.0)
    assert await store.all_anti()
    await cache.feedback("t1", "approve", now=2.0)
    assert not await store.all_anti()


async def test_reject_on_an_l1_served_turn_demotes_the_serving_entry() -> None:
    cache, store = await make()
    await promoted_listing(cache)
    served = await lookup(cache, "list files in /tmp/other", now=5.0)
    assert isinstance(served, Hit)
    decisions = await record(
        cache, "list files in /tmp/other", served.plan, turn="t2", served=served
    )
    assert [d.layer for d in decisions] == ["l0", "l1"]
    change = await cache.feedback("t2", "reject", now=6.0)
    assert change == "l0_deleted,demoted"
    row = await store.get(served.entry.id)
    assert row is not None and row.status == "demoted"
    anti = await store.all_anti()
    assert len(anti) == 1 and anti[0].expires_at == pytest.approx(6.0 + 30 * DAY)
    miss = await lookup(cache, "list files in /tmp/again", now=7.0)
    assert isinstance(miss, Miss) and reasons(miss)[-1] == ("l1", False, "status")
    assert await cache.feedback("t2", "approve", now=8.0) == "reactivated"
    assert isinstance(await lookup(cache, "list files in /tmp/again", now=9.0), Hit)


async def test_reject_on_an_l0_served_turn_deletes_it_and_reaches_l1() -> None:
    cache, store = await make()
    await promoted_listing(cache)
    l1_before = (await store.entries(layer="l1"))[0]
    served = await lookup(cache, "list files in /tmp/docs", now=2.0)
    assert isinstance(served, Hit) and served.layer == "l0"
    decisions = await record(
        cache, "list files in /tmp/docs", served.plan, turn="t2", served=served
    )
    assert [(d.layer, d.reason) for d in decisions] == [("l1", "recorded")]
    change = await cache.feedback("t2", "reject", now=3.0)
    assert change.startswith("l0_deleted")
    assert await store.get(served.entry.id) is None
    l1_after = await store.get(l1_before.id)
    assert l1_after is not None and l1_after.beta == l1_before.beta + 1.0
    observed = await store.observations(SCOPE, "list:files")
    assert [o.signal for o in observed] == ["approve", "reject"]


async def test_approve_on_an_l0_served_turn_promotes_l1() -> None:
    cache, _ = await make()
    await record(cache, *listing("/tmp/docs"), turn="t1")
    served = await lookup(cache, "list files in /tmp/docs")
    assert isinstance(served, Hit) and served.layer == "l0"
    await record(cache, "list files in /tmp/docs", served.plan, turn="t2", served=served)
    assert await cache.feedback("t2", "approve", now=2.0) == "promoted"
    assert isinstance(await lookup(cache, "list files in /tmp/other", now=3.0), Hit)


async def test_l1_served_turn_writes_the_exact_l0_entry() -> None:
    cache, _ = await make()
    await promoted_listing(cache)
    served = await lookup(cache, "list files in /tmp/other")
    assert isinstance(served, Hit)
    await record(cache, "list files in /tmp/other", served.plan, turn="t2", served=served)
    again = await lookup(cache, "list files in /tmp/other", now=3.0)
    assert isinstance(again, Hit) and again.layer == "l0" and again.entry.origin == "l1"


async def test_served_failure_deletes_l0_and_keeps_l1() -> None:
    cache, store = await make()
    await promoted_listing(cache)
    exact = await lookup(cache, "list files in /tmp/docs")
    assert isinstance(exact, Hit) and exact.layer == "l0"
    await cache.served_failed(exact, now=2.0, committed=False)
    assert await store.get(exact.entry.id) is None
    variant = await lookup(cache, "list files in /tmp/other")
    assert isinstance(variant, Hit) and variant.layer == "l1"
    await cache.served_failed(variant, now=3.0, committed=True)
    assert (await store.get(variant.entry.id)) is not None


async def test_champion_is_the_best_lower_bound() -> None:
    cache, store = await make()
    await promoted_listing(cache)
    other = plan(("list_files", {"folder": "/tmp/docs"}), ("count_items", {"limit": 3}))
    # A second shape for the same intent, approved many times: it becomes the champion.
    for i in range(5):
        await record(cache, "list files in /tmp/docs", other, turn=f"o{i}", now=i)
        await cache.feedback(f"o{i}", "approve", now=i)
    found = await lookup(cache, "list files in /tmp/other", now=10.0)
    assert isinstance(found, Hit) and len(found.plan.tool_steps) == 2
    assert len(await store.by_intent(SCOPE, "list:files")) == 2


# -- records -------------------------------------------------------------------------------


async def test_uncacheable_records() -> None:
    cache, store = await make()
    undo = catalog(tool("undo_last_turn", "write", turn="string"))
    (decision,) = await record(
        cache, "undo the last turn", plan(("undo_last_turn", {"turn": "1"})), turn="u", cat=undo
    )
    assert decision == Decision(layer="l0", hit=False, reason="uncacheable:context_bound_tool")
    (failed,) = await record(cache, *listing("/tmp/docs"), turn="f", ok=False)
    assert failed.reason == "uncacheable:failed_step"
    assert await store.counts() == {**(await store.counts()), "l0": 0, "observations": 0}


async def test_exact_only_template_stays_in_l0() -> None:
    cache, store = await make()
    decisions = await record(
        cache, "list files", plan(("list_files", {"folder": "/tmp/x"})), turn="e"
    )
    assert [(d.layer, d.hit, d.reason) for d in decisions] == [
        ("l0", True, "recorded"),
        ("l1", False, "uncacheable:exact_only"),
    ]
    assert await cache.feedback("e", "approve", now=1.0) == "none"
    assert not await store.entries(layer="l1")
    served = await lookup(cache, "list files")
    assert isinstance(served, Hit) and served.layer == "l0"
    await record(cache, "list files", served.plan, turn="e2", served=served)
    assert await cache.feedback("e2", "approve", now=2.0) == "none"
    assert not await store.entries(layer="l1")
    assert await cache.feedback("e2", "reject", now=3.0) == "l0_deleted"


async def test_exact_only_turns_are_no_l1_evidence_for_their_shape() -> None:
    cache, store = await make()
    await record(cache, "list files", plan(("list_files", {"folder": "/tmp/x"})), turn="e")
    await cache.feedback("e", "approve", now=1.0)
    await record(cache, *listing("/tmp/docs"), turn="t1", now=2.0)
    (exact, slotted) = await store.observations(SCOPE, "list:files")
    assert exact.shape_hash == slotted.shape_hash and exact.exact_only
    assert await cache.feedback("t1", "approve", now=3.0) == "promoted"
    (row,) = await store.entries(layer="l1")
    assert (row.alpha, row.beta) == (2.0, 1.0)  # t1's approve only


async def test_feedback_reaches_a_turn_behind_many_later_observations() -> None:
    cache, store = await make()
    await record(cache, *listing("/tmp/docs"), turn="t0")
    for i in range(1, 40):
        await record(cache, *listing(f"/tmp/d{i}"), turn=f"t{i}", now=float(i))
    assert (await store.counts())["observations"] == 40
    assert await cache.feedback("t0", "approve", now=50.0) == "promoted"


async def test_a_second_signal_on_a_turn_replaces_the_first_in_the_evidence() -> None:
    cache, store = await make()
    await record(cache, *listing("/tmp/docs"), turn="t1")
    assert await cache.feedback("t1", "implicit_ok", now=1.0) == "none"
    assert await cache.feedback("t1", "approve", now=2.0) == "promoted"
    await record(cache, *listing("/tmp/other"), turn="t2", now=3.0)
    assert await cache.feedback("t2", "implicit_fail", now=4.0) == "updated"
    (row,) = await store.entries(layer="l1")
    assert (row.alpha, row.beta) == (2.0, 1.3)  # approve 1 (not 1.3) + implicit_fail 0.3


async def test_record_refuses_a_plan_missing_an_asked_verb() -> None:
    cache, _ = await make()
    request = "list files in /tmp/docs and delete file /tmp/docs/a.txt"
    (decision,) = await record(
        cache, request, plan(("list_files", {"folder": "/tmp/docs"})), turn="v"
    )
    assert decision.reason == "uncacheable:verb_coverage"


async def test_intent_incomplete_goes_to_l0_only() -> None:
    cache, _ = await make()
    miss = await lookup(cache, "hello there")
    assert isinstance(miss, Miss) and reasons(miss)[-1] == ("l1", False, "intent_incomplete")


async def test_feedback_edge_cases() -> None:
    cache, _ = await make()
    assert await cache.feedback("nobody", "approve", now=1.0) == "no_observation"
    await record(cache, *listing("/tmp/docs"), turn="t1")
    assert await cache.feedback("t1", "love it", now=1.0) == "unknown_signal"


async def test_disabled_and_context_bound_lookups() -> None:
    cache, _ = await make(CacheConfig(enabled=False))
    assert reasons(await lookup(cache, "list files in /tmp/docs")) == [("l0", False, "disabled")]
    (decision,) = await record(cache, *listing("/tmp/docs"), turn="t")
    assert decision.reason == "disabled"
    cache, _ = await make()
    await record(cache, *listing("/tmp/docs"), turn="t")
    bound = await cache.lookup("list files in /tmp/docs", catalog=CAT, now=1.0, context_bound=True)
    assert isinstance(bound, Miss) and reasons(bound) == [("l0", False, "context_bound")]
    no_l1 = (await make(CacheConfig(l1=False)))[0]
    assert reasons(await lookup(no_l1, "list files in /tmp/x"))[-1] == ("l1", False, "disabled")


# -- invalidation --------------------------------------------------------------------------


async def test_contract_change_invalidates_dependent_entries_only() -> None:
    cache, store = await make()
    await promoted_listing(cache)
    await record(cache, *deleting("/tmp/a.txt"), turn="d1")
    changed = catalog(tool("delete_file", "delete", code="v2", path="string"))
    stale = await lookup(cache, "delete file /tmp/a.txt", cat=changed)
    assert isinstance(stale, Miss) and reasons(stale)[0] == ("l0", False, "signature")
    assert not [r for r in await store.entries(layer="l0") if "delete_file" in r.plan_json]
    assert isinstance(await lookup(cache, "list files in /tmp/docs", cat=changed), Hit)
    assert isinstance(await lookup(cache, "list files in /tmp/other", cat=changed), Hit)


async def test_l1_signature_miss_marks_stale_and_a_fresh_success_revalidates() -> None:
    cache, store = await make()
    await promoted_listing(cache)
    changed = catalog(tool("list_files", code="v2", folder="string"))
    miss = await lookup(cache, "list files in /tmp/other", cat=changed)
    assert isinstance(miss, Miss) and reasons(miss)[-1] == ("l1", False, "signature")
    (row,) = await store.entries(layer="l1")
    assert row.status == "stale"
    decisions = await record(cache, *listing("/tmp/more"), turn="t9", cat=changed)
    assert decisions[-1].reason == "revalidated"
    assert isinstance(await lookup(cache, "list files in /tmp/other", cat=changed), Hit)


async def test_maintain_runs_over_the_store() -> None:
    cache, store = await make()
    await record(cache, *listing("/tmp/docs"), turn="t1")
    report = await cache.maintain(CAT, now=15 * DAY)
    assert report.l0_never_reused == 1
    assert not await store.entries(layer="l0")


# -- Metnos preset -------------------------------------------------------------------------


async def test_metnos_preset_flips_the_documented_knobs() -> None:
    config = CacheConfig.metnos_defaults()
    assert config.extract_before_l0 and not config.l0_observations
    assert not (config.admission.coverage or config.admission.polarity or config.admission.licence)
    assert config.feedback.promote_on_approvals == 1 and config.feedback.shadow_seeding
    assert config.feedback.demote_after_rejects == 3


async def test_metnos_preset_behaviour() -> None:
    cache, store = await make(CacheConfig.metnos_defaults())
    await record(cache, *deleting("/tmp/a.txt"), turn="t1")
    assert await cache.feedback("t1", "approve", now=1.0) == "promoted"  # effectful, one approve
    exact = await lookup(cache, "delete file /tmp/a.txt")
    assert isinstance(exact, Hit) and exact.layer == "l0" and exact.intent_extracted
    await record(cache, "delete file /tmp/a.txt", exact.plan, turn="t2", served=exact)
    assert await cache.feedback("t2", "approve", now=2.0) == "no_observation"
    await record(cache, *listing("/tmp/docs"), turn="t3")
    await cache.feedback("t3", "approve", now=3.0)
    negated = await lookup(cache, "list files not in /tmp/docs")
    assert isinstance(negated, Hit)  # no polarity check: the false replay Metnos allows
    assert (await store.counts())["l1_active"] == 2


async def test_metnos_shadow_seeding() -> None:
    cache, store = await make(CacheConfig.metnos_defaults())
    long_plan = plan(
        ("list_files", {"folder": "/tmp/docs"}),
        ("count_items", {"limit": 1}),
        ("count_items", {"limit": 2}),
        ("count_items", {"limit": 3}),
    )
    first = await record(cache, "list files in /tmp/docs", long_plan, turn="s1")
    assert first[-1].reason == "recorded"
    second = await record(cache, "list files in /tmp/docs", long_plan, turn="s2")
    assert second[-1].reason == "shadow"
    (row,) = await store.entries(layer="l1")
    assert row.status == "shadow"
    assert await cache.feedback("s2", "approve", now=1.0) == "confirmed"


# -- compile options -----------------------------------------------------------------------


async def test_compile_options_reach_the_compiler_and_the_binder() -> None:
    approvals = catalog(tool("get_approval", what="string"))
    executed = plan(("get_approval", {"what": "x"}))
    cache, _ = await make()
    (refused,) = await record(cache, "get approval", executed, turn="a", cat=approvals)
    assert refused.reason == "uncacheable:context_bound_tool"
    lax = CacheConfig(compile_options=CompileOptions(context_bound=frozenset()))
    cache, _ = await make(lax)
    decisions = await record(cache, "get approval", executed, turn="a", cat=approvals)
    assert decisions[0].reason == "recorded"

    people = catalog(tool("find_contacts", person="string"))
    named = CacheConfig(compile_options=CompileOptions(gazetteers={"people": ("Alice", "Bob")}))
    cache, _ = await make(named)
    found = plan(("find_contacts", {"person": "Alice"}))
    await record(cache, "find contacts of Alice", found, turn="c1", cat=people)
    assert await cache.feedback("c1", "approve", now=1.0) == "promoted"
    hit = await lookup(cache, "find contacts of Bob", cat=people)
    assert isinstance(hit, Hit) and dict(hit.slots) == {"person": "Bob"}
    assert hit.entry.slot_sig == "name:people"
    assert isinstance(await lookup(cache, "find contacts of Carol", cat=people), Miss)
