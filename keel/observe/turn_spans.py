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
from typing import TYPE_CHECKING

from keel.events.base import to_plain
from keel.events.model import (
    ModelCalled,
    ToolCallRefused,
    ToolExecuted,
)
from keel.observe import genai, otlp
from keel.observe.digest import DECISION_KINDS, STAGE_KINDS, WINDOW_KINDS, Turn, digest
from keel.observe.otlp import AttributeValue
from keel.observe.record import Commit, RunRecord, ToolStart
from keel.observe.span_fields import (
    EVENT_PARTS,
    commit_fields,
    event_key,
    event_parts,
    finish_reason,
    stage_fields,
    turn_head,
)
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
        named, head = turn_head(self.options.agent)
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
            values += stage_fields(turn)
        if turn.commits:
            values += commit_fields(turn.commits)
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
                key = event_key(event)
                head, tail = EVENT_PARTS.get(key) or event_parts(event, key)
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
            finish = finish_reason(meta)
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
