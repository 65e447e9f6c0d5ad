"""A run's committed events as OpenTelemetry spans, after the run (nothing in the loop).

- a turn, `turn_started` to its last commit: `invoke_agent {agent}` (internal);
- a model call, ending at its `model_called` stamp, `latency_ms` long: `chat {model}`
  (client);
- a tool call, from the tool's start (else the commit before) to its `tool_executed`,
  and a refused call at its `tool_call_refused` (no duration): `execute_tool {tool}`;
- a block step, from `step_advanced` (or the block entered or resumed) to the next step or
  the block's end: `step {skill}/{block}/{step}`;
- a plan run, from the cascade's decision to `plan_executed`: `plan {source}`;
- a store commit, one append of a batch of the turn's events (`record.Commit`):
  `keel.store.commit`.

Parents: a run's turns hang under the context the tap captured (the HTTP request's span);
a model or tool span hangs under the innermost step or plan whose events surround it, else
under its turn; commits hang under their turn. Routing and plan-cache decisions, pause
points and history compression are events of the turn span.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import SpanKind, Status, StatusCode

from keel.events.base import to_plain
from keel.events.conversation import stage_timings
from keel.events.model import (
    Event,
    FlowStarted,
    HistoryCompressed,
    ModelCalled,
    OrderedBlockCancelled,
    OrderedBlockCompleted,
    OrderedBlockInterrupted,
    OrderedBlockResumed,
    PausePointCreated,
    PausePointResolved,
    PlanCacheDecided,
    PlanExecuted,
    RoutingDecided,
    StepAdvanced,
    ToolCallRefused,
    ToolExecuted,
    TurnEnded,
    TurnStarted,
)
from keel.observe import genai
from keel.observe.record import Commit, RunRecord, ToolStart

if TYPE_CHECKING:
    from collections.abc import Callable

    from opentelemetry.trace import Span, Tracer
    from opentelemetry.util.types import AttributeValue

_END = "END"
_PLAN_LAYERS = {"l0", "l1", "l3"}


def _ns(seconds: float) -> int:
    return int(seconds * 1_000_000_000)


@dataclass(frozen=True, kw_only=True, slots=True)
class SpanOptions:
    """What the spans are built with."""

    agent: str
    provider_of: Callable[[str, str], str]
    """(model id, tier) -> `gen_ai.provider.name`."""
    capture_content: bool = False


@dataclass(kw_only=True, slots=True)
class _Window:
    """A step or plan run: spans whose events fall strictly inside it hang under it."""

    start_seq: int
    end_seq: int
    start: float
    end: float
    name: str
    attributes: dict[str, AttributeValue]
    span: Span | None = None


@dataclass(kw_only=True, slots=True)
class _Turn:
    started: TurnStarted
    start_seq: int
    events: list[tuple[int, Event]] = field(default_factory=list)
    end: float = 0.0


def _turns(record: RunRecord) -> list[_Turn]:
    turns: list[_Turn] = []
    for seq, event in record.events:
        if isinstance(event, TurnStarted):
            turns.append(_Turn(started=event, start_seq=seq))
        if turns:
            turns[-1].events.append((seq, event))
    for index, turn in enumerate(turns):
        last = turn.events[-1][0]
        stored = [c.stored for c in record.commits if turn.start_seq <= c.first_seq <= last]
        closing = [e.timestamp for _, e in turn.events]
        turn.end = max([*closing, *stored])
        if index == len(turns) - 1 and not any(isinstance(e, TurnEnded) for _, e in turn.events):
            turn.end = max(turn.end, record.ended_at)
    return turns


def _steps(turn: _Turn) -> list[_Window]:
    """The block steps entered in the turn, each until the next step or the block's end."""
    done: list[_Window] = []
    open_steps: dict[tuple[str, str], _Window] = {}
    end_seq = turn.events[-1][0] + 1

    def close(key: tuple[str, str], seq: int, at: float) -> None:
        window = open_steps.pop(key, None)
        if window is not None:
            window.end_seq, window.end = seq, at
            done.append(window)

    def enter(skill: str, block: str, step: str, seq: int, at: float) -> None:
        close((skill, block), seq, at)
        if step in (_END, "autonomous"):
            return
        attributes: dict[str, AttributeValue] = {
            "keel.skill.id": skill,
            "keel.block.id": block,
            "keel.step.id": step,
        }
        open_steps[(skill, block)] = _Window(
            start_seq=seq,
            end_seq=end_seq,
            start=at,
            end=turn.end,
            name=f"step {skill}/{block}/{step}",
            attributes=attributes,
        )

    for seq, event in turn.events:
        at = event.timestamp
        if isinstance(event, StepAdvanced):
            enter(event.skill_id, event.block_id, event.step_id, seq, at)
        elif isinstance(event, FlowStarted) and "__" in event.flow_id:
            skill, block = event.flow_id.rsplit("__", 1)
            enter(skill, block, event.step_id, seq, at)
        elif isinstance(event, OrderedBlockResumed):
            enter(event.skill_id, event.block_id, event.step_id, seq, at)
        elif isinstance(
            event, OrderedBlockCompleted | OrderedBlockCancelled | OrderedBlockInterrupted
        ):
            close((event.skill_id, event.block_id), seq, at)
    done.extend(open_steps.values())
    return done


