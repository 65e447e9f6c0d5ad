"""A plan's final message: a field reference that resolves to nothing in this run's
outputs rejects the replay (`plan.final_unresolved`) instead of rendering blank."""

from __future__ import annotations

from collections.abc import Mapping

from executor_kit import Clock, FakeInvoker, MemoryJournal, Sleeps, make_plan, tool

from keel.plans.catalog import catalog_of
from keel.plans.executor import Execution, StepResult, execute
from keel.plans.paths import decoded_output
from keel.plans.plan import Plan, Step

CATALOG = catalog_of(
    [
        tool("get_order", props={"order_id": "string"}),
        tool("cancel_order", effect="write", props={"order_id": "string"}, idem=("order_id",)),
    ]
)
ORDER = '{"order_id": "#W2", "status": "shipped", "address": {"city": "Denver"}}'


async def _run(plan: Plan, output: object, *, served: bool = True) -> Execution:
    def respond(step: Step, args: Mapping[str, object]) -> StepResult:
        return StepResult(ok=True, output=output, text=str(output))

    return await execute(
        plan,
        CATALOG,
        invoker=FakeInvoker(respond=respond),
        journal=MemoryJournal(),
        turn_id="t1",
        runtime={"actor": "ann"},
        slots={"order": "#W2"},
        fillers={},
        served=served,
        sleep=Sleeps(),
        now=Clock(),
    )


def _lookup(final: str) -> Plan:
    return make_plan(("get_order", {"order_id": "${SLOT:order}"}), final_message=final)


def test_json_text_decodes_and_other_text_stays() -> None:
    assert decoded_output(ORDER) == {
        "order_id": "#W2",
        "status": "shipped",
        "address": {"city": "Denver"},
    }
    assert decoded_output("Error: order not found") == "Error: order not found"
    assert decoded_output("") == ""


async def test_field_refs_render_from_the_decoded_output() -> None:
    plan = _lookup("Order ${step1.order_id} is ${step1.status}, to ${step1.address.city}.")
    execution = await _run(plan, decoded_output(ORDER))
    assert execution.status == "ok"
    assert execution.final_text == "Order #W2 is shipped, to Denver."


async def test_a_ref_that_resolves_to_nothing_rejects_the_replay() -> None:
    plan = _lookup("Order ${step1.order_id} is ${step1.status}.")
    execution = await _run(plan, ORDER)  # the raw text: no field resolves
    assert execution.status == "failed"
    assert execution.final_text == ""
    assert [e.code for e in execution.refusals] == ["plan.final_unresolved"]
    assert "${step1.order_id}" in execution.refusals[0].message
    assert execution.committed == ()


async def test_an_empty_field_rejects_too_and_a_count_of_nothing_does_not() -> None:
    blank = await _run(_lookup("Status: ${step1.status}."), {"status": ""})
    assert [e.code for e in blank.refusals] == ["plan.final_unresolved"]
    counted = await _run(_lookup("Found ${step1.@count}."), {"entries": []})
    assert counted.status == "ok" and counted.final_text == "Found 0."


async def test_after_a_committed_effect_the_answer_is_left_to_the_model() -> None:
    plan = make_plan(
        ("cancel_order", {"order_id": "${SLOT:order}"}),
        final_message="Order ${step1.order_id} is ${step1.state}.",
    )
    execution = await _run(plan, {"order_id": "#W2", "status": "cancelled"})
    # The effect happened: the plan is not failed (nothing may run again), but the blank
    # answer is not sent: the final text is empty, so the model words it.
    assert execution.status == "ok" and execution.committed == (1,)
    assert execution.final_text == ""
    assert [e.code for e in execution.refusals] == ["plan.final_unresolved"]


async def test_a_plan_the_model_just_proposed_is_held_to_the_same_rule() -> None:
    execution = await _run(_lookup("Order ${step1.order_id}."), ORDER, served=False)
    assert execution.status == "failed" and execution.final_text == ""
