"""A run's committed events as OTLP spans (protobuf bytes, `otlp`), after the run.

Nothing here runs in the turn loop, and no OpenTelemetry SDK span is made: each span is
encoded straight from the events (`run_spans`):

- a turn, `turn_started` to its last commit: `invoke_agent {agent}` (internal);
- a model call, ending at its `model_called` stamp, `latency_ms` long: `chat {model}`
  (client);
- a tool call, from the tool's start (else the commit before) to its `tool_executed`,
  and a refused call at its `tool_call_refused` (no duration): `execute_tool {tool}`;
- a block step, from `step_advanced` (or the block entered or resumed) to the next step or
  the block's end: `step {skill}/{block}/{step}`;
- a plan run, from the cascade's decision to `plan_executed`: `plan {source}`;
- store commits are folded into their turn's span (`keel.store.commits`, `.events`,
  `.commit_ms`, `.commit_max_ms`); a commit that took `SLOW_COMMIT_SECONDS` or more is
  also a span of its own, `keel.store.commit`.

Parents: a run's turns hang under the context the tap captured (the HTTP request's span);
a model or tool span hangs under the innermost step or plan whose events surround it, else
under its turn; slow commits hang under their turn. Routing and plan-cache decisions, pause
points and history compression are events of the turn span.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, cast

from keel.events.base import to_plain
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
    StagesTimed,
    StageTimed,
    StepAdvanced,
    ToolCallRefused,
    ToolExecuted,
    TurnEnded,
    TurnStarted,
)
from keel.observe import genai, otlp
from keel.observe.otlp import AttributeValue
from keel.observe.record import Commit, RunRecord, ToolStart
from keel.observe.span_ids import Parent, new_span_id

if TYPE_CHECKING:
    from collections.abc import Callable

_END = "END"
_PLAN_LAYERS = {"l0", "l1", "l3"}
SLOW_COMMIT_SECONDS = 0.1
"""A commit at least this long is a span of its own (every commit is counted in its turn)."""


def _ns(seconds: float) -> int:
    return int(seconds * 1e9)


@dataclass(frozen=True, kw_only=True, slots=True)
class SpanOptions:
    """What the spans are built with."""

    agent: str
    provider_of: Callable[[str, str], str]
    """(model id, tier) -> `gen_ai.provider.name`."""
    capture_content: bool = False
    model_fields: dict[tuple[str, str], bytes] = field(default_factory=dict, compare=False)
    """(model, tier) -> the encoded attributes its model spans share (filled as spans are
    built)."""
    tool_fields: dict[tuple[str, str, str, str | None], bytes] = field(
        default_factory=dict, compare=False
    )
    """(tool, source, outcome, MCP server) -> the encoded attributes its spans share."""


@dataclass(kw_only=True, slots=True)
class _Window:
    """A step or plan run: spans whose events fall strictly inside it hang under it."""

    start_seq: int
    end_seq: int
    start: float
    end: float
    name: str
    attributes: dict[str, AttributeValue]
    span_id: bytes = b""


@dataclass(kw_only=True, slots=True)
class _Turn:
    started: TurnStarted
    start_seq: int
    events: list[tuple[int, Event]] = field(default_factory=list)
    kinds: set[type] = field(default_factory=set)
    """The event types among `events` (a turn with no step or plan event skips those)."""
    ended: TurnEnded | None = None
    commits: list[Commit] = field(default_factory=list)
    end: float = 0.0


def _turns(record: RunRecord) -> list[_Turn]:
    """The run's turns, each with its events and commits, in one pass over each."""
    turns: list[_Turn] = []
    current: _Turn | None = None
    for item in record.events:
        event = item[1]
        kind = type(event)
        if kind is TurnStarted:
            started = cast(TurnStarted, event)
            current = _Turn(started=started, start_seq=item[0], end=event.timestamp)
            turns.append(current)
        if current is None:
            continue
        current.events.append(item)
        current.kinds.add(kind)
        if event.timestamp > current.end:
            current.end = event.timestamp
        if kind is TurnEnded:
            current.ended = cast(TurnEnded, event)
    for turn in turns:
        first, last = turn.start_seq, turn.events[-1][0]
        for commit in record.commits:
            if first <= commit.first_seq <= last:
                turn.commits.append(commit)
                if commit.stored > turn.end:
                    turn.end = commit.stored
    if turns and turns[-1].ended is None:
        turns[-1].end = max(turns[-1].end, record.ended_at)
    return turns


