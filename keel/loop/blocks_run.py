"""The deterministic pass: run every block step that needs no model (spec §2.6, §7.3 step 2).

It stops at the first step that needs the user (a collect ask, `action_listen`) or the
model (a collect waiting for an answer, an `instructions` step, prose), or when the
conversation ends (`hangup`). `execute_tool` steps take the same dispatch path as model
calls; invalid parameters keep the block on its step without running anything.
"""

from __future__ import annotations

from keel.errors import RunError
from keel.events.base import StackFrame
from keel.events.model import (
    ConversationStateChanged,
    Event,
    PausePointCreated,
    PausePointResolved,
    StepAdvanced,
)
from keel.llm.none import has_model
from keel.loop import lifecycle, stack
from keel.loop.machine import (
    collect_known,
    fill_parameters,
    frame_block,
    next_step_id,
    step_complete,
)
from keel.loop.memory_ops import Refusal, plan_write, write_events
from keel.loop.tools_run import (
    CallSite,
    gate_open,
    needs_confirmation,
    pause_for_confirmation,
    run_builder_tool,
)
from keel.loop.turn import Next, TurnContext
from keel.loop.write_refusals import refused_set_memory
from keel.project.definition import Skill
from keel.skills import (
    END_ID,
    ActionStep,
    CallStep,
    CollectStep,
    EndStep,
    ExecuteToolStep,
    InstructionsStep,
    LinkStep,
    NoopStep,
    OrderedBlock,
    SetMemoryStep,
)
from keel.skills.steps import Step
from keel.tools.validation import validate_arguments

MAX_STEPS = 200
"""Deterministic steps one pass may run before the engine calls it a loop in the block."""


async def deterministic_pass(t: TurnContext) -> Next:
    """Run steps until one needs the user or the model; returns what to do next."""
    # The turn's first pass may start with the steps a denial held back (spec §5.6 step 3).
    t.after_denial = t.passes == 0 and _resumes_held_block(t)
    t.passes += 1
    try:
        return await _pass(t)
    finally:
        t.after_denial = False


async def _pass(t: TurnContext) -> Next:
    for _ in range(MAX_STEPS):
        if lifecycle.resume_offer(t) is not None:
            # The offer is a question: wait for the answer, then let the model read it.
            return Next.WAIT if lifecycle.offered_this_turn(t) else Next.MODEL
        frame = stack.top(t.state)
        if frame is None:
            # What a held block said closed the denied request; this message still needs
            # its answer (routing or the model), as when nothing was said. An empty stack after
            # a delivered response waits for the user (spec §7.4).
            return Next.WAIT if t.delivered and not t.after_denial else Next.MODEL
        outcome = await (
            _block_frame(t, frame) if frame.type == "ordered_block" else _skill_frame(t, frame)
        )
        if outcome is not Next.CONTINUE:
            return outcome
    raise RunError(f"more than {MAX_STEPS} deterministic steps in one pass")


async def _skill_frame(t: TurnContext, frame: StackFrame) -> Next:
    skill = t.definition.skill(frame.skill_id)
    if skill is None:
        await lifecycle.end_skill(t, frame.skill_id, completed=False)
        return Next.CONTINUE
    document = skill.document
    if document.blocks and not document.has_prose:
        await lifecycle.enter_block(t, skill.skill_id, document.blocks[0])
        return Next.CONTINUE
    if await lifecycle.auto_complete(t):
        return Next.CONTINUE
    return Next.MODEL


async def advance(t: TurnContext, frame: StackFrame, block: OrderedBlock, step: Step) -> Next:
    """Move the pointer past `step` (evaluating `next:` now)."""
    target = next_step_id(t.definition, t.state, frame, block, step)
    await t.emit(stack.advance(frame, target))
    t.entered.add((frame.frame_id, target))
    return Next.CONTINUE


async def _block_end(t: TurnContext, skill: Skill) -> Next:
    await t.emit(*stack.pop_block(t.state, completed=True))
    top = stack.top(t.state)
    if top is not None and top.type == "skill" and top.skill_id == skill.skill_id:
        if not skill.document.has_prose:
            await lifecycle.finish(t, skill.skill_id, completed=True)
    else:
        await lifecycle.after_pop(t)
    return Next.CONTINUE


def held(t: TurnContext, frame: StackFrame) -> bool:
    """This turn denied a confirmation one of `frame`'s `execute_tool` steps asked for: the
    block waits for the next message (spec §5.6 step 3, the turn ends on a denial)."""
    return any(pause.frame_id == frame.frame_id for pause in lifecycle.held_by_denial(t))


def _resumes_held_block(t: TurnContext) -> bool:
    """The top frame is a block a denial held in an earlier request, its pointer still where
    the denial put it: its steps are what is left of the denied request."""
    frame = stack.top_block(t.state)
    if frame is None:
        return False
    advanced = 0
    for event in reversed(t.history):
        if isinstance(event, StepAdvanced) and event.frame_id == frame.frame_id:
            advanced += 1
            if advanced > 1:
                return False
        elif isinstance(event, PausePointResolved):
            asked = _asked_by(t.history, event.pause_id)
            if asked is not None and asked.frame_id == frame.frame_id:
                # A denial moves the pointer once (`keel.loop.confirmations`); then nothing.
                return not event.approved and asked.execute_step_id is not None and advanced == 1
    return False


