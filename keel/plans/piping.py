"""`from_step` list piping (plan-cache spec §1.4, §3.4): which step feeds which argument.

    {"tool": "delete_files", "args": {"from_step": 1}}

pipes step 1's list (the output itself, or its `entries`) into the consumer's list argument:
the one argument the contract binds `piped`, else the schema's one array argument, else
`entries`. An argument the step sets explicitly wins over piping. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from keel.plans.plan import PlanError, Step
from keel.tools.contract import ToolContract

PIPE_KEY: Final = "from_step"
"""The piping argument: a 1-based earlier step whose list feeds the consumer's list arg."""


def pipe_target(contract: ToolContract, parameters: Mapping[str, object] | None) -> str:
    """The argument `from_step` feeds: the one `piped` argument, else the one array
    argument of the schema, else `entries`."""
    piped = sorted(n for n, b in contract.bindings.items() if b == "piped")
    if len(piped) == 1:
        return piped[0]
    properties = parameters.get("properties") if parameters else None
    if isinstance(properties, Mapping):
        arrays = [
            str(n)
            for n, s in properties.items()
            if isinstance(s, Mapping) and s.get("type") == "array"
        ]
        if len(arrays) == 1:
            return arrays[0]
    return "entries"


def pipe_source(step: Step) -> int | PlanError | None:
    """The step `from_step` names (a digit string is read as a number); None when absent."""
    raw = step.args.get(PIPE_KEY)
    if raw is None:
        return None
    if isinstance(raw, str) and raw.strip().isdigit():
        raw = int(raw.strip())
    if not isinstance(raw, int) or isinstance(raw, bool) or not 1 <= raw < step.id:
        return PlanError(
            code="plan.from_step_invalid",
            step=step.id,
            argument=PIPE_KEY,
            message=f"from_step must be the number of an earlier step (1..{step.id - 1})",
        )
    return raw
