"""`tool.step_tool_offered`: an effectful tool that an `execute_tool` step runs, which the
model is offered too because no `requires:` gate closes it.

Mantle offers every tool a skill has to the model while the skill is active, including the
ones its ordered blocks run themselves. A write meant to happen only at its step (after the
block collected and checked its arguments) is then also callable by the model, with
arguments of its choosing. Keel keeps that behaviour and warns; the fix is a
`tool_constraints` `requires:` that only the block opens, a flag set just before the step
and cleared after it (docs/project-format.md, "Tools a step runs").
"""

from __future__ import annotations

from collections.abc import Iterator

from keel.project.definition import Skill
from keel.skills import ExecuteToolStep
from keel.source.diagnostics import Diagnostic, diag
from keel.tools.contract import ToolContract, merge_contract


def check_step_tools_offered(skill: Skill) -> Iterator[Diagnostic]:
    """One warning per effectful, ungated tool of `skill` that a step runs (first step)."""
    doc = skill.document
    constraints = {c.tool: c for c in doc.tool_constraints}
    seen: set[str] = set()
    for block in doc.blocks:
        for step in block.steps:
            if not isinstance(step, ExecuteToolStep) or step.tool in seen:
                continue
            seen.add(step.tool)
            tool = skill.tools.get(step.tool)  # MCP tools: their hints are known once connected
            constraint = constraints.get(step.tool)
            if tool is None or (constraint is not None and constraint.requires is not None):
                continue
            contract = tool.contract
            if constraint is not None and constraint.contract:
                contract = merge_contract(contract, constraint.contract)
            if not contract.effectful:
                continue
            yield diag(
                "tool.step_tool_offered",
                doc.file,
                step.line,
                f"execute_tool `{step.tool}`: the model is offered this tool too while skill "
                f"`{doc.skill_id}` is active, and it is effectful ({_effect(contract)}); close "
                "it with a tool_constraints `requires:` only the block opens (a flag it sets "
                'just before this step), or declare effect="read_only" if it changes nothing',
                key=step.tool,
                severity="warning",
            )


def _effect(contract: ToolContract) -> str:
    return (
        f"effect `{contract.effect}`" if contract.declared else f"no contract: `{contract.effect}`"
    )
