"""The Metnos-default baseline: its cascade re-implemented from the spec (Part 1), in process.

Per turn: the intent model runs first (one call, on every turn, L0 hits included; the
bench's oracle gives a perfect intent), then L0 0a (exact normalised text), 0b (cosine
>= 0.92 over rows that are not query-specific), L1 (autopath paths 1 and 2), else the
planner. A hit is checked against the world signatures (an L0 row is deleted on mismatch,
an L1 champion kept), digit/slug grounding of mutating arguments, and required-verb
coverage; it runs with no effect gate. A failed hit deletes its L0 row and, unless it
committed a mutation, falls through to the planner (simplification: straight to L3). The
epoch is bumped by hand only at the changes the stream's operator remembers.

Not re-implemented (they need parts of Metnos this bench does not model): the ~35
structural guards and output policy, the consent and mass-mutation gates, recovery and
the terminator, promotion of L0 rows into synthesised executors and the C2-provenance and
C2-prefilter deaths. Explicit feedback only: Metnos has no implicit signals.
"""

from __future__ import annotations

from embed import Embeddings, Vector
from execution import Run, run_plan
from metnos_rules import (
    cache_worthy,
    cacheable,
    dropped_verbs,
    is_query_specific,
    text_key,
    ungrounded,
)
from metnos_store import Clauses, L0Row, MetnosState
from oracle import Planner
from stream import Change
from systems import Report, TurnCtx, plan_and_run

from keel.plans.catalog import Catalog
from keel.plans.plan import Plan


class MetnosDefault:
    """The baseline (see the module docstring)."""

    name = "Metnos-default"
    tagged = False

    def __init__(self, embeddings: Embeddings) -> None:
        self.planner = Planner()
        self.embeddings = embeddings
        self.state = MetnosState()
        self.keys: dict[str, str] = {}
        """Turn id -> text key of its request (a reject deletes that L0 row)."""

    def _clauses(self, ctx: TurnCtx) -> Clauses:
        from stream import BY_NAME

        return BY_NAME[ctx.request.family].clauses

    def _admissible(self, plan: Plan, ctx: TurnCtx, clauses: Clauses) -> str:
        """'' when a hit may serve; else why not (`grounding` keeps the row)."""
        if ungrounded(plan, ctx.request.text):
            return "grounding"
        if dropped_verbs(plan, ctx.request.text, (v for v, _ in clauses)):
            return "verbs"
        return ""

    def _l0(self, ctx: TurnCtx, clauses: Clauses, vector: Vector | None) -> tuple[str, Plan] | None:
        key, state = text_key(ctx.request.text), self.state
        row = state.l0.get(key)
        layer = "l0a"
        if row is None:
            if vector is None:
                return None
            row, score = state.nearest_l0(vector)
            if row is None or score < 0.92:
                return None
            layer = "l0b"
        if not state.valid(row.plan, (row.tools_sig, row.pool_sig), clauses, ctx.catalog):
            state.drop_l0(row.key)
            return None
        why = self._admissible(row.plan, ctx, clauses)
        if why == "verbs":
            state.drop_l0(row.key)
        if why:
            return None
        row.uses, row.last_used = row.uses + 1, ctx.now
        return layer, row.plan

    def _l1(self, ctx: TurnCtx, clauses: Clauses, vector: Vector) -> tuple[str, Plan] | None:
        path = self.state.lookup_l1(clauses, vector)
        if path is None:
            return None
        if not self.state.valid(path.plan, (path.tools_sig, path.pool_sig), clauses, ctx.catalog):
            return None
        if self._admissible(path.plan, ctx, clauses):
            return None
        path.last_used = ctx.now
        return "l1", path.plan

    async def turn(self, ctx: TurnCtx) -> Report:
        clauses = self._clauses(ctx)
        turn_id = f"metnos-{ctx.turn.index}"
        self.keys[turn_id] = text_key(ctx.request.text)
        exact = self.keys[turn_id] in self.state.l0
        vector = None if exact else self.embeddings.vector(ctx.request.text)
        hit = self._l0(ctx, clauses, vector)
        if hit is None:
            vector = self.embeddings.vector(ctx.request.text)
            hit = self._l1(ctx, clauses, vector)
        report = Report(
            layer="l3", final=_EMPTY, intent_calls=1, embeddings=int(vector is not None)
        )
        if hit is not None:
            layer, plan = hit
            run, _ = await run_plan(
                plan, ctx.catalog, day=ctx.day, lang=ctx.request.lang, turn_id=turn_id, served=False
            )
            report.layer, report.final, report.served, report.served_plan = layer, run, run, plan
            if run.status == "ok":
                if layer != "l0a":
                    report.recorded = self._record(ctx, clauses, plan, run, turn_id, layer)
                return report
            if layer != "l1":
                self.state.drop_l0(self.keys[turn_id])
            if run.committed:
                return report
        plan, run = await plan_and_run(ctx, self.planner, turn_id)
        report.final, report.planner_calls = run, 1
        if run.status == "ok":
            report.recorded = self._record(ctx, clauses, plan, run, turn_id, "l3")
        return report

    def _record(
        self, ctx: TurnCtx, clauses: Clauses, plan: Plan, run: Run, turn_id: str, layer: str
    ) -> bool:
        text = ctx.request.text
        worthy = cache_worthy(plan, ((c.tool, c.output) for c in run.calls), run.skipped)
        if (
            not worthy
            or not cacheable(plan, text)
            or dropped_verbs(plan, text, (v for v, _ in clauses))
        ):
            return False
        vector = self.embeddings.vector(text)
        origin = {"l3": "auto", "l1": "autopath", "l0b": "cosine"}[layer]
        self.state.put_l0(
            L0Row(
                text_key(text), vector, plan, origin, clauses, is_query_specific(plan), ctx.now,
                *self.state.sigs(plan, clauses, ctx.catalog), last_used=ctx.now,
            )
        )  # fmt: skip
        if layer in ("l3", "l1"):
            self.state.observe(turn_id, clauses, plan, vector, ctx.now)
            if layer == "l3":
                self.state.seed_shadow(self.state.by_turn[turn_id], ctx.catalog, ctx.now)
        return True

    async def feedback(self, ctx: TurnCtx, report: Report, signal: str) -> None:
        turn_id = f"metnos-{ctx.turn.index}"
        if signal == "approve":
            self.state.verdict(turn_id, "ok", ctx.catalog, ctx.now)
        elif signal == "reject":
            self.state.drop_l0(self.keys.get(turn_id, ""))
            self.state.verdict(turn_id, "fail", ctx.catalog, ctx.now)

    async def nightly(self, catalog: Catalog, now: float) -> None:
        self.state.prune(catalog, now)

    def on_change(self, change: Change) -> None:
        if change.bump_epoch:
            self.state.epoch += 1


_EMPTY = Run(status="ok", calls=(), answer="", changes=(), committed=False)
