"""Which tools the model is offered on a call, and which skills it may route to (pure).

The framework narrows first: a skill is a routing candidate only when it is routable
(not disabled, hidden or engine-managed) and its `requires` holds; a builder tool is
offered only while its `tool_constraints.requires` holds (a condition that cannot be
evaluated hides it). Built-in tools follow the offering rules of spec §6 and §7.5.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from keel.conditions import Outcome, evaluate
from keel.events.base import StackFrame
from keel.events.fold import ConversationState, PendingConfirmation
from keel.loop.reuse import same_memory
from keel.loop.stack import top_block
from keel.memory import MemoryField, reader_for
from keel.project.definition import AgentDefinition, Skill
from keel.skills import CollectStep

RESUME_OFFER_KEY = "system.resume_offer"
"""Engine memory: the parked skill the user was offered to resume."""

ACTIVATE = "activate"
SET_FIELDS = "set_fields"
COMPLETE_SKILL = "complete_skill"
CANCEL_SKILL = "cancel_skill"
LISTEN = "listen"
SEARCH_KNOWLEDGE = "search_knowledge"
CANNOT_HELP = "cannot_help"
RESOLVE = "resolve_tool_confirmation"
BUILTINS = frozenset(
    {
        ACTIVATE,
        SET_FIELDS,
        COMPLETE_SKILL,
        CANCEL_SKILL,
        LISTEN,
        SEARCH_KNOWLEDGE,
        CANNOT_HELP,
        RESOLVE,
    }
)


def _object(
    properties: Mapping[str, object], required: tuple[str, ...] = ()
) -> Mapping[str, object]:
    return MappingProxyType(
        {
            "type": "object",
            "properties": dict(properties),
            "required": list(required),
            "additionalProperties": False,
        }
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class Offer:
    """One tool put in front of the model."""

    name: str
    description: str
    parameters: Mapping[str, object] = field(default_factory=lambda: _object({}))
    builtin: bool = False


_STATIC: dict[str, Offer] = {
    SET_FIELDS: Offer(
        name=SET_FIELDS,
        description="Record values the user gave for memory fields of the active skill.",
        parameters=_object(
            {"fields": {"type": "object", "description": "entry name -> value"}}, ("fields",)
        ),
        builtin=True,
    ),
    COMPLETE_SKILL: Offer(
        name=COMPLETE_SKILL, description="Mark the active skill as done.", builtin=True
    ),
    CANCEL_SKILL: Offer(
        name=CANCEL_SKILL,
        description="Stop the active skill; the user wants something else.",
        builtin=True,
    ),
    LISTEN: Offer(
        name=LISTEN,
        description="End your turn silently and wait for the user's answer.",
        builtin=True,
    ),
    SEARCH_KNOWLEDGE: Offer(
        name=SEARCH_KNOWLEDGE,
        description="Search the knowledge base and get the matching sections.",
        parameters=_object({"query": {"type": "string"}}, ("query",)),
        builtin=True,
    ),
    CANNOT_HELP: Offer(
        name=CANNOT_HELP,
        description="Tell the user this request is outside what you can help with.",
        builtin=True,
    ),
    RESOLVE: Offer(
        name=RESOLVE,
        description="Pass on the user's answer to the pending confirmation question.",
        parameters=_object({"confirmed": {"type": "boolean"}}, ("confirmed",)),
        builtin=True,
    ),
}


def builtin_offer(name: str) -> Offer:
    """The offer of a static built-in tool."""
    return _STATIC[name]


def skill_requires(definition: AgentDefinition, state: ConversationState, skill: Skill) -> Outcome:
    """Outcome of a skill's `requires` (TRUE when it has none)."""
    condition = skill.document.requires
    if condition is None:
        return Outcome.TRUE
    return evaluate(condition, reader_for(state.memory, definition.memory, skill.skill_id))


