"""Property: whatever the plan, catalog and crash point, effects stay safe and happen once.

Random plans over random catalogs (effects, bindings, idempotency keys), served or not,
with an optional crash (an exception from the invoker) at a random call followed by a
resume on the same turn. The oracle computes each argument's safety from how the test
built it, independently of the executor's own provenance tags.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass

from executor_kit import Clock, Crash, FakeInvoker, MemoryJournal, Sleeps, make_plan, tool
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keel.plans.catalog import Catalog, catalog_of
from keel.plans.executor import Execution, execute
from keel.plans.plan import Filler, Plan, Slot

EFFECTS = ("read_only", "read_only", "write", "send", "delete", "write_idempotent")
BINDINGS = ("structural", "request", "runtime", "piped", None)
KINDS = ("literal", "slot", "step", "runtime", "filler", "prose", "joined")
SLOTS = {"a": "alpha", "b": "beta"}
RUNTIME = {"actor": "ann", "lang": "en"}


@dataclass(frozen=True)
class Arg:
    kind: str
    binding: str | None
    producer: int = 0

    def template(self) -> str:
        return {
            "literal": "some literal",
            "slot": "${SLOT:a}",
            "step": f"${{step{self.producer}.v}}",
            "runtime": "${RUNTIME:actor}",
            "filler": "${FILLER:note}",
            "prose": "Dear ${SLOT:a}",  # literal words around a ref
            "joined": "${SLOT:a}/${SLOT:b}",  # only punctuation between refs
        }[self.kind]

    def safe(self) -> bool:
        """The oracle: may this value reach an effect of a served plan?"""
        if self.kind in ("slot", "step", "runtime", "joined"):
            return True
        if self.kind in ("literal", "prose"):
            return self.binding == "structural"
        return False  # filler


@dataclass(frozen=True)
class Case:
    plan: Plan
    catalog: Catalog
    specs: dict[int, dict[str, Arg]]
    effectful: frozenset[int]
    idempotent: frozenset[int]


@st.composite
def cases(draw: st.DrawFn) -> Case:
    n = draw(st.integers(min_value=1, max_value=6))
    tools, steps, specs = [], [], {}
    effectful, idempotent = set(), set()
    for step_id in range(1, n + 1):
        effect = draw(st.sampled_from(EFFECTS))
        names = [f"x{i}" for i in range(draw(st.integers(min_value=1, max_value=3)))]
        kinds = KINDS if step_id > 1 else tuple(k for k in KINDS if k != "step")
        args = {
            name: Arg(
                kind=(kind := draw(st.sampled_from(kinds))),
                binding=draw(st.sampled_from(BINDINGS)),
                producer=draw(st.integers(1, step_id - 1)) if kind == "step" else 0,
            )
            for name in names
        }
        idem = draw(st.booleans()) if effect != "read_only" else False
        bindings = {k: a.binding for k, a in args.items() if a.binding is not None}
        name = f"t{step_id}_{effect}"
        tools.append(
            tool(
                name,
                effect=effect,
                props=dict.fromkeys(names, "string"),
                bindings=bindings,
                idem=tuple(names[:1]) if idem else None,
            )
        )
        steps.append((name, {k: a.template() for k, a in args.items()}))
        specs[step_id] = args
        if effect != "read_only":
            effectful.add(step_id)
            if idem:
                idempotent.add(step_id)
    plan = make_plan(
        *steps,
        slots={k: Slot(type="text") for k in SLOTS},
        fillers={"note": Filler(prompt="a note", default="hi")},
    )
    return Case(plan, catalog_of(tools), specs, frozenset(effectful), frozenset(idempotent))


async def run(case: Case, invoker: FakeInvoker, journal: MemoryJournal, served: bool) -> Execution:
    return await execute(
        case.plan,
        case.catalog,
        invoker=invoker,
        journal=journal,
        turn_id="turn",
        runtime=RUNTIME,
        slots=SLOTS,
        fillers={},
        served=served,
        max_parallel=3,
        sleep=Sleeps(),
        now=Clock(),
    )


def check_run(case: Case, invoker: FakeInvoker, served: bool) -> None:
    effect_calls = [s for s in invoker.invoked() if s in case.effectful]
    assert effect_calls == sorted(set(effect_calls)), "effects out of plan order or repeated"
    for step, others in invoker.overlaps:
        if step in case.effectful:
            assert not others, f"effect {step} overlapped {sorted(others)}"
        else:
            assert not (others & case.effectful), f"read {step} overlapped an effect"
        if served and step in case.effectful:
            unsafe = [k for k, a in case.specs[step].items() if not a.safe()]
            assert not unsafe, f"effect {step} invoked with unsafe {unsafe}"


def check_gate(case: Case, execution: Execution, served: bool) -> None:
    gated = [r for r in execution.refusals if r.code == "plan.effect_gate"]
    assert served or not gated
    for refusal in gated:  # the gate refuses exactly the unsafe arguments
        assert refusal.step in case.effectful
        assert refusal.step is not None and refusal.argument is not None
        assert not case.specs[refusal.step][refusal.argument].safe()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases(), served=st.booleans(), crash=st.one_of(st.none(), st.integers(0, 8)))
def test_effects_are_gated_ordered_and_never_repeated(
    case: Case, served: bool, crash: int | None
) -> None:
    journal = MemoryJournal()
    first = FakeInvoker(crash_at=crash)
    crashed = False
    try:
        execution = asyncio.run(run(case, first, journal, served))
        check_gate(case, execution, served)
    except Crash:
        crashed = True
    check_run(case, first, served)
    calls = Counter(s for s in first.invoked() if s in case.effectful)
    if crashed:
        second = FakeInvoker()
        execution = asyncio.run(run(case, second, journal, served))
        check_run(case, second, served)
        check_gate(case, execution, served)
        calls.update(s for s in second.invoked() if s in case.effectful)
        crashed_step = first.invoked()[-1]
        done_first = {s for s in first.invoked()[:-1] if s in case.effectful}
        assert not done_first & set(second.invoked()), "a done effect ran again"
        if crashed_step in case.effectful and crashed_step not in case.idempotent:
            assert crashed_step not in second.invoked(), "an unknown effect ran again"
    for step, count in calls.items():
        assert count == 1 or (count == 2 and crashed and step in case.idempotent), (step, count)
