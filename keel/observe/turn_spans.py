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
from typing import TYPE_CHECKING, cast

from keel.events.base import to_plain
from keel.events.model import (
    Event,
    HistoryCompressed,
    ModelCalled,
    PausePointCreated,
    PausePointResolved,
    PlanCacheDecided,
    RoutingDecided,
    StagesTimed,
    StageTimed,
    ToolCallRefused,
    ToolExecuted,
)
from keel.observe import genai, otlp
from keel.observe.digest import DECISION_KINDS, STAGE_KINDS, WINDOW_KINDS, Turn, digest
from keel.observe.otlp import AttributeValue
from keel.observe.record import Commit, RunRecord, ToolStart
from keel.observe.span_ids import Parent, new_span_id
from keel.observe.span_windows import innermost, turn_windows

if TYPE_CHECKING:
    from collections.abc import Callable

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
    model_fields: dict[tuple[object, ...], tuple[bytes, bytes, bytes]] = field(
        default_factory=dict, compare=False
    )
    """(model, tier, tokens..., cost, tier reason, purpose, finish reason) -> the encoded
    name and attributes of its model spans (filled as spans are built)."""
    tool_fields: dict[tuple[str, str, bool, str | None], tuple[bytes, bytes]] = field(
        default_factory=dict, compare=False
    )
    """(tool, source, failed, MCP server) -> the encoded name and attributes its spans
    share."""


def _commit_fields(commits: Sequence[Commit]) -> tuple[bytes, ...]:
    """The turn's commits folded: how many, their events, total and longest time (ms)."""
    events = 0
    total = longest = 0.0
    for first_seq, last_seq, stamped, stored in commits:
        events += last_seq - first_seq + 1
        took = stored - stamped
        if took > 0.0:
            total += took
            if took > longest:
                longest = took
    f = otlp.field
    return (
        f("keel.store.commits", len(commits)),
        f("keel.store.events", events),
        f("keel.store.commit_ms", total * 1000),
        f("keel.store.commit_max_ms", longest * 1000),
    )


def _stage_fields(turn: Turn) -> list[bytes]:
    """`keel.stage.<stage>.ms` of the turn's `stages_timed` (or older `stage_timed`s)."""
    found: list[bytes] = []
    for event in turn.noted:
        kind = type(event)
        if kind is StagesTimed:
            for stage, ms in cast(StagesTimed, event).durations_ms.items():
                if type(ms) is float or type(ms) is int:
                    found.append((_STAGE_FIELDS.get(stage) or _stage_field(stage))(ms))
        elif kind is StageTimed:
            timed = cast(StageTimed, event)
            found.append(_stage_field(timed.stage)(timed.duration_ms))
    return found


_STAGE_FIELDS: dict[str, Callable[[float], bytes]] = {}
"""Stage -> the writer of its `keel.stage.<stage>.ms` field (`otlp.float_writer`)."""


def _stage_field(stage: str) -> Callable[[float], bytes]:
    found = _STAGE_FIELDS.get(stage)
    if found is None:
        if len(_STAGE_FIELDS) >= 256:
            _STAGE_FIELDS.clear()
        found = _STAGE_FIELDS[stage] = otlp.float_writer(f"keel.stage.{stage}.ms")
    return found


_EVENTS: dict[tuple[object, ...], tuple[bytes, bytes]] = {}
"""(kind, its attribute values...) -> its span event's field (`otlp.event_parts`): decisions
repeat, but for their time."""


def _event_parts(event: Event, key: tuple[object, ...]) -> tuple[bytes, bytes]:
    """The span event of a decision, pause point or compression (`_EVENTS`)."""
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
    else:
        compressed = cast(HistoryCompressed, event)
        attributes = {
            "keel.history.tokens_before": compressed.tokens_before,
            "keel.history.tokens_after": compressed.tokens_after,
            "keel.history.dropped_messages": compressed.dropped_messages,
        }
        name = "history_compressed"
    if len(_EVENTS) >= 1024:
        _EVENTS.clear()
    found = _EVENTS[key] = otlp.event_parts(name, attributes)
    return found


