"""The plan executor: a DAG scheduler with an effect gate and an effect journal (spec §1.11, §3.11).

    execution = await execute(plan, catalog, invoker=invoker, journal=StoreJournal(store),
                              turn_id=turn_id, runtime=runtime, slots=bound, fillers={},
                              served=True, now=clock)
    execution.status          # ok | failed | paused | refused
    execution.final_text      # the rendered final message

Read-only steps run concurrently as their dependencies allow (at most `max_parallel` at
once); effectful steps run alone, in plan order. A step depends on the earlier steps its
arguments refer to (`${stepN...}`), the step it pipes from (`from_step`) and the step its
`when` condition reads. The schedule is a list of segments in plan order: runs of read-only
steps, which may run concurrently as their dependencies allow, and single effectful steps,
which are barriers: every earlier step has finished before an effect starts, and no later
step starts before it ends. So effects happen in plan order, never together, and reads keep
their place around writes (a listing written after a delete sees the delete). A step whose
tool is not in the catalog is a barrier too (fail closed).

Before an effectful step of a served plan runs, the **effect gate** checks every argument's
provenance (`keel.plans.resolve`): anything but a request span, a runtime value, an output
of this turn or a contract constant refuses the step (`plan.effect_gate`) and the tool is
never invoked.

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
(reads already in flight finish). `final_text` is rendered only when the plan succeeded, and
never with blanks: a ref to a step's output that resolves to nothing (the path names
nothing in what the tool returned) is `plan.final_unresolved`, which fails the plan when no
effect committed and otherwise leaves the final text empty (the caller's model words it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from keel.plans.catalog import Catalog, PlanTool
from keel.plans.journal import (
    Journal,
    StoreJournal,
    args_hash,
    decode_result,
    encode_result,
    idem_key,
)
from keel.plans.outcome import (
    Execution,
    Status,
    StepInvoker,
    StepResult,
    final_message,
    render_final,
)
from keel.plans.paths import is_empty
from keel.plans.piping import PIPE_KEY, pipe_source, pipe_target
from keel.plans.plan import FINAL_ANSWER, Plan, PlanError, Step
from keel.plans.refs import StepRef, refs_in
from keel.plans.resolve import SAFE_FOR_EFFECTS, Provenance, ResolveEnv, resolve_args
from keel.plans.store_port import JournalEntry
from keel.tools.frozen import thaw_json

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


# The run: one execution's settings and state; reads, effects, journal, gate.

BACKOFF: Final = 0.5
"""Seconds before the first retry of an operational failure; doubled for each next one."""


@dataclass(kw_only=True, slots=True)
class Runner:
    """One execution of a plan: its settings and mutable state (see `keel.plans.executor`)."""

    plan: Plan
    catalog: Catalog
    invoker: StepInvoker
    journal: Journal
    turn_id: str
    runtime: Mapping[str, object]
    slots: Mapping[str, object]
    fillers: Mapping[str, str]
    served: bool
    max_parallel: int
    retries: int
    sleep: Callable[[float], Awaitable[None]]
    now: Callable[[], float]
    journaled: dict[int, JournalEntry] = field(default_factory=dict)
    results: dict[int, StepResult] = field(default_factory=dict)
    provenance: dict[int, dict[str, Provenance]] = field(default_factory=dict)
    skipped: set[int] = field(default_factory=set)
    committed: list[int] = field(default_factory=list)
    refusals: list[PlanError] = field(default_factory=list)
    status: Status = "ok"
    failed_step: int | None = None

    def outcome(self) -> Execution:
        final: str = ""
        blank: tuple[str, ...] = ()
        if self.status == "ok":
            final, blank = final_message(
                self.plan,
                self.results,
                slots=self.slots,
                fillers=self.fillers,
                runtime=self.runtime,
            )
        status, refusals = self.status, list(self.refusals)
        if blank:
            # Never an answer with blanks: with nothing committed the plan failed (the
            # caller falls through to the model); after an effect it stays done, and its
            # empty final text lets the model word the answer from what ran.
            refusals.append(_unresolved(blank))
            final = ""
            status = "ok" if self.committed else "failed"
        return Execution(
            status=status,
            results=dict(sorted(self.results.items())),
            provenance=dict(sorted(self.provenance.items())),
            failed_step=self.failed_step,
            committed=tuple(sorted(set(self.committed))),
            refusals=tuple(refusals),
            final_text=final,
            skipped=tuple(sorted(self.skipped)),
        )

    # -- read-only segments ---------------------------------------------------------------

    async def reads(self, steps: tuple[Step, ...]) -> None:
        """Run read-only steps, each as soon as its dependencies are done (bounded)."""
        pending = list(steps)
        running: dict[asyncio.Task[None], int] = {}
        try:
            while True:
                self._launch(pending, running)
                if not running:
                    return
                done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for task in sorted(done, key=running.__getitem__):
                    del running[task]
                    task.result()  # a crash of the invoker propagates
        finally:
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)

    def _launch(self, pending: list[Step], running: dict[asyncio.Task[None], int]) -> None:
        if self.status != "ok":
            pending.clear()
            return
        for step in list(pending):
            if len(running) >= self.max_parallel:
                return
            unfinished = {s.id for s in pending} | set(running.values())
            if dependencies(step) & unfinished:
                continue
            pending.remove(step)
            running[asyncio.ensure_future(self._read(step))] = step.id

    async def _read(self, step: Step) -> None:
        tool = self.catalog[step.tool]
        if self._skip(step):
            return
        resolved = resolve_args(step, tool.contract, self._env(), parameters=tool.parameters)
        if isinstance(resolved, PlanError):
            self._fail(step, [resolved])
            return
        args, self.provenance[step.id] = resolved
        result = await self.invoker.invoke(step, thaw_json(args))
        attempt = 0
        while _retryable(result) and attempt < self.retries:
            await self.sleep(BACKOFF * 2**attempt)
            attempt += 1
            result = await self.invoker.invoke(step, thaw_json(args))
        self._record(step, result)

    # -- effectful steps ------------------------------------------------------------------

    async def effect(self, step: Step) -> None:
        """Run one effectful step: journal, skips, the effect gate, one invoke."""
        tool = self.catalog.get(step.tool)
        prior = self.journaled.get(step.id)
        if tool is None:
            self._fail(step, [_error("plan.tool_unknown", step, f"no tool {step.tool!r}")])
        elif prior is not None and prior.tool != step.tool:
            message = f"this turn's journal has {prior.tool!r} at this step; use a new turn"
            self._fail(step, [_error("plan.journal_mismatch", step, message)])
        elif prior is not None and prior.status == "done":
            output, text = decode_result(prior.result_json)
            self.committed.append(step.id)
            self.results[step.id] = StepResult(ok=True, output=output, text=text)
        elif prior is not None and prior.status == "intended" and not prior.idem_key:
            self._unknown(step)
        elif not self._skip(step):
            await self._effect(step, tool, prior)

    async def _effect(self, step: Step, tool: PlanTool, prior: JournalEntry | None) -> None:
        resolved = resolve_args(step, tool.contract, self._env(), parameters=tool.parameters)
        if isinstance(resolved, PlanError):
            self._fail(step, [resolved])
            return
        args, tags = resolved
        self.provenance[step.id] = tags
        if _empty_pipe(step, tool, args):
            self.skipped.add(step.id)
            return
        refused = gate(step, tags) if self.served else []
        if refused:
            self._fail(step, refused, status="refused")
            return
        key = idem_key(step.tool, tool.contract, args)
        if prior is not None and prior.status == "intended" and prior.idem_key != key:
            self._unknown(step)
            return
        await self._invoke_effect(step, args, key)

    async def _invoke_effect(self, step: Step, args: dict[str, object], key: str) -> None:
        entry = JournalEntry(
            turn_id=self.turn_id,
            step_id=step.id,
            tool=step.tool,
            idem_key=key,
            args_hash=args_hash(args),
            status="intended",
            ts=self.now(),
        )
        await self.journal.write(entry)
        result = await self.invoker.invoke(step, thaw_json(args))
        done = result.ok and not result.paused
        stored = encode_result(output=result.output, text=result.text, error_code=result.error_code)
        outcome = replace(entry, status="done" if done else "failed", result_json=stored)
        await self.journal.write(replace(outcome, ts=self.now()))
        if done:
            self.committed.append(step.id)
        self._record(step, result)

    def _unknown(self, step: Step) -> None:
        message = (
            "an earlier run of this turn started this effect and its outcome is unknown; "
            "the tool has no idempotency key, so it is not run again: check its effect first"
        )
        self.committed.append(step.id)  # it may have happened: judge conservatively
        self._fail(step, [_error("plan.effect_unknown", step, message)])

    # -- shared ---------------------------------------------------------------------------

    def _env(self) -> ResolveEnv:
        return ResolveEnv(
            outputs={i: r.output for i, r in self.results.items() if r.ok},
            runtime=self.runtime,
            fillers=self.fillers,
            slots=self.slots,
            served=self.served,
        )

    def _skip(self, step: Step) -> bool:
        target = step.when_nonempty
        empty = target in self.results and is_empty(self.results[target].output)
        if empty or dependencies(step) & self.skipped:
            self.skipped.add(step.id)
            return True
        return False

    def _record(self, step: Step, result: StepResult) -> None:
        self.results[step.id] = result
        if result.paused:
            self._stop("paused", None)
        elif not result.ok:
            self._stop("failed", step.id)

    def _fail(self, step: Step, errors: list[PlanError], status: Status = "failed") -> None:
        text = "; ".join(e.hint() for e in errors)
        self.results[step.id] = StepResult(ok=False, text=text, error_code=errors[0].code)
        self.refusals.extend(errors)
        self._stop(status, step.id)

    def _stop(self, status: Status, step_id: int | None) -> None:
        if self.status == "ok":
            self.status, self.failed_step = status, step_id


def gate(step: Step, provenance: Mapping[str, Provenance]) -> list[PlanError]:
    """The effect gate: one refusal per argument whose provenance is not safe for effects."""
    return [
        PlanError(
            code="plan.effect_gate",
            step=step.id,
            argument=name,
            message=f"a {tag} value may not reach an effect in a served plan; it must come "
            "from the request (a slot), the runtime, an earlier step or a structural constant",
        )
        for name, tag in sorted(provenance.items())
        if tag not in SAFE_FOR_EFFECTS
    ]


def _retryable(result: StepResult) -> bool:
    return not result.ok and result.operational and not result.paused


def _empty_pipe(step: Step, tool: PlanTool, args: Mapping[str, object]) -> bool:
    """The step pipes a list from an earlier step and the list is empty."""
    if PIPE_KEY not in step.args:
        return False
    target = pipe_target(tool.contract, tool.parameters)
    return target not in step.args and args.get(target) == []


FINAL_UNRESOLVED: Final = "plan.final_unresolved"
"""A ref of the final message resolves to nothing in this run's outputs."""