def _plans(turn: _Turn) -> list[_Window]:
    """Each plan run, from the cascade decision that chose it to its `plan_executed`."""
    windows: list[_Window] = []
    opened: tuple[int, float] | None = None
    for seq, event in turn.events:
        if isinstance(event, PlanCacheDecided) and event.layer in _PLAN_LAYERS:
            opened = (seq, event.timestamp)
        elif isinstance(event, PlanExecuted):
            start_seq, start = opened if opened is not None else (seq, event.timestamp)
            attributes: dict[str, AttributeValue] = {
                "keel.plan.source": event.source,
                "keel.plan.status": event.status,
                "keel.plan.shape_hash": event.shape_hash,
                "keel.plan.steps_run": event.steps_run,
            }
            if event.entry_id is not None:
                attributes["keel.plan.entry_id"] = event.entry_id
            if event.error_code is not None:
                attributes["error.type"] = event.error_code
            windows.append(
                _Window(
                    start_seq=start_seq,
                    end_seq=seq + 1,
                    start=start,
                    end=event.timestamp,
                    name=f"plan {event.source}",
                    attributes=attributes,
                )
            )
            opened = None
    return windows


def _innermost(windows: Sequence[_Window], seq: int) -> _Window | None:
    best: _Window | None = None
    for window in windows:
        if window.start_seq < seq < window.end_seq and (
            best is None or window.start_seq > best.start_seq
        ):
            best = window
    return best


