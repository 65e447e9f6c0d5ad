"""Traces and metrics made from a turn's committed events (docs/observability.md).

Nothing here runs inside the turn loop. A `TurnTap` is a `TurnObserver`: the server's turn
runner hands it every event as it is committed (and each builder tool's start); when the
run ends it turns what it saw into spans (`turn_spans`, OpenTelemetry's GenAI conventions)
and Prometheus metrics (`metrics`). `Telemetry` holds both for one app; tracing is off
unless an OTLP endpoint is configured (`tracing.TracingConfig.from_env`).
"""

from keel.observe.metrics import TurnMetrics
from keel.observe.tap import Telemetry, TurnTap
from keel.observe.tracing import TracingConfig

__all__ = ["Telemetry", "TracingConfig", "TurnMetrics", "TurnTap"]
