"""The plan cascade inside the turn loop (plan-cache spec §3.2), before the model is asked.

When the agent enables `plan_cache`, the first time a turn would ask the model to act for
a skill (its prose, not an ordered block's step), the request goes to the skill's cache:

1. an L0 or L1 hit runs the cached plan through `TurnInvoker` (the same validation, gates
   and confirmations as a model's calls) and answers with the plan's final message:
   **no model call**; a plan with no final message gets one model call to word the answer;
2. a miss on a skill with `planner: true` asks the model for one whole plan (`planner.py`);
3. any other miss goes on to the ordinary tool-calling loop, whose tool sequence is
   compiled into a plan when the turn ends well (`plan_record.py`).

A served plan that fails before any effect committed falls through to the model (the
transcript holds what ran); one that fails after an effect committed says so honestly and
stops: nothing runs twice. Every decision is a `plan_cache_decided` event; every run a
`plan_executed` event.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from keel.events.model import BotMessage, PlanCacheDecided, PlanExecuted
from keel.loop import blocks_run, lifecycle, stack
from keel.loop.offer import builder_offers
from keel.loop.plan_invoke import TurnInvoker
from keel.loop.plan_scope import PendingRecord, epoch, runtime_values
from keel.loop.turn import Next, TurnContext
from keel.plans.cache import Decision, Hit, PlanCache
from keel.plans.catalog import Catalog
from keel.plans.executor import Execution, StepResult, StoreJournal, execute
from keel.plans.intent import Intent
from keel.plans.plan import Plan, shape_hash
from keel.plans.skill_catalog import catalog_for_skill
from keel.project.definition import Skill

PARTIAL = "I could not finish that: {failed}. Already done: {done}. Nothing was repeated."


def cache_skill(t: TurnContext) -> Skill | None:
    """The skill whose cache this turn may consult, or None (see the module docstring)."""
    if t.plans is None or t.plan_tried or t.model_calls or t.attachments:
        return None
    config = t.definition.config.plan_cache
    skill = t.active_skill
    if not config.enabled or skill is None or not skill.document.plan_cache:
        return None
    text = t.user_text.strip()
    if not text or text.startswith(("set:", "/")) or t.state.pending_confirmation is not None:
        return None
    return skill if stack.top_block(t.state) is None else None


def turn_catalog(t: TurnContext, skill: Skill) -> Catalog:
    """The skill's tools whose `requires` holds now: the world a plan may use."""
    names = tuple(offer.name for offer in builder_offers(t.definition, t.state, skill))
    if t.plans is None:
        return catalog_for_skill(skill, names=names)
    return t.plans.catalog(skill, names)


async def plan_step(t: TurnContext) -> Next | None:
    """Consult the cascade; None lets the ordinary loop ask the model."""
    skill = cache_skill(t)
    if skill is None or t.plans is None:
        return None
    t.plan_tried = True
    cache = t.plans.for_skill(skill.skill_id)
    catalog = turn_catalog(t, skill)
    with t.timed("plans.lookup"):
        found = await cache.lookup(
            t.user_text, catalog=catalog, now=epoch(t), lang=t.plans.lang(t.definition)
        )
    await emit_decisions(t, found.decisions, found.intent)
    await t.plans.implicit_signal(t, cache, found.intent)
    t.plan_record = PendingRecord(skill_id=skill.skill_id, intent=found.intent)
    if isinstance(found, Hit):
        return await serve(t, skill, cache, catalog, found)
    if skill.document.planner:
        from keel.loop.planner import plan_with_model

        return await plan_with_model(t, skill, cache, catalog, found)
    return None


async def serve(
    t: TurnContext, skill: Skill, cache: PlanCache, catalog: Catalog, hit: Hit
) -> Next | None:
    """Run a cached plan (no model call) and finish the turn from its outcome."""
    execution = await run_plan(
        t,
        skill,
        catalog,
        hit.plan,
        source=hit.layer,
        slots=hit.slots,
        entry_id=hit.entry.id,
        intent=hit.intent,
    )
    t.plan_record = None  # a served plan is recorded here, not compiled again at turn end
    if execution.status == "paused":
        return Next.PAUSED  # recorded when the approval lets it finish (`plan_resume`)
    if execution.status == "ok":
        decision = await cache.record(
            t.user_text,
            executed=hit.plan,
            intent=hit.intent,
            catalog=catalog,
            now=epoch(t),
            turn_id=t.turn_id,
            origin=hit.layer,
            served=hit,
        )
        await emit_record(t, decision, hit.intent)
        return await finish_plan(t, execution)
    committed = bool(execution.committed)
    await cache.served_failed(hit, now=epoch(t), committed=committed)
    return await partial(t, (hit.plan, execution)) if committed else None


