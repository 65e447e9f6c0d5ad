"""Measuring the pre-model path of many turns, each on a conversation with a real history.

A case is (agent, scenario, store). The recorded history is copied into a pool of
conversations in the store; turns then go round the pool, so every measured turn reads a
log of about 30 to 40 earlier turns. Cases run interleaved, one turn of each in turn.
Scenarios:

* `active`: a skill is active (the history left it so); the request goes out with that
  skill's prompt and tools: the seed trace's path (sticky route, tier, tools, compress).
* `routing`: no skill is active; the request is the routing call (every eligible skill
  in the prompt, `activate` offered).
* `routed`: as `routing`, but the routing call (answered at once) activates the skill and
  the clock stops at the second request, the first one that acts; an unmeasured turn then
  cancels the skill so the next visit routes again.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from history import Template
from pgschema import Unavailable, fresh_schema
from probe import Boundary, PerfClock, Probe, StampedModel, TimedStore, instrument

from keel.ids import SequentialIds
from keel.loop.engine import Engine
from keel.project.definition import AgentDefinition
from keel.stores.factory import open_store
from keel.stores.port import EventStore
from keel.testing.scripted import ReplySource

_FILES = itertools.count(1)

ROUNDS = 10
"""History turns a measured conversation gains at most (one per visit, two when routed):
the pool has enough conversations for that."""

TEXT = {
    "active": "Add the churn numbers of our top three competitors to the table, please.",
    "routing": "Can you compare us with our main competitors on price and features?",
    "routed": "Can you compare us with our main competitors on price and features?",
}


@dataclass(frozen=True, kw_only=True, slots=True)
class Case:
    """One measured configuration."""

    agent: str
    scenario: str
    store: str


@dataclass(frozen=True, kw_only=True, slots=True)
class Work:
    """A case with the agent and recorded history it runs on."""

    case: Case
    definition: AgentDefinition
    template: Template


@dataclass(frozen=True, kw_only=True, slots=True)
class Shape:
    """How many turns, and where the stores are."""

    turns: int
    warmup: int
    work: Path
    postgres_url: str


@dataclass(frozen=True, kw_only=True, slots=True)
class Measured:
    """Samples of one case (nanoseconds per stage, `other` and `total`)."""

    case: Case
    samples: tuple[dict[str, int], ...]
    boundary: Boundary
    """The last measured request."""
    history_turns: tuple[int, int]
    """Earlier user turns in the log of the first and of the last measured turn."""


def _activate(target: str) -> ReplySource:
    return {"tool_calls": [{"name": "activate", "arguments": {"target_id": target}}]}


CANCEL: ReplySource = {"tool_calls": [{"name": "cancel_skill", "arguments": {}}]}


@asynccontextmanager
async def opened(case: Case, shape: Shape, clock: PerfClock) -> AsyncIterator[EventStore]:
    """A fresh store of the case's kind (a PostgreSQL schema is dropped afterwards)."""
    if case.store == "memory":
        yield await open_store("memory://", clock=clock)
        return
    if case.store == "sqlite":
        path = shape.work / f"{case.agent}-{case.scenario}-{next(_FILES)}.db"
        store = await open_store(f"sqlite:///{path}", clock=clock)
    else:
        async with fresh_schema(shape.postgres_url, f"{case.agent}_{case.scenario}") as url:
            store = await open_store(url, clock=clock)
            try:
                yield store
            finally:
                await store.close()
        return
    try:
        yield store
    finally:
        await store.close()


@dataclass(kw_only=True, slots=True)
class _Running:
    """A case being measured: its engine, its conversations and the samples so far."""

    case: Case
    engine: Engine
    template: Template
    pool: list[str]
    per_visit: int
    samples: list[dict[str, int]]
    boundary: Boundary | None = None


async def _prepare(
    stack: AsyncExitStack, probe: Probe, work: Work, shape: Shape, clock: PerfClock
) -> _Running:
    """Open the case's store, copy the history into its conversations, build its engine."""
    case, template = work.case, work.template
    raw = await stack.enter_async_context(opened(case, shape, clock))
    events = (
        template.events if case.scenario == "active" else template.events[: template.routing_end]
    )
    per_visit = 2 if case.scenario == "routed" else 1
    pool = [f"conv-{i}" for i in range(-(-(shape.turns + shape.warmup) * per_visit // ROUNDS))]
    for conversation in pool:
        await raw.append(conversation, 0, events)
    store, model, ids = TimedStore(raw, probe), StampedModel(probe, ()), SequentialIds("m-")
    engine = Engine(definition=work.definition, store=store, model=model, clock=clock, ids=ids)
    return _Running(
        case=case, engine=engine, template=template, pool=pool, per_visit=per_visit, samples=[]
    )


async def _turn(run: _Running, probe: Probe, number: int) -> None:
    """One measured turn (and, when routed, the unmeasured turn that cancels the skill)."""
    case, engine, template = run.case, run.engine, run.template
    conversation = run.pool[number % len(run.pool)]
    routed = case.scenario == "routed"
    script = [_activate(template.active_skill), "ok"] if routed else ["ok"]
    engine.model = model = StampedModel(probe, script)
    probe.start(stop_at=len(script))
    result = await engine.handle(conversation, TEXT[case.scenario])
    model.assert_complete()
    run.boundary = probe.boundary
    expected = None if case.scenario == "routing" else template.active_skill
    _check(case, expected, result.state.active_skill_id, result.stop_reason)
    if routed:
        engine.model = StampedModel(probe, [CANCEL, "ok"])
        undone = await engine.handle(conversation, "Let's leave that for now.")
        _check(case, None, undone.state.active_skill_id, undone.stop_reason)


async def run_cases(
    works: list[Work],
    shape: Shape,
    clock: PerfClock,
    progress: Callable[[str], None] = lambda _: None,
    on_ready: Callable[[], None] = lambda: None,
    on_measuring: Callable[[], None] = lambda: None,
) -> list[Measured]:
    """Measure every case, interleaved turn by turn (a change in the machine's load then
    hits every case alike); a case whose store cannot be opened is left out, with a note.
    `on_ready` is called once the histories are in the stores, `on_measuring` once the
    warm-up turns are done."""
    probe = Probe()
    async with AsyncExitStack() as stack:
        running: list[_Running] = []
        for work in works:
            try:
                running.append(await _prepare(stack, probe, work, shape, clock))
            except Unavailable as exc:
                progress(f"skipped {work.case}: {exc}")
                continue
            progress(f"{work.case}: {len(running[-1].pool)} conversations ready")
        on_ready()
        with instrument(probe):
            for number in range(shape.turns + shape.warmup):
                if number == shape.warmup:
                    on_measuring()
                for run in running:
                    await _turn(run, probe, number)
                    if number >= shape.warmup:
                        run.samples.append(probe.result())
    return [_measured(run, shape) for run in running]


def _measured(run: _Running, shape: Shape) -> Measured:
    if run.boundary is None:
        raise RuntimeError(f"{run.case}: no turn reached the model")
    template = run.template
    first = template.turns if run.case.scenario == "active" else template.routing_turns
    grown = (shape.turns + shape.warmup - 1) // len(run.pool) * run.per_visit
    return Measured(
        case=run.case,
        samples=tuple(run.samples),
        boundary=run.boundary,
        history_turns=(first, first + grown),
    )


def _check(case: Case, expected: str | None, active: str | None, stop_reason: str) -> None:
    if active != expected or stop_reason != "end_turn":
        raise RuntimeError(
            f"{case}: the turn ended with skill {active!r} active ({stop_reason}), "
            f"expected {expected!r}"
        )
