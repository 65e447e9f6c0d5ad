"""Skill, ordered-block and flow lifecycle events, and the dialogue stack.

`skill_*` and `ordered_block_*` are Mantle's own events (seed 001, spec §8.1). `flow_*` are
the compatibility duplicates written beside them (prose flow id = skill id with step id
`autonomous`; block flow id `<skill>__<block>`). The stack itself changes only through
`stack_changed` (the full new stack) and `step_advanced` (a block's step pointer moved).
"""

from dataclasses import dataclass

from keel.events.base import EventBase, StackFrame

# --- skills (seed 001, normative) ---------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class _SkillEvent(EventBase):
    skill_id: str
    """The id of the skill (its folder name)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class _SkillStepEvent(_SkillEvent):
    step_id: str
    """The step the skill was at (`autonomous` for prose)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillActivated(_SkillEvent):
    """A skill was activated (builder skills and bundled defaults)."""

    kind = "skill_activated"


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillCompleted(_SkillEvent):
    """A skill completed."""

    kind = "skill_completed"


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillCancelled(_SkillStepEvent):
    """A skill was cancelled; one event per cancelled skill."""

    kind = "skill_cancelled"


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillInterrupted(_SkillStepEvent):
    """A skill was parked on the stack for a digression."""

    kind = "skill_interrupted"


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillResumed(_SkillStepEvent):
    """A parked skill continues where it was."""

    kind = "skill_resumed"


# --- ordered blocks (spec §8.1) -----------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class _BlockEvent(_SkillEvent):
    block_id: str
    """The authored block id (e.g. `main`, not `skill__main`)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class _BlockStepEvent(_BlockEvent):
    step_id: str
    """The block step the event happened at."""


@dataclass(frozen=True, kw_only=True, slots=True)
class OrderedBlockEntered(_BlockEvent):
    """An ordered block started."""

    kind = "ordered_block_entered"


@dataclass(frozen=True, kw_only=True, slots=True)
class OrderedBlockCompleted(_BlockStepEvent):
    """An ordered block reached its end."""

    kind = "ordered_block_completed"


@dataclass(frozen=True, kw_only=True, slots=True)
class OrderedBlockCancelled(_BlockStepEvent):
    """An ordered block was cancelled."""

    kind = "ordered_block_cancelled"


@dataclass(frozen=True, kw_only=True, slots=True)
class OrderedBlockInterrupted(_BlockStepEvent):
    """An ordered block was parked, its step pointer held."""

    kind = "ordered_block_interrupted"


@dataclass(frozen=True, kw_only=True, slots=True)
class OrderedBlockResumed(_BlockStepEvent):
    """A parked ordered block continues at its held step."""

    kind = "ordered_block_resumed"


# --- flows (compatibility duplicates) -----------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class _FlowEvent(EventBase):
    flow_id: str
    """Skill id for prose flows, `<skill>__<block>` for blocks, or an internal flow id."""

    step_id: str
    """The flow step (`autonomous` for prose)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class FlowStarted(_FlowEvent):
    """Compatibility duplicate of `skill_activated` / `ordered_block_entered`."""

    kind = "flow_started"


@dataclass(frozen=True, kw_only=True, slots=True)
class FlowCompleted(_FlowEvent):
    """Compatibility duplicate of `skill_completed` / `ordered_block_completed`."""

    kind = "flow_completed"


@dataclass(frozen=True, kw_only=True, slots=True)
class FlowCancelled(_FlowEvent):
    """Compatibility duplicate of `skill_cancelled` / `ordered_block_cancelled`."""

    kind = "flow_cancelled"


@dataclass(frozen=True, kw_only=True, slots=True)
class FlowInterrupted(_FlowEvent):
    """Compatibility duplicate of `skill_interrupted` / `ordered_block_interrupted`."""

    kind = "flow_interrupted"


@dataclass(frozen=True, kw_only=True, slots=True)
class FlowResumed(_FlowEvent):
    """Compatibility duplicate of `skill_resumed` / `ordered_block_resumed`."""

    kind = "flow_resumed"


# --- the stack ----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class StackChanged(EventBase):
    """The dialogue stack changed; `frames` is the whole stack afterwards, bottom first.

    Mantle logs a JSON-Patch string; Keel stores the full new stack, which is simpler to
    fold and to read, and stacks are a handful of frames deep.
    """

    kind = "stack_changed"

    frames: tuple[StackFrame, ...] = ()
    """All frames after the change; the last one is the top of the stack."""


@dataclass(frozen=True, kw_only=True, slots=True)
class StepAdvanced(EventBase):
    """An ordered block's step pointer moved to `step_id` (in frame `frame_id`)."""

    kind = "step_advanced"

    skill_id: str
    block_id: str
    frame_id: str
    step_id: str
