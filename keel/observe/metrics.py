"""Prometheus metrics fed from each run's committed events (`TurnMetrics.observe`).

Every metric is in the app's own `CollectorRegistry` (none in the client's global one, so
several apps in one process count apart). Labels carry only names the project defines or
Keel's own codes (tiers, models, tools, stop reasons, refusal codes, plan layers): never a
conversation id, a user's words, or a tool name the model made up (refusals are counted by
code alone, since a refused call may name a tool that does not exist).

| metric | type | labels |
| --- | --- | --- |
| `keel_turns_total` | counter | `stop_reason` |
| `keel_turn_duration_seconds` | histogram | `stop_reason` |
| `keel_model_calls_total` | counter | `tier`, `model` |
| `keel_model_call_duration_seconds` | histogram | `tier`, `model` |
| `keel_model_tokens_total` | counter | `tier`, `model`, `kind` |
| `keel_model_cost_total` | counter | `tier`, `model` (the provider's currency units) |
| `keel_tool_runs_total` | counter | `tool`, `outcome` (ok, error) |
| `keel_tool_failures_total` | counter | `tool`, `error_code` |
| `keel_tool_calls_refused_total` | counter | `code` |
| `keel_plan_cache_decisions_total` | counter | `layer`, `hit`, `reason` |
| `keel_store_commit_duration_seconds` | histogram | |
| `keel_conversations_active` | gauge | |
| `keel_turns_in_progress` | gauge | |

Token kinds: `input`, `output`, `cached_input`, `cache_write` (the last two are part of
`input`). Active conversations: those with a turn in the last `active_window` seconds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from keel.events.model import (
    ModelCalled,
    PlanCacheDecided,
    ToolCallRefused,
    ToolExecuted,
    TurnEnded,
    TurnStarted,
)
from keel.observe.record import RunRecord

TURN_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
MODEL_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120)
COMMIT_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5)
ACTIVE_WINDOW_SECONDS = 300.0

METRICS_CONTENT_TYPE = CONTENT_TYPE_LATEST
"""The Prometheus text format's media type, for the `/metrics` answer."""


def _counter_in(registry: CollectorRegistry) -> Callable[..., Counter]:
    """`counter(name, help, *labels)`: a Counter registered in `registry`."""

    def counter(name: str, documentation: str, *labels: str) -> Counter:
        return Counter(name, documentation, list(labels), registry=registry)

    return counter


def _histogram_in(registry: CollectorRegistry) -> Callable[..., Histogram]:
    """`histogram(name, help, buckets, *labels)`: a Histogram registered in `registry`."""

    def histogram(
        name: str, documentation: str, buckets: Sequence[float], *labels: str
    ) -> Histogram:
        return Histogram(name, documentation, list(labels), buckets=buckets, registry=registry)

    return histogram


