"""Running a plan inside a turn: its steps as the skill's tool calls, then the turn's answer.

`TurnInvoker` is the executor's `StepInvoker` inside the loop (`keel.plans.executor`). Each
step is checked exactly like a tool call the model proposed (spec §7.3 step 5): the tool
must be one of the active skill's tools, its arguments must validate against its schema
(bad arguments never reach the tool: the step fails with `tool.arguments.invalid`), its
`requires` gate must be open, and a tool that needs the user's confirmation turns the step
into a pause point (the plan stops there; the approved call runs exactly once, through the
approval path). The run is recorded as `tool_executed` with `metadata.plan` (the source
layer) and `metadata.plan_step`, and the call and its result are added to the turn's model
transcript, so a later model call of the turn (a synthesis, a fallback) sees them.

`run_plan` executes a whole plan this way and records `plan_executed`; `finish_plan` and
`partial` turn its execution into the turn's answer. What a run needs from the engine's
cascade (its store, catalogs, filler answers) is the `PlanScope` port; `PlanTurn` is the
cascade's state within one turn. The cascade itself is `keel.loop.cascade`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from keel.events.model import BotMessage, PlanCacheDecided, PlanExecuted, ToolCallRefused
from keel.llm.port import ToolCall
from keel.loop import blocks_run, lifecycle
from keel.loop.cascade_context import memory_runtime
from keel.loop.offer import builder_offers
from keel.loop.tools_run import (
    CallSite,
    gate_open,
    needs_confirmation,
    pause_for_confirmation,
    run_builder_tool,
)
from keel.loop.turn import Next, TurnContext
from keel.plans.cache import Decision
from keel.plans.catalog import Catalog
from keel.plans.executor import Execution, StepResult, StoreJournal, execute
from keel.plans.intent import Intent
from keel.plans.paths import decoded_output
from keel.plans.plan import Plan, Step, shape_hash
from keel.plans.store_port import PlanStore
from keel.project.definition import Skill
from keel.tools.dispatch import ToolRun
from keel.tools.validation import retryable_error_text, validate_arguments

PARTIAL = "I could not finish that: {failed}. Already done: {done}. Nothing was repeated."

OPERATIONAL_CODES = frozenset({"tool.timeout", "mcp.server_unavailable"})
"""Failures of the world, not of the plan: a read-only step may be retried after them."""


class PlanScope(Protocol):
    """What running a plan needs from the engine's cascade (`keel.loop.cascade.Cascade`)."""

    @property
    def store(self) -> PlanStore:
        """Where the effect journal (and the cache) lives."""
        ...

    def catalog(self, skill: Skill, names: tuple[str, ...]) -> Catalog:
        """The catalog of `skill`'s tools `names` (kept between turns)."""
        ...

    async def fillers(self, t: TurnContext, plan: Plan) -> dict[str, str]:
        """Each of `plan`'s fillers answered for this turn's request."""
        ...


@dataclass(frozen=True, kw_only=True, slots=True)
class PendingRecord:
    """A turn that missed the cache: what to compile its tool calls for at the end."""

    skill_id: str
    intent: Intent


@dataclass(kw_only=True, eq=False)
class PlanTurn:
    """The cascade's state within one turn."""

    scope: PlanScope
    tried: bool = False
    """The cascade was consulted in this turn (it is consulted at most once)."""
    pending: PendingRecord | None = None
    """A cache miss whose tool calls are compiled into a plan when the turn ends well."""


def epoch(t: TurnContext) -> float:
    """The turn's clock as epoch seconds."""
    return t.clock.now().timestamp()


def runtime_values(t: TurnContext) -> dict[str, object]:
    """What `${RUNTIME:key}` resolves to in this turn."""
    now = t.clock.now()
    return {
        "actor": t.recorder.conversation_id,
        "lang": t.definition.config.language or "en",
        "channel": "api",
        "turn_id": t.turn_id,
        "now": now.isoformat(),
        "today": now.date().isoformat(),
        **memory_runtime(t),  # `${MEMORY:key}`: this conversation's memory, never the recorder's
    }


def turn_catalog(t: TurnContext, scope: PlanScope, skill: Skill) -> Catalog:
    """The skill's tools whose `requires` holds now: the world a plan may use."""
    names = tuple(offer.name for offer in builder_offers(t.definition, t.state, skill))
    return scope.catalog(skill, names)


