"""A GPTCache-style plan cache: embed the request, serve the nearest cached plan at cosine >= 0.8.

What GPTCache does for responses, applied to plans: one vector store of (request
embedding, the concrete plan that succeeded for it), a static similarity threshold (its
common default, 0.8), LRU eviction at 1,000 entries, no intent, no signatures, no
feedback. To be generous, a served plan that fails is evicted and, unless it already
changed the world, the turn falls through to the planner.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
from embed import Embeddings, Vector, cosine_max
from execution import run_plan
from oracle import Planner
from stream import Change
from systems import Report, TurnCtx, plan_and_run

from keel.plans.catalog import Catalog
from keel.plans.plan import Plan

THRESHOLD = 0.8
MAX_SIZE = 1000


class GptCacheStyle:
    """The baseline (see the module docstring)."""

    name = "GPTCache-style"
    tagged = False

    def __init__(self, embeddings: Embeddings, threshold: float = THRESHOLD) -> None:
        self.planner = Planner()
        self.embeddings = embeddings
        self.threshold = threshold
        self._entries: OrderedDict[str, tuple[Vector, Plan]] = OrderedDict()
        self._matrix: Vector | None = None
        self._keys: list[str] = []

    def _nearest(self, vector: Vector) -> tuple[str | None, float]:
        if self._matrix is None:
            self._keys = list(self._entries)
            rows = [self._entries[k][0] for k in self._keys]
            self._matrix = np.stack(rows) if rows else np.zeros((0, vector.shape[0]), np.float32)
        index, score = cosine_max(vector, self._matrix)
        return (self._keys[index] if index >= 0 else None), score

    def _put(self, text: str, vector: Vector, plan: Plan) -> None:
        self._entries[text] = (vector, plan)
        self._entries.move_to_end(text)
        while len(self._entries) > MAX_SIZE:
            self._entries.popitem(last=False)
        self._matrix = None

    def _evict(self, text: str) -> None:
        self._entries.pop(text, None)
        self._matrix = None

    async def turn(self, ctx: TurnCtx) -> Report:
        text = ctx.request.text
        vector = self.embeddings.vector(text)
        key, score = self._nearest(vector)
        turn_id = f"gpt-{ctx.turn.index}"
        if key is not None and score >= self.threshold:
            plan = self._entries[key][1]
            self._entries.move_to_end(key)
            run, _ = await run_plan(
                plan, ctx.catalog, day=ctx.day, lang=ctx.request.lang, turn_id=turn_id, served=False
            )
            report = Report(layer="hit", final=run, served=run, served_plan=plan, embeddings=1)
            if run.status == "ok":
                return report
            self._evict(key)
            if run.committed:
                return report
            plan, fresh = await plan_and_run(ctx, self.planner, turn_id + "-l3")
            report.final, report.planner_calls = fresh, 1
            if fresh.status == "ok":
                self._put(text, vector, plan)
            return report
        plan, run = await plan_and_run(ctx, self.planner, turn_id)
        if run.status == "ok":
            self._put(text, vector, plan)
        return Report(layer="l3", final=run, planner_calls=1, embeddings=1, recorded=True)

    async def feedback(self, ctx: TurnCtx, report: Report, signal: str) -> None:
        del ctx, report, signal

    async def nightly(self, catalog: Catalog, now: float) -> None:
        del catalog, now

    def on_change(self, change: Change) -> None:
        del change
