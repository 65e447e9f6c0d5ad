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
| `keel_trace_spans_exported_total` | counter | |
| `keel_trace_spans_dropped_total` | counter | `reason` (queue_full, export_failed) |

Token kinds: `input`, `output`, `cached_input`, `cache_write` (the last two are part of
`input`). Active conversations: those with a turn in the last `active_window` seconds.

Counting is plain Python: each metric is a dict from label values to a number (a
histogram's to its bucket counts, sum and count), and one collector turns them into the
client's metric families when `/metrics` is scraped. A run costs a few dict updates per
event, not the client's locked `labels().inc()`. Everything happens on the event loop's
thread (a run is counted when it finishes; `/metrics` is an async route).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from typing import cast

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.metrics_core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString as _untyped_go_float

from keel.events.model import (
    Event,
    ModelCalled,
    PlanCacheDecided,
    ToolCallRefused,
    ToolExecuted,
    TurnEnded,
    TurnStarted,
)
from keel.observe.export import ExportStats
from keel.observe.record import RunRecord

TURN_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
MODEL_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120)
COMMIT_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5)
ACTIVE_WINDOW_SECONDS = 300.0

METRICS_CONTENT_TYPE = CONTENT_TYPE_LATEST
"""The Prometheus text format's media type, for the `/metrics` answer."""

Labels = tuple[str, ...]
_go_float = cast("Callable[[float], str]", _untyped_go_float)
"""The client's own `le` formatting (`1.0`, `+Inf`)."""


_ERROR: Labels = ("error",)
_PRUNE_FLOOR = 4096
"""Conversations remembered for `keel_conversations_active` before the first prune."""


def _ignored(_event: Event) -> None:
    """`observe` handles turns itself; their kinds are in the handlers to be found."""


class Count:
    """A counter: label values -> total."""

    __slots__ = ("documentation", "labels", "name", "values")

    def __init__(self, name: str, documentation: str, *labels: str) -> None:
        self.name = name
        self.documentation = documentation
        self.labels = labels
        self.values: dict[Labels, float] = {}

    def inc(self, labels: Labels, amount: float = 1.0) -> None:
        self.values[labels] = self.values.get(labels, 0.0) + amount

    def family(self) -> Metric:
        family = CounterMetricFamily(self.name, self.documentation, labels=self.labels)
        for labels, value in self.values.items():
            family.add_metric(list(labels), value)
        return family


class Spread:
    """A histogram: label values -> [count per bucket (+Inf last), sum]."""

    __slots__ = ("bounds", "documentation", "labels", "name", "values")

    def __init__(
        self, name: str, documentation: str, bounds: Sequence[float], *labels: str
    ) -> None:
        self.name = name
        self.documentation = documentation
        self.labels = labels
        self.bounds = tuple(float(b) for b in bounds)
        self.values: dict[Labels, list[float]] = {}

    def observe(self, labels: Labels, value: float) -> None:
        row = self.values.get(labels)
        if row is None:
            row = self.values[labels] = [0.0] * (len(self.bounds) + 2)
        row[bisect_left(self.bounds, value)] += 1  # `le` is inclusive
        row[-1] += value

    def family(self) -> Metric:
        family = HistogramMetricFamily(self.name, self.documentation, labels=self.labels)
        edges = [*(_go_float(b) for b in self.bounds), "+Inf"]
        for labels, row in self.values.items():
            running, buckets = 0.0, []
            for edge, count in zip(edges, row, strict=False):
                running += count
                buckets.append((edge, running))
            family.add_metric(list(labels), buckets, row[-1])
        return family


