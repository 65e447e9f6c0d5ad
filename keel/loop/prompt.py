"""The scoped system prompt, built fresh for every model call from live state (spec §11.2).

    prompt = build_system_prompt(PromptInputs(config=..., now=clock.now(), situation=...))
    parts = system_prompt(inputs)  # the same text, split where the volatile part begins

Sections, in this fixed order. The stable part comes first and repeats byte for byte from
call to call of a conversation while the skill and the offered tools stay the same, so
provider prompt caches (which match the longest identical prefix) stay warm; the volatile
part, which changes with the step, memory, the clock or the call within a turn, comes last.
A section that does not apply is left out, never rendered empty.

    stable                                  volatile
    1. persona and global rules             8. the situation's live part: the current step,
    2. skill glossary (routable skills)        the skill's memory, already collected,
    3. channel rules                           waiting confirmation, resume offer; or the
    4. framework-tool instructions             knowledge search results (`KnowledgeAnswer`)
    5. knowledge rules (search offered)     9. project memory values that are set
    6. out-of-scope handling                10. current date and time
    7. the situation: `ActiveSkill` head    11. acknowledgement (first call of a turn)
       and prose, or `Routing`              12. the canned-response reminder, after a
                                                canned reply

Framework tools are named only when they are in `PromptInputs.offered_tools`; skills in
`PromptInputs.unavailable_skills` (`requires` not true) are named nowhere. Pure: the
caller decides eligibility, offered tools and the time; nothing here reads a clock. So the
prompt built for the previous call is returned again while its inputs are the same (the
clock to the minute, the precision it is shown at): the calls of a turn mostly are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType

from keel.conditions import MemoryReader
from keel.events.fold import PendingConfirmation
from keel.knowledge.section import KnowledgeSection
from keel.loop.prompt_sections import (
    DEFAULT_ROUTING_INTRO,
    Channel,
    ack_enabled,
    ack_section,
    canned_reminder,
    channel_section,
    glossary_section,
    knowledge_rules_section,
    lifecycle_section,
    memory_line,
    out_of_scope_section,
    persona_section,
    project_memory_section,
    routing_section,
    time_section,
    waiting_section,
)
from keel.loop.prose import BLOCK_REFERENCE, render_instructions, render_paragraphs
from keel.loop.reuse import same_memory
from keel.memory import MemorySchema, reader_for, render_for_prompt
from keel.project.config import AgentConfig
from keel.skills import CollectStep, InstructionsStep, SkillDocument, Step


@dataclass(frozen=True, kw_only=True, slots=True)
class ActiveSkill:
    """Situation: a skill is active; its filtered prose and state are shown."""

    document: SkillDocument
    block_id: str | None = None
    """The ordered block the skill is in, if any."""
    step: Step | None = None
    """The block's current step; instructions and collect steps are shown, others not."""
    already_collected: tuple[str, ...] = ()
    """Entries (of this skill) whose collect steps were skipped because already filled."""
    pending_confirmation: PendingConfirmation | None = None
    """A held tool call waiting for the user's yes or no."""
    resume_offer: bool = False
    """The skill was interrupted and the user should be offered to continue it."""


@dataclass(frozen=True, kw_only=True, slots=True)
class KnowledgeAnswer:
    """Situation: `search_knowledge` ran this turn; answer from what it returned."""

    sections: tuple[KnowledgeSection, ...] = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class Routing:
    """Situation: no skill is active; offer the catalogue of eligible skills."""

    eligible: tuple[SkillDocument, ...] = ()
    """Skills that may be activated now (routable, `requires` holds), in display order."""


Situation = ActiveSkill | KnowledgeAnswer | Routing
"""Exactly one situation branch per prompt."""


