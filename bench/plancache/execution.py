"""Running a plan on a copy of the world through Keel's executor, and what came of it.

Every system, cache or not, executes through `keel.plans.executor.execute` over the same
mock tools, so differences in outcome come from which plan ran, not from how. Keel's
served plans run with `served=True` (the effect gate applies); fresh plans and the
baselines' cached plans run with `served=False` (the baselines have no gate).

A `Run` keeps what the judge compares: the calls made (tool and resolved arguments), the
answer text, the world's changes against the day's baseline, and the provenance of every
effectful call's arguments.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import lru_cache

from handlers import invoke
from world import World

from keel.plans.catalog import Catalog
from keel.plans.executor import Journal, StepResult, execute
from keel.plans.plan import Plan, Step
from keel.plans.provenance import MEMORY_PREFIX
from keel.plans.store_port import JournalEntry


@dataclass(frozen=True, kw_only=True, slots=True)
class Call:
    """One tool call that reached the world."""

    tool: str
    args: str
    """The resolved arguments as key-sorted JSON."""
    effectful: bool
    provenance: Mapping[str, str]
    output: object = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Run:
    """What running one plan did."""

    status: str
    calls: tuple[Call, ...]
    answer: str
    changes: tuple[object, ...]
    committed: bool
    """An effectful step took effect (or may have)."""
    refusals: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    """Tools of the steps skipped (their input was empty)."""
    fillers: int = 0
    synthesis: int = 0
    """1 when the plan succeeded with an empty answer: the finaliser asks the model."""
    outputs: Mapping[int, str] = field(default_factory=dict)
    """Step id -> the text of that step's output (what a recorder sees of this turn)."""

    @property
    def trace(self) -> tuple[tuple[str, str], ...]:
        """The calls without provenance: what the gold class compares."""
        return tuple((c.tool, c.args) for c in self.calls)

    def same_outcome(self, other: Run) -> bool:
        """Same calls, same answer, same end state. A run with an empty answer is worded by
        the finaliser's model call (`synthesis`) from its outputs in the asking customer's
        context: with the same calls and end state, that is the gold answer."""
        return (
            self.trace == other.trace
            and (self.answer == other.answer or self.synthesis > 0)
            and self.changes == other.changes
        )


class WorldInvoker:
    """The `StepInvoker` port over the mock tools of one world."""

    def __init__(self, world: World, catalog: Catalog) -> None:
        self.world = world
        self.catalog = catalog
        self.calls: list[tuple[int, str, str, object]] = []

    async def invoke(self, step: Step, args: Mapping[str, object]) -> StepResult:
        outcome = invoke(self.world, self.catalog, step.tool, args)
        text = json.dumps(args, sort_keys=True, default=str)
        self.calls.append((step.id, step.tool, text, outcome.output))
        if not outcome.ok:
            return StepResult(ok=False, text=outcome.error or "", error_code=outcome.error)
        return StepResult(ok=True, output=outcome.output, text=json.dumps(outcome.output))


class DictJournal:
    """An in-memory effect journal."""

    def __init__(self) -> None:
        self._entries: dict[tuple[str, int], JournalEntry] = {}

    async def entries(self, turn_id: str) -> list[JournalEntry]:
        return [e for (t, _), e in self._entries.items() if t == turn_id]

    async def write(self, entry: JournalEntry) -> None:
        self._entries[(entry.turn_id, entry.step_id)] = entry

    def forget(self, turn_id: str) -> None:
        """Drop a finished turn's entries (keeps memory flat over a long stream)."""
        for key in [k for k in self._entries if k[0] == turn_id]:
            del self._entries[key]


@lru_cache(maxsize=16)
def baseline(day: date) -> World:
    """The day's starting world (shared; copy before running anything on it)."""
    return World.baseline(day)


def runtime_for(
    day: date, lang: str, memory: Mapping[str, object] | None = None
) -> dict[str, object]:
    """The runtime context of a turn on `day`; `memory` (the asking customer's entries) is
    carried as `memory:<key>` for `${MEMORY:key}`, as the loop's runtime values do."""
    return {
        **{MEMORY_PREFIX + key: value for key, value in (memory or {}).items()},
        "actor": "user",
        "lang": lang,
        "now": day,
        "today": day.isoformat(),
        "now_plus_1d": (day + timedelta(days=1)).isoformat(),
        "now_minus_1d": (day - timedelta(days=1)).isoformat(),
    }


async def run_plan(
    plan: Plan,
    catalog: Catalog,
    *,
    day: date,
    lang: str,
    turn_id: str,
    served: bool,
    slots: Mapping[str, object] | None = None,
    world: World | None = None,
    journal: Journal | None = None,
    memory: Mapping[str, object] | None = None,
) -> tuple[Run, World]:
    """Run `plan` on `world` (default: a fresh copy of the day's baseline); `memory` is the
    asking customer's (Keel's served plans read `${MEMORY:key}` from it)."""
    base = baseline(day)
    world = world if world is not None else base.copy()
    invoker = WorldInvoker(world, catalog)
    journal = journal or DictJournal()
    execution = await execute(
        plan,
        catalog,
        invoker=invoker,
        journal=journal,
        turn_id=turn_id,
        runtime=runtime_for(day, lang, memory),
        slots=slots or {},
        fillers={},
        served=served,
        now=lambda: 0.0,
    )
    calls = []
    for step_id, tool, args, output in invoker.calls:
        spec = catalog.get(tool)
        calls.append(
            Call(
                tool=tool,
                args=args,
                effectful=spec is not None and spec.contract.effectful,
                provenance=dict(execution.provenance.get(step_id, {})),
                output=output,
            )
        )
    ok = execution.status == "ok"
    run = Run(
        status=execution.status,
        calls=tuple(calls),
        answer=execution.final_text,
        changes=world.changes(base),
        committed=bool(execution.committed),
        refusals=tuple(r.code for r in execution.refusals),
        skipped=tuple(s.tool for s in plan.steps if s.id in execution.skipped),
        fillers=len(plan.fillers),
        synthesis=1 if ok and not execution.final_text else 0,
        outputs={i: r.text for i, r in execution.results.items()},
    )
    return run, world
