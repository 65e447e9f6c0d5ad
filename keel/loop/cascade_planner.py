"""L3: the model proposes one whole plan for the request (skills with `planner: true`).

One model call returns a plan in the canonical `plan/1` JSON (`keel.plans.plan`). It is
checked by the model-free L2 validator; a plan with errors goes back to the model once,
with the errors as repair hints (not just "try again"); a plan that still fails falls back
to the ordinary tool-calling loop. A valid plan runs through `TurnInvoker` like a cached
one (but its literals are the model's own proposal, so the effect gate does not apply),
answers with its final message, and is recorded in the cache when it succeeded.
"""

from __future__ import annotations

import json

from keel.llm.port import Message, ModelRequest
from keel.loop.cascade_context import record_context
from keel.loop.cascade_run import (
    PlanTurn,
    emit_decisions,
    emit_record,
    epoch,
    finish_plan,
    partial,
    run_plan,
)
from keel.loop.model_call import ask_recorded
from keel.loop.model_request import build_request
from keel.loop.turn import Next, TurnContext
from keel.plans.cache import Decision, Miss, PlanCache
from keel.plans.catalog import Catalog
from keel.plans.executor import Execution
from keel.plans.plan import Plan, PlanError, parse_plan
from keel.plans.validator import validate
from keel.project.definition import Skill

FORMAT = """\
Answer with one JSON object and nothing else: a plan that does the user's request.
{"steps": [{"id": 1, "tool": "<tool>", "args": {...}}, ...,
           {"id": N, "tool": "final_answer", "args": {}}],
 "final_message": "<the reply to the user; ${stepK.field} inserts a step's output>"}
Use only these tools. Pass data between steps with "${stepK.field}" (K is an earlier step's
id; field paths may use list indexes, "*" and "@count") instead of copying values. Copy
values the user gave exactly as written. Add "when": {"nonempty": K} to run a step only
when step K returned something."""


def tools_text(catalog: Catalog) -> str:
    """The catalog as the planner reads it: name, effect, description, argument schema."""
    lines = []
    for tool in sorted(catalog.values(), key=lambda t: t.name):
        schema = json.dumps(tool.parameters, sort_keys=True, default=str)
        lines.append(
            f"- {tool.name} [{tool.contract.effect}]: {tool.description}\n  args: {schema}"
        )
    return "\n".join(lines)


async def plan_with_model(
    t: TurnContext, turn: PlanTurn, skill: Skill, cache: PlanCache, catalog: Catalog, miss: Miss
) -> Next | None:
    """Propose, validate, repair once, run, record; None falls back to the tool loop."""
    plan, errors = await _propose(t, catalog, miss, ())
    if errors and t.model_calls < t.budget():
        plan, errors = await _propose(t, catalog, miss, errors)
    if plan is None or errors:
        reason = "validator:" + (errors[0].code if errors else "no_plan")
        await emit_decisions(t, (Decision(layer="l3", hit=False, reason=reason),), miss.intent)
        return None
    await emit_decisions(t, (Decision(layer="l3", hit=True, reason="proposed"),), miss.intent)
    execution = await run_plan(
        t,
        turn.scope,
        skill,
        catalog,
        plan,
        source="l3",
        slots={},
        entry_id=None,
        intent=miss.intent,
    )
    turn.pending = None  # a planned plan is recorded here, not compiled again at turn end
    if execution.status == "ok":
        decision = await cache.record(
            t.user_text,
            executed=plan,
            intent=miss.intent,
            catalog=catalog,
            now=epoch(t),
            turn_id=t.turn_id,
            origin="planner",
            context=record_context(t, skill, {i: r.text for i, r in execution.results.items()}),
        )
        await emit_record(t, decision, miss.intent)
    if execution.status in ("ok", "paused"):
        return await finish_plan(t, execution)
    if not execution.committed:
        return None  # nothing changed: the tool loop takes over, seeing what ran
    return await _recover(t, turn, skill, catalog, miss, plan, execution)


async def _recover(
    t: TurnContext,
    turn: PlanTurn,
    skill: Skill,
    catalog: Catalog,
    miss: Miss,
    plan: Plan,
    first: Execution,
) -> Next | None:
    """Effects committed, then a step failed: one proposal for the rest, resuming after
    the failed step (spec §3.11). A proposal that calls a tool whose effect already
    committed is refused (it could repeat it); then the partial outcome is reported."""
    if t.model_calls >= t.budget():
        return await partial(t, (plan, first))
    tools = {s.id: s.tool for s in plan.steps}
    done = ", ".join(f"step {i} {tools[i]}" for i in first.committed)
    failed = first.results.get(first.failed_step or 0)
    hint = PlanError(
        code="plan.recovery",
        message=f"already done, never repeat: {done}; step {first.failed_step} "
        f"({tools.get(first.failed_step or 0)}) failed: {failed.text if failed else ''}. "
        "Propose only what remains, with every value written out.",
    )
    rest, errors = await _propose(t, catalog, miss, (hint,))
    spent = {tools[i] for i in first.committed}
    if rest is None or errors or any(s.tool in spent for s in rest.tool_steps):
        reason = "recovery_refused"
        await emit_decisions(t, (Decision(layer="l3", hit=False, reason=reason),), miss.intent)
        return await partial(t, (plan, first))
    await emit_decisions(t, (Decision(layer="l3", hit=True, reason="recovery"),), miss.intent)
    second = await run_plan(
        t, turn.scope, skill, catalog, rest, source="l3", slots={}, entry_id=None, attempt=1
    )
    if second.status in ("ok", "paused"):
        return await finish_plan(t, second)
    return await partial(t, (plan, first), (rest, second))


async def _propose(
    t: TurnContext, catalog: Catalog, miss: Miss, hints: tuple[PlanError, ...]
) -> tuple[Plan | None, tuple[PlanError, ...]]:
    prepared = build_request(t, (), ())
    system = prepared.request.messages[0]
    extra = [FORMAT, "Tools:\n" + tools_text(catalog)]
    if miss.exclusions:
        extra.append("Do not propose these plan shapes again: " + ", ".join(miss.exclusions))
    if hints:
        extra.append(
            "Your previous plan was rejected; fix these problems:\n"
            + "\n".join(h.hint() for h in hints)
        )
    content = str(system.get("content", "")) + "\n\n" + "\n\n".join(extra)
    messages: tuple[Message, ...] = (
        {"role": "system", "content": content},
        *prepared.request.messages[1:],
    )
    request = ModelRequest(messages=messages, tools=(), tier=prepared.request.tier)
    await t.recorder.commit()  # a model call is a commit boundary (docs/events.md)
    response = await ask_recorded(t, request, tier_reason=prepared.tier.reason, purpose="planner")
    plan, errors = parse_plan(_json_object(response.text or ""))
    if plan is None:
        return None, errors
    return plan, validate(plan, catalog, proposed=True)


def _json_object(text: str) -> str:
    """The outermost `{...}` of a reply (models sometimes wrap JSON in prose or fences)."""
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if 0 <= start < end else text


async def ask_text(t: TurnContext, prompt: str, request: str, *, tier: str, purpose: str) -> str:
    """A short text from the model (fillers): recorded and counted like any call."""
    messages: tuple[Message, ...] = (
        {"role": "system", "content": prompt},
        {"role": "user", "content": request},
    )
    await t.recorder.commit()  # a model call is a commit boundary (docs/events.md)
    response = await ask_recorded(
        t, ModelRequest(messages=messages, tier=tier), tier_reason=purpose, purpose=purpose
    )
    return response.text or ""
