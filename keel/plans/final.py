"""The final message of a plan, rendered from the results (plan-cache spec §1.11.5).

`${stepN.path}` reads the step's output leniently (the message is only text), `${SLOT:x}`,
`${FILLER:x}` and `${RUNTIME:k}` read the turn's values; lists render as their items' labels.
A ref to a step that did not run renders empty, except `@count`, which renders `0` ("Saved
0 rows"). An empty final message renders as the empty string (the caller falls back to its
own summary). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping

from keel.plans.outcome import StepResult
from keel.plans.paths import as_text
from keel.plans.plan import Plan
from keel.plans.refs import Ref, StepRef, find_refs
from keel.plans.resolve import ResolveEnv, resolve_ref


def render_final(
    plan: Plan,
    results: Mapping[int, StepResult],
    *,
    slots: Mapping[str, object] | None = None,
    fillers: Mapping[str, str] | None = None,
    runtime: Mapping[str, object] | None = None,
) -> str:
    """`plan.final_message` with its refs rendered."""
    text = plan.final_message
    if not text:
        return ""
    env = ResolveEnv(
        outputs={step: r.output for step, r in results.items() if r.ok},
        runtime=runtime or {},
        fillers={**{n: f.default for n, f in plan.fillers.items()}, **(fillers or {})},
        slots=slots or {},
        served=False,
    )
    pieces: list[str] = []
    position = 0
    for found in find_refs(text):
        pieces += [text[position : found.start], _render(found.ref, env)]
        position = found.end
    return "".join(pieces) + text[position:]


def _render(ref: Ref, env: ResolveEnv) -> str:
    resolved = resolve_ref(ref, env, lenient=True)
    if resolved is not None:
        return as_text(resolved.value)
    if isinstance(ref, StepRef) and ref.path[-1:] == ("@count",):
        return "0"
    return ""
