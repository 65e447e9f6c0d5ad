"""The DAG executor: scheduling, the effect gate, the journal and resume, retries, skips."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest
from executor_kit import Clock, Crash, FakeInvoker, MemoryJournal, Sleeps, make_plan, tool

from keel.plans.catalog import catalog_of
from keel.plans.executor import (
    Execution,
    StepResult,
    StoreJournal,
    execute,
    render_final,
)
from keel.plans.plan import Filler, Plan, Slot, Step
from keel.plans.store_port import JournalEntry

CATALOG = catalog_of(
    [
        tool("find_orders", props={"user": "string"}),
        tool("read_page", props={"url": "string"}),
        tool("cancel_order", effect="write", props={"order_id": "string"}),
        tool("refund_order", effect="write", props={"order_id": "string"}, idem=("order_id",)),
        tool(
            "delete_files",
            effect="delete",
            props={"paths": "array", "mode": "string"},
            required=("paths",),
            bindings={"paths": "piped", "mode": "structural"},
        ),
        tool("send_note", effect="send", props={"to": "string", "body": "string"}),
    ]
)


async def run(
    plan: Plan,
    invoker: FakeInvoker,
    journal: MemoryJournal | None = None,
    *,
    served: bool = True,
    turn_id: str = "t1",
    **kw: Any,
) -> Execution:
    return await execute(
        plan,
        CATALOG,
        invoker=invoker,
        journal=journal or MemoryJournal(),
        turn_id=turn_id,
        runtime=kw.pop("runtime", {"actor": "ann"}),
        slots=kw.pop("slots", {"user": "ann@example.com", "order": "W1"}),
        fillers=kw.pop("fillers", {}),
        served=served,
        sleep=kw.pop("sleep", Sleeps()),
        now=Clock(),
        **kw,
    )


def reply(**by_step: StepResult):  # type: ignore[no-untyped-def]
    def respond(step: Step, args: Mapping[str, object]) -> StepResult:
        return by_step.get(f"s{step.id}", StepResult(ok=True, output={"entries": [{"id": "W7"}]}))

    return respond


async def test_a_linear_plan_runs_and_renders_the_final_message() -> None:
    plan = make_plan(
        ("find_orders", {"user": "${SLOT:user}"}),
        ("cancel_order", {"order_id": "${step1.entries.0.id}"}),
        slots={"user": Slot(type="email")},
        final_message="Cancelled ${step2.order} for ${SLOT:user} (${step1.@count} found).",
    )
    invoker = FakeInvoker(respond=reply(s2=StepResult(ok=True, output={"order": "W7"})))
    execution = await run(plan, invoker)
    assert execution.status == "ok" and execution.failed_step is None
    assert invoker.calls == [(1, {"user": "ann@example.com"}), (2, {"order_id": "W7"})]
    assert execution.provenance == {1: {"user": "request_span"}, 2: {"order_id": "step_output"}}
    assert execution.committed == (2,)
    assert execution.final_text == "Cancelled W7 for ann@example.com (1 found)."


@pytest.mark.parametrize("limit", [1, 2, 4])
async def test_independent_reads_run_concurrently_up_to_the_bound(limit: int) -> None:
    plan = make_plan(*[("find_orders", {"user": str(i)}) for i in range(4)])
    invoker = FakeInvoker()
    execution = await run(plan, invoker, max_parallel=limit)
    assert execution.status == "ok"
    assert invoker.max_active == limit


async def test_a_consumer_starts_only_after_its_producer_ends() -> None:
    plan = make_plan(
        ("find_orders", {"user": "a"}),
        ("find_orders", {"user": "b"}),
        ("read_page", {"url": "${step1.entries.0.id}"}),
    )
    invoker = FakeInvoker()
    gate = asyncio.Event()
    invoker.gates[1] = gate  # step 1 waits until step 2 has run
    invoker.respond = None

    async def release() -> None:
        while 2 not in invoker.invoked():
            await asyncio.sleep(0)
        gate.set()

    releaser = asyncio.ensure_future(release())
    execution = await run(plan, invoker)
    await releaser
    assert execution.status == "ok"
    assert invoker.events.index(("end", 1)) < invoker.events.index(("start", 3))
    assert invoker.invoked()[:2] == [1, 2]


async def test_effects_are_barriers_in_plan_order() -> None:
    plan = make_plan(
        ("find_orders", {"user": "a"}),
        ("find_orders", {"user": "b"}),
        ("cancel_order", {"order_id": "${SLOT:order}"}),
        ("find_orders", {"user": "c"}),
        ("send_note", {"to": "${SLOT:user}", "body": "${step1.v}"}),
        ("find_orders", {"user": "d"}),
        ("find_orders", {"user": "e"}),
    )
    invoker = FakeInvoker()
    execution = await run(plan, invoker)
    assert execution.status == "ok"
    starts = {step: others for step, others in invoker.overlaps}
    assert starts[3] == frozenset() and starts[5] == frozenset()
    order = [step for kind, step in invoker.events if kind == "start"]
    assert order.index(3) > max(order.index(1), order.index(2))
    assert order.index(4) > order.index(3) and order.index(5) > order.index(4)
    assert invoker.events.index(("end", 3)) < invoker.events.index(("start", 4))
    assert invoker.max_active == 2  # steps 6 and 7 overlap; nothing overlaps an effect


async def test_the_effect_gate_refuses_unsafe_values_in_served_plans() -> None:
    plan = make_plan(
        ("find_orders", {"user": "literal reads are fine"}),
        ("send_note", {"to": "${SLOT:user}", "body": "${FILLER:note}"}),
        ("cancel_order", {"order_id": "W1"}),
        fillers={"note": Filler(prompt="write a note", default="hi")},
    )
    invoker = FakeInvoker()
    journal = MemoryJournal()
    execution = await run(plan, invoker, journal)
    assert execution.status == "refused" and execution.failed_step == 2
    assert invoker.invoked() == [1]
    [refusal] = execution.refusals
    assert (refusal.code, refusal.step, refusal.argument) == ("plan.effect_gate", 2, "body")
    assert "filler_llm" in refusal.message
    assert journal.history == []  # a refused step is never journaled
    assert execution.results[2].error_code == "plan.effect_gate"


async def test_a_cache_literal_in_an_effect_is_refused_but_a_structural_one_passes() -> None:
    literal = make_plan(("cancel_order", {"order_id": "W1"}))
    invoker = FakeInvoker()
    execution = await run(literal, invoker)
    assert execution.status == "refused" and invoker.calls == []
    structural = make_plan(
        ("find_orders", {"user": "a"}), ("delete_files", {"from_step": 1, "mode": "trash"})
    )
    invoker = FakeInvoker()
    execution = await run(structural, invoker)
    assert execution.status == "ok"
    assert execution.provenance[2] == {"mode": "contract_const", "paths": "step_output"}


async def test_unserved_plans_are_not_gated() -> None:
    plan = make_plan(("cancel_order", {"order_id": "W1"}))
    invoker = FakeInvoker()
    execution = await run(plan, invoker, served=False)
    assert execution.status == "ok" and invoker.invoked() == [1]
    assert execution.provenance[1] == {"order_id": "proposed"}


async def test_the_journal_records_intent_before_and_outcome_after() -> None:
    plan = make_plan(
        ("cancel_order", {"order_id": "${SLOT:order}"}), ("send_note", {"to": "${SLOT:user}"})
    )
    journal = MemoryJournal()
    seen: list[list[str]] = []

    def respond(step: Step, args: Mapping[str, object]) -> StepResult:
        seen.append([e.status for e in journal.rows.values()])
        return StepResult(ok=step.id == 1, output={"n": step.id}, text="t", error_code="x")

    execution = await run(plan, FakeInvoker(respond=respond), journal)
    assert seen == [["intended"], ["done", "intended"]]
    assert [(e.step_id, e.status) for e in journal.history] == [
        (1, "intended"),
        (1, "done"),
        (2, "intended"),
        (2, "failed"),
    ]
    assert execution.status == "failed" and execution.failed_step == 2
    assert execution.committed == (1,)
    first = journal.history[0]
    assert first.turn_id == "t1" and first.tool == "cancel_order" and len(first.args_hash) == 16
    assert first.idem_key == "" and first.ts == 1000.0


async def test_resume_reuses_done_effects_and_refuses_unknown_ones() -> None:
    plan = make_plan(
        ("find_orders", {"user": "a"}),
        ("cancel_order", {"order_id": "${step1.entries.0.id}"}),
        ("send_note", {"to": "${SLOT:user}"}),
        ("find_orders", {"user": "b"}),
        final_message="${step2.v}",
    )
    journal = MemoryJournal()
    with pytest.raises(Crash):
        await run(plan, FakeInvoker(crash_at=2), journal)  # dies inside step 3
    assert {k[1]: e.status for k, e in journal.rows.items()} == {2: "done", 3: "intended"}
    again = FakeInvoker()
    execution = await run(plan, again, journal)
    assert again.invoked() == [1]  # the read re-runs; both effects are left alone
    assert execution.status == "failed" and execution.failed_step == 3
    assert execution.refusals[0].code == "plan.effect_unknown"
    assert execution.results[2].output == {"entries": [{"id": 2}], "v": 2}
    assert execution.committed == (2, 3)


async def test_resume_retries_an_unknown_effect_under_the_same_idempotency_key() -> None:
    plan = make_plan(("refund_order", {"order_id": "${SLOT:order}"}))
    journal = MemoryJournal()
    with pytest.raises(Crash):
        await run(plan, FakeInvoker(crash_at=0), journal)
    assert journal.rows[("t1", 1)].idem_key.startswith("refund_order:")
    again = FakeInvoker()
    execution = await run(plan, again, journal)
    assert again.invoked() == [1] and execution.status == "ok"
    changed = FakeInvoker()
    other_slot = await run(plan, changed, journal, turn_id="t1", slots={"order": "W9"})
    assert other_slot.status == "ok" and changed.calls == []  # done: reused, not re-run
    journal.rows[("t1", 1)] = JournalEntry(
        turn_id="t1",
        step_id=1,
        tool="refund_order",
        idem_key="refund_order:other",
        args_hash="",
        status="intended",
    )
    mismatch = FakeInvoker()
    execution = await run(plan, mismatch, journal)
    assert mismatch.calls == [] and execution.refusals[0].code == "plan.effect_unknown"


async def test_resume_re_runs_a_failed_effect_and_other_turns_start_fresh() -> None:
    plan = make_plan(("cancel_order", {"order_id": "${SLOT:order}"}))
    journal = MemoryJournal()
    failing = FakeInvoker(respond=lambda s, a: StepResult(ok=False, error_code="boom"))
    assert (await run(plan, failing, journal)).status == "failed"
    again = FakeInvoker()
    assert (await run(plan, again, journal)).status == "ok" and again.invoked() == [1]
    fresh = FakeInvoker()
    assert (await run(plan, fresh, journal, turn_id="t2")).status == "ok"
    assert fresh.invoked() == [1]


async def test_a_journal_for_another_plan_is_a_mismatch() -> None:
    journal = MemoryJournal()
    await run(make_plan(("cancel_order", {"order_id": "${SLOT:order}"})), FakeInvoker(), journal)
    other = make_plan(("send_note", {"to": "${SLOT:user}"}))
    invoker = FakeInvoker()
    execution = await run(other, invoker, journal)
    assert execution.status == "failed" and invoker.calls == []
    assert execution.refusals[0].code == "plan.journal_mismatch"


async def test_operational_failures_of_reads_are_retried_with_backoff() -> None:
    outcomes = [StepResult(ok=False, operational=True)] * 2 + [StepResult(ok=True, output=[1])]
    invoker = FakeInvoker(respond=lambda s, a: outcomes.pop(0))
    sleeps = Sleeps()
    execution = await run(make_plan(("find_orders", {"user": "a"})), invoker, sleep=sleeps)
    assert execution.status == "ok" and len(invoker.calls) == 3
    assert sleeps.delays == [0.5, 1.0]


async def test_retries_are_bounded_and_never_for_effects_or_structural_errors() -> None:
    down = FakeInvoker(respond=lambda s, a: StepResult(ok=False, operational=True))
    sleeps = Sleeps()
    execution = await run(make_plan(("find_orders", {"user": "a"})), down, sleep=sleeps, retries=3)
    assert execution.status == "failed" and len(down.calls) == 4
    assert sleeps.delays == [0.5, 1.0, 2.0]
    effect = FakeInvoker(respond=lambda s, a: StepResult(ok=False, operational=True))
    await run(make_plan(("cancel_order", {"order_id": "${SLOT:order}"})), effect)
    assert len(effect.calls) == 1
    wrong = FakeInvoker(respond=lambda s, a: StepResult(ok=False, error_code="bad_args"))
    await run(make_plan(("find_orders", {"user": "a"})), wrong)
    assert len(wrong.calls) == 1


async def test_when_nonempty_skips_and_skips_propagate() -> None:
    plan = make_plan(
        ("find_orders", {"user": "a"}),
        Step(
            id=2, tool="cancel_order", args={"order_id": "${step1.entries.0.id}"}, when_nonempty=1
        ),
        ("read_page", {"url": "${step2.v}"}),
        ("find_orders", {"user": "b"}),
        final_message="Cancelled ${step2.@count}; ${step2.v}.",
    )
    invoker = FakeInvoker(respond=reply(s1=StepResult(ok=True, output={"entries": []})))
    execution = await run(plan, invoker)
    assert execution.status == "ok" and execution.skipped == (2, 3)
    assert invoker.invoked() == [1, 4]
    assert execution.final_text == "Cancelled 0; ."


async def test_an_effect_with_an_empty_piped_list_is_skipped() -> None:
    plan = make_plan(("find_orders", {"user": "a"}), ("delete_files", {"from_step": 1}))
    invoker = FakeInvoker(respond=reply(s1=StepResult(ok=True, output={"entries": []})))
    execution = await run(plan, invoker)
    assert execution.status == "ok" and execution.skipped == (2,)
    assert invoker.invoked() == [1]


async def test_a_pause_stops_the_plan() -> None:
    plan = make_plan(
        ("cancel_order", {"order_id": "${SLOT:order}"}),
        ("find_orders", {"user": "a"}),
        final_message="done",
    )
    journal = MemoryJournal()
    invoker = FakeInvoker(respond=reply(s1=StepResult(ok=False, paused=True, text="confirm?")))
    execution = await run(plan, invoker, journal)
    assert execution.status == "paused" and execution.failed_step is None
    assert invoker.invoked() == [1] and execution.results[1].paused
    assert execution.committed == () and execution.final_text == ""
    assert journal.rows[("t1", 1)].status == "failed"  # not done: may run after confirmation


async def test_a_failed_read_stops_later_steps_after_in_flight_reads_finish() -> None:
    plan = make_plan(
        ("find_orders", {"user": "a"}),
        ("find_orders", {"user": "b"}),
        ("read_page", {"url": "${step1.v}"}),
        ("cancel_order", {"order_id": "${SLOT:order}"}),
    )
    invoker = FakeInvoker(respond=reply(s1=StepResult(ok=False, error_code="nope")))
    execution = await run(plan, invoker)
    assert execution.status == "failed" and execution.failed_step == 1
    assert sorted(invoker.invoked()) == [1, 2] and 2 in execution.results


async def test_a_crash_in_a_concurrent_read_propagates_and_cancels_siblings() -> None:
    plan = make_plan(("find_orders", {"user": "a"}), ("find_orders", {"user": "b"}))
    invoker = FakeInvoker(crash_at=0)
    blocker = asyncio.Event()
    invoker.gates[2] = blocker  # never set: step 2 must be cancelled, not awaited forever
    with pytest.raises(Crash):
        await run(plan, invoker)
    assert ("end", 2) in invoker.events


async def test_unresolved_required_arguments_and_unknown_tools_fail_without_a_call() -> None:
    invoker = FakeInvoker()
    execution = await run(make_plan(("find_orders", {"user": "${SLOT:nope}"})), invoker)
    assert execution.status == "failed" and invoker.calls == []
    assert execution.refusals[0].code == "plan.unresolved"
    execution = await run(make_plan(("launch_rocket", {})), invoker)
    assert execution.status == "failed" and execution.refusals[0].code == "plan.tool_unknown"
    assert invoker.calls == []


async def test_store_journal_adapts_a_plan_store() -> None:
    class Store:
        def __init__(self) -> None:
            self.written: list[JournalEntry] = []

        async def journal(self, turn_id: str) -> list[JournalEntry]:
            return [e for e in self.written if e.turn_id == turn_id]

        async def write_journal(self, entry: JournalEntry) -> None:
            self.written.append(entry)

    store = Store()
    journal = StoreJournal(store)  # type: ignore[arg-type]
    entry = JournalEntry(
        turn_id="t", step_id=1, tool="x", idem_key="", args_hash="h", status="done"
    )
    await journal.write(entry)
    assert await journal.entries("t") == [entry] and await journal.entries("u") == []


def test_render_final() -> None:
    plan = make_plan(
        ("find_orders", {"user": "a"}),
        ("find_orders", {"user": "b"}),
        fillers={"tone": Filler(prompt="p", default="Hi")},
        final_message="${FILLER:tone} ${SLOT:name}: ${step1.entries.*.id} (${step1.@count}), "
        "${step2.@count} ${step2.x} ${RUNTIME:actor}",
    )
    results = {1: StepResult(ok=True, output={"entries": [{"id": "a"}, {"id": "b"}]})}
    text = render_final(plan, results, slots={"name": "Ann"}, runtime={"actor": "me"})
    assert text == "Hi Ann: a, b (2), 0  me"
    assert render_final(make_plan(("find_orders", {"user": "a"})), results) == ""
