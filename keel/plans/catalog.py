"""The catalog a plan may use: the tools admitted for the turn, each with its contract.

The catalog defines the world. A plan can only name tools in it; the validator rejects
the rest and cache signatures are computed from these entries' digests. Pure values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from keel.tools.contract import ToolContract, contract_digest


@dataclass(frozen=True, kw_only=True, slots=True)
class PlanTool:
    """One admitted tool."""

    name: str
    parameters: Mapping[str, object]
    """JSON Schema of the arguments (an object schema)."""
    contract: ToolContract
    digest: str
    """`contract_digest` over name, schema, contract and code: changes whenever any does."""
    description: str = ""

    @property
    def verb(self) -> str:
        """The head of the name (`cancel` for `cancel_order`)."""
        return self.name.split("_", 1)[0].lower()

    @property
    def object(self) -> str:
        """The rest of the name (`order` for `cancel_order`; the name when there is none)."""
        parts = self.name.lower().split("_", 1)
        return parts[1] if len(parts) == 2 else parts[0]


Catalog = Mapping[str, PlanTool]


def plan_tool(
    name: str,
    parameters: Mapping[str, object],
    contract: ToolContract,
    *,
    code: str = "",
    description: str = "",
) -> PlanTool:
    """A catalog entry with its digest computed."""
    return PlanTool(
        name=name,
        parameters=parameters,
        contract=contract,
        digest=contract_digest(name, parameters, contract, code),
        description=description,
    )


def catalog_of(tools: Iterable[PlanTool]) -> Catalog:
    """A read-only catalog keyed by tool name."""
    return MappingProxyType({t.name: t for t in tools})
