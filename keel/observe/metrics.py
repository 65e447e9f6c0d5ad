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

import logging
import threading
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterator
from typing import cast

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.metrics_core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

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
from keel.observe.metric_cells import Count, Labels, Spread
from keel.observe.record import RawRun, RunRecord, record_of

TURN_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
MODEL_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120)
COMMIT_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5)
_log = logging.getLogger("keel.observe")

FOLD_EVERY = 256
"""Runs `observe_later` keeps before it counts them (with no scrape in between): the
memory a scrape-less process holds for counting stays bounded."""

ACTIVE_WINDOW_SECONDS = 300.0

METRICS_CONTENT_TYPE = CONTENT_TYPE_LATEST
"""The Prometheus text format's media type, for the `/metrics` answer."""


_ERROR: Labels = ("error",)
_PRUNE_FLOOR = 4096
"""Conversations remembered for `keel_conversations_active` before the first prune."""


_MODEL, _TOOL, _REFUSED, _DECIDED, _STARTED, _ENDED = range(6)
_ROLES: dict[type, int] = {
    TurnStarted: _STARTED,
    ModelCalled: _MODEL,
    ToolExecuted: _TOOL,
    TurnEnded: _ENDED,
    ToolCallRefused: _REFUSED,
    PlanCacheDecided: _DECIDED,
}
"""What `observe` counts of each kind (nothing of the others)."""


