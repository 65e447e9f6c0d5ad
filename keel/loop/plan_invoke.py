"""A plan's steps run as tool calls of the turn: the same checks as a model's calls.

`TurnInvoker` is the executor's `StepInvoker` inside the loop (`keel.plans.executor`). Each
step is checked exactly like a tool call the model proposed (spec §7.3 step 5): the tool
must be one of the active skill's tools, its arguments must validate against its schema
(bad arguments never reach the tool: the step fails with `tool.arguments.invalid`), its
`requires` gate must be open, and a tool that needs the user's confirmation turns the step
into a pause point (the plan stops there; the approved call runs exactly once, through the
approval path). The run is recorded as `tool_executed` with `metadata.plan` (the source
layer) and `metadata.plan_step`, and the call and its result are added to the turn's model
transcript, so a later model call of the turn (a synthesis, a fallback) sees them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from keel.events.model import ToolCallRefused
from keel.llm.port import ToolCall
from keel.loop.tools_run import (
    CallSite,
    gate_open,
    needs_confirmation,
    pause_for_confirmation,
    run_builder_tool,
)
from keel.loop.turn import TurnContext
from keel.plans.executor import StepResult
from keel.plans.plan import Step
from keel.project.definition import Skill
from keel.tools.validation import retryable_error_text, validate_arguments

OPERATIONAL_CODES = frozenset({"tool.timeout", "mcp.server_unavailable"})
"""Failures of the world, not of the plan: a read-only step may be retried after them."""


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
        (`keel.loop.plan_resume`); `approved` holds the results of steps whose approved
        call already ran (they are not called again)."""
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
        return StepResult(
            ok=not run.is_error,
            output=run.llm_response,
            text=run.result_text,
            error_code=run.error_code,
            operational=run.error_code in OPERATIONAL_CODES,
        )

    async def _pause(
        self, step: Step, call_id: str, args: Mapping[str, object], site: CallSite
    ) -> StepResult:
        t = self.t
        if t.state.pending_confirmation is not None:
            return await self._refused(
                step, call_id, "tool.confirmation_pending", "a confirmation is already pending"
            )
        extra = {"plan": {**self.resume, "step": step.id}} if self.resume is not None else None
        ask = await pause_for_confirmation(t, self.skill, step.tool, args, site, extra=extra)
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