_STEP_KINDS = {
    StepAdvanced,
    FlowStarted,
    OrderedBlockResumed,
    OrderedBlockCompleted,
    OrderedBlockCancelled,
    OrderedBlockInterrupted,
}
_CALL_KINDS = {ModelCalled, ToolExecuted, ToolCallRefused}
_STAGE_KINDS = {StageTimed, StagesTimed}
_DECISION_KINDS = {
    RoutingDecided,
    PlanCacheDecided,
    PausePointCreated,
    PausePointResolved,
    HistoryCompressed,
}


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


def _stage_fields(turn: _Turn) -> list[bytes]:
    """`keel.stage.<stage>.ms` of the turn's `stages_timed` (or older `stage_timed`s)."""
    found: list[bytes] = []
    for _, event in turn.events:
        kind = type(event)
        if kind is StagesTimed:
            for stage, ms in cast(StagesTimed, event).durations_ms.items():
                if isinstance(ms, int | float):
                    found.append(otlp.field(_stage_key(stage), float(ms)))
        elif kind is StageTimed:
            timed = cast(StageTimed, event)
            found.append(otlp.field(_stage_key(timed.stage), float(timed.duration_ms)))
    return found


@lru_cache(maxsize=256)
def _stage_key(stage: str) -> str:
    return f"keel.stage.{stage}.ms"


def _id(value: int) -> bytes:
    return value.to_bytes(8, "big")


