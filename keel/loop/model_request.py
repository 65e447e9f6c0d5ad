"""A model call's request: the offer, the scoped system prompt, the fitted history and the
tier, built from the turn (and reused, call to call, while what each is made of is the same)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from types import MappingProxyType

from keel.events.base import StackFrame
from keel.events.fold import ConversationState, PendingConfirmation
from keel.knowledge.section import KnowledgeSection
from keel.llm.port import (
    Message,
    ModelRequest,
    PromptCache,
    ToolSchema,
)
from keel.llm.prefix import cache_key
from keel.llm.tiers import TierChoice, choose_tier, has_router
from keel.loop import lifecycle, stack
from keel.loop.history import Fitted, estimate_tokens, fit_history, keep_all, unit_tokens
from keel.loop.history_log import History, history_of
from keel.loop.machine import frame_block
from keel.loop.offer import (
    CallMode,
    Offer,
    eligible_skills,
    offered_tools,
    same_frames,
    unavailable_skills,
)
from keel.loop.prompt import (
    ActiveSkill,
    KnowledgeAnswer,
    PromptInputs,
    Routing,
    Situation,
    SystemPrompt,
    system_prompt,
)
from keel.loop.prompt_sections import ack_enabled
from keel.loop.turn import TurnContext
from keel.loop.voice import channel_of
from keel.project.definition import AgentDefinition
from keel.skills import CollectStep, SkillDocument

_MILLISECOND = timedelta(milliseconds=1)


def call_mode(t: TurnContext) -> CallMode:
    """The mode of the next call: knowledge mode, and which entry a collect waits for."""
    entry = None
    frame = stack.top_block(t.recorder.state)
    if frame is not None:
        found = frame_block(t.definition, frame)
        if found is not None:
            step = found[1].step(frame.step_id or "")
            if isinstance(step, CollectStep):
                entry = step.entry
    return CallMode(
        searched=t.searched,
        has_knowledge=t.has_knowledge,
        collect_entry=entry,
        withheld=lifecycle.held_tools(t),
    )


def _situation(t: TurnContext, knowledge: tuple[KnowledgeSection, ...]) -> Situation:
    if t.searched:
        return KnowledgeAnswer(sections=knowledge)
    skill = t.active_skill
    if skill is None:
        return Routing(
            eligible=tuple(s.document for s in eligible_skills(t.definition, t.recorder.state))
        )
    frame = stack.top_block(t.recorder.state)
    step = None
    if frame is not None:
        found = frame_block(t.definition, frame)
        step = found[1].step(frame.step_id or "") if found else None
    return ActiveSkill(
        document=skill.document,
        block_id=frame.block_id if frame else None,
        step=step,
        already_collected=tuple(t.already_collected),
        pending_confirmation=t.recorder.state.pending_confirmation,
        resume_offer=lifecycle.resume_offer(t) == skill.skill_id,
    )


def keeps_tool_results(t: TurnContext) -> bool:
    """Whether earlier turns' tool calls and results go into the history: the active
    skill's `history.tool_results`, else `agent.yml`'s, else yes, except for a skill with
    ordered blocks (Mantle-style: its state is in memory), which leaves them out."""
    skill = t.active_skill
    if skill is not None and skill.document.history_tool_results is not None:
        return skill.document.history_tool_results
    if t.definition.config.history_tool_results is not None:
        return t.definition.config.history_tool_results
    return skill is None or not skill.document.blocks


def history(t: TurnContext) -> History:
    """The earlier units and this turn's user message, oldest first
    (`keel.loop.history_log`), read on from the previous call's. Control messages are left
    out; a tap reads as its button title (`keel.loop.control.said_by_user`)."""
    return history_of(
        t.recorder.conversation_id,
        t.history,
        t.recorder.events,
        tool_results=keeps_tool_results(t),
    )


def choose(t: TurnContext) -> TierChoice:
    """The tier of the next call: routing (no skill active) or acting, with escalation."""
    skill = t.active_skill
    integrations = t.definition.integrations
    key = (integrations, skill, t.user_text, t.attachments)
    last = _last_tier[0]
    if last is not None and last[0] == key:
        return last[1]
    choice = choose_tier(
        purpose="route" if skill is None else "act",
        skill_id=skill.skill_id if skill else None,
        skill_tier=skill.document.tier if skill else None,
        user_text=t.user_text,
        attachments=t.attachments,
        rules=integrations.escalation,
        router_configured=has_router(integrations),
    )
    _last_tier[0] = (key, choice)
    return choice


# The last tier chosen and what it was chosen from (pure in those; a turn keeps them).


_last_tier: list[tuple[tuple[object, ...], TierChoice] | None] = [None]


def skill_documents(definition: AgentDefinition) -> tuple[SkillDocument, ...]:
    """Every skill's document, in the definition's order (made once per definition)."""
    last = _last_documents[0]
    if last is not None and last[0] is definition:
        return last[1]
    documents = tuple(s.document for s in definition.skills.values())
    _last_documents[0] = (definition, documents)
    return documents


_last_documents: list[tuple[AgentDefinition, tuple[SkillDocument, ...]] | None] = [None]


class OfferedSchemas:
    """The offered tools as the request carries them, and their names (for the prompt)."""

    __slots__ = ("_tokens", "names", "offers", "tools")

    def __init__(self, offers: tuple[Offer, ...]) -> None:
        self.offers = offers
        self.tools = tuple(
            ToolSchema(name=o.name, description=o.description, parameters=o.parameters)
            for o in offers
        )
        self.names = frozenset(o.name for o in offers)
        self._tokens: int | None = None

    def parameters_tokens(self) -> int:
        """Estimated tokens of the tools' argument schemas (a history budget counts them)."""
        if self._tokens is None:
            self._tokens = estimate_tokens([dict(o.parameters) for o in self.offers])
        return self._tokens


