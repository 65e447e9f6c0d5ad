"""A Mermaid flowchart of an agent's skills: their ordered blocks, steps, `next:` branches,
`call:`s and `link:`s (pure: `keel graph` prints it, the Inspector can render it).

Shape of the text (`flowchart TD`):

- one `subgraph` per project skill (bundled skills left out unless the project overrides
  them), in skill-id order, holding one `subgraph` per ordered block, in file order;
- one node per step, labelled `<step id>` and what it does (`collect parcel_id`,
  `execute_tool reroute`, ...); an `END` node per block that reaches its end;
- edges: the fall-through or `next:` step (`-->`), each branch labelled with its condition
  (`-->|"cond"|`, `else` for the last), a `call:` as a dotted edge to the called block or
  skill (`-. call .->`; the step then goes on to its next), a `link:` as a thick edge to the
  skill (`== link ==>`; control never comes back);
- `highlight` (`<skill>.<block>.<step>`) puts the class `current` on that step's node.

Node ids are made of the skill, block and step ids (`s_<skill>__<block>__<step>`, other
characters turned into `_`), so the same project always gives the same text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from keel.project.definition import AgentDefinition, Skill
from keel.skills import (
    ActionStep,
    CallStep,
    CollectStep,
    ExecuteToolStep,
    LinkStep,
    OrderedBlock,
)
from keel.skills.steps import (
    END_ID,
    EndStep,
    InstructionsStep,
    NoopStep,
    SetMemoryStep,
    Step,
)

HIGHLIGHT_STYLE = "fill:#fff3c4,stroke:#c77700,stroke-width:3px"
"""The look of the `current` class (the highlighted step)."""

_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


def mermaid_graph(definition: AgentDefinition, *, highlight: str | None = None) -> str:
    """The Mermaid flowchart of `definition`'s skills; `highlight` marks one step."""
    skills = sorted(definition.skills.values(), key=lambda s: s.skill_id)
    shown = [s for s in skills if not s.bundled]
    lines = ["flowchart TD"]
    edges: list[str] = []
    for skill in shown:
        lines.extend(_skill(skill, edges))
    lines.extend(edges)
    target = highlight_node(definition, highlight)
    if target is not None:
        lines.append(f"  classDef current {HIGHLIGHT_STYLE}")
        lines.append(f"  class {target} current")
    return "\n".join(lines) + "\n"


def step_node_id(skill_id: str, block_id: str, step_id: str) -> str:
    """The Mermaid node id of one step (END included)."""
    return f"s_{_safe(skill_id)}__{_safe(block_id)}__{_safe(step_id)}"


def _skill(skill: Skill, edges: list[str]) -> Iterator[str]:
    doc = skill.document
    yield f'  subgraph {_skill_id(doc.skill_id)}["{_label(doc.name)} ({doc.skill_id})"]'
    if not doc.blocks:
        yield f'    {_skill_id(doc.skill_id)}_prose["prose only"]'
    blocks = frozenset(b.block_id for b in doc.blocks)
    for block in doc.blocks:
        yield from _block(doc.skill_id, blocks, block, edges)
    yield "  end"


def _block(
    skill_id: str, blocks: frozenset[str], block: OrderedBlock, edges: list[str]
) -> Iterator[str]:
    yield f'    subgraph {_block_id(skill_id, block.block_id)}["block {block.block_id}"]'
    reaches_end = False
    for step in block.steps:
        if isinstance(step, EndStep):
            reaches_end = True
            continue
        node = step_node_id(skill_id, block.block_id, step.id)
        yield f'      {node}["{_label(step.id)}<br/>{_label(_what(step))}"]'
        for edge, to_end in _edges(skill_id, blocks, block, step, node):
            edges.append(edge)
            reaches_end = reaches_end or to_end
    if reaches_end:
        yield f'      {step_node_id(skill_id, block.block_id, END_ID)}(["END"])'
    yield "    end"


def _edges(
    skill_id: str, blocks: frozenset[str], block: OrderedBlock, step: Step, node: str
) -> Iterator[tuple[str, bool]]:
    """(edge line, whether it goes to the block's END) for the edges leaving `step`."""
    if isinstance(step, LinkStep):
        yield f"  {node} == link ==> {_skill_id(step.target)}", False
        return
    if isinstance(step, CallStep):
        yield f"  {node} -. call .-> {_call_target(skill_id, blocks, step.target)}", False
    if isinstance(step.next, tuple):
        for branch in step.next:
            label = "else" if branch.condition is None else _label(branch.condition.source)
            to = step_node_id(skill_id, block.block_id, branch.target)
            yield f'  {node} -->|"{label}"| {to}', branch.target == END_ID
        return
    target = step.next if isinstance(step.next, str) else block.following(step.id).id
    to = step_node_id(skill_id, block.block_id, target)
    yield f"  {node} --> {to}", target == END_ID


def _call_target(skill_id: str, blocks: frozenset[str], target: str) -> str:
    """A `call:` enters a block of this skill when one has that id, else the skill (as the
    loop runs it)."""
    return _block_id(skill_id, target) if target in blocks else _skill_id(target)


def _what(step: Step) -> str:
    """What a step does, in a few words."""
    if isinstance(step, CollectStep):
        return f"collect {step.entry}"
    if isinstance(step, ExecuteToolStep):
        return f"execute_tool {step.tool}"
    if isinstance(step, ActionStep):
        return f"action {step.action}"
    if isinstance(step, SetMemoryStep):
        return "set_memory " + ", ".join(step.values)
    if isinstance(step, CallStep):
        return f"call {step.target}"
    if isinstance(step, LinkStep):
        return f"link {step.target}"
    if isinstance(step, InstructionsStep):
        return "instructions"
    if isinstance(step, NoopStep):
        return "noop"
    return type(step).__name__


def highlight_node(definition: AgentDefinition, highlight: str | None) -> str | None:
    """The node id `highlight` (`skill.block.step`) names, when that step exists."""
    if not highlight:
        return None
    parts = highlight.split(".")
    if len(parts) != 3:
        return None
    skill_id, block_id, step_id = parts
    skill = definition.skills.get(skill_id)
    block = (
        next((b for b in skill.document.blocks if b.block_id == block_id), None) if skill else None
    )
    if block is None or (step_id not in block.step_ids and step_id != END_ID):
        return None
    return step_node_id(skill_id, block_id, step_id)


def _skill_id(skill_id: str) -> str:
    return f"skill_{_safe(skill_id)}"


def _block_id(skill_id: str, block_id: str) -> str:
    return f"b_{_safe(skill_id)}__{_safe(block_id)}"


def _safe(text: str) -> str:
    return _UNSAFE.sub("_", text)


def _label(text: str) -> str:
    """Text safe inside a quoted Mermaid label."""
    return " ".join(text.split()).replace('"', "#quot;")
