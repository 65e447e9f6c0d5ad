"""The plan-contract keys of a `tool_constraints` entry (plan-cache spec §3.5).

A skill may declare or override a tool's contract next to its other constraints:

    tool_constraints:
      - cancel_order:
          effect: write
          bindings: {order_id: request}
          idempotency_key: [order_id]
          verbs: [call off]

The keys are those of `@tool(...)` (`keel.tools.contract.CONTRACT_KEYS`). Each bad value
is a `skill.tool_constraints.contract_invalid` error on its own line; the good keys are
kept, and laid over the tool's own contract by `keel.plans.skill_catalog`.
`idempotency_key: none` says the tool has no natural key (overriding the decorator's).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from keel.source.reporter import Reporter
from keel.source.yaml import LineDict, freeze
from keel.tools.contract import CONTRACT_KEYS, contract_problems

CONTRACT_KEY_SET = frozenset(CONTRACT_KEYS)


def read_contract(tool: str, body: LineDict, rep: Reporter) -> Mapping[str, object] | None:
    """The valid contract keys of `tool_constraints.<tool>`; None when it declares none."""
    declared: dict[str, object] = {}
    for key in CONTRACT_KEYS:
        if key not in body:
            continue
        value = _value(key, body[key])
        problems = contract_problems({key: value})
        if value is None:
            problems = [f"{key} needs a value"]
        for problem in problems:
            rep.error(
                "skill.tool_constraints.contract_invalid",
                body.line_of(key),
                f"tool_constraints.{tool}.{key}: {problem}",
                key=key,
            )
        if not problems:
            declared[key] = value
    return MappingProxyType(declared) if declared else None


def _value(key: str, value: object) -> object:
    if key == "idempotency_key" and isinstance(value, str) and value.strip().lower() == "none":
        return ()
    return freeze(value)