async def run_plan(
    t: TurnContext,
    skill: Skill,
    catalog: Catalog,
    plan: Plan,
    *,
    source: str,
    slots: Mapping[str, object],
    entry_id: str | None,
    attempt: int = 0,
    intent: Intent | None = None,
    journal_key: str | None = None,
    approved: Mapping[int, StepResult] | None = None,
) -> Execution:
    """Execute `plan` step by step as the skill's tool calls; records `plan_executed`.
    `attempt` > 0 is a recovery plan of the same turn (its own journal). A step that pauses
    for confirmation stores how to go on (`keel.loop.plan_resume`); `journal_key` and
    `approved` (step id -> the approved call's result) are how a resumed plan goes on."""
    assert t.plans is not None
    served = source in ("l0", "l1")
    bound = dict(slots)
    key = journal_key or f"{t.recorder.conversation_id}/{t.turn_id}" + (
        f"/r{attempt}" if attempt else ""
    )  # journal entries are per conversation turn (turn ids are unique only per log)
    resume = {
        "plan": plan.to_json(),
        "source": source,
        "slots": bound,
        "entry_id": entry_id,
        "journal": key,
        "request": t.user_text,
        "intent": (intent or Intent()).to_json(),
    }
    with t.timed("plans.exec"):
        execution = await execute(
            plan,
            catalog,
            invoker=TurnInvoker(t, skill, source, resume=resume, approved=approved),
            journal=StoreJournal(t.plans.store),
            turn_id=key,
            runtime=runtime_values(t),
            slots=bound,
            fillers=await t.plans.fillers(t, plan),
            served=served,
            now=lambda: epoch(t),
        )
    await t.emit(
        PlanExecuted(
            source=source,  # type: ignore[arg-type]
            status=execution.status,
            shape_hash=shape_hash(plan),
            entry_id=entry_id,
            plan=plan.to_json(),  # type: ignore[arg-type]
            slots=bound,  # type: ignore[arg-type]
            steps_run=len(execution.results),
            failed_step=execution.failed_step,
            committed=execution.committed,
            error_code=execution.refusals[0].code if execution.refusals else None,
        )
    )
    return execution


async def finish_plan(t: TurnContext, execution: Execution) -> Next | None:
    """After a plan ran: pause, answer with its final message, or let the model word it."""
    if execution.status == "paused":
        return Next.PAUSED
    if not execution.final_text.strip():
        return None  # one model call words the answer from the transcript
    await t.say(BotMessage(text=execution.final_text, response_source="plan"))
    await lifecycle.auto_complete(t)
    outcome = await blocks_run.deterministic_pass(t)
    return outcome if outcome in (Next.PAUSED, Next.ENDED) else Next.WAIT


async def partial(t: TurnContext, *runs: tuple[Plan, Execution]) -> Next:
    """Effects committed and a later step failed: say what happened; never re-run."""
    done: list[str] = []
    failed = "a step"
    for plan, execution in runs:
        by_id = {s.id: s.tool for s in plan.steps}
        done += [by_id.get(i, "?") for i in execution.committed]
        if execution.failed_step is not None:
            failed = by_id.get(execution.failed_step, failed)
    done_text = ", ".join(done) or "nothing"
    text = PARTIAL.format(failed=failed, done=done_text)
    await t.say(BotMessage(text=text, response_source="plan"))
    return Next.WAIT


async def emit_record(t: TurnContext, decision: Decision, intent: Intent) -> None:
    """What `PlanCache.record` decided, as the turn's `record` decision."""
    await t.emit(
        PlanCacheDecided(
            layer="record",
            hit=False,
            reason=decision.reason,
            entry_id=decision.entry_id,
            intent=intent.signature,
        )
    )


async def emit_decisions(t: TurnContext, decisions: Sequence[Decision], intent: Intent) -> None:
    """One `plan_cache_decided` per decision."""
    await t.emit(
        *(
            PlanCacheDecided(
                layer=d.layer,
                hit=d.hit,
                reason=d.reason,
                entry_id=d.entry_id,
                intent=intent.signature,
            )
            for d in decisions
        )
    )
