"""`TurnTap`: a `TurnObserver` that keeps what a run committed; `Telemetry`: the app's
metrics and (when configured) tracing, which each finished tap feeds.

A tap does little while the turn runs: it keeps each commit's (seq, event) pairs and when
the commit started and ended (the recorder reports each batch in one `committed` call), and
when each builder tool started. `finish` counts the run into the metrics and, when its trace
is sampled, queues the run for the exporting thread, which encodes its spans
(`turn_spans`) just before it posts them: a slow or absent collector never slows a turn
(a full queue drops spans, counted), and the request pays no encoding.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING

from opentelemetry import context as otel_context

from keel.ids import Clock, SystemClock
from keel.observe.genai import OTHER_PROVIDER
from keel.observe.metrics import TurnMetrics
from keel.observe.record import RawRun, record_of
from keel.observe.span_ids import Parent
from keel.observe.tracing import Tracing, TracingConfig
from keel.observe.turn_spans import SpanOptions, run_spans
from keel.stores.port import StoredEvent

if TYPE_CHECKING:
    from opentelemetry.context import Context

_log = logging.getLogger("keel.observe")

ProviderOf = Callable[[str, str], str]
"""(model id, tier) -> the provider's name for `gen_ai.provider.name`."""


class TurnTap:
    """Observes one run; `finish` reports it. Never raises into the engine."""

    reads_text = False
    """The model's text is in the log: the engine need not stream it for a tap."""

    def __init__(self, telemetry: Telemetry, conversation_id: str, parent: Context) -> None:
        self._telemetry = telemetry
        self._seconds = telemetry.seconds
        self._conversation_id = conversation_id
        self._parent = parent
        self._commits: list[tuple[Sequence[StoredEvent], float, float]] = []
        self._starts: list[tuple[str, float]] = []
        """(tool name, when it started): a `ToolStart` once the record is made."""
        self._finished = False

    async def committed(self, events: Sequence[StoredEvent], started_at: float) -> None:
        """A commit of `events` ended now: its append started at `started_at` (kept as
        given: the run's record is made away from the request, `record_of`)."""
        self._commits.append((events, started_at, self._seconds()))

    async def text_delta(self, text: str) -> None:
        """Model text is not kept (the whole reply is in the log)."""

    async def tool_started(self, name: str, arguments: Mapping[str, object]) -> None:
        """A builder tool starts now."""
        self._starts.append((name, self._seconds()))

    def finish(self, *, failed: bool = False) -> RawRun | None:
        """Report the run to the metrics and the tracer (once); what was kept, for tests."""
        if self._finished:
            return None
        self._finished = True
        ended_at = self._seconds()
        raw = RawRun(
            self._conversation_id, tuple(self._commits), tuple(self._starts), ended_at, failed
        )
        self._telemetry.report(raw, self._parent)
        return raw


def _raw_spans(options: SpanOptions, raw: RawRun, under: Parent) -> Sequence[bytes]:
    """The encoded spans of a run (on the exporting thread). Queued, they count one per
    commit (each model call follows one, and a turn ends with one) and one per builder tool
    run: about what its turn, model and tool spans come to (refusals, steps and plans are
    known only once built), counted without going over its events."""
    return run_spans(options, record_of(raw), under)


def _seconds_of(clock: Clock) -> Callable[[], float]:
    if isinstance(clock, SystemClock):
        return clock.seconds
    return lambda: clock.now().timestamp()


class Telemetry:
    """An app's metrics (always) and tracing (when `tracing` is configured)."""

    def __init__(
        self,
        *,
        clock: Clock,
        tracing: TracingConfig | None = None,
        in_progress: Callable[[], int] = lambda: 0,
    ) -> None:
        self.clock = clock
        self.seconds: Callable[[], float] = _seconds_of(clock)
        """The clock's time in epoch seconds (`SystemClock.seconds` for the system clock: a
        `datetime` costs about 0.9 µs, and a tap reads the time per commit and tool)."""
        self.config = tracing
        self.metrics = TurnMetrics(now=self.seconds, in_progress=in_progress)
        self.tracing: Tracing | None = None
        self._options = SpanOptions(agent="keel", provider_of=lambda _m, _t: OTHER_PROVIDER)

    @classmethod
    def from_env(cls, env: Mapping[str, str], *, clock: Clock) -> Telemetry:
        """Metrics, plus tracing when the standard OTLP variables configure it."""
        return cls(clock=clock, tracing=TracingConfig.from_env(env))

    def open(self, *, agent: str, provider_of: ProviderOf) -> None:
        """Start tracing (when configured) for the served agent."""
        capture = self.config.capture_content if self.config is not None else False
        self._options = SpanOptions(agent=agent, provider_of=provider_of, capture_content=capture)
        if self.config is not None and self.tracing is None:
            self.tracing = Tracing(self.config)
            self.metrics.watch_export(self.tracing.stats)

    def tap(self, conversation_id: str) -> TurnTap:
        """A tap for one run; spans go under the current context (the request's span)."""
        return TurnTap(self, conversation_id, otel_context.get_current())

    def report(self, raw: RawRun, parent: Context) -> None:
        """Feed the metrics and queue the spans of one finished run (when sampled); the
        run's record is made at the scrape and on the exporting thread, not here."""
        try:
            self.metrics.observe_later(raw)  # counted at the next scrape
            tracing = self.tracing
            if tracing is not None:
                build = partial(_raw_spans, self._options, raw)
                tracing.export_run(parent, len(raw.commits) + len(raw.tool_starts), build)
        except Exception:  # telemetry must never fail a turn
            _log.exception("recording telemetry for conversation %s", raw.conversation_id)

    def flush(self) -> bool:
        """Export the spans queued so far (tests, shutdown)."""
        return self.tracing.flush() if self.tracing is not None else True

    def close(self) -> None:
        """Export what is left and stop tracing."""
        if self.tracing is not None:
            self.tracing.close()
            self.tracing = None