@dataclass(frozen=True, kw_only=True, slots=True)
class _Availability:
    """Which skills the model may route to in one state, and which it may not."""

    definition: AgentDefinition
    active: str | None
    memory: Mapping[str, object]
    eligible: tuple[Skill, ...]
    unavailable: frozenset[str]


# The last state asked about: a model call asks for the eligible skills (the tools) and the
# unavailable ones (the prompt) of the same state, and `requires` is pure in (definition,
# active skill, memory), so each skill's condition is evaluated once while those stay the
# same (the calls of a turn, mostly). Another agent, skill or memory misses.
_last_availability: list[_Availability | None] = [None]


def _availability(definition: AgentDefinition, state: ConversationState) -> _Availability:
    last = _last_availability[0]
    active = state.active_skill_id
    if (
        last is not None
        and last.definition is definition
        and last.active == active
        and same_memory(last.memory, state.memory)
    ):
        return last
    eligible: list[Skill] = []
    unavailable: set[str] = set()
    for skill in definition.skills.values():
        if skill.skill_id == active:
            continue
        if skill_requires(definition, state, skill) is not Outcome.TRUE:
            unavailable.add(skill.skill_id)
        elif skill.document.routable:
            eligible.append(skill)
    found = _Availability(
        definition=definition,
        active=active,
        memory=state.memory,
        eligible=tuple(eligible),
        unavailable=frozenset(unavailable),
    )
    _last_availability[0] = found
    return found


def eligible_skills(definition: AgentDefinition, state: ConversationState) -> tuple[Skill, ...]:
    """Skills the model may activate now: routable, `requires` true, not already active."""
    return _availability(definition, state).eligible


def unavailable_skills(definition: AgentDefinition, state: ConversationState) -> frozenset[str]:
    """Skills whose `requires` is not true now (the active one aside): the prompt does not
    name them, since `activate` would refuse them."""
    return _availability(definition, state).unavailable


def block_targets(state: ConversationState, skill: Skill | None) -> tuple[str, ...]:
    """Blocks of the active skill its prose points to with `@block`, while no block runs."""
    if skill is None or top_block(state) is not None:
        return ()
    referenced = {t.target for t in skill.document.tokens if t.kind == "block"}
    return tuple(b.block_id for b in skill.document.blocks if b.block_id in referenced)


def tool_gate(
    definition: AgentDefinition, state: ConversationState, skill: Skill, tool_name: str
) -> Outcome:
    """Outcome of a builder tool's `requires` for `skill` (TRUE when unconstrained)."""
    for constraint in skill.document.tool_constraints:
        if constraint.tool == tool_name and constraint.requires is not None:
            read = reader_for(state.memory, definition.memory, skill.skill_id)
            return evaluate(constraint.requires, read)
    return Outcome.TRUE


def collect_fields(definition: AgentDefinition, skill: Skill) -> tuple[MemoryField, ...]:
    """The skill's own entries its `collect:` steps ask for, in block and step order."""
    found: list[MemoryField] = []
    for block in skill.document.blocks:
        for step in block.steps:
            if not isinstance(step, CollectStep):
                continue
            field_ = definition.memory.resolve(step.entry, skill.skill_id)
            if field_ is not None and field_.namespace == skill.skill_id and field_ not in found:
                found.append(field_)
    return tuple(found)


Collectable = tuple[tuple[str, tuple[MemoryField, ...]], ...]
"""Per target skill (in target order), the entries its collect steps ask for."""


def collectable(definition: AgentDefinition, skills: tuple[Skill, ...]) -> Collectable:
    """The target skills that collect entries, each with those entries."""
    found = ((s.skill_id, collect_fields(definition, s)) for s in skills)
    return tuple((skill_id, fields) for skill_id, fields in found if fields)


