"""One model round trip: scoped prompt, offered tools, history, and the `model_called` record."""

from __future__ import annotations

from contextlib import aclosing

from keel.events.model import BotMessage, ModelCalled, UserMessage
from keel.llm.errors import ProviderUnavailable
from keel.llm.port import Message, ModelRequest, ModelResponse, StreamDone, TextDelta, ToolSchema
from keel.loop import lifecycle, stack
from keel.loop.machine import frame_block
from keel.loop.offer import CallMode, Offer, eligible_skills, offered_tools
from keel.loop.prompt import (
    ActiveSkill,
    KnowledgeAnswer,
    KnowledgeSection,
    PromptInputs,
    Routing,
    Situation,
    build_system_prompt,
)
from keel.loop.taps import read_as_title
from keel.loop.turn import TurnContext
from keel.skills import CollectStep

HISTORY_MESSAGES = 20
"""Earlier user/bot messages shown to the model (older ones are left out)."""


def call_mode(t: TurnContext) -> CallMode:
    """The mode of the next call: knowledge mode, and which entry a collect waits for."""
    entry = None
    frame = stack.top_block(t.state)
    if frame is not None:
        found = frame_block(t.definition, frame)
        if found is not None:
            step = found[1].step(frame.step_id or "")
            if isinstance(step, CollectStep):
                entry = step.entry
    return CallMode(searched=t.searched, has_knowledge=t.has_knowledge, collect_entry=entry)


def _situation(t: TurnContext, knowledge: tuple[KnowledgeSection, ...]) -> Situation:
    if t.searched:
        return KnowledgeAnswer(sections=knowledge)
    skill = t.active_skill
    if skill is None:
        return Routing(eligible=tuple(s.document for s in eligible_skills(t.definition, t.state)))
    frame = stack.top_block(t.state)
    step = None
    if frame is not None:
        found = frame_block(t.definition, frame)
        step = found[1].step(frame.step_id or "") if found else None
    return ActiveSkill(
        document=skill.document,
        block_id=frame.block_id if frame else None,
        step=step,
        already_collected=tuple(t.already_collected),
        pending_confirmation=t.state.pending_confirmation,
        resume_offer=lifecycle.resume_offer(t) == skill.skill_id,
    )


def history(t: TurnContext) -> list[Message]:
    """Earlier user and bot messages, oldest first: `set:` payloads are left out (a
    malformed one that came with a button title is shown as that title)."""
    messages: list[Message] = []
    turn_start = len(t.history)
    for index, event in enumerate(t.all_events()):
        if isinstance(event, UserMessage) and not event.is_button_payload:
            messages.append({"role": "user", "content": event.text})
        elif isinstance(event, UserMessage) and read_as_title(event.text, event.button_title):
            messages.append({"role": "user", "content": event.button_title or ""})
        elif isinstance(event, BotMessage) and index < turn_start:
            messages.append({"role": "assistant", "content": event.text})
    return messages[-HISTORY_MESSAGES:]


def build_request(
    t: TurnContext, offers: tuple[Offer, ...], knowledge: tuple[KnowledgeSection, ...]
) -> ModelRequest:
    """The request for the next call."""
    inputs = PromptInputs(
        config=t.definition.config,
        now=t.clock.now(),
        situation=_situation(t, knowledge),
        skills=tuple(s.document for s in t.definition.skills.values()),
        offered_tools=frozenset(o.name for o in offers),
        first_iteration=t.model_calls == 0,
        schema=t.definition.memory,
        memory=t.state.memory,
        canned_replies=tuple(t.canned),
    )
    system: Message = {"role": "system", "content": build_system_prompt(inputs)}
    tools = tuple(
        ToolSchema(name=o.name, description=o.description, parameters=o.parameters) for o in offers
    )
    skill = t.active_skill
    tier = (skill.document.tier if skill else None) or "default"
    return ModelRequest(messages=(system, *history(t), *t.transcript), tools=tools, tier=tier)


async def _ask(t: TurnContext, request: ModelRequest) -> ModelResponse:
    """`complete`, or `stream` with text deltas passed on when someone is watching."""
    observer = t.recorder.observer
    stream = getattr(t.model, "stream", None)
    if observer is None or stream is None:
        return await t.model.complete(request)
    async with aclosing(stream(request)) as events:
        async for item in events:
            if isinstance(item, TextDelta) and item.text:
                await observer.text_delta(item.text)
            elif isinstance(item, StreamDone):
                return item.response
    raise ProviderUnavailable("the model's stream ended without a reply")


async def call_model(
    t: TurnContext, knowledge: tuple[KnowledgeSection, ...] = ()
) -> tuple[ModelResponse, tuple[Offer, ...]]:
    """Ask the model once; records `model_called` with tokens and latency."""
    offers = offered_tools(t.definition, t.state, call_mode(t))
    request = build_request(t, offers, knowledge)
    started = t.clock.now()
    response = await _ask(t, request)
    t.model_calls += 1
    elapsed = (t.clock.now() - started).total_seconds() * 1000
    await t.emit(
        ModelCalled(
            model=response.model,
            tier=request.tier,
            input_tokens=response.usage.input_tokens,
            output_tokens=response.usage.output_tokens,
            latency_ms=elapsed,
        )
    )
    return response, offers
