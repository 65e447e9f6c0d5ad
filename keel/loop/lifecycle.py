"""Skill lifecycle as the driver performs it: activate, enter blocks, finish, resume offers,
and the blocks a denial holds until the next message."""

from __future__ import annotations

from keel.conditions import Outcome, evaluate
from keel.events.model import (
    Event,
    MemoryCleared,
    MemorySet,
    PausePointCreated,
    PausePointResolved,
    RoutingDecided,
    SkillActivated,
    SkillInterrupted,
    SkillResumed,
)
from keel.loop import stack
from keel.loop.machine import frame_block, next_step_id
from keel.loop.offer import RESUME_OFFER_KEY, eligible_skills
from keel.loop.turn import TurnContext
from keel.memory import reader_for
from keel.skills import CallStep, OrderedBlock

DEFAULT_COMPLETED = "default_completed"


async def enter_block(t: TurnContext, skill_id: str, block: OrderedBlock) -> None:
    """Push `block` of `skill_id` at its first step."""
    frame_id = t.new_id()
    await t.emit(*stack.enter_block(t.state.stack, skill_id, block, frame_id=frame_id))
    t.entered.add((frame_id, block.first_step.id))


async def activate(t: TurnContext, skill_id: str, *, interrupt: bool) -> None:
    """Push skill `skill_id` (parking the active one first when `interrupt`)."""
    skill = t.definition.skill(skill_id)
    if skill is None:
        return
    if interrupt:
        await t.emit(*stack.interrupt(t.state))
    await t.emit(*stack.activate(t.definition.memory, t.state, skill_id, frame_id=t.new_id()))
    for trigger in skill.document.utter:
        if trigger.on == "activate":
            await t.utter(trigger.response)
    if skill.document.blocks and not skill.document.has_prose:
        await enter_block(t, skill_id, skill.document.blocks[0])


def _was_interrupted(t: TurnContext, skill_id: str) -> bool:
    for event in reversed(t.all_events()):
        if isinstance(event, SkillInterrupted | SkillResumed | SkillActivated):
            if event.skill_id == skill_id:
                return isinstance(event, SkillInterrupted)
    return False


async def end_skill(t: TurnContext, skill_id: str, *, completed: bool) -> None:
    """Take skill `skill_id` (the top skill) off the stack, completed or cancelled; a pause
    its frame was holding is withdrawn, resolved as denied (spec §5.6)."""
    before = t.state
    await t.emit(*stack.finish_skill(before, skill_id, completed=completed))
    reason = "skill_completed" if completed else "skill_cancelled"
    # Emitted apart: `utter: when:` triggers are compared within one emit, and this one must
    # compare the skill below with itself, not with the skill that just left.
    await t.emit(*stack.withdraw_pause(before, t.state.stack, reason))


async def finish(t: TurnContext, skill_id: str, *, completed: bool) -> None:
    """Complete or cancel skill `skill_id` (the top skill), then settle what lies below."""
    await end_skill(t, skill_id, completed=completed)
    await after_pop(t)
    finished = t.definition.skill(skill_id)
    engine_managed = finished is not None and finished.document.routing.engine_managed
    # Steps a denial held back (spec §5.6) end the denied request: the user has already said
    # what comes next, so default_completed does not ask; the loop handles the message.
    if not t.state.stack and completed and not engine_managed and not t.after_denial:
        done = t.definition.skill(DEFAULT_COMPLETED)
        if done is not None:
            await activate(t, DEFAULT_COMPLETED, interrupt=False)
        return
    below = t.state.active_skill_id
    if below is not None and stack.top(t.state) is not None and _was_interrupted(t, below):
        await offer_resume(t, below)


async def offer_resume(t: TurnContext, skill_id: str) -> None:
    """Ask whether to continue parked skill `skill_id` (the model hears the answer); a
    hidden skill (one another skill called) is named by the nearest visible skill below."""
    name = _shown_name(t, skill_id)
    await t.emit(MemorySet(key=RESUME_OFFER_KEY, value=skill_id))
    await t.utter("utter_offer_resume", extra={"skill": name})


def _shown_name(t: TurnContext, skill_id: str) -> str:
    for frame in reversed(t.state.stack):
        skill = t.definition.skill(frame.skill_id) if frame.type == "skill" else None
        if skill is not None and not skill.document.routing.hidden:
            return skill.document.name
    skill = t.definition.skill(skill_id)
    return skill.document.name if skill is not None else skill_id


async def park_after_answer(t: TurnContext) -> bool:
    """After a grounded answer (knowledge mode), park the active skill and offer to resume
    it (spec §7.5); False when there is nothing to park."""
    skill = t.active_skill
    if skill is None or skill.document.routing.engine_managed or resume_offer(t) is not None:
        return False
    if t.state.pending_confirmation is not None:
        return False  # the pending gate must not be stranded behind a parked skill
    await t.emit(*stack.interrupt(t.state))
    await offer_resume(t, skill.skill_id)
    return True