def _fields_schema(targets: Collectable) -> dict[str, object]:
    """`activate`'s optional `fields`: the target skills' collect entries, for the values the
    user already gave in the message that starts the skill. Typed only in the text: a value
    is checked when it is written (as `set_fields` checks), so a wrong one leaves its entry
    unfilled instead of refusing the whole activation."""
    properties: dict[str, dict[str, str]] = {}
    for skill_id, fields in targets:
        for f in fields:
            about = f"{skill_id} ({f.type}): {f.description or f.name}"
            entry = properties.setdefault(f.name, {"description": about})
            if about not in entry["description"]:
                entry["description"] += "; " + about
    return {
        "type": "object",
        "description": "Optional: entry name -> value the user already stated; never guess.",
        "properties": properties,
    }


def activate_offer(targets: tuple[str, ...], collecting: Collectable = ()) -> Offer:
    """`activate` with the current targets named in its description, and the optional
    `fields` argument when a target skill collects entries (`keel.loop.activation_fill`)."""
    description = "Start a skill (or an ordered block of the active skill). Targets: " + (
        ", ".join(targets)
    )
    properties: dict[str, object] = {"target_id": {"type": "string"}}
    if collecting:
        listed = "; ".join(f"{s}: " + ", ".join(f.name for f in fs) for s, fs in collecting)
        description += (
            "\nWith `fields` (optional), record the values the user already gave in this "
            f"message for the target's entries: {listed}"
        )
        properties["fields"] = _fields_schema(collecting)
    return Offer(
        name=ACTIVATE,
        description=description,
        parameters=_object(properties, ("target_id",)),
        builtin=True,
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class CallMode:
    """What the current model call is for, beyond the conversation state."""

    searched: bool = False
    """`search_knowledge` ran earlier in this turn (knowledge mode)."""
    has_knowledge: bool = False
    """The project has a knowledge base (`references/`)."""
    collect_entry: str | None = None
    """A `collect:` step waiting on the model for this entry (bare name)."""
    withheld: frozenset[str] = frozenset()
    """Builder tools not offered on this call whatever their gate: a block step's tool the
    user just declined (`keel.loop.lifecycle.held_tools`)."""


def llm_writable(definition: AgentDefinition, skill: Skill, mode: CallMode) -> tuple[str, ...]:
    """Entries `set_fields` may write: llm_settable ones and the entry being collected."""
    names = [f.name for f in definition.memory.fields_of(skill.skill_id) if f.llm_settable]
    if mode.collect_entry is not None and mode.collect_entry not in names:
        names.append(mode.collect_entry)
    return tuple(names)


def builder_offers(
    definition: AgentDefinition, state: ConversationState, skill: Skill
) -> list[Offer]:
    """The active skill's tools whose `requires` holds now (closed hides), by name."""
    # The model cannot call what it cannot see: a false `requires` removes the tool (§5.6).
    return [
        Offer(name=name, description=tool.description, parameters=tool.parameters)
        for name, tool in sorted(skill.tools.items())
        if tool_gate(definition, state, skill, name) is Outcome.TRUE
    ]


def _gated_tools(skill: Skill) -> frozenset[str]:
    """The skill's tools with a `requires` constraint."""
    return frozenset(c.tool for c in skill.document.tool_constraints if c.requires is not None)


@dataclass(frozen=True, kw_only=True, slots=True)
class _Offered:
    """The tools offered in one situation (what `offered_tools` reads of the state)."""

    definition: AgentDefinition
    stack: tuple[StackFrame, ...]
    memory: Mapping[str, object]
    pending: PendingConfirmation | None
    mode: CallMode
    offers: tuple[Offer, ...]


# The last situation asked about: the offer is pure in the definition, the stack, memory,
# the pending confirmation and the call's mode, which mostly stay the same from one model
# call of a turn to the next.
_last_offered: list[_Offered | None] = [None]


def offered_tools(
    definition: AgentDefinition, state: ConversationState, mode: CallMode
) -> tuple[Offer, ...]:
    """Every tool offered on this call, builder tools first, in a stable order."""
    last = _last_offered[0]
    if (
        last is not None
        and last.definition is definition
        and (last.stack is state.stack or same_frames(last.stack, state.stack))
        and last.pending is state.pending_confirmation
        and last.mode == mode
        and same_memory(last.memory, state.memory)
    ):
        return last.offers
    offers = _offered_tools(definition, state, mode)
    _last_offered[0] = _Offered(
        definition=definition,
        stack=state.stack,
        memory=state.memory,
        pending=state.pending_confirmation,
        mode=mode,
        offers=offers,
    )
    return offers


def same_frames(a: tuple[StackFrame, ...], b: tuple[StackFrame, ...]) -> bool:
    """Whether two stacks hold the same frames but for their ids, which the offer never
    reads (another conversation in the same skill and step is offered the same)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if (
            x.skill_id != y.skill_id
            or x.type != y.type
            or x.block_id != y.block_id
            or x.step_id != y.step_id
        ):
            return False
    return True


def _offered_tools(
    definition: AgentDefinition, state: ConversationState, mode: CallMode
) -> tuple[Offer, ...]:
    skill = definition.skill(state.active_skill_id) if state.active_skill_id else None
    eligible = eligible_skills(definition, state)
    targets = tuple(s.skill_id for s in eligible)
    collecting = collectable(definition, eligible)
    targets += block_targets(state, skill)
    parked = state.memory.get(RESUME_OFFER_KEY)
    if isinstance(parked, str) and parked not in targets:
        targets += (parked,)  # accepting a resume offer is an `activate` of the parked skill
    pending = state.pending_confirmation is not None
    offers: list[Offer] = []
    if mode.searched:
        # After a search the list shrinks to activate, search_knowledge, cannot_help (and
        # resolve_tool_confirmation while one is pending) for the rest of the turn (§7.5).
        if targets:
            offers.append(activate_offer(targets, collecting))
        offers += [_STATIC[SEARCH_KNOWLEDGE], _STATIC[CANNOT_HELP]]
        return tuple(offers + ([_STATIC[RESOLVE]] if pending else []))
    # What changes least comes first (the skill's ungated tools, then the framework tools
    # that hold while the skill is active), what changes most last (gated tools, activate's
    # targets, the entry being collected, listen or resolve), so consecutive requests share
    # a long prefix a provider can cache.
    builders = (
        [o for o in builder_offers(definition, state, skill) if o.name not in mode.withheld]
        if skill is not None
        else []
    )
    gated = _gated_tools(skill) if skill is not None else frozenset()
    offers += [o for o in builders if o.name not in gated]
    if skill is not None:
        offers.append(_STATIC[CANCEL_SKILL])
    if mode.has_knowledge:  # with a knowledge base, cannot_help waits for a search (§7.5)
        offers.append(_STATIC[SEARCH_KNOWLEDGE])
    else:
        offers.append(_STATIC[CANNOT_HELP])
    offers += [o for o in builders if o.name in gated]
    if skill is not None:
        if skill.document.has_prose and top_block(state) is None:
            offers.append(complete_offer(skill))
        if llm_writable(definition, skill, mode):
            offers.append(_STATIC[SET_FIELDS])
    if targets:
        offers.append(activate_offer(targets, collecting))
    # While a confirmation is pending, listen is withheld and the resolve tool offered (§5.6).
    offers.append(_STATIC[RESOLVE] if pending else _STATIC[LISTEN])
    return tuple(offers)


def complete_offer(skill: Skill) -> Offer:
    """`complete_skill`; with `complete_when.criteria` the model must list each one it has
    checked in `criteria_met` (the call fails naming the first criterion it left out)."""
    rule = skill.document.complete_when
    if rule is None or not rule.criteria:
        return _STATIC[COMPLETE_SKILL]
    item = {"type": "string", "enum": list(rule.criteria)}
    return Offer(
        name=COMPLETE_SKILL,
        description="Mark the active skill as done. Only when every criterion holds: "
        + "; ".join(rule.criteria),
        parameters=_object({"criteria_met": {"type": "array", "items": item}}, ("criteria_met",)),
        builtin=True,
    )