class _Builder:
    """Creates the spans of one run."""

    def __init__(self, tracer: Tracer, options: SpanOptions, record: RunRecord) -> None:
        self.tracer = tracer
        self.options = options
        self.record = record
        self.starts: list[ToolStart] = list(record.tool_starts)

    def span(
        self,
        name: str,
        parent: Context,
        start: float,
        end: float,
        attributes: Mapping[str, AttributeValue],
        *,
        kind: SpanKind = SpanKind.INTERNAL,
        error: str | None = None,
    ) -> Span:
        span = self.tracer.start_span(
            name, context=parent, kind=kind, attributes=attributes, start_time=_ns(start)
        )
        if error is not None:
            span.set_status(Status(StatusCode.ERROR, error))
        span.end(end_time=_ns(max(start, end)))
        return span

    def turn(self, turn: _Turn, parent: Context) -> None:
        ended = next((e for _, e in turn.events if isinstance(e, TurnEnded)), None)
        stop = ended.stop_reason if ended is not None else "error"
        attributes: dict[str, AttributeValue] = {
            genai.OPERATION: genai.INVOKE_AGENT,
            genai.AGENT_NAME: self.options.agent,
            genai.CONVERSATION_ID: self.record.conversation_id,
            "keel.turn.id": turn.started.turn_id,
            "keel.turn.stop_reason": stop,
        }
        detail = ended.metadata.get("detail") if ended is not None else None
        if isinstance(detail, str):
            attributes["keel.turn.stop_detail"] = detail
        for timed in stage_timings(event for _, event in turn.events):
            attributes[f"keel.stage.{timed.stage}.ms"] = timed.duration_ms
        span = self.tracer.start_span(
            f"{genai.INVOKE_AGENT} {self.options.agent}",
            context=parent,
            attributes=attributes,
            start_time=_ns(turn.started.timestamp),
        )
        if not span.is_recording():  # not sampled (OTEL_TRACES_SAMPLER): nothing under it
            span.end()
            return
        if stop == "error" or (self.record.failed and ended is None):
            span.set_status(Status(StatusCode.ERROR, f"turn stopped: {stop}"))
        self._decisions(span, turn)
        inside = trace.set_span_in_context(span)
        self._children(turn, inside)
        span.end(end_time=_ns(max(turn.end, turn.started.timestamp)))

    def _children(self, turn: _Turn, inside: Context) -> None:
        windows = sorted(_steps(turn) + _plans(turn), key=lambda w: w.start_seq)
        for window in windows:
            holder = _innermost([w for w in windows if w is not window], window.start_seq)
            context = trace.set_span_in_context(holder.span) if holder and holder.span else inside
            window.span = self.span(
                window.name, context, window.start, window.end, window.attributes
            )
        # `before`: the stamp of the events emitted before the current ones (a tool ran since).
        before = stamp = turn.started.timestamp
        for seq, event in turn.events:
            if event.timestamp != stamp:
                before, stamp = stamp, event.timestamp
            if not isinstance(event, ModelCalled | ToolExecuted | ToolCallRefused):
                continue
            holder = _innermost(windows, seq)
            context = trace.set_span_in_context(holder.span) if holder and holder.span else inside
            if isinstance(event, ModelCalled):
                self.model(event, context)
            elif isinstance(event, ToolExecuted):
                self.tool(event, context, before)
            else:
                self.refused(event, context)
        last = turn.events[-1][0]
        for commit in self.record.commits:
            if turn.start_seq <= commit.first_seq <= last:
                self.commit(commit, inside)

    def _decisions(self, span: Span, turn: _Turn) -> None:
        for _, event in turn.events:
            attributes: dict[str, AttributeValue]
            if isinstance(event, RoutingDecided):
                attributes = {"keel.routing.source": event.source}
                if event.skill_id is not None:
                    attributes["keel.skill.id"] = event.skill_id
                if event.tier is not None:
                    attributes["keel.model.tier"] = event.tier
                name = "routing_decided"
            elif isinstance(event, PlanCacheDecided):
                attributes = {
                    "keel.plan.layer": event.layer,
                    "keel.plan.hit": event.hit,
                    "keel.plan.reason": event.reason,
                }
                name = "plan_cache_decided"
            elif isinstance(event, PausePointCreated):
                attributes = {"keel.pause.id": event.pause_id, genai.TOOL_NAME: event.tool_name}
                name = "pause_point_created"
            elif isinstance(event, PausePointResolved):
                attributes = {"keel.pause.id": event.pause_id}
                attributes["keel.pause.approved"] = event.approved
                name = "pause_point_resolved"
            elif isinstance(event, HistoryCompressed):
                attributes = {
                    "keel.history.tokens_before": event.tokens_before,
                    "keel.history.tokens_after": event.tokens_after,
                    "keel.history.dropped_messages": event.dropped_messages,
                }
                name = "history_compressed"
            else:
                continue
            span.add_event(name, attributes, timestamp=_ns(event.timestamp))

    def model(self, event: ModelCalled, parent: Context) -> None:
        provider = self.options.provider_of(event.model, event.tier)
        attributes: dict[str, AttributeValue] = {
            genai.OPERATION: genai.CHAT,
            genai.PROVIDER: provider,
            genai.SYSTEM: provider,
            genai.REQUEST_MODEL: event.model,
            genai.RESPONSE_MODEL: event.model,
            genai.INPUT_TOKENS: event.input_tokens,
            genai.OUTPUT_TOKENS: event.output_tokens,
            genai.CONVERSATION_ID: self.record.conversation_id,
            "keel.model.tier": event.tier,
        }
        # Older logs (before schema v6) have no cache counts: absent, not zero.
        cached = getattr(event, "cached_input_tokens", None)
        if isinstance(cached, int):
            attributes[genai.CACHE_READ_TOKENS] = cached
        written = getattr(event, "cache_write_tokens", None)
        if isinstance(written, int):
            attributes[genai.CACHE_CREATION_TOKENS] = written
        if event.cost is not None:
            attributes["keel.model.cost"] = event.cost
        meta = event.metadata
        for key in ("tier_reason", "purpose"):
            value = meta.get(key)
            if isinstance(value, str):
                attributes[f"keel.model.{key}"] = value
        finish = _finish_reason(meta)
        if finish is not None:
            attributes[genai.FINISH_REASONS] = (finish,)
        if self.options.capture_content:
            request = meta.get("request")
            messages = request.get("messages") if isinstance(request, Mapping) else None
            system, inputs = genai.chat_messages(messages)
            if system is not None:
                attributes[genai.SYSTEM_INSTRUCTIONS] = system
            if inputs is not None:
                attributes[genai.INPUT_MESSAGES] = inputs
            outputs = genai.output_messages(meta.get("reply"), finish)
            if outputs is not None:
                attributes[genai.OUTPUT_MESSAGES] = outputs
        end = event.timestamp
        self.span(
            f"{genai.CHAT} {event.model}",
            parent,
            end - event.latency_ms / 1000,
            end,
            attributes,
            kind=SpanKind.CLIENT,
        )

    def _started(self, name: str, before: float, fallback: float) -> float:
        """When the tool `name` that ended at `before` started (its `tool_started`)."""
        for index, start in enumerate(self.starts):
            if start.name == name and start.at <= before:
                del self.starts[index]
                return start.at
        return fallback

    def tool(self, event: ToolExecuted, parent: Context, previous: float) -> None:
        attributes = self._tool_attributes(event.tool_name, event.tool_call_id)
        attributes["keel.tool.source"] = event.source
        attributes["keel.tool.outcome"] = "error" if event.is_error else "ok"
        if event.mcp_server is not None:
            attributes["keel.tool.mcp_server"] = event.mcp_server
        plan = event.metadata.get("plan")
        if isinstance(plan, str):
            attributes["keel.plan.source"] = plan
        error = None
        if event.is_error:
            error = event.error_message or event.error_code or "tool error"
            attributes[genai.ERROR_TYPE] = event.error_code or "_OTHER"
        if self.options.capture_content:
            attributes[genai.TOOL_ARGUMENTS] = json.dumps(to_plain(event.arguments), default=str)
            attributes[genai.TOOL_RESULT] = event.result
        start = self._started(event.tool_name, event.timestamp, previous)
        name = f"{genai.EXECUTE_TOOL} {event.tool_name}"
        self.span(name, parent, start, event.timestamp, attributes, error=error)

    def refused(self, event: ToolCallRefused, parent: Context) -> None:
        attributes = self._tool_attributes(event.tool_name, event.tool_call_id)
        attributes["keel.tool.outcome"] = "refused"
        attributes["keel.refusal.code"] = event.code
        attributes["keel.refusal.retryable"] = event.retryable
        if self.options.capture_content:
            attributes[genai.TOOL_ARGUMENTS] = event.arguments
        name = f"{genai.EXECUTE_TOOL} {event.tool_name}"
        self.span(name, parent, event.timestamp, event.timestamp, attributes)

    def _tool_attributes(self, name: str, call_id: str) -> dict[str, AttributeValue]:
        return {
            genai.OPERATION: genai.EXECUTE_TOOL,
            genai.TOOL_NAME: name,
            genai.TOOL_CALL_ID: call_id,
            genai.TOOL_TYPE: "function",
        }

    def commit(self, commit: Commit, parent: Context) -> None:
        attributes: dict[str, AttributeValue] = {
            "keel.store.first_seq": commit.first_seq,
            "keel.store.last_seq": commit.last_seq,
            "keel.store.events": commit.last_seq - commit.first_seq + 1,
        }
        self.span("keel.store.commit", parent, commit.stamped, commit.stored, attributes)


def _finish_reason(meta: Mapping[str, object]) -> str | None:
    """The provider's finish reason, when the event recorded one."""
    for key in ("finish_reason", "stop_reason"):
        value = meta.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def export_run(tracer: Tracer, options: SpanOptions, record: RunRecord, parent: Context) -> None:
    """Create (and end, so they are exported) the spans of `record` under `parent`."""
    builder = _Builder(tracer, options, record)
    for turn in _turns(record):
        builder.turn(turn, parent)
