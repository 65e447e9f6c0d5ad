"""The fixed sections of the system prompt (spec §11.2) and the reminders; numbers are
the positions `keel.loop.prompt` gives them (stable part 1-7, volatile part 8-12).

Each function returns the section's text, or None when the section does not apply this
call (the builder then leaves it out entirely; a section is never rendered empty). All
wording is Keel's own. Sections only name framework tools listed in `offered`, so the
prompt never mentions a tool the model cannot call. Pure: the time is passed in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Final, Literal

from keel.loop.prose import BLOCK_REFERENCE, SKILL_REFERENCE
from keel.memory import PROJECT_NAMESPACE, MemoryField, MemorySchema, render_for_prompt
from keel.project.config import AgentConfig, Prompts
from keel.skills import SkillDocument

Channel = Literal["text", "voice"]
"""Where the reply goes: written chat or speech."""

LIFECYCLE_TOOLS: Final = (
    "activate",
    "set_fields",
    "complete_skill",
    "cancel_skill",
    "listen",
    "search_knowledge",
    "cannot_help",
    "resolve_tool_confirmation",
)
"""Framework tools the lifecycle section explains, in the order it lists them."""

DEFAULT_TEXT_RULES: Final = (
    "This is a text chat. Keep replies short and plain; use a list only when it makes "
    "things clearer."
)
DEFAULT_VOICE_RULES: Final = (
    "Your replies are spoken aloud. Use short sentences and everyday words: no markdown, "
    "lists, emoji or links. Say numbers and dates the way a person would say them."
)
DEFAULT_ACK_RULE: Final = (
    "If you call a tool now, also write one short filler line so the user knows you are on "
    "it. The filler must not promise or hint at any result."
)
DEFAULT_ROUTING_INTRO: Final = "No skill is active."
"""Routing intro when `prompts.routing_no_active_skill` is not set."""
SETTABLE_MARK: Final = "[settable]"
"""Marks memory entries the model may record with `set_fields`."""

_REFERENCES: Final = (
    f"Instructions may name {SKILL_REFERENCE.format(id='<id>')} or "
    f"{BLOCK_REFERENCE.format(id='<id>')}; to enter one, call activate with that id."
)
_TOOL_LINES: Final[Mapping[str, str]] = {
    "activate": "activate: start the skill whose id you pass as target_id, when the user's "
    "request matches it. " + _REFERENCES,
    "set_fields": f"set_fields: record values the user actually stated for entries marked "
    f"{SETTABLE_MARK}; never guess or invent a value.",
    "complete_skill": "complete_skill: call once the active skill's goal is reached.",
    "cancel_skill": "cancel_skill: call when the user drops or no longer needs the active skill.",
    "listen": "listen: call it alone, with no text, to wait silently for the user (for example "
    "when they have not finished).",
    "search_knowledge": "search_knowledge: look facts up in the reference documents before "
    "answering questions about them.",
    "cannot_help": "cannot_help: the engine answers with a fixed line that this cannot be "
    "handled here.",
    "resolve_tool_confirmation": "resolve_tool_confirmation: once the user has answered a "
    "confirmation question, pass confirmed true for yes or false for no.",
}
KNOWLEDGE_RULES_HEADING: Final = "## Answering from the reference documents"
"""Heading of `references.instructions` in the prompt."""
_WEEKDAYS: Final = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def persona_section(config: AgentConfig) -> str:
    """(1) The persona, then the global rules as a list."""
    text = config.persona.strip()
    if config.rules:
        text += "\n\n## Rules\n" + _bullets(" ".join(rule.split()) for rule in config.rules)
    return text


def glossary_section(
    skills: Iterable[SkillDocument], unavailable: frozenset[str] = frozenset()
) -> str | None:
    """(2) Id and name of every routable skill but the `unavailable` ones (whose `requires`
    is not true: a skill that cannot start is never named)."""
    lines = [
        f"- {s.skill_id}: {_one_line(s.name)}"
        for s in skills
        if s.routable and s.skill_id not in unavailable
    ]
    if not lines:
        return None
    return "## Skills\nSkills of this assistant (id: name):\n" + "\n".join(lines)


def channel_section(prompts: Prompts, channel: Channel) -> str:
    """(3) How to write for the channel; `prompts.text_rules` / `voice_rules` override."""
    if channel == "voice":
        rules = prompts.voice_rules or DEFAULT_VOICE_RULES
    else:
        rules = prompts.text_rules or DEFAULT_TEXT_RULES
    return "## Channel\n" + rules.strip()


def ack_enabled(prompts: Prompts, channel: Channel) -> bool:
    """`prompts.ack_enabled`, defaulting to on for voice and off for text (spec §7.6)."""
    return prompts.ack_enabled if prompts.ack_enabled is not None else channel == "voice"


def ack_section(prompts: Prompts, channel: Channel, first_iteration: bool) -> str | None:
    """(11) The filler instruction, on the first model call of a turn when enabled."""
    if not (first_iteration and ack_enabled(prompts, channel)):
        return None
    parts = [(prompts.ack_rule or DEFAULT_ACK_RULE).strip()]
    if prompts.ack_examples:
        parts.append("Examples: " + ", ".join(f'"{e}"' for e in prompts.ack_examples))
    if prompts.ack_reminder:
        parts.append(prompts.ack_reminder.strip())
    return "## Acknowledgement\n" + "\n".join(parts)


WAITING_TOOLS: Final = frozenset({"listen", "resolve_tool_confirmation"})
"""Framework tools swapped while a confirmation is pending (one or the other is offered)."""


def lifecycle_section(offered: frozenset[str], *, waiting: bool = True) -> str | None:
    """(4) One line per offered framework tool, in `LIFECYCLE_TOOLS` order; with `waiting`
    false, without `listen` and `resolve_tool_confirmation` (see `waiting_section`)."""
    names = [n for n in LIFECYCLE_TOOLS if n in offered and (waiting or n not in WAITING_TOOLS)]
    lines = [_TOOL_LINES[name] for name in names]
    if not lines:
        return None
    return "## Framework tools\n" + _bullets(lines)


def waiting_section(offered: frozenset[str]) -> str | None:
    """How to wait: `listen`, or while a confirmation is pending `resolve_tool_confirmation`
    (apart from the other framework tools, whose lines do not change then)."""
    lines = [_TOOL_LINES[name] for name in LIFECYCLE_TOOLS if name in offered & WAITING_TOOLS]
    return "## Waiting for the user\n" + _bullets(lines) if lines else None


def knowledge_rules_section(instructions: str | None, offered: frozenset[str]) -> str | None:
    """(5) `references.instructions` (how to answer from the reference
    documents), while `search_knowledge` is offered."""
    if not instructions or not instructions.strip() or "search_knowledge" not in offered:
        return None
    return KNOWLEDGE_RULES_HEADING + "\n" + instructions.strip()


def out_of_scope_section(offered: frozenset[str]) -> str | None:
    """(6) When to give up on a request; only while `cannot_help` is offered."""
    if "cannot_help" not in offered:
        return None
    return (
        "## Out of scope\nIf the user wants something this assistant does not handle, call "
        "cannot_help instead of improvising an answer or promising help."
    )


def time_section(now: datetime) -> str:
    """(10) The current date and time (weekday names fixed, not locale-dependent)."""
    zone = now.tzname()
    stamp = f"{_WEEKDAYS[now.weekday()]} {now:%Y-%m-%d %H:%M}" + (f" {zone}" if zone else "")
    return f"## Now\nIt is {stamp}."


def project_memory_section(schema: MemorySchema, memory: Mapping[str, object]) -> str | None:
    """(9) Project memory entries that are set (PII shown as `[set]`)."""
    lines = [
        f"- {field.name}: {render_for_prompt(field, memory[field.key])}"
        for field in schema.fields_of(PROJECT_NAMESPACE)
        if memory.get(field.key) is not None
    ]
    if not lines:
        return None
    return "## Project memory\n" + "\n".join(lines)


def routing_section(
    eligible: Iterable[SkillDocument], prompts: Prompts, offered: frozenset[str]
) -> str:
    """(7, no active skill) The intro, or its override, and id + description per skill."""
    override = prompts.routing_no_active_skill
    intro = override.strip() if override else DEFAULT_ROUTING_INTRO
    if override is None and "activate" in offered:
        intro += (
            " If the user's request matches a skill below, call activate with its id; "
            "otherwise reply briefly yourself."
        )
    catalogue = [f"- {s.skill_id}: {_one_line(s.description)}" for s in eligible]
    if not catalogue:
        return f"## Routing\n{intro}\nNo skill can be started right now."
    return f"## Routing\n{intro}\n" + "\n".join(catalogue)


def canned_reminder(replies: Iterable[str]) -> str | None:
    """After a canned reply this turn: it was sent verbatim and must not be echoed."""
    quoted = ["\n".join(f"> {line}".rstrip() for line in r.strip().splitlines()) for r in replies]
    if not quoted:
        return None
    return (
        "## Already sent\nThese messages were just sent to the user word for word. Do not "
        "repeat or paraphrase them; carry on from there.\n" + "\n\n".join(quoted)
    )


def memory_line(field: MemoryField, value: object, *, label: str, settable: bool) -> str:
    """One entry of a memory list: `- label: value [settable, one of: ...] — description`."""
    line = f"- {label}: {render_for_prompt(field, value)}"
    if settable:
        choices = f", one of: {', '.join(field.enum_values)}" if field.enum_values else ""
        line += f" {SETTABLE_MARK[:-1]}{choices}]"
    if field.description:
        line += f" — {_one_line(field.description)}"
    return line


def _bullets(items: Iterable[str]) -> str:
    return "\n".join(f"- {item}" for item in items)


def _one_line(text: str) -> str:
    """Folded YAML and stray newlines collapsed to single spaces."""
    return " ".join(text.split())