class _Families(Collector):
    """Hands the registry the metrics' families at scrape time."""

    def __init__(self, metrics: TurnMetrics) -> None:
        self._metrics = metrics

    def collect(self) -> Iterator[Metric]:
        return self._metrics.families()

    def describe(self) -> Iterator[Metric]:
        return iter(())


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
        self.registry = CollectorRegistry(auto_describe=False)
        self._now = now
        self._in_progress = in_progress
        self._window = active_window
        self._last_turn: dict[str, float] = {}
        """Conversation id -> its last turn's end (pruned at a scrape, and whenever it
        doubled since it was last pruned, so it stays bounded with no scrape)."""
        self._prune_at = _PRUNE_FLOOR
        self._export: Callable[[], ExportStats] | None = None
        self._declare_series()
        self._handlers: dict[type, Callable[[Event], None]] = {
            ModelCalled: self._model,
            ToolExecuted: self._tool,
            ToolCallRefused: self._refused,
            PlanCacheDecided: self._decided,
            TurnStarted: _ignored,
            TurnEnded: _ignored,
        }
        """The handler of each kind the metrics count (`observe` handles the turns')."""
        self._model_keys: dict[tuple[str, str], tuple[Labels, ...]] = {}
        """(tier, model) -> its label tuples: (tier, model) and one per token kind."""
        self.registry.register(_Families(self))

    def _declare_series(self) -> None:
        """The series the runs are counted into (and `_counted`, all of them)."""
        self.turns = Count("keel_turns", "Turns ended, by stop reason.", "stop_reason")
        self.turn_seconds = Spread(
            "keel_turn_duration_seconds",
            "Turn latency: turn_started to its last commit.",
            TURN_BUCKETS,
            "stop_reason",
        )
        self.model_calls = Count("keel_model_calls", "Model round trips.", "tier", "model")
        self.model_seconds = Spread(
            "keel_model_call_duration_seconds",
            "Model round-trip latency.",
            MODEL_BUCKETS,
            "tier",
            "model",
        )
        self.tokens = Count(
            "keel_model_tokens",
            "Tokens of model calls (cached_input and cache_write are part of input).",
            "tier",
            "model",
            "kind",
        )
        self.cost = Count(
            "keel_model_cost",
            "Cost of model calls whose price is configured, in the provider's currency.",
            "tier",
            "model",
        )
        self.tool_runs = Count("keel_tool_runs", "Tool runs, by outcome.", "tool", "outcome")
        self.tool_failures = Count(
            "keel_tool_failures", "Failed tool runs, by error code.", "tool", "error_code"
        )
        self.refusals = Count(
            "keel_tool_calls_refused",
            "Model tool calls the engine refused, by refusal code.",
            "code",
        )
        self.plan_decisions = Count(
            "keel_plan_cache_decisions",
            "Plan cascade decisions, by layer, hit and reason.",
            "layer",
            "hit",
            "reason",
        )
        self.commit_seconds = Spread(
            "keel_store_commit_duration_seconds",
            "Event store commits: a batch of events appended (and folded).",
            COMMIT_BUCKETS,
        )
        self._counted: tuple[Count | Spread, ...] = (
            self.turns,
            self.turn_seconds,
            self.model_calls,
            self.model_seconds,
            self.tokens,
            self.cost,
            self.tool_runs,
            self.tool_failures,
            self.refusals,
            self.plan_decisions,
            self.commit_seconds,
        )

    def watch_export(self, stats: Callable[[], ExportStats]) -> None:
        """Report the span exporter's counts (`keel_trace_spans_*`) from `stats`."""
        self._export = stats

    def families(self) -> Iterator[Metric]:
        """Every metric as the client's metric family (at scrape time)."""
        for metric in self._counted:
            yield metric.family()
        active = GaugeMetricFamily(
            "keel_conversations_active",
            f"Conversations with a turn in the last {self._window:g} seconds (this process).",
            value=self._active(),
        )
        yield active
        yield GaugeMetricFamily(
            "keel_turns_in_progress",
            "Runs in progress in this process.",
            value=float(self._in_progress()),
        )
        if self._export is not None:
            stats = self._export()
            yield CounterMetricFamily(
                "keel_trace_spans_exported",
                "Spans the trace exporter delivered.",
                value=stats.exported,
            )
            dropped = CounterMetricFamily(
                "keel_trace_spans_dropped",
                "Spans dropped instead of exported: the queue was full or the export failed.",
                labels=("reason",),
            )
            dropped.add_metric(["queue_full"], stats.dropped_queue_full)
            dropped.add_metric(["export_failed"], stats.dropped_export_failed)
            yield dropped

    def _active(self) -> float:
        self._prune(self._now())
        return float(len(self._last_turn))

    def _prune(self, now: float) -> None:
        horizon = now - self._window
        for key in [k for k, at in self._last_turn.items() if at < horizon]:
            del self._last_turn[key]
        self._prune_at = max(_PRUNE_FLOOR, 2 * len(self._last_turn))

    def observe(self, record: RunRecord) -> int:
        """Count what one run committed, in one pass over its events (events before its
        first `turn_started` belong to no turn and are not counted; a turn with no
        `turn_ended` counts as stop reason `error`). Returns the run's turns and calls
        (the spans a trace of it has at least)."""
        handlers = self._handlers
        started: float | None = None
        ended = True
        seen = 0
        for item in record.events:
            event = item[1]
            kind = type(event)
            handler = handlers.get(kind)
            if handler is None:
                continue
            if kind is TurnStarted:
                if not ended:  # the run failed before the engine could end that turn
                    self.turns.inc(_ERROR)
                started, ended = event.timestamp, False
                seen += 1
            elif started is None:
                continue
            elif kind is TurnEnded:
                if not ended:
                    ended = True
                    self._turn(record, cast(TurnEnded, event), started)
            else:
                handler(event)
                seen += kind is not PlanCacheDecided
        if not ended:
            self.turns.inc(_ERROR)
        commits = self.commit_seconds
        row = commits.values.get(())
        if row is None:
            row = commits.values[()] = [0.0] * (len(commits.bounds) + 2)
        bounds = commits.bounds
        for commit in record.commits:
            seconds = commit.stored - commit.stamped
            seconds = seconds if seconds > 0.0 else 0.0
            row[bisect_left(bounds, seconds)] += 1
            row[-1] += seconds
        return seen

    def _tool(self, event: Event) -> None:
        run = cast(ToolExecuted, event)
        if run.is_error:
            self.tool_runs.inc((run.tool_name, "error"))
            self.tool_failures.inc((run.tool_name, run.error_code or "unknown"))
        else:
            self.tool_runs.inc((run.tool_name, "ok"))

    def _refused(self, event: Event) -> None:
        self.refusals.inc((cast(ToolCallRefused, event).code,))

    def _decided(self, event: Event) -> None:
        decided = cast(PlanCacheDecided, event)
        hit = "true" if decided.hit else "false"
        self.plan_decisions.inc((decided.layer, hit, decided.reason))

    def _turn(self, record: RunRecord, event: TurnEnded, started: float | None) -> None:
        self.turns.inc((event.stop_reason,))
        last = self._last_turn
        last[record.conversation_id] = event.timestamp
        if len(last) > self._prune_at:
            self._prune(event.timestamp)
        if started is None:
            return
        stored = [c.stored for c in record.commits if c.stamped >= event.timestamp]
        end = min(stored) if stored else event.timestamp
        self.turn_seconds.observe((event.stop_reason,), max(0.0, end - started))

    def _model(self, event: Event) -> None:
        called = cast(ModelCalled, event)
        keys = self._model_keys.get((called.tier, called.model))
        if keys is None:
            keys = self._keys(called.tier, called.model)
        labels, input_key, output_key, cached_key, write_key = keys
        self.model_calls.inc(labels)
        self.model_seconds.observe(labels, called.latency_ms / 1000)
        tokens = self.tokens.values
        tokens[input_key] = tokens.get(input_key, 0.0) + called.input_tokens
        tokens[output_key] = tokens.get(output_key, 0.0) + called.output_tokens
        if called.cached_input_tokens:
            tokens[cached_key] = tokens.get(cached_key, 0.0) + called.cached_input_tokens
        if called.cache_write_tokens:
            tokens[write_key] = tokens.get(write_key, 0.0) + called.cache_write_tokens
        if called.cost is not None:
            self.cost.inc(labels, called.cost)

    def _keys(self, tier: str, model: str) -> tuple[Labels, ...]:
        if len(self._model_keys) >= 1024:
            self._model_keys.clear()
        keys = self._model_keys[(tier, model)] = (
            (tier, model),
            *((tier, model, kind) for kind in ("input", "output", "cached_input", "cache_write")),
        )
        return keys

    def exposition(self) -> bytes:
        """The metrics in Prometheus' text format."""
        return generate_latest(self.registry)