class _Builder:
    """Encodes the spans of one run."""

    def __init__(
        self,
        options: SpanOptions,
        record: RunRecord,
        parent: Parent,
        new_id: Callable[[], int],
    ) -> None:
        self.options = options
        self.record = record
        self.writer = otlp.SpanWriter(parent.trace_id.to_bytes(16, "big"))
        self.parent_id = _id(parent.span_id) if parent.span_id is not None else None
        self.new_id = new_id
        self.starts: list[ToolStart] = list(record.tool_starts)
        self.conversation = otlp.field(genai.CONVERSATION_ID, record.conversation_id)
        self.spans: list[bytes] = []

    def span(
        self,
        name: str,
        parent: bytes | None,
        start: float,
        end: float,
        values: bytes,
        kind: int = otlp.INTERNAL,
        error: str | None = None,
        span_id: bytes | None = None,
        events: Sequence[bytes] = (),
    ) -> bytes:
        """Encode one span; its id."""
        own = span_id if span_id is not None else _id(self.new_id())
        start_ns = int(start * 1e9)
        end_ns = int(end * 1e9)
        self.spans.append(
            self.writer.write(own, parent, name, kind, start_ns, end_ns, values, events, error)
        )
        return own

    def turn(self, turn: _Turn) -> None:
        ended = turn.ended
        stop = ended.stop_reason if ended is not None else "error"
        f = otlp.field
        values = [
            f(genai.OPERATION, genai.INVOKE_AGENT),
            f(genai.AGENT_NAME, self.options.agent),
            f("keel.turn.id", turn.started.turn_id),
            f("keel.turn.stop_reason", stop),
            self.conversation,
        ]
        detail = ended.metadata.get("detail") if ended is not None else None
        if isinstance(detail, str):
            values.append(f("keel.turn.stop_detail", detail))
        if turn.kinds & _STAGE_KINDS:
            values += _stage_fields(turn)
        commits = turn.commits
        if commits:
            times = [c.seconds for c in commits]
            values += (
                f("keel.store.commits", len(commits)),
                f("keel.store.events", sum(c.last_seq - c.first_seq + 1 for c in commits)),
                f("keel.store.commit_ms", sum(times) * 1000),
                f("keel.store.commit_max_ms", max(times) * 1000),
            )
        error = None
        if stop == "error" or (self.record.failed and ended is None):
            error = f"turn stopped: {stop}"
        own = _id(self.new_id())
        self._children(turn, own)
        decisions = self._decisions(turn) if turn.kinds & _DECISION_KINDS else ()
        self.span(
            f"{genai.INVOKE_AGENT} {self.options.agent}",
            self.parent_id,
            turn.started.timestamp,
            turn.end,
            b"".join(values),
            error=error,
            span_id=own,
            events=decisions,
        )

    def _children(self, turn: _Turn, inside: bytes) -> None:
        windows: list[_Window] = []
        if turn.kinds & _STEP_KINDS:
            windows += _steps(turn)
        if PlanExecuted in turn.kinds:
            windows += _plans(turn)
        windows.sort(key=lambda w: w.start_seq)
        for window in windows:
            holder = _innermost([w for w in windows if w is not window], window.start_seq)
            context = holder.span_id if holder and holder.span_id else inside
            window.span_id = self.span(
                window.name, context, window.start, window.end, otlp.attributes(window.attributes)
            )
        # `before`: the stamp of the events emitted before the current ones (a tool ran since).
        before = stamp = turn.started.timestamp
        for seq, event in turn.events:
            if event.timestamp != stamp:
                before, stamp = stamp, event.timestamp
            kind = type(event)
            if kind not in _CALL_KINDS:
                continue
            holder = _innermost(windows, seq) if windows else None
            context = holder.span_id if holder and holder.span_id else inside
            if kind is ModelCalled:
                self.model(cast(ModelCalled, event), context)
            elif kind is ToolExecuted:
                self.tool(cast(ToolExecuted, event), context, before)
            else:
                self.refused(cast(ToolCallRefused, event), context)
        for commit in turn.commits:
            if commit.seconds >= SLOW_COMMIT_SECONDS:
                self.commit(commit, inside)

    def _decisions(self, turn: _Turn) -> list[bytes]:
        found: list[bytes] = []
        for _, event in turn.events:
            if type(event) not in _DECISION_KINDS:
                continue
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
            found.append(otlp.event(name, _ns(event.timestamp), attributes))
        return found

    def _model_fields(self, model: str, tier: str) -> bytes:
        """The attributes every call of `model` on `tier` shares (memoised)."""
        memo = self.options.model_fields
        found = memo.get((model, tier))
        if found is None:
            if len(memo) >= 1024:
                memo.clear()
            provider = self.options.provider_of(model, tier)
            found = memo[(model, tier)] = otlp.attributes(
                {
                    genai.OPERATION: genai.CHAT,
                    genai.PROVIDER: provider,
                    genai.SYSTEM: provider,
                    genai.REQUEST_MODEL: model,
                    genai.RESPONSE_MODEL: model,
                    "keel.model.tier": tier,
                }
            )
        return found

    def model(self, event: ModelCalled, parent: bytes) -> None:
        f = otlp.field
        values = [
            self._model_fields(event.model, event.tier),
            f(genai.INPUT_TOKENS, event.input_tokens),
            f(genai.OUTPUT_TOKENS, event.output_tokens),
            self.conversation,
        ]
        # Older logs (before schema v6) have no cache counts: absent, not zero.
        cached = getattr(event, "cached_input_tokens", None)
        if isinstance(cached, int):
            values.append(f(genai.CACHE_READ_TOKENS, cached))
        written = getattr(event, "cache_write_tokens", None)
        if isinstance(written, int):
            values.append(f(genai.CACHE_CREATION_TOKENS, written))
        if event.cost is not None:
            values.append(f("keel.model.cost", event.cost))
        meta = event.metadata
        for key in ("tier_reason", "purpose"):
            value = meta.get(key)
            if isinstance(value, str):
                values.append(f(f"keel.model.{key}", value))
        finish = _finish_reason(meta)
        if finish is not None:
            values.append(f(genai.FINISH_REASONS, (finish,)))
        if self.options.capture_content:
            attributes: dict[str, AttributeValue] = {}
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
            values.append(otlp.attributes(attributes))
        end = event.timestamp
        self.span(
            f"{genai.CHAT} {event.model}",
            parent,
            end - event.latency_ms / 1000,
            end,
            b"".join(values),
            kind=otlp.CLIENT,
        )

    def _started(self, name: str, before: float, fallback: float) -> float:
        """When the tool `name` that ended at `before` started (its `tool_started`)."""
        for index, start in enumerate(self.starts):
            if start.name == name and start.at <= before:
                del self.starts[index]
                return start.at
        return fallback

    def tool(self, event: ToolExecuted, parent: bytes, previous: float) -> None:
        outcome = "error" if event.is_error else "ok"
        key = (event.tool_name, event.source, outcome, event.mcp_server)
        memo = self.options.tool_fields
        shared = memo.get(key)
        if shared is None:
            attributes = self._tool_attributes(event.tool_name)
            attributes["keel.tool.source"] = event.source
            attributes["keel.tool.outcome"] = outcome
            if event.mcp_server is not None:
                attributes["keel.tool.mcp_server"] = event.mcp_server
            if len(memo) >= 1024:
                memo.clear()
            shared = memo[key] = otlp.attributes(attributes)
        f = otlp.field
        values = [shared, f(genai.TOOL_CALL_ID, event.tool_call_id)]
        plan = event.metadata.get("plan") if event.metadata else None
        if isinstance(plan, str):
            values.append(f("keel.plan.source", plan))
        error = None
        if event.is_error:
            error = event.error_message or event.error_code or "tool error"
            values.append(f(genai.ERROR_TYPE, event.error_code or "_OTHER"))
        if self.options.capture_content:
            arguments = json.dumps(to_plain(event.arguments), default=str)
            values += (f(genai.TOOL_ARGUMENTS, arguments), f(genai.TOOL_RESULT, event.result))
        start = self._started(event.tool_name, event.timestamp, previous)
        name = f"{genai.EXECUTE_TOOL} {event.tool_name}"
        self.span(name, parent, start, event.timestamp, b"".join(values), error=error)

    def refused(self, event: ToolCallRefused, parent: bytes) -> None:
        attributes = self._tool_attributes(event.tool_name)
        attributes[genai.TOOL_CALL_ID] = event.tool_call_id
        attributes["keel.tool.outcome"] = "refused"
        attributes["keel.refusal.code"] = event.code
        attributes["keel.refusal.retryable"] = event.retryable
        if self.options.capture_content:
            attributes[genai.TOOL_ARGUMENTS] = event.arguments
        name = f"{genai.EXECUTE_TOOL} {event.tool_name}"
        self.span(name, parent, event.timestamp, event.timestamp, otlp.attributes(attributes))

    def _tool_attributes(self, name: str) -> dict[str, AttributeValue]:
        return {
            genai.OPERATION: genai.EXECUTE_TOOL,
            genai.TOOL_NAME: name,
            genai.TOOL_TYPE: "function",
        }

    def commit(self, commit: Commit, parent: bytes) -> None:
        attributes: dict[str, AttributeValue] = {
            "keel.store.first_seq": commit.first_seq,
            "keel.store.last_seq": commit.last_seq,
            "keel.store.events": commit.last_seq - commit.first_seq + 1,
        }
        values = otlp.attributes(attributes)
        self.span("keel.store.commit", parent, commit.stamped, commit.stored, values)


def _finish_reason(meta: Mapping[str, object]) -> str | None:
    """The provider's finish reason, when the event recorded one."""
    for key in ("finish_reason", "stop_reason"):
        value = meta.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def run_spans(
    options: SpanOptions,
    record: RunRecord,
    parent: Parent,
    new_id: Callable[[], int] = new_span_id,
) -> list[bytes]:
    """The encoded spans (`otlp.span`) of `record`'s turns under `parent` (whose sampling
    the caller decided); `new_id` makes span ids."""
    builder = _Builder(options, record, parent, new_id)
    for turn in _turns(record):
        builder.turn(turn)
    return builder.spans
