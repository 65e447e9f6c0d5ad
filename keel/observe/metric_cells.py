"""Plain-Python series for the metrics: a counter and a histogram keyed by label values,
turned into the Prometheus client's metric families only when scraped (`keel.observe.metrics`
feeds them)."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from typing import cast

from prometheus_client.metrics_core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.utils import floatToGoString as _untyped_go_float

Labels = tuple[str, ...]
_go_float = cast("Callable[[float], str]", _untyped_go_float)
"""The client's own `le` formatting (`1.0`, `+Inf`)."""


class Count:
    """A counter: label values -> [total] (a one-item list: a cell a hot path may keep)."""

    __slots__ = ("documentation", "labels", "name", "values")

    def __init__(self, name: str, documentation: str, *labels: str) -> None:
        self.name = name
        self.documentation = documentation
        self.labels = labels
        self.values: dict[Labels, list[float]] = {}

    def inc(self, labels: Labels, amount: float = 1.0) -> None:
        cell = self.values.get(labels)
        if cell is None:
            cell = self.values[labels] = [0.0]
        cell[0] += amount

    def cell(self, labels: Labels) -> list[float]:
        """The cell of `labels` (a series of 0 from now on, if it was none)."""
        cell = self.values.get(labels)
        if cell is None:
            cell = self.values[labels] = [0.0]
        return cell

    def family(self) -> Metric:
        family = CounterMetricFamily(self.name, self.documentation, labels=self.labels)
        for labels, (value,) in self.values.items():
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
        row = self.row(labels)
        row[bisect_left(self.bounds, value)] += 1  # `le` is inclusive
        row[-1] += value

    def row(self, labels: Labels) -> list[float]:
        """The row of `labels` (an empty series from now on, if it was none)."""
        row = self.values.get(labels)
        if row is None:
            row = self.values[labels] = [0.0] * (len(self.bounds) + 2)
        return row

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