async def run_plan(
    t: TurnContext,
    scope: PlanScope,
    skill: Skill,
    catalog: Catalog,
    plan: Plan,
    *,
    source: str,
    slots: Mapping[str, object],
    entry_id: str | None,
    attempt: int = 0,
    intent: Intent | None = None,
    journal_key: str | None = None,
    approved: Mapping[int, StepResult] | None = None,
) -> Execution:
    """Execute `plan` step by step as the skill's tool calls; records `plan_executed`.
    `attempt` > 0 is a recovery plan of the same turn (its own journal). A step that pauses
    for confirmation stores how to go on (`CascadeTurn.after_approval`); `journal_key` and
    `approved` (step id -> the approved call's result) are how a resumed plan goes on."""
    served = source in ("l0", "l1")
    bound = dict(slots)
    key = journal_key or f"{t.recorder.conversation_id}/{t.turn_id}" + (
        f"/r{attempt}" if attempt else ""
    )  # journal entries are per conversation turn (turn ids are unique only per log)
    resume = {
        "plan": plan.to_json(),
        "source": source,
        "slots": bound,
        "entry_id": entry_id,
        "journal": key,
        "request": t.user_text,
        "intent": (intent or Intent()).to_json(),
    }
    with t.timed("plans.exec"):
        execution = await execute(
            plan,
            catalog,
            invoker=TurnInvoker(t, skill, source, resume=resume, approved=approved),
            journal=StoreJournal(scope.store),
            turn_id=key,
            runtime=runtime_values(t),
            slots=bound,
            fillers=await scope.fillers(t, plan),
            served=served,
            now=lambda: epoch(t),
        )
    await t.emit(
        PlanExecuted(
            source=source,  # type: ignore[arg-type]
            status=execution.status,
            shape_hash=shape_hash(plan),
            entry_id=entry_id,
            plan=plan.to_json(),  # type: ignore[arg-type]
            slots=bound,  # type: ignore[arg-type]
            steps_run=len(execution.results),
            failed_step=execution.failed_step,
            committed=execution.committed,
            error_code=execution.refusals[0].code if execution.refusals else None,
        )
    )
    return execution


async def finish_plan(t: TurnContext, execution: Execution) -> Next | None:
    """After a plan ran: pause, answer with its final message, or let the model word it."""
    if execution.status == "paused":
        return Next.PAUSED
    if not execution.final_text.strip():
        return None  # one model call words the answer from the transcript
    await t.say(BotMessage(text=execution.final_text, response_source="plan"))
    await lifecycle.auto_complete(t)
    outcome = await blocks_run.deterministic_pass(t)
    return outcome if outcome in (Next.PAUSED, Next.ENDED) else Next.WAIT


async def partial(t: TurnContext, *runs: tuple[Plan, Execution]) -> Next:
    """Effects committed and a later step failed: say what happened; never re-run."""
    done: list[str] = []
    failed = "a step"
    for plan, execution in runs:
        by_id = {s.id: s.tool for s in plan.steps}
        done += [by_id.get(i, "?") for i in execution.committed]
        if execution.failed_step is not None:
            failed = by_id.get(execution.failed_step, failed)
    done_text = ", ".join(done) or "nothing"
    text = PARTIAL.format(failed=failed, done=done_text)
    await t.say(BotMessage(text=text, response_source="plan"))
    return Next.WAIT


async def emit_record(t: TurnContext, decision: Decision, intent: Intent) -> None:
    """What `PlanCache.record` decided, as the turn's `record` decision."""
    await t.emit(
        PlanCacheDecided(
            layer="record",
            hit=False,
            reason=decision.reason,
            entry_id=decision.entry_id,
            intent=intent.signature,
        )
    )


async def emit_decisions(t: TurnContext, decisions: Sequence[Decision], intent: Intent) -> None:
    """One `plan_cache_decided` per decision."""
    await t.emit(
        *(
            PlanCacheDecided(
                layer=d.layer,
                hit=d.hit,
                reason=d.reason,
                entry_id=d.entry_id,
                intent=intent.signature,
            )
            for d in decisions
        )
    )


