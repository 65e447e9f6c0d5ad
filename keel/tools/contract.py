"""The plan contract a tool declares on `@tool(...)` (plan-cache spec §3.5).

`@tool(description=..., effect="write", bindings={"to": "request"}, ...)` keywords are
checked here while the module is imported: a bad value, or a contract naming an argument
the function does not take, raises `ToolDefinitionError` (reported as the
`tool.definition.invalid` diagnostic). The result is `ToolDefinition.contract`; a tool that
declares nothing gets the fail-closed `ToolContract()` (effectful, every argument
`request`). A skill's `tool_constraints` may override it (`keel.plans.skill_catalog`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set

from keel.plans.contracts import CONTRACT_KEYS, ToolContract, contract_problems, make_contract
from keel.tools.definition import ToolDefinitionError

__all__ = ["CONTRACT_KEYS", "build_contract", "contract_declaration"]

_ARGUMENT_LISTS = ("idempotency_key", "runtime_resolved", "outbound_args")


def contract_declaration(values: Mapping[str, object]) -> dict[str, object]:
    """The contract keywords that were given (sets become sorted lists); raises
    `ToolDefinitionError` naming every problem."""
    raw: dict[str, object] = {}
    for key in CONTRACT_KEYS:
        value = values.get(key)
        if isinstance(value, Set):
            value = sorted(value, key=str)
        elif isinstance(value, tuple):
            value = list(value)
        if value is not None:
            raw[key] = value
    problems = contract_problems(raw)
    if problems:
        raise ToolDefinitionError("@tool contract: " + "; ".join(problems))
    return raw


def build_contract(raw: Mapping[str, object], param_names: Sequence[str]) -> ToolContract:
    """The contract of a tool taking `param_names`; `ToolContract()` when nothing was
    declared. Raises `ToolDefinitionError` when the contract names an unknown argument."""
    if not raw:
        return ToolContract()
    unknown: list[str] = []
    bindings = raw.get("bindings")
    named = list(bindings) if isinstance(bindings, Mapping) else []
    for key in _ARGUMENT_LISTS:
        value = raw.get(key)
        named += [str(v) for v in value] if isinstance(value, list) else []
    unknown = sorted({str(n) for n in named} - set(param_names))
    if unknown:
        takes = ", ".join(param_names) or "no arguments"
        raise ToolDefinitionError(
            f"@tool contract names argument(s) {', '.join(unknown)} the function does not "
            f"take (it takes {takes})"
        )
    return make_contract(raw)
