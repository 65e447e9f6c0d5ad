"""Shared fakes for the executor tests: catalog entries, an in-memory journal, an invoker."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from keel.plans.catalog import PlanTool, plan_tool
from keel.plans.executor import StepResult
from keel.plans.plan import FINAL_ANSWER, Plan, Step
from keel.plans.store_port import JournalEntry
from keel.tools.contract import ToolContract


def tool(
    name: str,
    *,
    effect: str = "read_only",
    props: Mapping[str, object] | None = None,
    required: tuple[str, ...] | None = None,
    bindings: Mapping[str, str] | None = None,
    idem: tuple[str, ...] | None = None,
    output_schema: Mapping[str, object] | None = None,
    runtime_resolved: frozenset[str] = frozenset(),
    extra: bool = False,
) -> PlanTool:
    """A catalog entry: string properties by default, all of them required."""
    properties = dict(props or {})
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            k: (v if isinstance(v, Mapping) else {"type": v}) for k, v in properties.items()
        },
        "required": list(properties if required is None else required),
    }
    parameters["additionalProperties"] = extra
    contract = ToolContract(
        effect=effect,  # type: ignore[arg-type]
        bindings=dict(bindings or {}),  # type: ignore[arg-type]
        idempotency_key=idem,
        output_schema=output_schema,
        runtime_resolved=runtime_resolved,
        declared=True,
    )
    return plan_tool(name, parameters, contract)


def make_plan(*steps: tuple[str, Mapping[str, object]] | Step, **kw: Any) -> Plan:
    """A plan from (tool, args) pairs or steps, ids by position, final_answer appended."""
    built: list[Step] = []
    for position, item in enumerate(steps, 1):
        if isinstance(item, Step):
            built.append(
                Step(id=position, tool=item.tool, args=item.args, when_nonempty=item.when_nonempty)
            )
        else:
            built.append(Step(id=position, tool=item[0], args=dict(item[1])))
    built.append(Step(id=len(built) + 1, tool=FINAL_ANSWER))
    return Plan(steps=tuple(built), **kw)


class MemoryJournal:
    """A `Journal` in a dict; `history` keeps every write in order."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, int], JournalEntry] = {}
        self.history: list[JournalEntry] = []

    async def entries(self, turn_id: str) -> list[JournalEntry]:
        return [e for (t, _), e in sorted(self.rows.items()) if t == turn_id]

    async def write(self, entry: JournalEntry) -> None:
        self.rows[(entry.turn_id, entry.step_id)] = entry
        self.history.append(entry)


class Crash(Exception):
    """A simulated process death in the middle of a tool call."""


Responder = Callable[[Step, Mapping[str, object]], StepResult]


@dataclass
class FakeInvoker:
    """Records calls, yields to the loop inside each call, answers through `respond`."""

    respond: Responder | None = None
    crash_at: int | None = None
    """Raise `Crash` on this (0-based) call."""
    yields: int = 3
    calls: list[tuple[int, dict[str, object]]] = field(default_factory=list)
    events: list[tuple[str, int]] = field(default_factory=list)
    active: set[int] = field(default_factory=set)
    max_active: int = 0
    overlaps: list[tuple[int, frozenset[int]]] = field(default_factory=list)
    """(step, other steps active) at each call start."""
    gates: dict[int, asyncio.Event] = field(default_factory=dict)
    """Calls of these steps wait for their event."""

    async def invoke(self, step: Step, args: Mapping[str, object]) -> StepResult:
        index = len(self.calls)
        self.calls.append((step.id, dict(args)))
        self.overlaps.append((step.id, frozenset(self.active)))
        self.events.append(("start", step.id))
        self.active.add(step.id)
        self.max_active = max(self.max_active, len(self.active))
        try:
            if self.crash_at == index:
                raise Crash(f"crash in step {step.id}")
            for _ in range(self.yields):
                await asyncio.sleep(0)
            if step.id in self.gates:
                await self.gates[step.id].wait()
            if self.respond is not None:
                return self.respond(step, args)
            return StepResult(
                ok=True, output={"entries": [{"id": step.id}], "v": step.id}, text="ok"
            )
        finally:
            self.active.discard(step.id)
            self.events.append(("end", step.id))

    def invoked(self) -> list[int]:
        return [step for step, _ in self.calls]


class Sleeps:
    """An injected `sleep` that only records."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


class Clock:
    """An injected `now`: 1000.0, 1001.0, ..."""

    def __init__(self) -> None:
        self.t = 999.0

    def __call__(self) -> float:
        self.t += 1.0
        return self.t
