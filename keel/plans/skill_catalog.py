"""The plan catalog of a skill: its tools with their contracts, schemas and digests.

A tool's contract is what its `@tool(...)` declares (`ToolDefinition.contract`, or the
`readOnlyHint` of an MCP tool) with the skill's `tool_constraints.<tool>` contract keys laid
over it (`merge_contract`). The digest covers the name, the argument schema, the merged
contract and the function's source text, so editing a tool's code invalidates the cached
plans that use it (plan-cache spec §3.8). An MCP tool's code is on its server: only its
schema and contract count. Reading source text is the one IO here (`inspect.getsource`,
read through `linecache`); unreadable source counts as empty.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping

from keel.plans.catalog import Catalog, PlanTool, catalog_of, plan_tool
from keel.project.definition import Skill
from keel.tools.contract import merge_contract
from keel.tools.definition import ToolDefinition


def catalog_for_skill(skill: Skill, *, names: Iterable[str] | None = None) -> Catalog:
    """The catalog of `skill`'s tools (only those in `names`, when given; unknown names
    are skipped)."""
    wanted = list(skill.tools) if names is None else [n for n in names if n in skill.tools]
    overrides = {c.tool: c.contract for c in skill.document.tool_constraints if c.contract}
    return catalog_of(_entry(skill.tools[n], overrides.get(n)) for n in dict.fromkeys(wanted))


def tool_source(definition: ToolDefinition) -> str:
    """The source text of a Python tool's function; "" for an MCP tool or when unreadable."""
    if definition.mcp_server is not None:
        return ""
    try:
        return inspect.getsource(definition.func)
    except (OSError, TypeError):
        return ""


def _entry(definition: ToolDefinition, override: Mapping[str, object] | None) -> PlanTool:
    contract = definition.contract
    if override:
        contract = merge_contract(contract, override)
    return plan_tool(
        definition.name,
        definition.json_schema(),
        contract,
        code=tool_source(definition),
        description=definition.description,
    )