def _event_key(event: Event) -> tuple[object, ...]:
    """What a decision's span event holds, but its time."""
    kind = type(event)
    if kind is RoutingDecided:
        routed = cast(RoutingDecided, event)
        return (kind, routed.source, routed.skill_id, routed.tier)
    if kind is PlanCacheDecided:
        decided = cast(PlanCacheDecided, event)
        return (kind, decided.layer, decided.hit, decided.reason)
    if kind is PausePointCreated:
        created = cast(PausePointCreated, event)
        return (kind, created.pause_id, created.tool_name)
    if kind is PausePointResolved:
        resolved = cast(PausePointResolved, event)
        return (kind, resolved.pause_id, resolved.approved)
    compressed = cast(HistoryCompressed, event)
    return (
        kind,
        compressed.tokens_before,
        compressed.tokens_after,
        compressed.dropped_messages,
    )


_TURN_HEADS: dict[str, tuple[bytes, bytes]] = {}
"""Agent name -> its turn spans' name and kind, and first attributes."""


def _turn_head(agent: str) -> tuple[bytes, bytes]:
    found = _TURN_HEADS.get(agent)
    if found is None:
        if len(_TURN_HEADS) >= 64:
            _TURN_HEADS.clear()
        named = otlp.name_kind(f"{genai.INVOKE_AGENT} {agent}", otlp.INTERNAL)
        fields = otlp.field(genai.OPERATION, genai.INVOKE_AGENT) + otlp.field(
            genai.AGENT_NAME, agent
        )
        found = _TURN_HEADS[agent] = (named, fields)
    return found


def _id(value: int) -> bytes:
    return value.to_bytes(8, "big")


