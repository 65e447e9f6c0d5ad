"""The dialogue stack: pure functions from (state, intent) to the events that do it.

Frames sit bottom first. A `skill` frame marks an active skill; `ordered_block` frames sit
above their skill's frame and carry the step pointer. Every change is written as the
seed-001 lifecycle events, their `flow_*` duplicates, and one `stack_changed` holding the
whole new stack, so the fold never needs the agent definition.
"""

from __future__ import annotations

from collections.abc import Iterable

from keel.events.base import StackFrame, freeze_json
from keel.events.fold import PENDING_CONFIRMATION_KEY, ConversationState
from keel.events.model import (
    Event,
    FlowCancelled,
    FlowCompleted,
    FlowInterrupted,
    FlowResumed,
    FlowStarted,
    MemoryCleared,
    MemorySet,
    OrderedBlockCancelled,
    OrderedBlockCompleted,
    OrderedBlockEntered,
    OrderedBlockInterrupted,
    OrderedBlockResumed,
    PausePointResolved,
    SkillActivated,
    SkillCancelled,
    SkillCompleted,
    SkillInterrupted,
    SkillResumed,
    StackChanged,
    StepAdvanced,
)
from keel.memory import MemorySchema
from keel.memory.values import initial_values
from keel.skills import OrderedBlock

AUTONOMOUS = "autonomous"
"""The step id of a skill's prose (no block step)."""


def flow_id(skill_id: str, block_id: str) -> str:
    """The compatibility flow id of a block: `<skill>__<block>`."""
    return f"{skill_id}__{block_id}"


def top(state: ConversationState) -> StackFrame | None:
    """The topmost frame."""
    return state.stack[-1] if state.stack else None


def top_block(state: ConversationState) -> StackFrame | None:
    """The topmost frame when it is an ordered block, else None."""
    frame = top(state)
    return frame if frame is not None and frame.type == "ordered_block" else None


def current_step_id(state: ConversationState, skill_id: str) -> str:
    """Where skill `skill_id` stands: its top block's step, or `autonomous`."""
    for frame in reversed(state.stack):
        if frame.skill_id == skill_id and frame.type == "ordered_block":
            return frame.step_id or AUTONOMOUS
    return AUTONOMOUS


def _reset_memory(schema: MemorySchema, state: ConversationState, skill_id: str) -> list[Event]:
    events: list[Event] = []
    for key, value in initial_values(schema, skill_id).items():
        if value is None and state.memory.get(key) is not None:
            events.append(MemoryCleared(key=key))
        elif value is not None and state.memory.get(key) != freeze_json(value):
            events.append(MemorySet(key=key, value=freeze_json(value), metadata={"reset": True}))
    return events


def activate(
    schema: MemorySchema,
    state: ConversationState,
    skill_id: str,
    *,
    frame_id: str,
) -> tuple[Event, ...]:
    """Push skill `skill_id` with its memory reset to initial values."""
    frame = StackFrame(frame_id=frame_id, skill_id=skill_id, type="skill")
    return (
        *_reset_memory(schema, state, skill_id),
        FlowStarted(flow_id=skill_id, step_id=AUTONOMOUS),
        SkillActivated(skill_id=skill_id),
        StackChanged(frames=(*state.stack, frame)),
    )


def enter_block(
    stack: tuple[StackFrame, ...], skill_id: str, block: OrderedBlock, *, frame_id: str
) -> tuple[Event, ...]:
    """Push block `block` of `skill_id` at its first step."""
    first = block.first_step.id
    frame = StackFrame(
        frame_id=frame_id,
        skill_id=skill_id,
        type="ordered_block",
        block_id=block.block_id,
        step_id=first,
    )
    return (
        OrderedBlockEntered(skill_id=skill_id, block_id=block.block_id),
        FlowStarted(flow_id=flow_id(skill_id, block.block_id), step_id=first),
        StackChanged(frames=(*stack, frame)),
    )


def advance(frame: StackFrame, step_id: str) -> StepAdvanced:
    """Move a block frame's pointer."""
    return StepAdvanced(
        skill_id=frame.skill_id,
        block_id=frame.block_id or "",
        frame_id=frame.frame_id,
        step_id=step_id,
    )


def pop_block(state: ConversationState, *, completed: bool) -> tuple[Event, ...]:
    """Remove the top block frame (completed at END, or cancelled)."""
    frame = top_block(state)
    if frame is None:
        return ()
    block_id, step = frame.block_id or "", frame.step_id or ""
    lifecycle: tuple[Event, ...]
    if completed:
        lifecycle = (
            FlowCompleted(flow_id=flow_id(frame.skill_id, block_id), step_id=step),
            OrderedBlockCompleted(skill_id=frame.skill_id, block_id=block_id, step_id=step),
        )
    else:
        lifecycle = (
            FlowCancelled(flow_id=flow_id(frame.skill_id, block_id), step_id=step),
            OrderedBlockCancelled(skill_id=frame.skill_id, block_id=block_id, step_id=step),
        )
    return (*lifecycle, StackChanged(frames=state.stack[:-1]))


