"""What running a plan produces, and the port that calls a step's tool (spec §3.11).

`StepResult` is one tool call's result, `StepInvoker` the port the loop implements over its
tool runner, `Execution` the outcome of a whole plan (`keel.plans.executor.execute`). Values.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, Protocol

from keel.plans.plan import PlanError, Step
from keel.plans.resolve import Provenance

Status = Literal["ok", "failed", "paused", "refused"]


@dataclass(frozen=True, kw_only=True, slots=True)
class StepResult:
    """What one tool call returned."""

    ok: bool
    output: object = None
    text: str = ""
    error_code: str | None = None
    operational: bool = False
    """The failure is an outage (network, timeout, rate limit...), not a wrong call."""
    paused: bool = False
    """The call waits for the user (a confirmation): the plan stops here."""


class StepInvoker(Protocol):
    """Calls a step's tool with resolved arguments."""

    async def invoke(self, step: Step, args: Mapping[str, object]) -> StepResult: ...


@dataclass(frozen=True, kw_only=True, slots=True)
class Execution:
    """The outcome of running a plan."""

    status: Status
    results: Mapping[int, StepResult]
    """Step id -> result, for the steps that ran (or were reused from the journal)."""
    provenance: Mapping[int, Mapping[str, Provenance]]
    """Step id -> argument -> tag, for the steps whose arguments were resolved."""
    failed_step: int | None
    """The step that failed or was refused (None when ok or paused)."""
    committed: tuple[int, ...]
    """Effectful steps that took effect, or may have (`plan.effect_unknown`)."""
    refusals: tuple[PlanError, ...]
    """Why steps were not invoked: gate refusals, unresolved arguments, unknown effects."""
    final_text: str
    skipped: tuple[int, ...] = ()
