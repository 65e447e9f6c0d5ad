"""Keel's plan cache (`keel.plans.cache.PlanCache`) as a compared system.

Per turn: `lookup` (L0 exact key with the stored intent, so a plain L0 hit extracts no
intent; else the model-free intent extractor and L1). A hit runs the template with its
bound slots through `keel.plans.executor.execute` with `served=True` (the effect gate is
on) and is recorded as served; a failed hit calls `served_failed` and, unless it committed
an effect, falls through to the planner. A miss plans, runs unserved and records. The
intent extractor is lexical, yet the bench counts one intent call whenever it runs, as if
it were a small model (conservative for Keel; `Hit.intent_extracted` / `Miss`).

A request of a signed-in customer (the adversarial families) is served and recorded in
that customer's context, as the loop does (`keel.loop.cascade`, `cascade_context`):
`lookup(memory=)` and the run's runtime carry the memory entries the skill may read (the
customer's id and name, for `${MEMORY:key}`), and `record(context=)` gets that memory, the
earlier turn that looked the customer up (their profile and orders) and this turn's step
outputs. Every turn is recorded with its step outputs, as the loop records.

`KeelSystem(..., config=CacheConfig.metnos_defaults())` is the same cache with Metnos's
presets (intent first, MIN_OBS 1, shadow seeding, no coverage/polarity/licence checks).
"""

from __future__ import annotations

from dataclasses import replace

from execution import Run, run_plan
from oracle import Planner
from stream import Change
from systems import Report, TurnCtx, plan_and_run
from world import PRINCIPAL_BY_EMAIL

from keel.plans.cache import CacheConfig, Hit, PlanCache
from keel.plans.catalog import Catalog
from keel.plans.provenance import RecordContext
from keel.plans.store_port import PlanStore

SCOPE = "bench/plancache"


class KeelSystem:
    """The system under test (see the module docstring)."""

    tagged = True

    def __init__(
        self, store: PlanStore, *, name: str = "Keel", config: CacheConfig | None = None
    ) -> None:
        self.name = name
        self.planner = Planner()
        self.store = store
        base = config or CacheConfig()
        logic = replace(base, logic_version="planner-verbose-tasks=False")
        self.cache = PlanCache(store=store, scope=SCOPE, config=logic)
        self.maintenance: list[object] = []

    def _id(self, ctx: TurnCtx) -> str:
        return f"{self.name}-{ctx.turn.index}"

    async def turn(self, ctx: TurnCtx) -> Report:
        text, lang, turn_id = ctx.request.text, ctx.request.lang, self._id(ctx)
        memory, earlier = _principal_context(ctx)
        found = await self.cache.lookup(
            text, catalog=ctx.catalog, now=ctx.now, lang=lang, memory=memory
        )
        report = Report(
            layer="l3",
            final=_EMPTY,
            intent_calls=int(found.intent_extracted),
            reasons=tuple(f"{d.layer}:{d.reason}" for d in found.decisions if not d.hit),
        )
        if isinstance(found, Hit):
            run, _ = await run_plan(
                found.plan,
                ctx.catalog,
                day=ctx.day,
                lang=lang,
                turn_id=turn_id,
                served=True,
                slots=found.slots,
                memory=memory,
            )
            report.layer, report.final, report.served = found.layer, run, run
            report.served_plan, report.served_slots = found.plan, dict(found.slots)
            if run.status == "ok":
                await self.cache.record(
                    text, executed=found.plan, intent=found.intent, catalog=ctx.catalog,
                    now=ctx.now, turn_id=turn_id, origin="cache", served=found, lang=lang,
                    context=_context(memory, earlier, run),
                )  # fmt: skip
                report.recorded = True
                return report
            await self.cache.served_failed(found, now=ctx.now, committed=run.committed)
            if run.committed:
                return report
        plan, run = await plan_and_run(ctx, self.planner, turn_id + "-l3")
        report.final, report.planner_calls = run, 1
        decision = await self.cache.record(
            text, executed=plan, intent=found.intent, catalog=ctx.catalog, now=ctx.now,
            turn_id=turn_id, origin="planner", ok=run.status == "ok", lang=lang,
            context=_context(memory, earlier, run),
        )  # fmt: skip
        report.recorded = decision.reason in ("recorded", "revalidated", "shadow")
        report.reasons += (f"record:{decision.reason}",)
        return report

    async def feedback(self, ctx: TurnCtx, report: Report, signal: str) -> None:
        del report
        await self.cache.feedback(self._id(ctx), signal, now=ctx.now)

    async def nightly(self, catalog: Catalog, now: float) -> None:
        self.maintenance.append(await self.cache.maintain(catalog, now=now))

    def on_change(self, change: Change) -> None:
        """Tool changes need nothing (their digests are in every entry's signatures). A
        planner change is, in Keel, an edit of the skill's text or of the planner prompt,
        whose digest the loop folds into the cache's logic signature automatically
        (`keel.loop.cascade.skill_logic_version`); here the planner's logic version
        stands for that digest."""
        version = f"planner-verbose-tasks={change.version.verbose_tasks}"
        if version != self.cache.config.logic_version:
            config = replace(self.cache.config, logic_version=version)
            self.cache = PlanCache(store=self.store, scope=SCOPE, config=config)


def _principal_context(ctx: TurnCtx) -> tuple[dict[str, object], tuple[str, ...]]:
    """The asking customer's memory entries and earlier turns (none for other requests)."""
    who = PRINCIPAL_BY_EMAIL.get(ctx.request.principal)
    if who is None:
        return {}, ()
    return who.memory(), (who.profile(),)


def _context(memory: dict[str, object], earlier: tuple[str, ...], run: Run) -> RecordContext:
    """What the conversation held besides the request (`keel.loop.cascade_context`)."""
    return RecordContext(memory=memory, earlier=earlier, outputs=dict(run.outputs))


_EMPTY = Run(status="ok", calls=(), answer="", changes=(), committed=False)
