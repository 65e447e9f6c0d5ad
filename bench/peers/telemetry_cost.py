"""What Keel's telemetry costs per run, each part apart, beside the paths it replaced.

    bench/peers/.venv/bin/python bench/peers/telemetry_cost.py [--repeats 2000]

One run of each peers scenario (support, long) is recorded through a `TurnTap`; then,
interleaved in rounds so a busy spell of the machine hits every path alike, each path
handles that same record `--repeats` times and its median µs per run is printed:

- metrics: `TurnMetrics.observe` (plain dicts) beside the previous way, prometheus_client
  collectors updated through cached `labels()` children (the baseline);
- spans: `run_spans` (OTLP protobuf written from the events) and the request span, beside
  the OpenTelemetry SDK making the same number of spans with the same attributes and
  encoding them with the OTLP exporter's encoder (the baseline; needs opentelemetry-sdk
  and opentelemetry-exporter-otlp-proto-common, which bench/peers/.venv has).

Warm numbers (the same record again and again): a real run pays more, its caches cold;
the peers benchmark's "keel, metrics on" and "keel, telemetry on" rows measure that.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from time import perf_counter_ns
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from case_keel import make
from prometheus_client import CollectorRegistry, Counter, Histogram
from scenarios import SCENARIOS

from keel.events.model import ModelCalled, ToolExecuted, TurnEnded, TurnStarted
from keel.observe import otlp
from keel.observe.digest import digest
from keel.observe.metrics import COMMIT_BUCKETS, MODEL_BUCKETS, TURN_BUCKETS, TurnMetrics
from keel.observe.record import RawRun, RunRecord, record_of
from keel.observe.span_ids import Parent
from keel.observe.turn_spans import SpanOptions, run_spans

OPTIONS = SpanOptions(agent="keel_agent", provider_of=lambda _model, _tier: "_OTHER")
PARENT = Parent(trace_id=0x1234, span_id=0x5678, sampled=True)
REQUEST = otlp.attributes({"http.request.method": "POST", "http.route": "/x"})


class PrometheusBaseline:
    """The previous metrics: the client's collectors, children cached by labels."""

    def __init__(self) -> None:
        registry = CollectorRegistry()
        self.turns = Counter("t", "t", ["stop_reason"], registry=registry)
        self.turn_seconds = Histogram("ts", "ts", ["s"], buckets=TURN_BUCKETS, registry=registry)
        self.calls = Counter("m", "m", ["tier", "model"], registry=registry)
        self.seconds = Histogram(
            "ms", "ms", ["tier", "model"], buckets=MODEL_BUCKETS, registry=registry
        )
        self.tokens = Counter("k", "k", ["tier", "model", "kind"], registry=registry)
        self.tools = Counter("r", "r", ["tool", "outcome"], registry=registry)
        self.commits = Histogram("c", "c", buckets=COMMIT_BUCKETS, registry=registry)
        self.children: dict[tuple[object, ...], Any] = {}

    def _child(self, metric: Any, *labels: str) -> Any:
        key = (id(metric), *labels)
        child = self.children.get(key)
        if child is None:
            child = self.children[key] = metric.labels(*labels)
        return child

    def observe(self, record: RunRecord) -> None:
        started = None
        for _, event in record.events:
            if isinstance(event, ModelCalled):
                self._child(self.calls, event.tier, event.model).inc()
                self._child(self.seconds, event.tier, event.model).observe(event.latency_ms)
                self._child(self.tokens, event.tier, event.model, "input").inc(1)
                self._child(self.tokens, event.tier, event.model, "output").inc(1)
            elif isinstance(event, ToolExecuted):
                self._child(self.tools, event.tool_name, "ok").inc()
            elif isinstance(event, TurnStarted):
                started = event.timestamp
            elif isinstance(event, TurnEnded):
                self._child(self.turns, event.stop_reason).inc()
                self._child(self.turn_seconds, event.stop_reason).observe(
                    event.timestamp - (started or event.timestamp)
                )
        for commit in record.commits:
            self.commits.observe(commit.seconds)


def sdk_baseline() -> Callable[[int, int], bytes] | None:
    """`make(spans, attributes)`: the SDK creates and ends that many spans of that many
    string attributes each, and the OTLP encoder serialises them (None without the SDK)."""
    try:
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter
    except ImportError:
        return None
    kept: list[Any] = []

    class Keep(SpanExporter):
        def export(self, spans: Any) -> Any:
            kept.extend(spans)
            return None

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(Keep()))
    tracer = provider.get_tracer("keel")

    def make_spans(count: int, attributes: int) -> bytes:
        values = {f"gen_ai.attribute.{n}": f"value {n}" for n in range(attributes)}
        for n in range(count):
            tracer.start_span(f"span {n}", attributes=values, start_time=1).end(end_time=2)
        body = encode_spans(kept).SerializeToString()
        kept.clear()
        return body

    return make_spans


async def _record(name: str) -> RunRecord:
    case = make(SCENARIOS[name], telemetry="metrics")
    runs: list[RawRun] = []
    report = case.telemetry.report
    case.telemetry.report = lambda raw, parent: (runs.append(raw), report(raw, parent))
    for _ in range(3):
        await case.prepare()
        await case.run()
    await case.close()
    return record_of(runs[-1])


def our_spans(record: RunRecord) -> list[bytes]:
    """A run's spans and its request span, as the server writes them."""
    written = run_spans(OPTIONS, record, PARENT, turns=digest(record))
    written.append(
        otlp.span(
            trace_id=b"t" * 16,
            span_id=b"s" * 8,
            parent_id=None,
            name="POST /x",
            kind=otlp.SERVER,
            start_ns=1,
            end_ns=2,
            values=REQUEST,
        )
    )
    return written


def _timed(paths: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    samples: dict[str, list[int]] = {label: [] for label in paths}
    for _ in range(repeats // 50):
        for label, path in paths.items():
            started = perf_counter_ns()
            for _ in range(50):
                path()
            samples[label].append(perf_counter_ns() - started)
    return {label: statistics.median(values) / 50 / 1000 for label, values in samples.items()}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=2000)
    options = parser.parse_args(argv)
    sdk = sdk_baseline()
    print("| scenario | path | µs per run | vs baseline |")
    print("| --- | --- | ---: | ---: |")
    for name in ("support", "long"):
        record = asyncio.run(_record(name))
        spans = len(our_spans(record))
        ours, theirs = TurnMetrics(now=lambda: 0.0), PrometheusBaseline()

        paths: dict[str, Callable[[], object]] = {
            "metrics (plain dicts)": partial(ours.observe, record),
            "metrics, baseline (prometheus_client)": partial(theirs.observe, record),
            f"{spans} spans (OTLP bytes from the events)": partial(our_spans, record),
        }
        if sdk is not None:
            label = f"{spans} spans, baseline (SDK + OTLP encoder, 8 attributes each)"
            paths[label] = partial(sdk, spans, 8)
        got = _timed(paths, options.repeats)
        labels = list(got)
        for index, label in enumerate(labels):
            base = ""
            if "baseline" not in label and index + 1 < len(labels):
                base = f"{got[label] / got[labels[index + 1]]:.2f}x"
            print(f"| {name} | {label} | {got[label]:,.1f} | {base} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
