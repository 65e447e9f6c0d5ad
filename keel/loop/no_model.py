"""With no model: what can run without one, the fixed replies, hybrid skills, confirmations
and resume offers.

Used by `keel.loop.offline` where the loop would ask the model and there is none.

`runs_without_model` reads a skill's structure: a skill runs to its end with no model
when every step it can reach either needs no model (`action`, `set_memory`,
`execute_tool`, `noop`...) or can be settled by a typed extractor (a `collect` step whose
entry has one, an `instructions` step of a skill with `extract:` entries), its `call:` and
`link:` targets run without one too, and a hybrid skill's prose names the blocks it runs.
What cannot is said plainly when it is asked for, before any of its questions, and the
replies that say what the agent can do offer only what it can.
"""

from __future__ import annotations

import dataclasses

from keel.events.base import Button
from keel.events.model import BotMessage, OrderedBlockEntered, SkillActivated
from keel.extract import Found
from keel.extract.extractors import yes_no
from keel.extract.fill import spec_for
from keel.loop import lifecycle
from keel.loop.confirmations import resolve_pending
from keel.loop.deliver import render_response
from keel.loop.offer import eligible_skills
from keel.loop.outcome import _Done
from keel.loop.tools_run import CallSite
from keel.loop.turn import Next, TurnContext
from keel.project.definition import AgentDefinition, Skill
from keel.skills import CallStep, CollectStep, InstructionsStep, LinkStep, OrderedBlock

NEEDS_MODEL = "utter_needs_model"
SKILL_NEEDS_MODEL = "utter_skill_needs_model"
"""Said when a skill that cannot run without a model is asked for (`{skill}`: its name)."""
CAN_DO = "utter_offline_can_do"
"""Follows a needs-model reply, with a button per skill that runs without a model (left out
when no such skill is eligible)."""
LIMITS = "utter_offline_limits"
"""Said once after the greeting when some skills need a model (`{skills}`: their names)."""
NOT_UNDERSTOOD = "utter_offline_not_understood"
CHOICES_SHOWN = 6
"""Buttons at most on a reply that offers what the agent can do without a model."""


def runs_without_model(definition: AgentDefinition, skill_id: str) -> bool:
    """Whether skill `skill_id` can run to its end with no model (module docstring)."""
    return _runs(definition, skill_id, frozenset())


def _runs(definition: AgentDefinition, skill_id: str, seen: frozenset[str]) -> bool:
    skill = definition.skill(skill_id)
    if skill is None or skill_id in seen:
        return skill is not None
    seen = seen | {skill_id}
    document = skill.document
    if document.has_prose:
        named = dict.fromkeys(tok.target for tok in document.tokens if tok.kind == "block")
        blocks = [b for b in (document.block(name) for name in named) if b is not None]
        if not blocks:
            return False  # prose alone is answered by a model
    elif document.blocks:
        blocks = list(document.blocks)
    else:
        return False
    return all(_block_runs(definition, skill, block, seen) for block in blocks)


def _block_runs(
    definition: AgentDefinition, skill: Skill, block: OrderedBlock, seen: frozenset[str]
) -> bool:
    extractable = any(
        f.llm_settable and f.extract is not None
        for f in definition.memory.fields_of(skill.skill_id)
    )
    for step in block.steps:
        if isinstance(step, InstructionsStep) and not extractable:
            return False
        if isinstance(step, CollectStep):
            field = definition.memory.resolve(step.entry, skill.skill_id)
            if field is None or spec_for(field, implied=True) is None:
                return False
        if isinstance(step, CallStep | LinkStep):
            if skill.document.block(step.target) is not None:
                continue  # a block of the same skill: checked with the skill's blocks
            if not _runs(definition, step.target, seen):
                return False
    return True


def can_do(t: TurnContext) -> tuple[str, ...]:
    """The eligible skills (as routing sees them now) that run without a model."""
    return tuple(
        s.skill_id
        for s in eligible_skills(t.definition, t.state)
        if runs_without_model(t.definition, s.skill_id)
    )


def skill_buttons(t: TurnContext, skill_ids: tuple[str, ...]) -> tuple[Button, ...]:
    """One button per skill, titled with its name; the payload is its slash command."""
    buttons = []
    for skill_id in skill_ids:
        skill = t.definition.skill(skill_id)
        title = skill.document.name if skill is not None else skill_id
        buttons.append(Button(title=title, payload=f"/{skill_id}"))
    return tuple(buttons)


async def say_offering(
    t: TurnContext,
    name: str,
    choices: tuple[str, ...],
    *,
    extra: dict[str, str] | None = None,
    lead_in: bool = False,
) -> bool:
    """Send response `name` with a button per skill of `choices` (unless the response has
    buttons of its own); False when the project has no such response. A `lead_in` response
    ("Here is what I can do:") is not sent when it would have no button."""
    message = render_response(t.definition, t.state, name, extra=extra)
    if message is None:
        return False
    if lead_in and not message.buttons and not choices:
        return True
    if not message.buttons and choices:
        buttons = skill_buttons(t, choices[:CHOICES_SHOWN])
        message = dataclasses.replace(message, buttons=buttons)
    await t.say(message)
    return True