class TurnMetrics:
    """The app's metrics, fed one finished run at a time."""

    def __init__(
        self,
        *,
        now: Callable[[], float],
        in_progress: Callable[[], int] = lambda: 0,
        active_window: float = ACTIVE_WINDOW_SECONDS,
    ) -> None:
        """`now` is the engine's clock in epoch seconds; `in_progress` counts running turns."""
        self.registry = CollectorRegistry(auto_describe=True)
        self._now = now
        self._window = active_window
        self._last_turn: dict[str, float] = {}
        registry = self.registry
        counter, histogram = _counter_in(registry), _histogram_in(registry)
        self.turns = counter("keel_turns", "Turns ended, by stop reason.", "stop_reason")
        self.turn_seconds = histogram(
            "keel_turn_duration_seconds",
            "Turn latency: turn_started to its last commit.",
            TURN_BUCKETS,
            "stop_reason",
        )
        self.model_calls = counter("keel_model_calls", "Model round trips.", "tier", "model")
        self.model_seconds = histogram(
            "keel_model_call_duration_seconds",
            "Model round-trip latency.",
            MODEL_BUCKETS,
            "tier",
            "model",
        )
        self.tokens = counter(
            "keel_model_tokens",
            "Tokens of model calls (cached_input and cache_write are part of input).",
            "tier",
            "model",
            "kind",
        )
        self.cost = counter(
            "keel_model_cost",
            "Cost of model calls whose price is configured, in the provider's currency.",
            "tier",
            "model",
        )
        self.tool_runs = counter("keel_tool_runs", "Tool runs, by outcome.", "tool", "outcome")
        self.tool_failures = counter(
            "keel_tool_failures", "Failed tool runs, by error code.", "tool", "error_code"
        )
        self.refusals = counter(
            "keel_tool_calls_refused",
            "Model tool calls the engine refused, by refusal code.",
            "code",
        )
        self.plan_decisions = counter(
            "keel_plan_cache_decisions",
            "Plan cascade decisions, by layer, hit and reason.",
            "layer",
            "hit",
            "reason",
        )
        self.commit_seconds = histogram(
            "keel_store_commit_duration_seconds",
            "Event store commits: a batch of events appended (and folded).",
            COMMIT_BUCKETS,
        )
        self._gauges(in_progress, active_window)
        self._children: dict[tuple[object, ...], Any] = {}

    def _gauges(self, in_progress: Callable[[], int], active_window: float) -> None:
        """The two gauges read at scrape time: active conversations, runs in progress."""
        registry = self.registry
        active = Gauge(
            "keel_conversations_active",
            f"Conversations with a turn in the last {active_window:g} seconds (this process).",
            registry=registry,
        )
        active.set_function(self._active)
        running = Gauge(
            "keel_turns_in_progress", "Runs in progress in this process.", registry=registry
        )
        running.set_function(lambda: float(in_progress()))

    def _child(self, metric: Any, *labels: str) -> Any:
        """`metric.labels(*labels)`, cached (the client's lookup validates every call)."""
        key = (id(metric), *labels)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*labels)
        return child

    def _active(self) -> float:
        horizon = self._now() - self._window
        for key in [k for k, at in self._last_turn.items() if at < horizon]:
            del self._last_turn[key]
        return float(len(self._last_turn))

    def observe(self, record: RunRecord) -> None:
        """Count what one run committed."""
        started: float | None = None
        for _, event in record.events:
            if isinstance(event, ModelCalled):
                self._model(event)
            elif isinstance(event, ToolExecuted):
                outcome = "error" if event.is_error else "ok"
                self._child(self.tool_runs, event.tool_name, outcome).inc()
                if event.is_error:
                    code = event.error_code or "unknown"
                    self._child(self.tool_failures, event.tool_name, code).inc()
            elif isinstance(event, ToolCallRefused):
                self._child(self.refusals, event.code).inc()
            elif isinstance(event, PlanCacheDecided):
                hit = "true" if event.hit else "false"
                self._child(self.plan_decisions, event.layer, hit, event.reason).inc()
            elif isinstance(event, TurnStarted):
                started = event.timestamp
            elif isinstance(event, TurnEnded):
                self._turn(record, event, started)
                started = None
        if started is not None:  # the run failed before the engine could end the turn
            self._child(self.turns, "error").inc()
        for commit in record.commits:
            self.commit_seconds.observe(commit.seconds)

    def _turn(self, record: RunRecord, event: TurnEnded, started: float | None) -> None:
        self._child(self.turns, event.stop_reason).inc()
        self._last_turn[record.conversation_id] = event.timestamp
        if started is None:
            return
        stored = [c.stored for c in record.commits if c.stamped >= event.timestamp]
        end = min(stored) if stored else event.timestamp
        self._child(self.turn_seconds, event.stop_reason).observe(max(0.0, end - started))

    def _model(self, event: ModelCalled) -> None:
        tier, model = event.tier, event.model
        self._child(self.model_calls, tier, model).inc()
        self._child(self.model_seconds, tier, model).observe(event.latency_ms / 1000)
        self._child(self.tokens, tier, model, "input").inc(event.input_tokens)
        self._child(self.tokens, tier, model, "output").inc(event.output_tokens)
        cached = getattr(event, "cached_input_tokens", 0) or 0
        if cached:
            self._child(self.tokens, tier, model, "cached_input").inc(cached)
        written = getattr(event, "cache_write_tokens", 0) or 0
        if written:
            self._child(self.tokens, tier, model, "cache_write").inc(written)
        if event.cost is not None:
            self._child(self.cost, tier, model).inc(event.cost)

    def exposition(self) -> bytes:
        """The metrics in Prometheus' text format."""
        return generate_latest(self.registry)