def _unresolved(refs: tuple[str, ...]) -> PlanError:
    return PlanError(
        code=FINAL_UNRESOLVED,
        message=f"the final message's {', '.join(refs)} resolve to nothing in this run's "
        "outputs; it is not sent with blanks",
    )


def _error(code: str, step: Step, message: str) -> PlanError:
    return PlanError(code=code, step=step.id, message=message)


# The schedule: the dependency graph of a plan and its segments.


@dataclass(frozen=True, kw_only=True, slots=True)
class Segment:
    """Read-only steps that may overlap, or one effectful step."""

    effectful: bool
    steps: tuple[Step, ...]


def dependencies(step: Step) -> frozenset[int]:
    """The earlier steps `step` reads (refs, `from_step`, `when`)."""
    ids = {ref.step for ref in refs_in(step.args) if isinstance(ref, StepRef)}
    source = pipe_source(step)
    if isinstance(source, int):
        ids.add(source)
    if step.when_nonempty is not None:
        ids.add(step.when_nonempty)
    return frozenset(i for i in ids if 1 <= i < step.id)


def is_barrier(step: Step, catalog: Catalog) -> bool:
    """An effectful step, or one whose tool is unknown."""
    tool = catalog.get(step.tool)
    return tool is None or tool.contract.effectful


def segments(steps: Sequence[Step], catalog: Catalog) -> list[Segment]:
    """The tool steps before the first `final_answer`, cut at every barrier."""
    out: list[Segment] = []
    reads: list[Step] = []
    for step in steps:
        if step.tool == FINAL_ANSWER:
            break
        if not is_barrier(step, catalog):
            reads.append(step)
            continue
        if reads:
            out.append(Segment(effectful=False, steps=tuple(reads)))
            reads = []
        out.append(Segment(effectful=True, steps=(step,)))
    if reads:
        out.append(Segment(effectful=False, steps=tuple(reads)))
    return out