@dataclass(frozen=True, kw_only=True, slots=True)
class PromptInputs:
    """Everything one system prompt is built from (no IO happens while building it)."""

    config: AgentConfig
    """Persona, rules and `prompts:` overrides."""
    now: datetime
    """The current time, from the injected clock."""
    situation: Situation
    channel: Channel = "text"
    skills: tuple[SkillDocument, ...] = ()
    """Every skill of the agent; the glossary lists the routable ones, in this order."""
    unavailable_skills: frozenset[str] = frozenset()
    """Skills whose `requires` is not true now: named nowhere (glossary, `@skill` tokens)."""
    offered_tools: frozenset[str] = frozenset()
    """Names of the tools offered on this call (framework tools among them)."""
    first_iteration: bool = True
    """First model call of the turn (the acknowledgement section shows only then)."""
    schema: MemorySchema = field(default_factory=MemorySchema)
    memory: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))
    """Qualified key -> current value."""
    canned_replies: tuple[str, ...] = ()
    """Canned replies already sent verbatim this turn (triggers the reminder)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SystemPrompt:
    """One system prompt in its two parts: `stable` (the same on every call while the skill
    and the offered tools stay the same) then `volatile` (step, memory, time, ...)."""

    stable: str
    volatile: str

    @property
    def text(self) -> str:
        """The whole prompt: the parts joined by a blank line (either may be empty)."""
        return "\n\n".join(part for part in (self.stable, self.volatile) if part)

    @property
    def stable_chars(self) -> int:
        """How many leading characters of `text` are the stable part."""
        return len(self.stable)


def build_system_prompt(inputs: PromptInputs) -> str:
    """The system prompt for one model call, sections joined by blank lines."""
    return system_prompt(inputs).text


# The last prompt built, with its inputs (the clock read to the minute).
_last_prompt: list[tuple[PromptInputs, tuple[object, ...], SystemPrompt] | None] = [None]


def _minute(now: datetime) -> tuple[object, ...]:
    """What of `now` the prompt shows: the minute, with the zone."""
    return (now.year, now.month, now.day, now.hour, now.minute, now.tzinfo)


def _same_inputs(a: PromptInputs, b: PromptInputs) -> bool:
    """Whether two inputs build the same prompt (the clock aside): every part the same
    object or equal, memory holding the very same values (`same_memory`)."""
    return (
        a.config is b.config
        and a.situation == b.situation
        and a.channel == b.channel
        and a.skills == b.skills
        and a.unavailable_skills == b.unavailable_skills
        and a.offered_tools == b.offered_tools
        # The call within the turn matters only to the acknowledgement (off: no difference).
        and (a.first_iteration == b.first_iteration or not ack_enabled(a.config.prompts, a.channel))
        and a.schema is b.schema
        and a.canned_replies == b.canned_replies
        and same_memory(a.memory, b.memory)
    )


def system_prompt(inputs: PromptInputs) -> SystemPrompt:
    """The system prompt for one model call, split where its volatile part begins."""
    minute = _minute(inputs.now)
    last = _last_prompt[0]
    if last is not None and last[1] == minute and _same_inputs(last[0], inputs):
        return last[2]
    prompt = _system_prompt(inputs)
    _last_prompt[0] = (inputs, minute, prompt)
    return prompt


def _system_prompt(inputs: PromptInputs) -> SystemPrompt:
    prompts = inputs.config.prompts
    offered = inputs.offered_tools
    # After a search the answer section carries the instructions; never twice.
    answering = isinstance(inputs.situation, KnowledgeAnswer)
    knowledge_rules = inputs.config.references.instructions
    # Stable first, so the longest possible prefix repeats from call to call (prompt caches).
    stable = (
        persona_section(inputs.config),
        glossary_section(inputs.skills, inputs.unavailable_skills),
        channel_section(prompts, inputs.channel),
        lifecycle_section(offered, waiting=False),
        None if answering else knowledge_rules_section(knowledge_rules, offered),
        out_of_scope_section(offered),
        _situation_head(inputs),
    )
    volatile = (
        waiting_section(offered),  # listen or resolve: swapped while a confirmation waits
        _situation_live(inputs),
        project_memory_section(inputs.schema, inputs.memory),
        time_section(inputs.now),
        ack_section(prompts, inputs.channel, inputs.first_iteration),
        canned_reminder(inputs.canned_replies),
    )
    return SystemPrompt(stable=_joined(stable), volatile=_joined(volatile))


def situation_section(inputs: PromptInputs) -> str:
    """The one situation branch, whole (its stable head and its live part)."""
    return _joined((_situation_head(inputs), _situation_live(inputs)))


def _joined(sections: tuple[str | None, ...]) -> str:
    return "\n\n".join(s for s in sections if s)


def _situation_head(inputs: PromptInputs) -> str | None:
    """The situation's stable part: an active skill's heading and prose, or routing."""
    situation = inputs.situation
    if isinstance(situation, ActiveSkill):
        document = situation.document
        read = reader_for(inputs.memory, inputs.schema, document.skill_id)
        head = f"## Active skill: {document.name.strip()} (`{document.skill_id}`)"
        return "\n\n".join((head, *_paragraphs(document, read, inputs)))
    if isinstance(situation, KnowledgeAnswer):
        return None
    return routing_section(situation.eligible, inputs.config.prompts, inputs.offered_tools)


def _situation_live(inputs: PromptInputs) -> str | None:
    """The situation's volatile part: an active skill's step and state, or search results."""
    situation = inputs.situation
    if isinstance(situation, ActiveSkill):
        return _active_skill_state(situation, inputs)
    if isinstance(situation, KnowledgeAnswer):
        return _knowledge(situation, inputs.offered_tools, inputs.config.references.instructions)
    return None


def _active_skill_state(active: ActiveSkill, inputs: PromptInputs) -> str | None:
    document = active.document
    read = reader_for(inputs.memory, inputs.schema, document.skill_id)
    parts = (
        _step(active, read, inputs),
        _skill_memory(document, inputs),
        _already_collected(active, inputs),
        _pending(active.pending_confirmation, inputs.offered_tools),
        _resume(document, inputs.offered_tools) if active.resume_offer else None,
    )
    return _joined(parts) or None


def _paragraphs(
    document: SkillDocument, read: MemoryReader, inputs: PromptInputs
) -> tuple[str, ...]:
    return render_paragraphs(
        document, read, inputs.schema, inputs.memory, unavailable=inputs.unavailable_skills
    )


def _step(active: ActiveSkill, read: MemoryReader, inputs: PromptInputs) -> str | None:
    step = active.step
    if isinstance(step, InstructionsStep):
        where = f" of {BLOCK_REFERENCE.format(id=active.block_id)}" if active.block_id else ""
        text = render_instructions(
            step.instructions,
            read,
            inputs.schema,
            inputs.memory,
            unavailable=inputs.unavailable_skills,
        )
        return f"### Current step `{step.id}`{where}\n{text.strip()}"
    if isinstance(step, CollectStep):
        return _collecting(step, active.document.skill_id, inputs)
    return None


def _collecting(step: CollectStep, skill_id: str, inputs: PromptInputs) -> str:
    name = step.entry.removeprefix(f"{skill_id}.")
    field_ = inputs.schema.field(f"{skill_id}.{name}")
    about = f" ({' '.join(field_.description.split())})" if field_ and field_.description else ""
    text = f"### Collecting now: `{name}`\nThe user has been asked for `{name}`{about}."
    if "set_fields" in inputs.offered_tools:
        text += " When their reply gives it, record it with set_fields."
    return text


def _skill_memory(document: SkillDocument, inputs: PromptInputs) -> str | None:
    """`### Memory:` every entry of the skill, set or not, settable ones marked.

    Other skills' public entries are not listed (with many skills that would cost tokens
    on every call); prose reaches them through `@memory` tokens.
    """
    fields = inputs.schema.fields_of(document.skill_id)
    if not fields:
        return None
    can_set = "set_fields" in inputs.offered_tools
    owned = _collect_owned(document) if can_set else frozenset()
    lines = [
        memory_line(
            field_,
            inputs.memory.get(field_.key),
            label=field_.name,
            settable=can_set and (field_.llm_settable or field_.name in owned),
        )
        for field_ in fields
    ]
    return "### Memory:\n" + "\n".join(lines)


def _collect_owned(document: SkillDocument) -> frozenset[str]:
    """Entry names a `collect:` step of the skill owns (the model may record them)."""
    return frozenset(
        step.entry.removeprefix(f"{document.skill_id}.")
        for block in document.blocks
        for step in block.steps
        if isinstance(step, CollectStep)
    )


def _already_collected(active: ActiveSkill, inputs: PromptInputs) -> str | None:
    if not active.already_collected:
        return None
    lines = []
    for entry in active.already_collected:
        name = entry.removeprefix(f"{active.document.skill_id}.")
        field_ = inputs.schema.field(f"{active.document.skill_id}.{name}")
        value = inputs.memory.get(field_.key) if field_ else None
        shown = render_for_prompt(field_, value) if field_ and value is not None else ""
        lines.append(f"- {name}: {shown}" if shown else f"- {name}")
    return "### Already collected (do not re-ask)\n" + "\n".join(lines)


def _pending(pending: PendingConfirmation | None, offered: frozenset[str]) -> str | None:
    if pending is None:
        return None
    text = (
        f"### Waiting for confirmation\nThe call to `{pending.tool_name}` is on hold until "
        f'the user agrees. Question asked: "{pending.confirmation_ask.strip()}"'
    )
    if "resolve_tool_confirmation" in offered:
        text += (
            "\nWhen the user answers, call resolve_tool_confirmation with confirmed true for "
            f"yes or false for no. Do not call {pending.tool_name} again meanwhile."
        )
    return text


def _resume(document: SkillDocument, offered: frozenset[str]) -> str:
    text = (
        f"### Offer to resume\n{document.name.strip()} was interrupted. Ask whether the user "
        "wants to continue it."
    )
    if "activate" in offered:
        text += f" If yes, call activate with target_id `{document.skill_id}`."
    if "cancel_skill" in offered:
        text += " If not, call cancel_skill."
    return text


def _knowledge(answer: KnowledgeAnswer, offered: frozenset[str], instructions: str | None) -> str:
    fallback = " or call cannot_help" if "cannot_help" in offered else ""
    if not answer.sections:
        return (
            "## Answer from knowledge\nThe search found nothing relevant. Say you do not have "
            f"that information{fallback}; do not answer from general knowledge."
        )
    found = "\n\n".join(
        f"### [{index}] {_where(section)}\n{section.text.strip()}"
        for index, section in enumerate(answer.sections, start=1)
    )
    how = f"\n\n{instructions.strip()}" if instructions and instructions.strip() else ""
    return (
        "## Answer from knowledge\nAnswer the user's question using only the retrieved "
        f"sections below. If they do not contain the answer, say you do not know{fallback}."
        f"{how}\n\n{found}"
    )


def _where(section: KnowledgeSection) -> str:
    return f"{section.source} ({section.heading})" if section.heading else section.source


__all__ = [
    "DEFAULT_ROUTING_INTRO",
    "ActiveSkill",
    "Channel",
    "KnowledgeAnswer",
    "PromptInputs",
    "Routing",
    "Situation",
    "SystemPrompt",
    "build_system_prompt",
    "render_instructions",
    "render_paragraphs",
    "situation_section",
    "system_prompt",
]
