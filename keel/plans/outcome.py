"""What running a plan produces, and the port that calls a step's tool (spec §3.11).

`StepResult` is one tool call's result, `StepInvoker` the port the loop implements over its
tool runner, `Execution` the outcome of a whole plan (`keel.plans.executor.execute`).

The plan's final message is rendered from the results (plan-cache spec §1.11.5):
`${stepN.path}` reads the step's output leniently (the message is only text), `${SLOT:x}`,
`${FILLER:x}` and `${RUNTIME:k}` read the turn's values; lists render as their items' labels.
A ref to a step that did not run renders empty, except `@count`, which renders `0` ("Saved
0 rows"); a ref to a step that ran and whose path renders as nothing is reported
(`final_message`): the executor then sends no final message with blanks in it. An empty
final message renders as the empty string (the caller falls back to its own summary). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, Protocol

from keel.plans.paths import as_text
from keel.plans.plan import Plan, PlanError, Step
from keel.plans.refs import Ref, StepRef, find_refs
from keel.plans.resolve import Provenance, ResolveEnv, resolve_ref

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


# The final message, rendered from the results.


def render_final(
    plan: Plan,
    results: Mapping[int, StepResult],
    *,
    slots: Mapping[str, object] | None = None,
    fillers: Mapping[str, str] | None = None,
    runtime: Mapping[str, object] | None = None,
) -> str:
    """`plan.final_message` with its refs rendered."""
    return final_message(plan, results, slots=slots, fillers=fillers, runtime=runtime)[0]


def final_message(
    plan: Plan,
    results: Mapping[int, StepResult],
    *,
    slots: Mapping[str, object] | None = None,
    fillers: Mapping[str, str] | None = None,
    runtime: Mapping[str, object] | None = None,
) -> tuple[str, tuple[str, ...]]:
    """`render_final`, and the refs (as written) to a step that ran whose path renders as
    nothing in its output: such a message would be sent with blanks in it."""
    text = plan.final_message
    if not text:
        return "", ()
    env = ResolveEnv(
        outputs={step: r.output for step, r in results.items() if r.ok},
        runtime=runtime or {},
        fillers={**{n: f.default for n, f in plan.fillers.items()}, **(fillers or {})},
        slots=slots or {},
        served=False,
    )
    pieces: list[str] = []
    blank: list[str] = []
    position = 0
    for found in find_refs(text):
        rendered = _render(found.ref, env)
        if not rendered and isinstance(found.ref, StepRef) and found.ref.step in env.outputs:
            blank.append(text[found.start : found.end])
        pieces += [text[position : found.start], rendered]
        position = found.end
    return "".join(pieces) + text[position:], tuple(dict.fromkeys(blank))


def _render(ref: Ref, env: ResolveEnv) -> str:
    resolved = resolve_ref(ref, env, lenient=True)
    if resolved is not None:
        return as_text(resolved.value)
    if isinstance(ref, StepRef) and ref.path[-1:] == ("@count",):
        return "0"
    return ""
