"""Skill prose as the model reads it: `if:` filtering and token substitution (spec §2.4).

Tokens are rendered like this:

| written               | rendered                                                        |
|-----------------------|-----------------------------------------------------------------|
| `@memory.<ns>.<e>`    | the current value, as in the memory section (PII: `[set]`);     |
|                       | unset, undeclared or unreadable: the token stays as written     |
| `@tool.<name>`        | `name` (tools are already in the schema)                        |
| `@block.<id>`         | the ordered block `<id>`                                        |
| `@skill.<id>`         | the skill `<id>`; a skill whose `requires` is not true now:     |
|                       | `a skill that is not available now` (its id is not shown)       |

The lifecycle section of the system prompt explains the last two forms (`BLOCK_REFERENCE`,
`SKILL_REFERENCE`), so the wording lives here in one place. Malformed tokens, which the
skill parser already reported, are left untouched. Pure: no IO, no clock.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from keel.conditions import MemoryReader, Outcome, Reference, evaluate
from keel.conditions.names import is_identifier
from keel.memory import MemorySchema, render_for_prompt
from keel.skills import InstructionsStep, SkillDocument, instruction_parts

BLOCK_REFERENCE: Final = "the ordered block `{id}`"
"""How `@block.<id>` reads in the prompt."""
SKILL_REFERENCE: Final = "the skill `{id}`"
"""How `@skill.<id>` reads in the prompt."""
UNAVAILABLE_SKILL: Final = "a skill that is not available now"
"""How `@skill.<id>` reads while that skill's `requires` is not true (it is not named)."""

# The grammar of keel.skills._tokens (same lookarounds, same segment characters), plus the
# backticks a token may be written in.
_TOKEN: Final = re.compile(
    r"(?P<open>`)?(?<![\w.@])@(?P<kind>block|skill|memory|tool)(?![A-Za-z0-9_])"
    r"(?P<rest>(?:\.[A-Za-z0-9_\-]*)*)(?P<close>`)?"
)
_NAMED: Final = frozenset({"block", "skill"})
"""Kinds whose rendering carries its own code span (`BLOCK_REFERENCE`, `SKILL_REFERENCE`)."""
_SEGMENT: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_\-]*")
_BLANK_RUN: Final = re.compile(r"\n{3,}")


def render_paragraphs(
    document: SkillDocument,
    read: MemoryReader,
    schema: MemorySchema,
    memory: Mapping[str, object],
    *,
    unavailable: frozenset[str] = frozenset(),
) -> tuple[str, ...]:
    """The prose paragraphs of `document` whose `if:` condition holds, tokens rendered.

    `read` decides the `if:` outcome (FALSE and CLOSED hide the paragraph) and which
    `@memory` tokens may be substituted (it raises for entries that may not be read); the
    value shown comes from `memory` (qualified key -> value). Pass
    `keel.memory.reader_for(memory, schema, document.skill_id)` for the skill's own view.
    `@skill` tokens naming an `unavailable` skill are not rendered with its id.
    """
    shown: list[str] = []
    for paragraph in document.paragraphs:
        if paragraph.condition is not None:
            if evaluate(paragraph.condition, read) is not Outcome.TRUE:
                continue
        shown.append(substitute(paragraph.text, read, schema, memory, unavailable=unavailable))
    return tuple(shown)


def render_instructions(
    step: InstructionsStep | str,
    read: MemoryReader,
    schema: MemorySchema,
    memory: Mapping[str, object],
    *,
    unavailable: frozenset[str] = frozenset(),
) -> str:
    """An ordered-block step's `instructions:` with its `if:` parts filtered, tokens rendered.

    A part scoped by an `if:` line (`keel.skills.instruction_parts`) is kept only while its
    condition is TRUE (FALSE and CLOSED hide it), like a prose paragraph.
    """
    text = step if isinstance(step, str) else step.instructions
    parts = instruction_parts(text) if isinstance(step, str) else step.parts
    if not parts:
        return substitute(text, read, schema, memory, unavailable=unavailable)
    shown = [
        part.text
        for part in parts
        if part.condition is None or evaluate(part.condition, read) is Outcome.TRUE
    ]
    text = _BLANK_RUN.sub("\n\n", "\n".join(shown)).strip()
    return substitute(text, read, schema, memory, unavailable=unavailable)


def substitute(
    text: str,
    read: MemoryReader,
    schema: MemorySchema,
    memory: Mapping[str, object],
    *,
    unavailable: frozenset[str] = frozenset(),
) -> str:
    """`text` with every well-formed token rendered (see the module table)."""
    if "@" not in text:
        return text

    def replace(match: re.Match[str]) -> str:
        segments = match.group("rest").split(".")[1:]
        tail = ""
        if segments and segments[-1] == "":
            # A trailing dot ends the sentence; it is not part of the token.
            segments.pop()
            tail = "."
        kind = match.group("kind")
        rendered = _render(kind, segments, read, schema, memory, unavailable)
        if rendered is None:
            return match.group(0)
        opened, closed = match.group("open") or "", match.group("close") or ""
        if opened and closed and kind in _NAMED:
            # `@block.x` in backticks: the rendering has its own, so no nested code span.
            return rendered + tail
        return opened + rendered + tail + closed

    return _TOKEN.sub(replace, text)


def _render(
    kind: str,
    segments: list[str],
    read: MemoryReader,
    schema: MemorySchema,
    memory: Mapping[str, object],
    unavailable: frozenset[str],
) -> str | None:
    """The text for one token; None keeps the token as written."""
    if kind == "memory":
        if len(segments) != 2 or not all(is_identifier(s) for s in segments):
            return None
        reference = Reference(namespace=segments[0], entry=segments[1])
        return _memory_value(reference, read, schema, memory)
    if len(segments) != 1 or _SEGMENT.fullmatch(segments[0]) is None:
        return None
    target = segments[0]
    if kind == "tool":
        return target
    if kind == "skill" and target in unavailable:
        return UNAVAILABLE_SKILL
    template = BLOCK_REFERENCE if kind == "block" else SKILL_REFERENCE
    return template.format(id=target)


def _memory_value(
    reference: Reference, read: MemoryReader, schema: MemorySchema, memory: Mapping[str, object]
) -> str | None:
    field = schema.field(reference.key)
    if field is None:
        return None
    # The reader is the access check: it raises for what may not be read here. Like
    # condition evaluation, any failure keeps the value out of the prompt (fail closed).
    try:
        read(reference)
    except Exception:
        return None
    value = memory.get(field.key)
    if value is None:
        return None
    return render_for_prompt(field, value)