async def link(t: TurnContext, skill_id: str, target: str) -> None:
    """A `link:` step: `skill_id` completes and `target` takes its place, with no return.

    Unlike `finish`, nothing settles in between: the hand-over is not the end of the
    user's request, so neither `default_completed` nor a resume offer may run first.
    """
    await end_skill(t, skill_id, completed=True)
    await drop_resume_offer(t)
    await activate(t, target, interrupt=False)


async def after_pop(t: TurnContext) -> None:
    """A frame was removed: a block frame left on a `call:` step has had its call return."""
    frame = stack.top_block(t.state)
    if frame is None:
        return
    found = frame_block(t.definition, frame)
    if found is None:
        return
    _, block = found
    step = block.step(frame.step_id or "")
    if isinstance(step, CallStep):
        target = next_step_id(t.definition, t.state, frame, block, step)
        await t.emit(stack.advance(frame, target))
        t.entered.add((frame.frame_id, target))


async def resume(t: TurnContext) -> None:
    """The user accepted the resume offer: continue the parked skill where it stood."""
    await t.emit(MemoryCleared(key=RESUME_OFFER_KEY), *stack.resume(t.state))
    frame = stack.top_block(t.state)
    if frame is not None and frame.step_id is not None:
        t.entered.add((frame.frame_id, frame.step_id))


def resume_offer(t: TurnContext) -> str | None:
    """The skill a pending resume offer names, if any."""
    value = t.state.memory.get(RESUME_OFFER_KEY)
    return value if isinstance(value, str) else None


def offered_this_turn(t: TurnContext) -> bool:
    """The pending resume offer was made during the current turn (so it awaits an answer)."""
    return any(isinstance(e, MemorySet) and e.key == RESUME_OFFER_KEY for e in t.recorder.events)


async def drop_resume_offer(t: TurnContext) -> None:
    """Forget a pending resume offer."""
    if resume_offer(t) is not None:
        await t.emit(MemoryCleared(key=RESUME_OFFER_KEY))


async def auto_complete(t: TurnContext) -> bool:
    """Complete a prose skill whose `complete_when.condition` holds (no criteria)."""
    skill = t.active_skill
    if skill is None:
        return False
    rule = skill.document.complete_when  # checked first: most skills have none
    if rule is None or rule.condition is None or rule.criteria:
        return False
    if stack.top_block(t.state) is not None:
        return False
    read = reader_for(t.state.memory, t.definition.memory, skill.skill_id)
    if evaluate(rule.condition, read) is not Outcome.TRUE:
        return False
    await finish(t, skill.skill_id, completed=True)
    return True


async def slash_activate(t: TurnContext, text: str) -> bool:
    """`/skill_id` activates an eligible skill without a model call; False for other text."""
    if not text.startswith("/"):
        return False
    target = text[1:].strip()
    eligible = tuple(s.skill_id for s in eligible_skills(t.definition, t.state))
    if target not in eligible:
        return False
    await t.emit(RoutingDecided(source="slash", skill_id=target, tier=None, candidates=eligible))
    await drop_resume_offer(t)
    await activate(t, target, interrupt=t.state.active_skill_id is not None)
    return True


def held_by_denial(t: TurnContext) -> tuple[PausePointCreated, ...]:
    """The pause points of `execute_tool` steps the user denied in this turn whose block is
    still on the stack: each such block is held until the next message (spec §5.6 step 3,
    `keel.loop.blocks_run`)."""
    denied = _denied(t.recorder.events)
    if not denied:
        return ()
    frames = {frame.frame_id for frame in t.state.stack}
    return tuple(
        e
        for e in t.all_events()
        if isinstance(e, PausePointCreated)
        and e.pause_id in denied
        and e.execute_step_id is not None
        and e.frame_id in frames
    )


def _denied(events: list[Event]) -> frozenset[str]:
    """The pause ids `events` resolves as denied, read on from the previous call's answer
    for the same list (the turn's events only grow; a cleared or other list is read anew)."""
    last = _last_denied[0]
    start, found = 0, _NONE_DENIED
    if last is not None and last[0] is events and last[1] <= len(events):
        seen = last[1]
        if seen == 0 or events[seen - 1] is last[2]:
            start, found = seen, last[3]
    if start < len(events):
        new = {
            e.pause_id for e in events[start:] if type(e) is PausePointResolved and not e.approved
        }
        if new:
            found = found | new
    _last_denied[0] = (events, len(events), events[-1] if events else None, found)
    return found


_NONE_DENIED: frozenset[str] = frozenset()
_last_denied: list[tuple[list[Event], int, Event | None, frozenset[str]] | None] = [None]


def held_tools(t: TurnContext) -> frozenset[str]:
    """Tools whose `execute_tool` step the user denied in this turn: while the model words
    the denial they are not offered, and a call to one is refused (it would ask again)."""
    if not _denied(t.recorder.events):
        return _NONE_DENIED  # the usual case: nothing denied in this turn
    return frozenset(pause.tool_name for pause in held_by_denial(t))