def _remaining(state: ConversationState, skill_id: str) -> tuple[StackFrame, ...]:
    """The stack without the topmost run of frames belonging to `skill_id`."""
    stack = list(state.stack)
    while stack and stack[-1].skill_id == skill_id:
        frame = stack.pop()
        if frame.type == "skill":
            break
    return tuple(stack)


def finish_skill(state: ConversationState, skill_id: str, *, completed: bool) -> tuple[Event, ...]:
    """Complete or cancel the top skill `skill_id` and any of its block frames."""
    events: list[Event] = []
    step = current_step_id(state, skill_id)
    for frame in reversed(state.stack):
        if frame.skill_id != skill_id:
            break
        if frame.type == "ordered_block":
            block, at = frame.block_id or "", frame.step_id or ""
            fid = flow_id(skill_id, block)
            if completed:
                events += [
                    FlowCompleted(flow_id=fid, step_id=at),
                    OrderedBlockCompleted(skill_id=skill_id, block_id=block, step_id=at),
                ]
            else:
                events += [
                    FlowCancelled(flow_id=fid, step_id=at),
                    OrderedBlockCancelled(skill_id=skill_id, block_id=block, step_id=at),
                ]
    if completed:
        events += [FlowCompleted(flow_id=skill_id, step_id=step), SkillCompleted(skill_id=skill_id)]
    else:
        events += [
            FlowCancelled(flow_id=skill_id, step_id=step),
            SkillCancelled(skill_id=skill_id, step_id=step),
        ]
    events.append(StackChanged(frames=_remaining(state, skill_id)))
    return tuple(events)


def interrupt(state: ConversationState) -> tuple[Event, ...]:
    """Park the active skill (it stays on the stack) before another one is pushed."""
    skill_id = state.active_skill_id
    if skill_id is None:
        return ()
    step = current_step_id(state, skill_id)
    events: list[Event] = [
        FlowInterrupted(flow_id=skill_id, step_id=step),
        SkillInterrupted(skill_id=skill_id, step_id=step),
    ]
    frame = top_block(state)
    if frame is not None and frame.skill_id == skill_id:
        block = frame.block_id or ""
        events.insert(0, OrderedBlockInterrupted(skill_id=skill_id, block_id=block, step_id=step))
    return tuple(events)


def resume(state: ConversationState) -> tuple[Event, ...]:
    """Continue the (parked) active skill where it stood."""
    skill_id = state.active_skill_id
    if skill_id is None:
        return ()
    step = current_step_id(state, skill_id)
    events: list[Event] = [
        FlowResumed(flow_id=skill_id, step_id=step),
        SkillResumed(skill_id=skill_id, step_id=step),
    ]
    frame = top_block(state)
    if frame is not None and frame.skill_id == skill_id:
        events.append(
            OrderedBlockResumed(skill_id=skill_id, block_id=frame.block_id or "", step_id=step)
        )
    return tuple(events)


def pause_owner(state: ConversationState) -> StackFrame | None:
    """The skill frame the pending pause belongs to: the frame of its skill at or below the
    frame that asked (the topmost frame of that skill when the asking frame is gone)."""
    pending = state.pending_confirmation
    if pending is None or pending.skill_id is None:
        return None
    ids = [frame.frame_id for frame in state.stack]
    end = ids.index(pending.frame_id) + 1 if pending.frame_id in ids else len(ids)
    for frame in reversed(state.stack[:end]):
        if frame.type == "skill" and frame.skill_id == pending.skill_id:
            return frame
    return None


def withdraw_pause(
    before: ConversationState, frames: tuple[StackFrame, ...], reason: str
) -> tuple[Event, ...]:
    """Resolve the pause pending in `before` as denied when the skill frame it belongs to is
    not among `frames` (the stack after a change); nothing when it still is (spec §5.6: a
    pause belongs to its skill frame, so no later answer can run a call nobody waits for)."""
    pending = before.pending_confirmation
    if pending is None:
        return ()
    owner = pause_owner(before)
    if owner is not None and any(frame.frame_id == owner.frame_id for frame in frames):
        return ()
    if owner is None and pending.skill_id is None and frames:
        return ()  # a record with no skill (Mantle-style memory): only a new session drops it
    return (
        PausePointResolved(pause_id=pending.pause_id, approved=False, metadata={"reason": reason}),
        MemoryCleared(key=PENDING_CONFIRMATION_KEY),
    )


def withdrawal_reason(events: Iterable[Event], pause_id: str) -> str | None:
    """Why pause `pause_id` was withdrawn (`withdraw_pause`), or None when it was not (still
    pending, answered by the user, or unknown)."""
    for event in events:
        if isinstance(event, PausePointResolved) and event.pause_id == pause_id:
            reason = event.metadata.get("reason")
            return reason if isinstance(reason, str) and not event.approved else None
    return None
