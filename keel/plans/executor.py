"""The plan executor: a DAG scheduler with an effect gate and an effect journal (spec §1.11, §3.11).

    execution = await execute(plan, catalog, invoker=invoker, journal=StoreJournal(store),
                              turn_id=turn_id, runtime=runtime, slots=bound, fillers={},
                              served=True, now=clock)
    execution.status          # ok | failed | paused | refused
    execution.final_text      # the rendered final message

Read-only steps run concurrently as their dependencies allow (at most `max_parallel` at
once); effectful steps run alone, in plan order (`keel.plans.dag`). Before an effectful step
of a served plan runs, the **effect gate** checks every argument's provenance
(`keel.plans.resolve`): anything but a request span, a runtime value, an output of this turn
or a contract constant refuses the step (`plan.effect_gate`) and the tool is never invoked.

Every effectful invoke is journaled (`keel.plans.journal`): `intended` before, `done` or
`failed` after. Executing the same `turn_id` again resumes: a `done` step is not run again
(its result is reused), an `intended` step without outcome is run again only under the same
idempotency key, else the plan fails with `plan.effect_unknown`. An exception raised by the
invoker is a crash: it propagates, in-flight reads are cancelled, and the journal keeps what
was intended.

A step is skipped when its `when` step produced nothing, when a step it depends on was
skipped, or (effectful only) when its `from_step` list is empty. Operational failures of
read-only steps are retried `retries` times with exponential backoff through `sleep`; an
effectful step is never retried here. The first failure, refusal or pause stops the plan
(reads already in flight finish). `final_text` is rendered only when the plan succeeded.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping

from keel.plans.catalog import Catalog
from keel.plans.dag import segments
from keel.plans.final import render_final
from keel.plans.journal import Journal, StoreJournal
from keel.plans.outcome import Execution, Status, StepInvoker, StepResult
from keel.plans.plan import Plan
from keel.plans.runner import BACKOFF, Runner, gate

__all__ = [
    "BACKOFF",
    "Execution",
    "Journal",
    "Status",
    "StepInvoker",
    "StepResult",
    "StoreJournal",
    "execute",
    "gate",
    "render_final",
]


async def execute(
    plan: Plan,
    catalog: Catalog,
    *,
    invoker: StepInvoker,
    journal: Journal,
    turn_id: str,
    runtime: Mapping[str, object],
    slots: Mapping[str, object],
    fillers: Mapping[str, str],
    served: bool,
    max_parallel: int = 4,
    retries: int = 2,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    now: Callable[[], float],
) -> Execution:
    """Run `plan` for turn `turn_id` (run it again with the same id to resume)."""
    run = Runner(
        plan=plan,
        catalog=catalog,
        invoker=invoker,
        journal=journal,
        turn_id=turn_id,
        runtime=runtime,
        slots=slots,
        fillers={**{n: f.default for n, f in plan.fillers.items()}, **fillers},
        served=served,
        max_parallel=max(1, max_parallel),
        retries=max(0, retries),
        sleep=sleep,
        now=now,
    )
    run.journaled = {entry.step_id: entry for entry in await journal.entries(turn_id)}
    for segment in segments(plan.steps, catalog):
        if segment.effectful:
            await run.effect(segment.steps[0])
        else:
            await run.reads(segment.steps)
        if run.status != "ok":
            break
    return run.outcome()