def offered_schemas(offers: tuple[Offer, ...]) -> OfferedSchemas:
    """`offers` as tool schemas, made once while the same offers come back
    (`keel.loop.offer.offered_tools` returns the same tuple while nothing it reads changed)."""
    last = _last_schemas[0]
    if last is not None and last.offers is offers:
        return last
    made = OfferedSchemas(offers)
    _last_schemas[0] = made
    return made


_last_schemas: list[OfferedSchemas | None] = [None]


@dataclass(frozen=True, kw_only=True, slots=True)
class Prepared:
    """A request ready to send, with how it was made."""

    request: ModelRequest
    tier: TierChoice
    fitted: Fitted


def build_request(
    t: TurnContext,
    offers: tuple[Offer, ...],
    knowledge: tuple[KnowledgeSection, ...],
    *,
    now: datetime | None = None,
) -> Prepared:
    """The request for the next call (`now`: the clock read just before, if the caller
    has one; else the clock is read)."""
    schemas = offered_schemas(offers)
    system, context = _system_messages(
        _prompt(t, schemas, knowledge, t.clock.now() if now is None else now)
    )
    read = history(t)
    current = read.current
    budget = t.definition.integrations.llm.max_prompt_tokens
    # The `compress` and `tier` stages, back to back: three clock reads for the two.
    stage_ms = t.stage_ms
    started = t.clock.now()
    try:
        if budget is None:
            fitted = keep_all(read.messages())
        else:
            fixed = [system, *current, *t.transcript, *context]
            fitted = fit_history(
                read.earlier,
                fixed_tokens=estimate_tokens(fixed) + schemas.parameters_tokens(),
                budget=budget,
                sizes=read.sizes(unit_tokens),
            )
    finally:
        compressed = t.clock.now()
        elapsed = (compressed - started) / _MILLISECOND
        stage_ms["compress"] = stage_ms["compress"] + elapsed if "compress" in stage_ms else elapsed
    try:
        choice = choose(t)
    finally:
        elapsed = (t.clock.now() - compressed) / _MILLISECOND
        stage_ms["tier"] = stage_ms["tier"] + elapsed if "tier" in stage_ms else elapsed
    cache = _prompt_cache(t, system)
    request = ModelRequest(
        messages=(system, *fitted.messages, *current, *t.transcript, *context),
        tools=schemas.tools,
        tier=choice.tier,
        cache=cache,
    )
    return Prepared(request=request, tier=choice, fitted=fitted)


def _prompt(
    t: TurnContext,
    schemas: OfferedSchemas,
    knowledge: tuple[KnowledgeSection, ...],
    now: datetime,
) -> SystemPrompt:
    """`system_prompt` of this call's inputs. While everything the inputs are made of is
    the same as for the previous call (the very same definition, read-only memory, pending
    confirmation, offer and knowledge found; the stack's frames but for their ids; equal
    mode, canned replies, collected entries and minute), the previous call's prompt,
    without making them."""
    state = t.recorder.state
    memory = state.memory
    minute = (now.year, now.month, now.day, now.hour, now.minute, now.tzinfo)
    last = _last_inputs[0]
    if (
        last is not None
        and last.definition is t.definition
        and last.conversation == t.recorder.conversation_id
        and (last.session is state.session_metadata or last.session == state.session_metadata)
        and (last.stack is state.stack or same_frames(last.stack, state.stack))
        and last.memory is memory
        and last.pending is state.pending_confirmation
        and last.schemas is schemas
        and last.knowledge is knowledge
        and last.searched == t.searched
        and (last.first is None or last.first == (t.model_calls == 0))
        and last.minute == minute
        and last.canned == t.canned
        and last.collected == t.already_collected
    ):
        return last.prompt
    channel = channel_of(state)
    prompt = system_prompt(
        PromptInputs(
            config=t.definition.config,
            now=now,
            situation=_situation(t, knowledge),
            skills=skill_documents(t.definition),
            unavailable_skills=unavailable_skills(t.definition, state),
            offered_tools=schemas.names,
            first_iteration=t.model_calls == 0,
            schema=t.definition.memory,
            memory=memory,
            canned_replies=tuple(t.canned),
            channel=channel,
        )
    )
    # Only a read-only memory mapping can be told unchanged by identity. Which call of the
    # turn this is matters only to the acknowledgement (None: it is off).
    first = t.model_calls == 0 if ack_enabled(t.definition.config.prompts, channel) else None
    _last_inputs[0] = (
        _Inputs(t, state, schemas, knowledge, minute, prompt, first)
        if type(memory) is MappingProxyType
        else None
    )
    return prompt


