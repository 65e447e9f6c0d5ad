"""The framework tools (spec §6): what each does when the model calls it.

Every call is recorded like a builder tool run (`tool_executed` + `mcp_tool_executed`,
source `local`); a call the rules refuse is recorded as `tool_call_refused` instead.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from keel.errors import KeelError
from keel.events.base import RoutingSource
from keel.events.model import RoutingDecided
from keel.llm.port import ToolCall
from keel.loop import activation_fill, lifecycle, stack
from keel.loop.confirmations import resolve_pending
from keel.loop.memory_ops import Refusal, plan_write
from keel.loop.model_request import call_mode
from keel.loop.offer import (
    ACTIVATE,
    CANCEL_SKILL,
    CANNOT_HELP,
    COMPLETE_SKILL,
    RESOLVE,
    SEARCH_KNOWLEDGE,
    SET_FIELDS,
    block_targets,
    eligible_skills,
)
from keel.loop.outcome import Outcome, _Done, _error, _ok, _refused
from keel.loop.post_write import write_with_hook
from keel.loop.tools_run import CallSite, record_run
from keel.loop.turn import Next, TurnContext
from keel.project.offline_config import runs
from keel.tools import ToolResult


async def run_builtin(
    t: TurnContext, call: ToolCall, args: Mapping[str, object], site: CallSite
) -> tuple[str, Next]:
    """Perform framework tool `call.name`; returns the tool result text and what comes next."""
    handler = _HANDLERS.get(call.name)
    if handler is None:
        return await _refused(t, call, site, "tool.not_offered", f"{call.name} is not available")
    outcome = await handler(t, call, args, site)
    if isinstance(outcome, tuple):
        return outcome
    run, nxt = outcome.run, outcome.next
    await record_run(t, call.name, args, run, site, skill_id=t.state.active_skill_id)
    return run.result_text, nxt


async def _activate(
    t: TurnContext, call: ToolCall, args: Mapping[str, object], site: CallSite
) -> Outcome:
    target = str(args.get("target_id", ""))
    given = args.get("fields")
    offer = lifecycle.resume_offer(t)
    if offer is not None and target == offer:
        await lifecycle.resume(t)
        return _Done(_ok(_activated(await activation_fill.not_applied(t, given, call, site))))
    skill = t.active_skill
    if target in block_targets(t.state, skill) and skill is not None:
        block = skill.document.block(target)
        if block is not None:
            await lifecycle.enter_block(t, skill.skill_id, block)
            problem = await activation_fill.not_applied(t, given, call, site)
            return _Done(_ok(_activated(problem)))
    eligible = tuple(s.skill_id for s in eligible_skills(t.definition, t.state))
    if target not in eligible:
        return await _refused(
            t, call, site, "skill.not_eligible", f"{target!r} cannot be activated now"
        )
    # `router` only for a routing call (no skill active) made on the router tier.
    routed = t.routing_call and t.last_tier == "router"
    source: RoutingSource = "router" if routed else "model"
    t.routing_call = False
    await t.emit(
        RoutingDecided(source=source, skill_id=target, tier=t.last_tier, candidates=eligible)
    )
    await lifecycle.drop_resume_offer(t)
    sub_skill = skill is not None and any(
        tok.kind == "skill" and tok.target == target for tok in skill.document.tokens
    )
    await lifecycle.activate(t, target, interrupt=skill is not None and not sub_skill)
    # What the message already said is written before the first collect can ask for it.
    problems = await activation_fill.fill_given(t, target, given, call, site)
    if runs(t.definition.config.offline.extraction, has_model=True):
        await activation_fill.fill_extracted(t, target)
    return _Done(_ok(_activated("; ".join(problems) or None)))


def _activated(problem: str | None) -> str:
    """`activate`'s result: done, with the values it did not record and why."""
    return "activate: done" if problem is None else f"activate: done; not recorded: {problem}"


