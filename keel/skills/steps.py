"""Ordered-block steps: one small frozen dataclass per step kind.

A step's kind is decided by which discriminating key it carries (`instructions`, `collect`,
`action`, `execute_tool`, `noop`, `set_memory`, `call`, `link`); `STEP_KINDS` maps each key
to its class explicitly (no subclass walking). `id: END` (or `next: END`) names the END
pseudo step, which terminates the block.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import ClassVar

from keel.conditions import Condition, Reference

END_ID = "END"
"""The reserved step id that terminates a block."""

SPECIAL_ACTIONS = frozenset({"action_listen", "hangup"})
"""Actions that are not responses: wait for the user, end the conversation."""

_SESSION_REF = re.compile(r"session\.([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)")


def parameter_reference(value: object) -> Reference | None:
    """The memory entry an `execute_tool` parameter value names, or None for a literal.

    A parameter references memory when its value is exactly `session.<namespace>.<entry>`.
    """
    if not isinstance(value, str):
        return None
    match = _SESSION_REF.fullmatch(value.strip())
    if match is None:
        return None
    return Reference(namespace=match.group(1), entry=match.group(2))


@dataclass(frozen=True, kw_only=True, slots=True)
class Branch:
    """One `next:` branch: `- if: <cond>` + `then: <step>`, or the final `- else: <step>`."""

    condition: Condition | None
    """The branch condition; None for the `else` branch."""
    target: str
    """Step id to jump to (may be `END`)."""
    line: int

    @property
    def is_else(self) -> bool:
        """True for the unconditional `else` branch."""
        return self.condition is None


NextSpec = str | tuple[Branch, ...]
"""A step's `next:`: a step id, or branches evaluated in order (first match wins)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class _StepBase:
    """Fields every step shares."""

    id: str
    """Unique within the block."""
    line: int
    """Line of the step's list item in the skill file."""
    next: NextSpec | None = None
    """Where to go after the step; None falls through to the following step (or END)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class InstructionPart:
    """A piece of a step's instructions: plain text, or the text an `if:` line scopes."""

    text: str
    line: int
    """File line of the part's first text line."""
    condition: Condition | None = None
    """From the `if:` line above the part; the part is shown only while it holds."""


@dataclass(frozen=True, kw_only=True, slots=True)
class InstructionsStep(_StepBase):
    """Conversational step: the LLM talks with these instructions until `complete_when`."""

    KEY: ClassVar[str] = "instructions"
    instructions: str
    """The text as written (stripped), `if:` lines included."""
    complete_when: Condition | None = None
    parts: tuple[InstructionPart, ...] = ()
    """The text split at its column-0 `if:` lines, in order; empty when it has none (the
    whole text is then always shown)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class CollectStep(_StepBase):
    """Collect one memory entry of the skill from the user, asking with `utterance`."""

    KEY: ClassVar[str] = "collect"
    entry: str
    utterance: str | None = None
    """Name of the response that asks the question."""
    complete_when: Condition | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ActionStep(_StepBase):
    """Deliver a `utter_*` response, or run `action_listen` / `hangup`."""

    KEY: ClassVar[str] = "action"
    action: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ExecuteToolStep(_StepBase):
    """Call a tool directly, without the LLM."""

    KEY: ClassVar[str] = "execute_tool"
    tool: str
    parameters: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))
    """Argument name -> frozen YAML value as written; a string `session.<ns>.<entry>` is
    filled from memory before the call (see `references`)."""

    @property
    def references(self) -> Mapping[str, Reference]:
        """Argument name -> memory entry, for the parameters filled from memory."""
        found = {name: parameter_reference(value) for name, value in self.parameters.items()}
        return MappingProxyType({k: v for k, v in found.items() if v is not None})


@dataclass(frozen=True, kw_only=True, slots=True)
class NoopStep(_StepBase):
    """Route only: evaluate `next:` and jump."""

    KEY: ClassVar[str] = "noop"


@dataclass(frozen=True, kw_only=True, slots=True)
class SetMemoryStep(_StepBase):
    """Write literal values to memory."""

    KEY: ClassVar[str] = "set_memory"
    values: Mapping[str, object]
    """Entry (as written: bare or qualified) -> frozen literal."""


@dataclass(frozen=True, kw_only=True, slots=True)
class CallStep(_StepBase):
    """Run another block (of this skill) or skill, then continue at this step's `next`."""

    KEY: ClassVar[str] = "call"
    target: str


@dataclass(frozen=True, kw_only=True, slots=True)
class LinkStep(_StepBase):
    """Hand off to another flow for good; `next` is always None."""

    KEY: ClassVar[str] = "link"
    target: str


@dataclass(frozen=True, kw_only=True, slots=True)
class EndStep(_StepBase):
    """The END pseudo step; reaching it completes the block."""

    KEY: ClassVar[str] = "END"


Step = (
    InstructionsStep
    | CollectStep
    | ActionStep
    | ExecuteToolStep
    | NoopStep
    | SetMemoryStep
    | CallStep
    | LinkStep
    | EndStep
)
"""Any ordered-block step."""

END = EndStep(id=END_ID, line=0)
"""The implicit END step every block falls through to."""

STEP_KINDS: Mapping[str, type[Step]] = MappingProxyType(
    {
        "instructions": InstructionsStep,
        "collect": CollectStep,
        "action": ActionStep,
        "execute_tool": ExecuteToolStep,
        "noop": NoopStep,
        "set_memory": SetMemoryStep,
        "call": CallStep,
        "link": LinkStep,
    }
)
"""Discriminating key -> step class."""

_DETERMINISTIC: tuple[type[Step], ...] = (
    ActionStep,
    ExecuteToolStep,
    NoopStep,
    SetMemoryStep,
    CallStep,
    LinkStep,
    EndStep,
)


def is_deterministic(step: Step) -> bool:
    """True when the engine runs `step` without the LLM.

    `collect` is False here: it is deterministic only when its value is already in memory,
    which the runtime decides; `instructions` always needs the LLM.
    """
    return isinstance(step, _DETERMINISTIC)