class _Inputs:
    """What one call's prompt was made of (`_prompt`), and the prompt."""

    __slots__ = (
        "canned",
        "collected",
        "conversation",
        "definition",
        "first",
        "knowledge",
        "memory",
        "minute",
        "pending",
        "prompt",
        "schemas",
        "searched",
        "session",
        "stack",
    )

    def __init__(
        self,
        t: TurnContext,
        state: ConversationState,
        schemas: OfferedSchemas,
        knowledge: tuple[KnowledgeSection, ...],
        minute: tuple[object, ...],
        prompt: SystemPrompt,
        first: bool | None,
    ) -> None:
        self.definition = t.definition
        # A memo never crosses conversations or sessions (the channel is the session's).
        self.conversation, self.session = t.recorder.conversation_id, state.session_metadata
        self.stack, self.memory, self.pending = (
            state.stack,
            state.memory,
            state.pending_confirmation,
        )
        self.schemas, self.knowledge, self.minute, self.prompt = schemas, knowledge, minute, prompt
        self.searched, self.first = t.searched, first
        self.canned, self.collected = list(t.canned), list(t.already_collected)


_last_inputs: list[_Inputs | None] = [None]


def _prompt_cache(t: TurnContext, system: Message) -> PromptCache:
    """The request's `PromptCache`, the previous call's again for the same system message
    (the same object) of the same agent and conversation."""
    agent, conversation = t.definition.config.id or "", t.recorder.conversation_id
    last = _last_cache[0]
    if last is not None and last[0] is system and last[1] == agent and last[2] == conversation:
        return last[3]
    cache = PromptCache(
        stable_system_chars=len(str(system["content"])), key=cache_key(agent, conversation)
    )
    _last_cache[0] = (system, agent, conversation, cache)
    return cache


_last_cache: list[tuple[Message, str, str, PromptCache] | None] = [None]


def _system_messages(prompt: SystemPrompt) -> tuple[Message, tuple[Message, ...]]:
    """The message that opens the request and the one that closes it, made once per prompt.

    The stable part opens the request and the volatile part (step, memory, clock) closes
    it, after the history: consecutive requests then repeat all but their last message,
    the prefix a provider's prompt cache reuses."""
    last = _last_system[0]
    if last is not None and last[0] is prompt:
        return last[1], last[2]
    system: Message = {"role": "system", "content": prompt.stable or prompt.volatile}
    context: tuple[Message, ...] = (
        ({"role": "system", "content": prompt.volatile},)
        if prompt.stable and prompt.volatile
        else ()
    )
    _last_system[0] = (prompt, system, context)
    return system, context


_last_system: list[tuple[SystemPrompt, Message, tuple[Message, ...]] | None] = [None]


def call_offers(t: TurnContext) -> tuple[Offer, ...]:
    """`offered_tools` in this call's mode. While nothing was denied in this turn, the
    definition, read-only memory and pending confirmation are the very same objects as for
    the previous call, the stack holds the same frames but for their ids and the knowledge
    mode is the same, the previous call's offer, without making the mode again."""
    state = t.recorder.state
    last = _last_offers[0]
    held = lifecycle.held_tools(t)
    if (
        last is not None
        and not held
        and last[0] == t.has_knowledge
        and last[1] is t.definition
        and (last[2] is state.stack or same_frames(last[2], state.stack))
        and last[3] is state.memory
        and last[4] is state.pending_confirmation
        and last[5] == t.searched
        and last[7] == t.recorder.conversation_id
        and (last[8] is state.session_metadata or last[8] == state.session_metadata)
    ):
        return last[6]
    offers = offered_tools(t.definition, state, call_mode(t))
    memory = state.memory
    _last_offers[0] = (
        (
            t.has_knowledge,
            t.definition,
            state.stack,
            memory,
            state.pending_confirmation,
            t.searched,
            offers,
            t.recorder.conversation_id,  # never across conversations or sessions
            state.session_metadata,
        )
        if not held and type(memory) is MappingProxyType
        else None
    )
    return offers


_last_offers: list[
    tuple[
        bool,
        AgentDefinition,
        tuple[StackFrame, ...],
        Mapping[str, object],
        PendingConfirmation | None,
        bool,
        tuple[Offer, ...],
        str,
        Mapping[str, object],
    ]
    | None
] = [None]
