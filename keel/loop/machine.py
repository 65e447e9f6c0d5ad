"""Pure decisions about ordered blocks: where a step leads and what it needs.

Nothing here performs a step; the driver asks these questions and acts on the answers.
"""

from __future__ import annotations

from collections.abc import Mapping

from keel.conditions import Condition, Outcome, evaluate
from keel.events.base import StackFrame
from keel.events.fold import ConversationState
from keel.memory import reader_for
from keel.project.definition import AgentDefinition, Skill
from keel.skills import END_ID, CollectStep, ExecuteToolStep, OrderedBlock
from keel.skills.steps import Step


def frame_block(
    definition: AgentDefinition, frame: StackFrame
) -> tuple[Skill, OrderedBlock] | None:
    """The skill and block a block frame points into (None if the definition lost them)."""
    skill = definition.skill(frame.skill_id)
    if skill is None or frame.block_id is None:
        return None
    block = skill.document.block(frame.block_id)
    return None if block is None else (skill, block)


def _holds(
    definition: AgentDefinition, state: ConversationState, skill_id: str, condition: object
) -> bool:
    if not isinstance(condition, Condition):
        return False
    read = reader_for(state.memory, definition.memory, skill_id)
    return evaluate(condition, read) is Outcome.TRUE


def next_step_id(
    definition: AgentDefinition,
    state: ConversationState,
    frame: StackFrame,
    block: OrderedBlock,
    step: Step,
) -> str:
    """Where `step` leads now: its `next` (first true branch, else `else`), or the next step."""
    spec = step.next
    if spec is None:
        return block.following(step.id).id
    if isinstance(spec, str):
        return spec
    for branch in spec:
        if branch.condition is None or _holds(definition, state, frame.skill_id, branch.condition):
            return branch.target
    return END_ID


def step_complete(
    definition: AgentDefinition, state: ConversationState, skill_id: str, step: Step
) -> bool:
    """`complete_when` of a step holds (False when it has none or it cannot be evaluated)."""
    return _holds(definition, state, skill_id, getattr(step, "complete_when", None))


def collect_known(
    definition: AgentDefinition, state: ConversationState, skill_id: str, step: CollectStep
) -> bool:
    """A collect step's value is already known (set, or its `complete_when` holds)."""
    field = definition.memory.resolve(step.entry, skill_id)
    if field is not None and state.memory.get(field.key) is not None:
        return True
    return step_complete(definition, state, skill_id, step)


def fill_parameters(step: ExecuteToolStep, memory: Mapping[str, object]) -> dict[str, object]:
    """`parameters:` with `session.<ns>.<entry>` values replaced by memory (unset: left out,
    so schema validation reports the argument as missing and the step waits)."""
    references = step.references
    filled: dict[str, object] = {}
    for name, value in step.parameters.items():
        reference = references.get(name)
        if reference is None:
            filled[name] = value
        elif memory.get(reference.key) is not None:
            filled[name] = memory[reference.key]
    return filled