async def drop_stack(t: TurnContext) -> None:
    """Cancel every skill on the stack (the engine's own excepted) and a resume offer."""
    for _ in range(len(t.state.stack)):  # bounded: each round takes one skill off
        active = t.state.active_skill_id
        skill = t.definition.skill(active) if active is not None else None
        if active is None or (skill is not None and skill.document.routing.engine_managed):
            break
        await lifecycle.end_skill(t, active, completed=False)
    await lifecycle.drop_resume_offer(t)


async def needs_model(t: TurnContext, reason: str) -> Next:
    """The fixed reply for what only a model could do; the skills on the stack are
    cancelled, so the user is not stuck, and what can be done instead is offered."""
    t.stop_detail = f"no_model: {reason}"
    if not await t.utter(NEEDS_MODEL):
        await t.say(BotMessage(text="I can't help with that here.", response_source="verbatim"))
    await drop_stack(t)
    await say_offering(t, CAN_DO, can_do(t), lead_in=True)
    return Next.WAIT


async def skill_needs_model(t: TurnContext, skill_id: str) -> Next:
    """Skill `skill_id` cannot run without a model: said plainly, before any question of
    it. It is cancelled with the skills above it; a skill it interrupted is offered again,
    else what can be done instead is offered."""
    t.stop_detail = f"no_model: skill `{skill_id}` needs a model"
    skill = t.definition.skill(skill_id)
    name = skill.document.name if skill is not None else skill_id
    if not await t.utter(SKILL_NEEDS_MODEL, extra={"skill": name}):
        await t.utter(NEEDS_MODEL)
    for _ in range(len(t.state.stack)):  # bounded: each round takes one skill off
        active = t.state.active_skill_id
        if active is None:
            break
        await lifecycle.end_skill(t, active, completed=False)
        if active == skill_id:
            break
    parked = t.state.active_skill_id
    parked_skill = t.definition.skill(parked) if parked is not None else None
    if parked is not None and parked_skill is not None and not _engine_managed(parked_skill):
        await lifecycle.offer_resume(t, parked)
        return Next.WAIT
    await lifecycle.drop_resume_offer(t)
    await say_offering(t, CAN_DO, can_do(t), lead_in=True)
    return Next.WAIT


def _engine_managed(skill: Skill) -> bool:
    return skill.document.routing.engine_managed


def model_bound(t: TurnContext) -> str | None:
    """The lowest skill on the stack that cannot run without a model, if any."""
    for frame in t.state.stack:
        if frame.type != "skill" or frame.skill_id is None:
            continue
        skill = t.definition.skill(frame.skill_id)
        if skill is None or skill.document.routing.engine_managed:
            continue
        if not runs_without_model(t.definition, frame.skill_id):
            return frame.skill_id
    return None


async def announce_limits(t: TurnContext) -> None:
    """After the greeting: which skills need a model, said once (`utter_offline_limits`)."""
    names = [
        s.document.name
        for s in t.definition.skills.values()
        if s.document.routable
        and not s.document.routing.engine_managed
        and not runs_without_model(t.definition, s.skill_id)
    ]
    if names:
        await t.utter(LIMITS, extra={"skills": ", ".join(names)})


def _blocks_entered(t: TurnContext, skill_id: str) -> set[str]:
    entered: set[str] = set()
    for event in reversed(t.all_events()):
        if isinstance(event, SkillActivated) and event.skill_id == skill_id:
            break
        if isinstance(event, OrderedBlockEntered) and event.skill_id == skill_id:
            entered.add(event.block_id)
    return entered


async def prose(t: TurnContext, skill: Skill) -> Next:
    """A hybrid skill with no model: enter the blocks its prose names, in order, then end."""
    document = skill.document
    named = [tok.target for tok in document.tokens if tok.kind == "block"]
    entered = _blocks_entered(t, skill.skill_id)
    for block_id in dict.fromkeys(named):
        block = document.block(block_id)
        if block is not None and block_id not in entered:
            await lifecycle.enter_block(t, skill.skill_id, block)
            return Next.CONTINUE
    if entered and t.delivered:
        await lifecycle.finish(t, skill.skill_id, completed=True)
        return Next.CONTINUE
    return await needs_model(t, f"skill `{skill.skill_id}` answers in prose")


async def confirm(t: TurnContext) -> Next:
    pending = t.state.pending_confirmation
    assert pending is not None
    answer = yes_no(t.user_text)
    if not isinstance(answer, Found):
        await t.say(BotMessage(text=pending.confirmation_ask, response_source="verbatim"))
        return Next.WAIT
    site = CallSite(call_id=f"offline:{pending.pause_id}")
    outcome = await resolve_pending(t, pending, bool(answer.value), site)
    return outcome.next if isinstance(outcome, _Done) else Next.CONTINUE


async def resume(t: TurnContext) -> Next:
    """The answer to a resume offer: a yes resumes the parked skill; a no, or anything else
    (a new request), cancels the parked skills, and the message is handled as it stands."""
    answer = yes_no(t.user_text)
    if isinstance(answer, Found) and answer.value:
        await lifecycle.resume(t)
        return Next.CONTINUE
    await drop_stack(t)
    return Next.CONTINUE