class _ModelSeries:
    """One (tier, model)'s cells and latency row; a token kind's or the cost's cell is made
    when the first call has some (so the series exist in the order they were first seen)."""

    __slots__ = ("cache_write", "cached_input", "calls", "cost", "input", "labels", "output", "row")

    def __init__(self, metrics: TurnMetrics, labels: Labels) -> None:
        self.labels = labels
        self.calls = metrics.model_calls.cell(labels)
        self.row = metrics.model_seconds.row(labels)
        self.input = metrics.tokens.cell((*labels, "input"))
        self.output = metrics.tokens.cell((*labels, "output"))
        self.cached_input: list[float] | None = None
        self.cache_write: list[float] | None = None
        self.cost: list[float] | None = None


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
        self._model_series: dict[tuple[str, str], _ModelSeries] = {}
        """(tier, model) -> its cells."""
        self._model_bounds = self.model_seconds.bounds
        self._tool_cells: dict[str, list[list[float] | None]] = {}
        """Tool -> its `tool_runs` cells, ok and error (made at its first run of each)."""
        self._stop_cells: dict[str, tuple[list[float], list[float]]] = {}
        """Stop reason -> its `turns` cell and `turn_seconds` row."""
        self._turn_bounds = self.turn_seconds.bounds
        self._unfolded: deque[RawRun] = deque()
        """Runs reported with `observe_later`, not yet counted."""
        self._folding = threading.Lock()
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

    def observe_later(self, raw: RawRun) -> None:
        """Count the run at the next scrape, or once `FOLD_EVERY` runs wait: a request
        pays only this append, not the counting (a scrape counts exactly what ended)."""
        unfolded = self._unfolded
        unfolded.append(raw)
        if len(unfolded) >= FOLD_EVERY:
            self.fold()

    def fold(self) -> None:
        """Count every run `observe_later` kept (a run that cannot be counted is logged)."""
        unfolded = self._unfolded
        with self._folding:
            while unfolded:
                raw = unfolded.popleft()
                try:
                    self.observe(record_of(raw))
                except Exception:  # telemetry must never fail a turn or a scrape
                    _log.exception("counting conversation %s", raw.conversation_id)

    def families(self) -> Iterator[Metric]:
        """Every metric as the client's metric family (at scrape time)."""
        self.fold()
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
        roles = _ROLES
        # model calls, tool runs, refusals, plan decisions: each counted in a loop of its own
        kept: tuple[list[Event], ...] = ([], [], [], [])
        started: float | None = None
        ended = True
        turns = 0
        for item in record.events:
            event = item[1]
            role = roles.get(type(event))
            if role is None:
                continue
            if role == _STARTED:
                if not ended:  # the run failed before the engine could end that turn
                    self.turns.inc(_ERROR)
                started, ended = event.timestamp, False
                turns += 1
            elif started is None:
                continue
            elif role == _ENDED:
                if not ended:
                    ended = True
                    self._turn(record, cast(TurnEnded, event), started)
            else:
                kept[role].append(event)
        if not ended:
            self.turns.inc(_ERROR)
        self._commits(record)
        return turns + self._calls(*kept)

    def _calls(
        self, models: list[Event], tools: list[Event], refusals: list[Event], decided: list[Event]
    ) -> int:
        """Count the run's calls and decisions; how many calls."""
        if models:
            self._models(cast("list[ModelCalled]", models))
        if tools:
            self._tools(cast("list[ToolExecuted]", tools))
        for refused in refusals:
            self.refusals.inc((cast(ToolCallRefused, refused).code,))
        for decision in decided:
            self._decided(cast(PlanCacheDecided, decision))
        return len(models) + len(tools) + len(refusals)

    def _commits(self, record: RunRecord) -> None:
        row = self.commit_seconds.row(())
        bounds = self.commit_seconds.bounds
        total = row[-1]
        for _first, _last, stamped, stored in record.commits:
            seconds = stored - stamped
            seconds = seconds if seconds > 0.0 else 0.0
            row[bisect_left(bounds, seconds)] += 1
            total += seconds
        row[-1] = total

    def _tools(self, tools: list[ToolExecuted]) -> None:
        cells_of = self._tool_cells
        for run in tools:
            cells = cells_of.get(run.tool_name)
            if cells is None:
                if len(cells_of) >= 1024:
                    cells_of.clear()
                cells = cells_of[run.tool_name] = [None, None]
            if run.is_error:
                cell = cells[1]
                if cell is None:
                    cell = cells[1] = self.tool_runs.cell((run.tool_name, "error"))
                cell[0] += 1.0
                self.tool_failures.inc((run.tool_name, run.error_code or "unknown"))
            else:
                cell = cells[0]
                if cell is None:
                    cell = cells[0] = self.tool_runs.cell((run.tool_name, "ok"))
                cell[0] += 1.0

    def _decided(self, decided: PlanCacheDecided) -> None:
        hit = "true" if decided.hit else "false"
        self.plan_decisions.inc((decided.layer, hit, decided.reason))

    def _turn(self, record: RunRecord, event: TurnEnded, started: float | None) -> None:
        stop = event.stop_reason
        found = self._stop_cells.get(stop)
        if found is None:
            if len(self._stop_cells) >= 1024:
                self._stop_cells.clear()
            found = self._stop_cells[stop] = (
                self.turns.cell((stop,)),
                self.turn_seconds.row((stop,)),
            )
        cell, row = found
        cell[0] += 1.0
        last = self._last_turn
        at = event.timestamp
        last[record.conversation_id] = at
        if len(last) > self._prune_at:
            self._prune(at)
        if started is None:
            return
        end = at
        stored_one = False
        for _first, _last, stamped, stored in record.commits:
            if stamped >= at and (not stored_one or stored < end):
                end, stored_one = stored, True
        seconds = max(0.0, end - started)
        row[bisect_left(self._turn_bounds, seconds)] += 1
        row[-1] += seconds

    def _models(self, models: list[ModelCalled]) -> None:
        series_of = self._model_series
        bounds = self._model_bounds
        for called in models:
            series = series_of.get((called.tier, called.model))
            if series is None:
                series = self._series(called.tier, called.model)
            series.calls[0] += 1.0
            seconds = called.latency_ms / 1000
            row = series.row
            row[bisect_left(bounds, seconds)] += 1
            row[-1] += seconds
            series.input[0] += called.input_tokens
            series.output[0] += called.output_tokens
            if called.cached_input_tokens:
                cell = series.cached_input
                if cell is None:
                    cell = series.cached_input = self.tokens.cell((*series.labels, "cached_input"))
                cell[0] += called.cached_input_tokens
            if called.cache_write_tokens:
                cell = series.cache_write
                if cell is None:
                    cell = series.cache_write = self.tokens.cell((*series.labels, "cache_write"))
                cell[0] += called.cache_write_tokens
            if called.cost is not None:
                cell = series.cost
                if cell is None:
                    cell = series.cost = self.cost.cell(series.labels)
                cell[0] += called.cost

    def _series(self, tier: str, model: str) -> _ModelSeries:
        if len(self._model_series) >= 1024:
            self._model_series.clear()
        series = self._model_series[(tier, model)] = _ModelSeries(self, (tier, model))
        return series

    def exposition(self) -> bytes:
        """The metrics in Prometheus' text format."""
        return generate_latest(self.registry)
