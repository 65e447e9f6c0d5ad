"""The framework tools (spec §6): what each does when the model calls it.

Every call is recorded like a builder tool run (`tool_executed` + `mcp_tool_executed`,
source `local`); a call the rules refuse is recorded as `tool_call_refused` instead.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from keel.events.fold import PENDING_CONFIRMATION_KEY, PendingConfirmation
from keel.events.model import (
    ConversationStateChanged,
    MemoryCleared,
    PausePointResolved,
    ToolCallRefused,
)
from keel.llm.port import ToolCall
from keel.loop import lifecycle, stack
from keel.loop.knowledge import search
from keel.loop.machine import frame_block
from keel.loop.memory_ops import Refusal, plan_write, rollback_events, write_events
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
from keel.loop.tools_run import CallSite, gate_open, record_run, run_builder_tool
from keel.loop.turn import Next, TurnContext
from keel.skills import ExecuteToolStep
from keel.tools import ToolResult
from keel.tools.dispatch import ToolRun, run_hook


def _ok(text: str) -> ToolRun:
    return ToolRun(outcome="success", result_text=text, llm_response=text, error_message=None)


def _error(text: str) -> ToolRun:
    return ToolRun(outcome="error", result_text=text, llm_response=text, error_message=text)


async def _refused(
    t: TurnContext, call: ToolCall, site: CallSite, code: str, message: str
) -> tuple[str, Next]:
    await t.emit(
        ToolCallRefused(
            tool_name=call.name,
            arguments=call.arguments,
            code=code,
            message=message,
            tool_call_id=call.id,
            tool_batch_id=site.batch_id,
        )
    )
    return f"Error ({code}): {message}", Next.CONTINUE


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


class _Done:
    __slots__ = ("next", "run")

    def __init__(self, run: ToolRun, nxt: Next = Next.CONTINUE) -> None:
        self.run, self.next = run, nxt


Outcome = _Done | tuple[str, Next]


async def _activate(
    t: TurnContext, call: ToolCall, args: Mapping[str, object], site: CallSite
) -> Outcome:
    target = str(args.get("target_id", ""))
    offer = lifecycle.resume_offer(t)
    if offer is not None and target == offer:
        await lifecycle.resume(t)
        return _Done(_ok("activate: done"))
    skill = t.active_skill
    if target in block_targets(t.state, skill) and skill is not None:
        block = skill.document.block(target)
        if block is not None:
            await lifecycle.enter_block(t, skill.skill_id, block)
            return _Done(_ok("activate: done"))
    if target not in {s.skill_id for s in eligible_skills(t.definition, t.state)}:
        return await _refused(
            t, call, site, "skill.not_eligible", f"{target!r} cannot be activated now"
        )
    await lifecycle.drop_resume_offer(t)
    sub_skill = skill is not None and any(
        tok.kind == "skill" and tok.target == target for tok in skill.document.tokens
    )
    await lifecycle.activate(t, target, interrupt=skill is not None and not sub_skill)
    return _Done(_ok("activate: done"))


async def _set_fields(
    t: TurnContext, call: ToolCall, args: Mapping[str, object], site: CallSite
) -> Outcome:
    from keel.loop.model_call import call_mode

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
        rejected = await _write_with_hook(t, skill.skill_id, str(name), planned, site)
        if rejected:
            problems.append(f"{name}: {rejected}")
    if problems:
        return _Done(_error("; ".join(problems)))
    return _Done(_ok("set_fields: done"))


async def _write_with_hook(
    t: TurnContext, skill_id: str, name: str, planned: object, site: CallSite
) -> str | None:
    from keel.loop.memory_ops import PlannedWrite, ToolMemory
    from keel.tools import LocalToolContext

    assert isinstance(planned, PlannedWrite)
    snapshot = dict(t.state.memory)
    await t.emit(
        *write_events(planned, filled_by="set_fields", provenance={"tool_call_id": site.call_id})
    )
    skill = t.definition.skill(skill_id)
    entry = planned.key.split(".", 1)[1]
    hook = skill.hooks.get(entry) if skill is not None else None
    if hook is None:
        return None
    memory = ToolMemory(
        schema=t.definition.memory,
        memory=t.state.memory,
        active_skill=skill_id,
        filled_by=hook.name,
        writer="hook",
    )
    run = await run_hook(
        hook, context=LocalToolContext(memory=memory), timeout=t.definition.config.tool_timeout
    )
    await t.emit(*memory.take())
    if run.rejected:
        await t.emit(*rollback_events(snapshot, dict(t.state.memory)))
        return run.message or "rejected"
    return None


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
    sections = search(t.definition.root, str(args.get("query", "")))
    t.searched = True
    t.knowledge = sections
    payload = [{"source": s.source, "text": s.text} for s in sections]
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
    resolved = (
        PausePointResolved(pause_id=pending.pause_id, approved=bool(args.get("confirmed"))),
        MemoryCleared(key=PENDING_CONFIRMATION_KEY),
        ConversationStateChanged(state="running"),
    )
    await t.emit(*resolved)
    if not args.get("confirmed"):
        return await _denied(t, pending)
    return await _run_confirmed(t, pending, site)


async def _denied(t: TurnContext, pending: PendingConfirmation) -> Outcome:
    """The user said no: utter the denial (then wait), or let the model word it.

    A denied `execute_tool` step is done and its block carries on in this turn, like the
    approved run does; only a denial of the model's own call ends the turn on the denial.
    """
    in_block = await _leave_step(t, pending.execute_step_id)
    denial = pending.utter_on_user_denial
    if denial and await t.utter(denial):
        return _Done(_ok("cancelled"), Next.CONTINUE if in_block else Next.WAIT)
    return _Done(_ok("The user declined; the action was not performed."))


async def _run_confirmed(t: TurnContext, pending: PendingConfirmation, site: CallSite) -> Outcome:
    skill = t.definition.skill(pending.skill_id or "")
    if skill is None or pending.tool_name not in skill.tools:
        return _Done(_error(f"the confirmed tool {pending.tool_name} is not available"))
    if not gate_open(t, skill, pending.tool_name):
        # The gate is checked again at dispatch, also for an approved call (fail closed).
        return await _refused(
            t,
            _call_of(pending, site),
            site,
            "tool.requires_closed",
            f"{pending.tool_name} is not available now; it did not run",
        )
    confirmed = CallSite(
        call_id=site.call_id,
        batch_id=site.batch_id,
        step_id=pending.execute_step_id,
        confirmed=True,
    )
    run = await run_builder_tool(t, skill, pending.tool_name, dict(pending.tool_args), confirmed)
    await _leave_step(t, pending.execute_step_id)
    return _Done(run)


def _call_of(pending: PendingConfirmation, site: CallSite) -> ToolCall:
    arguments = json.dumps(dict(pending.tool_args), sort_keys=True, default=str)
    return ToolCall(id=site.call_id, name=pending.tool_name, arguments=arguments)


async def _leave_step(t: TurnContext, step_id: str | None) -> bool:
    """Move a block past the `execute_tool` step whose call was approved (and ran) or denied;
    False when the held call did not come from the block's current step.

    A denied step is done too: asking again on every pass would never let the block end.
    """
    frame = stack.top_block(t.state)
    if frame is None or step_id is None or frame.step_id != step_id:
        return False
    found = frame_block(t.definition, frame)
    step = found[1].step(step_id) if found else None
    if found is None or not isinstance(step, ExecuteToolStep):
        return False
    from keel.loop.blocks_run import advance

    await advance(t, frame, found[1], step)
    return True


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