class _Builder:
    """Encodes the spans of one run."""

    __slots__ = (
        "conversation",
        "new_id",
        "options",
        "parent",
        "put",
        "record",
        "spans",
        "starts",
    )

    def __init__(
        self,
        options: SpanOptions,
        record: RunRecord,
        parent: Parent,
        new_id: Callable[[], int],
    ) -> None:
        self.options = options
        self.record = record
        self.put = otlp.SpanWriter(parent.trace_id.to_bytes(16, "big")).put
        self.parent = otlp.parent_field(_id(parent.span_id)) if parent.span_id is not None else b""
        self.new_id = new_id
        self.starts: list[ToolStart] = list(record.tool_starts)
        self.conversation = otlp.text_field(genai.CONVERSATION_ID, record.conversation_id)
        self.spans: list[bytes] = []

    def span(
        self,
        name: str,
        parent: bytes,
        start: float,
        end: float,
        values: bytes,
        kind: int = otlp.INTERNAL,
    ) -> bytes:
        """Encode one span under `parent` (a `parent_field`); its id."""
        own = self.new_id().to_bytes(8, "big")
        named = otlp.name_kind(name, kind)
        self.spans.append(self.put(own, parent, named, int(start * 1e9), int(end * 1e9), values))
        return own

    def turn(self, turn: Turn) -> None:
        ended = turn.ended
        stop = ended.stop_reason if ended is not None else "error"
        f = otlp.field
        named, head = _turn_head(self.options.agent)
        values = [
            head,
            otlp.text_field("keel.turn.id", turn.started.turn_id),
            f("keel.turn.stop_reason", stop),
            self.conversation,
        ]
        detail = ended.metadata.get("detail") if ended is not None and ended.metadata else None
        if isinstance(detail, str):
            values.append(f("keel.turn.stop_detail", detail))
        if not turn.kinds.isdisjoint(STAGE_KINDS):
            values += _stage_fields(turn)
        if turn.commits:
            values += _commit_fields(turn.commits)
        if not turn.kinds.isdisjoint(DECISION_KINDS):
            values += self._decisions(turn)
        if stop == "error" or (self.record.failed and ended is None):
            values.append(otlp.status(f"turn stopped: {stop}"))
        own = self.new_id().to_bytes(8, "big")
        self._children(turn, otlp.parent_field(own))
        start_ns, end_ns = int(turn.started.timestamp * 1e9), int(turn.end * 1e9)
        self.spans.append(self.put(own, self.parent, named, start_ns, end_ns, b"".join(values)))

    def _children(self, turn: Turn, inside: bytes) -> None:
        windows = None if turn.kinds.isdisjoint(WINDOW_KINDS) else turn_windows(turn)
        if windows:
            for window in windows:
                holder = innermost([w for w in windows if w is not window], window.start_seq)
                context = otlp.parent_field(holder.span_id) if holder and holder.span_id else inside
                values = otlp.attributes(window.attributes)
                window.span_id = self.span(window.name, context, window.start, window.end, values)
        model, tool = self.model, self.tool
        for seq, event, before in turn.calls:
            context = inside
            if windows:
                holder = innermost(windows, seq)
                if holder and holder.span_id:
                    context = otlp.parent_field(holder.span_id)
            if isinstance(event, ModelCalled):  # isinstance, not `cast` (a call per event)
                model(event, context)
            elif isinstance(event, ToolExecuted):
                tool(event, context, before)
            elif isinstance(event, ToolCallRefused):
                self.refused(event, context)
        for commit in turn.commits:
            if commit.stored - commit.stamped >= SLOW_COMMIT_SECONDS:  # `commit.seconds`
                self.commit(commit, inside)

    def _decisions(self, turn: Turn) -> list[bytes]:
        """The span event fields of the turn's decisions, pause points and compressions."""
        found: list[bytes] = []
        pack = otlp.pack_fixed64
        for event in turn.noted:
            if type(event) in DECISION_KINDS:
                key = _event_key(event)
                head, tail = _EVENTS.get(key) or _event_parts(event, key)
                found.append(b"".join((head, pack(_ns(event.timestamp)), tail)))
        return found

    def model(self, event: ModelCalled, parent: bytes) -> None:
        meta = event.metadata
        reason: str | None = None
        purpose: str | None = None
        finish: str | None = None
        if meta:
            value = meta.get("tier_reason")
            if isinstance(value, str):
                reason = value
            value = meta.get("purpose")
            if isinstance(value, str):
                purpose = value
            finish = _finish_reason(meta)
        key = (
            event.model,
            event.tier,
            event.input_tokens,
            event.output_tokens,
            event.cached_input_tokens,
            event.cache_write_tokens,
            event.cost,
            reason,
            purpose,
            finish,
        )
        shared = self.options.model_fields.get(key)
        if shared is None:
            shared = self._model_fields(event, key, (reason, purpose, finish))
        named, before, after = shared
        values = b"".join((before, self.conversation, after))
        if meta and self.options.capture_content:
            values += self._contents(meta, finish)
        end = event.timestamp
        start = end - event.latency_ms / 1000
        own = self.new_id().to_bytes(8, "big")
        self.spans.append(self.put(own, parent, named, int(start * 1e9), int(end * 1e9), values))

    def _model_fields(
        self, event: ModelCalled, key: tuple[object, ...], noted: tuple[str | None, ...]
    ) -> tuple[bytes, bytes, bytes]:
        """(name and kind, the attributes before the conversation id, those after) of a
        model span, which the event's model, tier, tokens, cost and noted metadata decide
        (memoised: the same call costs the same, turn after turn)."""
        provider = self.options.provider_of(event.model, event.tier)
        attributes: dict[str, AttributeValue] = {
            genai.OPERATION: genai.CHAT,
            genai.PROVIDER: provider,
            genai.SYSTEM: provider,
            genai.REQUEST_MODEL: event.model,
            genai.RESPONSE_MODEL: event.model,
            genai.INPUT_TOKENS: event.input_tokens,
            genai.OUTPUT_TOKENS: event.output_tokens,
            genai.CACHE_READ_TOKENS: event.cached_input_tokens,
            genai.CACHE_CREATION_TOKENS: event.cache_write_tokens,
            "keel.model.tier": event.tier,
        }
        if event.cost is not None:
            attributes["keel.model.cost"] = event.cost
        reason, purpose, finish = noted
        after = [
            otlp.field(f"keel.model.{name}", value)
            for name, value in (("tier_reason", reason), ("purpose", purpose))
            if value is not None
        ]
        if finish is not None:
            after.append(otlp.field(genai.FINISH_REASONS, (finish,)))
        named = otlp.name_kind(f"{genai.CHAT} {event.model}", otlp.CLIENT)
        memo = self.options.model_fields
        if len(memo) >= 1024:
            memo.clear()
        found = memo[key] = (named, otlp.attributes(attributes), b"".join(after))
        return found

    def _contents(self, meta: Mapping[str, object], finish: str | None) -> bytes:
        """The opt-in prompt and completion attributes."""
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
        return otlp.attributes(attributes)

    def _started(self, name: str, before: float, fallback: float) -> float:
        """When the tool `name` that ended at `before` started (its `tool_started`)."""
        starts = self.starts
        for index, (started, at) in enumerate(starts):
            if started == name and at <= before:
                del starts[index]
                return at
        return fallback

    def tool(self, event: ToolExecuted, parent: bytes, previous: float) -> None:
        failed = event.is_error
        key = (event.tool_name, event.source, failed, event.mcp_server)
        shared = self.options.tool_fields.get(key)
        if shared is None:
            shared = self._tool_fields(event, key)
        named, values = shared
        values += otlp.text_field(genai.TOOL_CALL_ID, event.tool_call_id)
        meta = event.metadata
        if meta:
            plan = meta.get("plan")
            if isinstance(plan, str):
                values += otlp.field("keel.plan.source", plan)
        if failed:
            values += otlp.field(genai.ERROR_TYPE, event.error_code or "_OTHER")
        if self.options.capture_content:
            arguments = json.dumps(to_plain(event.arguments), default=str)
            values += otlp.field(genai.TOOL_ARGUMENTS, arguments)
            values += otlp.field(genai.TOOL_RESULT, event.result)
        if failed:
            values += otlp.status(event.error_message or event.error_code or "tool error")
        end = event.timestamp
        start = self._started(event.tool_name, end, previous)
        own = self.new_id().to_bytes(8, "big")
        self.spans.append(self.put(own, parent, named, int(start * 1e9), int(end * 1e9), values))

    def _tool_fields(
        self, event: ToolExecuted, key: tuple[str, str, bool, str | None]
    ) -> tuple[bytes, bytes]:
        """(name and kind, the attributes its spans share) of a tool's runs (memoised)."""
        attributes = self._tool_attributes(event.tool_name)
        attributes["keel.tool.source"] = event.source
        attributes["keel.tool.outcome"] = "error" if event.is_error else "ok"
        if event.mcp_server is not None:
            attributes["keel.tool.mcp_server"] = event.mcp_server
        memo = self.options.tool_fields
        if len(memo) >= 1024:
            memo.clear()
        named = otlp.name_kind(f"{genai.EXECUTE_TOOL} {event.tool_name}", otlp.INTERNAL)
        found = memo[key] = (named, otlp.attributes(attributes))
        return found

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
    turns: Sequence[Turn] | None = None,
) -> list[bytes]:
    """The encoded spans (`otlp.span`) of `record`'s turns under `parent` (whose sampling
    the caller decided); `new_id` makes span ids; `turns` is `digest(record)` when the
    caller has it."""
    builder = _Builder(options, record, parent, new_id)
    for turn in digest(record) if turns is None else turns:
        builder.turn(turn)
    return builder.spans