def step_result(run: ToolRun) -> StepResult:
    """A tool run as a plan step's result. Its output is the result text decoded, as the
    plan was recorded from it (`keel.plans.paths.decoded_output`): the same bytes at
    record and at serve time, so a tool that returns JSON text fills `${stepN.path}`."""
    return StepResult(
        ok=not run.is_error,
        output=decoded_output(run.result_text),
        text=run.result_text,
        error_code=run.error_code,
        operational=run.error_code in OPERATIONAL_CODES,
    )


class TurnInvoker:
    """Runs plan steps as the active skill's tool calls within a turn."""

    def __init__(
        self,
        t: TurnContext,
        skill: Skill,
        source: str,
        *,
        resume: Mapping[str, object] | None = None,
        approved: Mapping[int, StepResult] | None = None,
    ) -> None:
        """`resume` is stored with a pause point so an approval goes on with the plan
        (`CascadeTurn.after_approval`); `approved` holds the results of steps whose
        approved call already ran (they are not called again)."""
        self.t = t
        self.skill = skill
        self.source = source
        self.resume = resume
        self.approved = approved or {}

    async def invoke(self, step: Step, args: Mapping[str, object]) -> StepResult:
        """Check and run one step (see the module docstring)."""
        if step.id in self.approved:
            return self.approved[step.id]
        t, name = self.t, step.tool
        call_id = f"plan-{t.turn_id}-{step.id}"
        definition = self.skill.tools.get(name)
        if definition is None:
            return await self._refused(step, call_id, "tool.not_offered", f"no tool {name}")
        valid, problems = validate_arguments(definition.parameters, dict(args))
        if problems or valid is None:
            text = retryable_error_text(name, problems)
            return await self._refused(step, call_id, "tool.arguments.invalid", text, args)
        if not gate_open(t, self.skill, name):
            return await self._refused(
                step, call_id, "tool.requires_closed", f"{name} is not available now", args
            )
        site = CallSite(call_id=call_id, plan=self.source, plan_step=step.id)
        self._call_message(call_id, name, valid)
        if needs_confirmation(self.skill, name):
            return await self._pause(step, call_id, valid, site)
        run = await run_builder_tool(t, self.skill, name, valid, site)
        self._result_message(call_id, run.result_text)
        return step_result(run)

    async def _pause(
        self, step: Step, call_id: str, args: Mapping[str, object], site: CallSite
    ) -> StepResult:
        t = self.t
        if t.state.pending_confirmation is not None:
            return await self._refused(
                step, call_id, "tool.confirmation_pending", "a confirmation is already pending"
            )
        extra = {"plan": {**self.resume, "step": step.id}} if self.resume is not None else None
        # No model words the question after a plan's step: it is always said (never a
        # silent pause), and names the held call's arguments.
        ask = await pause_for_confirmation(
            t, self.skill, step.tool, args, site, extra=extra, speak=True
        )
        if ask is None:
            return await self._refused(
                step, call_id, "tool.confirmation_blank", "the confirmation question is empty"
            )
        content = json.dumps({"status": "awaiting_confirmation", "message": ask})
        self._result_message(call_id, content)
        return StepResult(ok=True, output=None, text=content, paused=True)

    async def _refused(
        self,
        step: Step,
        call_id: str,
        code: str,
        message: str,
        args: Mapping[str, object] | None = None,
    ) -> StepResult:
        await self.t.emit(
            ToolCallRefused(
                tool_name=step.tool,
                arguments=json.dumps(dict(args or {}), default=str),
                code=code,
                message=message,
                tool_call_id=call_id,
                metadata={"plan": self.source, "plan_step": step.id},
            )
        )
        return StepResult(ok=False, output=None, text=f"Error ({code}): {message}", error_code=code)

    def _call_message(self, call_id: str, name: str, args: Mapping[str, object]) -> None:
        call = ToolCall(id=call_id, name=name, arguments=json.dumps(dict(args), default=str))
        self.t.transcript.append(
            {"role": "assistant", "content": None, "tool_calls": [call.to_message_part()]}
        )

    def _result_message(self, call_id: str, content: str) -> None:
        self.t.transcript.append({"role": "tool", "tool_call_id": call_id, "content": content})
