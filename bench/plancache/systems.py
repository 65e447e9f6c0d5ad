"""What a compared system is: one turn in, a `Report` out; plus the no-cache system.

Every system gets the same `TurnCtx` (request, catalog version, day, time) and its own
`Planner`, runs plans through `execution.run_plan`, and reports which layer answered, the
cache-served attempt (if any), the run whose effects stand, and the model calls it paid
for intent extraction and planning (fillers and synthesis are read off the runs).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Protocol

from execution import Run, run_plan
from oracle import Planner
from stream import Change, Request, Turn
from tools import Version

from keel.plans.catalog import Catalog
from keel.plans.plan import Plan


@dataclass(frozen=True, kw_only=True, slots=True)
class TurnCtx:
    """What a system knows when a turn starts."""

    turn: Turn
    request: Request
    version: Version
    catalog: Catalog
    day: date

    @property
    def now(self) -> float:
        return self.turn.now


@dataclass(kw_only=True, slots=True)
class Report:
    """What a system did with one turn."""

    layer: str
    """`l3` (planned), or the cache layer that served (`l0`, `l1`, `l0a`, `l0b`, `hit`...)."""
    final: Run
    """The run whose effects and answer stand."""
    served: Run | None = None
    """The cache-served attempt, when a cache served (it may have failed and fallen through)."""
    served_plan: Plan | None = None
    served_slots: Mapping[str, object] = field(default_factory=dict)
    intent_calls: int = 0
    planner_calls: int = 0
    embeddings: int = 0
    recorded: bool = False
    """The system stored something from this turn (an entry or an observation)."""
    reasons: tuple[str, ...] = ()
    """Cache decision reasons (telemetry), for the misses histogram."""


class System(Protocol):
    """One compared system."""

    name: str
    planner: Planner
    tagged: bool
    """Unsafe replays are judged on the executor's provenance tags (Keel) or on values."""

    async def turn(self, ctx: TurnCtx) -> Report: ...
    async def feedback(self, ctx: TurnCtx, report: Report, signal: str) -> None: ...
    async def nightly(self, catalog: Catalog, now: float) -> None: ...
    def on_change(self, change: Change) -> None: ...


async def plan_and_run(ctx: TurnCtx, planner: Planner, turn_id: str) -> tuple[Plan, Run]:
    """One planner call, then the fresh plan run (unserved) on a copy of the day's world."""
    plan = planner.propose(ctx.request, ctx.version)
    run, _ = await run_plan(
        plan, ctx.catalog, day=ctx.day, lang=ctx.request.lang, turn_id=turn_id, served=False
    )
    return plan, run


class NoCache:
    """Every turn goes to the planner."""

    name = "no cache"
    tagged = False

    def __init__(self) -> None:
        self.planner = Planner()

    async def turn(self, ctx: TurnCtx) -> Report:
        _, run = await plan_and_run(ctx, self.planner, f"none-{ctx.turn.index}")
        return Report(layer="l3", final=run, planner_calls=1)

    async def feedback(self, ctx: TurnCtx, report: Report, signal: str) -> None:
        del ctx, report, signal

    async def nightly(self, catalog: Catalog, now: float) -> None:
        del catalog, now

    def on_change(self, change: Change) -> None:
        del change
