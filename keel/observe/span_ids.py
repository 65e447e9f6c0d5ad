"""Span and trace ids, and where a run's spans hang (`Parent`)."""

from __future__ import annotations

import random
from typing import NamedTuple


def new_span_id() -> int:
    """A random non-zero 64-bit span id (as the OpenTelemetry SDK makes them)."""
    return random.getrandbits(64) or 1


def new_trace_id() -> int:
    """A random non-zero 128-bit trace id."""
    return random.getrandbits(128) or 1


class Parent(NamedTuple):
    """Where a span hangs: its trace, its parent span (None for a root) and whether the
    trace is sampled (a `NamedTuple`: one is made per request and per run)."""

    trace_id: int
    span_id: int | None
    sampled: bool