def _asked_by(events: tuple[Event, ...], pause_id: str) -> PausePointCreated | None:
    for event in reversed(events):
        if isinstance(event, PausePointCreated) and event.pause_id == pause_id:
            return event
    return None


async def _block_frame(t: TurnContext, frame: StackFrame) -> Next:
    if held(t, frame):
        # The model words a denial that has no response; with none, the turn just ends.
        return Next.MODEL if has_model(t.model) else Next.WAIT
    found = frame_block(t.definition, frame)
    if found is None:
        await t.emit(*stack.pop_block(t.state, completed=False))
        return Next.CONTINUE
    skill, block = found
    step = block.step(frame.step_id or END_ID)
    if step is None or isinstance(step, EndStep):
        return await _block_end(t, skill)
    return await _step(t, frame, skill, block, step)


async def _step(
    t: TurnContext, frame: StackFrame, skill: Skill, block: OrderedBlock, step: Step
) -> Next:
    if isinstance(step, NoopStep):
        return await advance(t, frame, block, step)
    if isinstance(step, SetMemoryStep):
        await _set_memory(t, skill, step, call_id=f"step:{frame.frame_id}:{step.id}")
        return await advance(t, frame, block, step)
    if isinstance(step, ActionStep):
        return await _action(t, frame, block, step)
    if isinstance(step, ExecuteToolStep):
        return await _execute(t, frame, skill, block, step)
    if isinstance(step, CollectStep):
        return await _collect(t, frame, skill, block, step)
    if isinstance(step, InstructionsStep):
        if step_complete(t.definition, t.state, skill.skill_id, step):
            return await advance(t, frame, block, step)
        return Next.MODEL
    if isinstance(step, CallStep):
        return await _call(t, skill, step)
    if isinstance(step, LinkStep):
        await lifecycle.link(t, skill.skill_id, step.target)
        return Next.CONTINUE
    raise RunError(f"unknown step kind {type(step).__name__}")


async def _set_memory(t: TurnContext, skill: Skill, step: SetMemoryStep, *, call_id: str) -> None:
    for entry, value in step.values.items():
        planned = plan_write(
            t.definition.memory, t.state.memory, entry, value, "block", skill.skill_id
        )
        if isinstance(planned, Refusal):  # on record and in the log, never dropped silently
            await refused_set_memory(
                t,
                call_id=call_id,
                skill_id=skill.skill_id,
                entry=entry,
                value=value,
                refusal=planned,
            )
        else:
            provenance = {"step": step.id, "skill_id": skill.skill_id}
            await t.emit(*write_events(planned, filled_by="set_memory", provenance=provenance))


async def _action(t: TurnContext, frame: StackFrame, block: OrderedBlock, step: ActionStep) -> Next:
    if step.action == "hangup":
        await advance(t, frame, block, step)
        await t.emit(ConversationStateChanged(state="ended"))
        return Next.ENDED
    if step.action == "action_listen":
        await advance(t, frame, block, step)
        return Next.WAIT  # `action_listen` ends the turn (spec §7.4)
    await t.utter(step.action)
    return await advance(t, frame, block, step)


async def _collect(
    t: TurnContext, frame: StackFrame, skill: Skill, block: OrderedBlock, step: CollectStep
) -> Next:
    if collect_known(t.definition, t.state, skill.skill_id, step):
        # A value already known (a tap may have just written it) is not asked (§7.3 step 2).
        t.already_collected.append(step.entry)
        return await advance(t, frame, block, step)
    if (frame.frame_id, step.id) in t.entered:
        # Reached in this turn: ask, then wait for the answer (an engaged collect, §7.4).
        t.entered.discard((frame.frame_id, step.id))
        if step.utterance is not None:
            await t.utter(step.utterance)
        return Next.WAIT
    return Next.MODEL


async def _call(t: TurnContext, skill: Skill, step: CallStep) -> Next:
    block = skill.document.block(step.target)
    if block is not None:
        await lifecycle.enter_block(t, skill.skill_id, block)
    else:
        await lifecycle.activate(t, step.target, interrupt=False)
    return Next.CONTINUE


async def _execute(
    t: TurnContext, frame: StackFrame, skill: Skill, block: OrderedBlock, step: ExecuteToolStep
) -> Next:
    tool = skill.tools.get(step.tool)
    if tool is None:
        return Next.MODEL
    args, problems = validate_arguments(tool, fill_parameters(step, t.state.memory))
    if problems or args is None or not gate_open(t, skill, step.tool):
        # Stay on the step: a later pass retries once memory is filled; on_failure stays quiet.
        return Next.MODEL
    site = CallSite(call_id=f"step:{frame.frame_id}:{step.id}", step_id=step.id)
    if needs_confirmation(skill, step.tool):
        pending = t.state.pending_confirmation
        if pending is None:
            if await pause_for_confirmation(t, skill, step.tool, args, site) is None:
                return Next.MODEL
            return Next.PAUSED
        # Asked in an earlier turn: the model reads the user's answer and resolves it.
        created = (getattr(e, "pause_id", None) == pending.pause_id for e in t.recorder.events)
        return Next.PAUSED if any(created) else Next.MODEL
    await run_builder_tool(t, skill, step.tool, args, site)
    return await advance(t, frame, block, step)
