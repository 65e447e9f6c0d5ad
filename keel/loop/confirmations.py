"""Resolving a pause point: the user's yes runs the held call once, a no drops it.

Used by `resolve_tool_confirmation` (the model passes on the user's answer) and by the
approval API (`Engine.resolve_pause`). Either way the pause is resolved exactly once: the
`pause_point_resolved` event is appended before anything runs, and the held call's gate is
checked again first (fail closed).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from keel.events.fold import PENDING_CONFIRMATION_KEY, PendingConfirmation
from keel.events.model import ConversationStateChanged, MemoryCleared, PausePointResolved
from keel.llm.port import ToolCall
from keel.loop import stack
from keel.loop.blocks_run import advance
from keel.loop.machine import frame_block
from keel.loop.outcome import Outcome, _Done, _error, _ok, _refused
from keel.loop.tools_run import CallSite, gate_open, run_builder_tool
from keel.loop.turn import Next, TurnContext
from keel.skills import ExecuteToolStep


async def resolve_pending(
    t: TurnContext, pending: PendingConfirmation, approved: bool, site: CallSite
) -> Outcome:
    """Resolve `pending` with the user's answer (a plan paused at this call goes on after
    an approved run: the cascade's `after_approval`)."""
    if pending.skill_id is not None and stack.pause_owner(t.state) is None:
        # Its skill frame left without withdrawing it (an older log): nobody waits for it.
        await t.emit(*stack.withdraw_pause(t.state, t.state.stack, "skill_ended"))
        return _Done(_error("the skill that asked has ended; the call did not run"))
    record = t.state.memory.get(PENDING_CONFIRMATION_KEY)
    resume = record.get("plan") if isinstance(record, Mapping) else None
    # Resolved exactly once: the resolution is appended before the held call runs (§5.6).
    await t.emit(
        PausePointResolved(pause_id=pending.pause_id, approved=approved),
        MemoryCleared(key=PENDING_CONFIRMATION_KEY),
        ConversationStateChanged(state="running"),
    )
    if not approved:
        return await _denied(t, pending)
    outcome = await _run_confirmed(t, pending, site)
    if isinstance(resume, Mapping) and isinstance(outcome, _Done) and t.plans is not None:
        # A plan paused at this call goes on with its next steps (plan-cache spec §3.2).
        nxt = await t.plans.after_approval(t, pending.skill_id or "", resume, outcome.run)
        if nxt is not None:
            return _Done(outcome.run, nxt)
    return outcome


DECLINED = "The user declined; the action was not performed."


async def _denied(t: TurnContext, pending: PendingConfirmation) -> Outcome:
    """The user said no: utter the denial and end the turn, or let the model word it.

    Spec §5.6 step 3. A denied `execute_tool` step is done (asking again on every pass
    would never let the block end): the pointer moves past it, its `next:` evaluated now,
    while the tool's results are unset, and the block runs nothing more in this turn
    (`keel.loop.blocks_run` holds it until the next message).
    """
    await _leave_step(t, pending.execute_step_id)
    denial = pending.utter_on_user_denial
    if denial and await t.utter(denial):
        return _Done(_ok("cancelled"), Next.WAIT)  # a supplied denial ends the turn (§7.4)
    return _Done(_ok(DECLINED))


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


async def _leave_step(t: TurnContext, step_id: str | None) -> None:
    """Move a block past the `execute_tool` step whose call was approved (and ran) or denied
    (nothing when the held call did not come from the block's current step)."""
    frame = stack.top_block(t.state)
    if frame is None or step_id is None or frame.step_id != step_id:
        return
    found = frame_block(t.definition, frame)
    step = found[1].step(step_id) if found else None
    if found is None or not isinstance(step, ExecuteToolStep):
        return
    await advance(t, frame, found[1], step)
