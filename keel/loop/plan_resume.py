"""Going on with a plan after the user approved the step it paused at.

A plan step whose tool needs confirmation becomes an ordinary pause point, and the pause
record keeps how to go on: the plan, its source, bound slots, the journal key of the turn
that ran it, the request and its intent, and the step that paused. When the approved call
has run (exactly once, through `keel.loop.confirmations`), the plan runs again on the same
journal: effects that already completed are taken from the journal, never repeated; the
approved step takes the approved call's result; the steps after it run now (and a later
confirmation pauses again the same way). A plan that completes answers with its final
message; a planner's plan is then recorded in the cache, like one that never paused (a
cached plan's entry already exists).
"""

from __future__ import annotations

from collections.abc import Mapping

from keel.loop.plan_scope import epoch
from keel.loop.plans_run import emit_record, finish_plan, partial, run_plan, turn_catalog
from keel.loop.turn import Next, TurnContext
from keel.plans.executor import StepResult
from keel.plans.intent import Intent
from keel.plans.plan import parse_plan
from keel.tools.dispatch import ToolRun


async def resume_plan(
    t: TurnContext, skill_id: str, resume: Mapping[str, object], run: ToolRun
) -> Next | None:
    """Run the rest of the paused plan; None when there is nothing to go on with."""
    skill = t.definition.skill(skill_id)
    plan, errors = parse_plan(resume.get("plan"))
    step, source = resume.get("step"), resume.get("source")
    if skill is None or plan is None or errors or t.plans is None or not isinstance(step, int):
        return None
    if run.is_error or source not in ("l0", "l1", "l3"):
        return None
    slots = resume.get("slots")
    entry_id = resume.get("entry_id")
    approved = StepResult(ok=True, output=run.llm_response, text=run.result_text)
    catalog = turn_catalog(t, skill)
    intent = Intent.from_json(resume.get("intent"))
    execution = await run_plan(
        t,
        skill,
        catalog,
        plan,
        source=str(source),
        slots=slots if isinstance(slots, Mapping) else {},
        entry_id=entry_id if isinstance(entry_id, str) else None,
        intent=intent,
        journal_key=str(resume.get("journal", "")) or None,
        approved={step: approved},
    )
    if execution.status == "ok" and source == "l3":  # a served plan's entry exists already
        request = str(resume.get("request", ""))
        decision = await t.plans.for_skill(skill.skill_id).record(
            request,
            executed=plan,
            intent=intent,
            catalog=catalog,
            now=epoch(t),
            turn_id=t.turn_id,
            origin="planner",
        )
        await emit_record(t, decision, intent)
    if execution.status in ("ok", "paused"):
        return await finish_plan(t, execution)
    return await partial(t, (plan, execution)) if execution.committed else None