async def _set_fields(
    t: TurnContext, call: ToolCall, args: Mapping[str, object], site: CallSite
) -> Outcome:
    skill = t.active_skill
    fields = args.get("fields")
    if skill is None or not isinstance(fields, Mapping):
        return await _refused(
            t, call, site, "memory.write.no_skill", "no active skill to record into"
        )
    mode = call_mode(t)
    owned = frozenset({mode.collect_entry}) if mode.collect_entry else frozenset()
    problems: list[str] = []
    for name, value in fields.items():
        planned = plan_write(
            t.definition.memory, t.state.memory, str(name), value, "llm", skill.skill_id, owned
        )
        if isinstance(planned, Refusal):
            await _refused(t, call, site, planned.code, planned.message)
            problems.append(f"{name}: {planned.message}")
            continue
        rejected = await write_with_hook(
            t, planned, filled_by="set_fields", provenance={"tool_call_id": site.call_id}
        )
        if rejected is not None:
            problems.append(f"{name}: {rejected.message or 'rejected'}")
    if problems:
        return _Done(_error("; ".join(problems)))
    return _Done(_ok("set_fields: done"))


async def _complete(
    t: TurnContext, call: ToolCall, args: Mapping[str, object], site: CallSite
) -> Outcome:
    skill = t.active_skill
    if skill is None:
        return await _refused(t, call, site, "skill.none_active", "no skill is active")
    if stack.top_block(t.state) is not None:
        return await _refused(
            t, call, site, "skill.complete_in_block", "finish the ordered block first"
        )
    rule = skill.document.complete_when
    criteria = rule.criteria if rule is not None else ()
    met = args.get("criteria_met")
    confirmed = {str(c) for c in met} if isinstance(met, list | tuple) else set()
    for criterion in criteria:
        if criterion not in confirmed:
            # The model must vouch for each criterion; the first one it did not is named.
            return _Done(_error(f"complete_skill refused: criterion not met: {criterion}"))
    await lifecycle.finish(t, skill.skill_id, completed=True)
    return _Done(_ok("complete_skill: done"))


async def _cancel(
    t: TurnContext, call: ToolCall, args: Mapping[str, object], site: CallSite
) -> Outcome:
    skill = t.active_skill
    if skill is None:
        return await _refused(t, call, site, "skill.none_active", "no skill is active")
    await lifecycle.drop_resume_offer(t)
    await lifecycle.finish(t, skill.skill_id, completed=False)
    return _Done(_ok("cancel_skill: done"))


async def _search(
    t: TurnContext, call: ToolCall, args: Mapping[str, object], site: CallSite
) -> Outcome:
    base = t.knowledge_base
    if base is None:
        return await _refused(t, call, site, "tool.not_offered", "there is no knowledge base")
    try:
        sections = await base.search(str(args.get("query", "")))
    except KeelError as exc:
        # The index could not be built or read (embedder or database down): the model is
        # told, and knowledge mode does not start.
        return _Done(_error(f"search_knowledge failed: {exc}"))
    t.searched = True
    t.knowledge = sections
    payload = [{"source": s.source, "heading": s.heading, "text": s.text} for s in sections]
    return _Done(_ok(json.dumps(payload, ensure_ascii=False)))


async def _cannot_help(
    t: TurnContext, call: ToolCall, args: Mapping[str, object], site: CallSite
) -> Outcome:
    await t.utter("utter_can_not_help")
    return _Done(_ok("cannot_help: done"), Next.WAIT)


async def _resolve(
    t: TurnContext, call: ToolCall, args: Mapping[str, object], site: CallSite
) -> Outcome:
    pending = t.state.pending_confirmation
    if pending is None:
        return await _refused(
            t, call, site, "confirmation.none_pending", "no confirmation is pending"
        )
    if any(getattr(e, "pause_id", None) == pending.pause_id for e in t.recorder.events):
        return await _refused(t, call, site, "confirmation.same_turn", "wait for the user's answer")
    return await resolve_pending(t, pending, bool(args.get("confirmed")), site)


_HANDLERS = {
    ACTIVATE: _activate,
    SET_FIELDS: _set_fields,
    COMPLETE_SKILL: _complete,
    CANCEL_SKILL: _cancel,
    SEARCH_KNOWLEDGE: _search,
    CANNOT_HELP: _cannot_help,
    RESOLVE: _resolve,
}

__all__ = ["ToolResult", "run_builtin"]
