"""The results table (printed, and written as the "HTTP" section of bench/RESULTS.md)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from load import Measured


@dataclass(frozen=True, kw_only=True, slots=True)
class Row:
    """One measured configuration."""

    server: str
    """`ceiling` or `keel`."""
    store: str
    """`-`, `sqlite` or `postgresql`."""
    workers: int
    measured: Measured
    rounds: tuple[float, ...] = ()
    """Turns per second of each interleaved round, in order."""
    stages: Mapping[str, float] = field(default_factory=dict)
    """Mean ms per turn of Keel's logged stages (`load`, `persist`); empty for the ceiling."""


HEADER = (
    "| server | store | workers | turns/s | p50 ms | p99 ms | errors "
    "| turns/s vs ceiling | p50 vs ceiling | log load ms | persist ms |"
)
RULE = "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"


def table(rows: list[Row]) -> str:
    """A Markdown table; ratios are against the ceiling with the same number of workers."""
    ceilings = {row.workers: row for row in rows if row.server == "ceiling"}
    lines = [HEADER, RULE]
    for row in rows:
        m = row.measured
        ceiling = ceilings.get(row.workers)
        top = ceiling.measured if ceiling else None
        speed = f"{m.per_second / top.per_second:.1%}" if top and top.per_second else "n/a"
        if ceiling is not None and row is not ceiling:
            speed += _spread(row.rounds, ceiling.rounds)
        p50 = f"{m.percentile(50) / top.percentile(50):.1f}x" if top and top.latencies_ms else "n/a"
        lines.append(
            f"| {row.server} | {row.store} | {row.workers} | {m.per_second:,.0f} "
            f"| {m.percentile(50):.1f} | {m.percentile(99):.1f} | {m.errors} | {speed} | {p50} "
            f"| {_stage(row, 'load')} | {_stage(row, 'persist')} |"
        )
    return "\n".join(lines)


def _stage(row: Row, name: str) -> str:
    return f"{row.stages[name]:.1f}" if name in row.stages else "-"


def _spread(rounds: tuple[float, ...], ceiling: tuple[float, ...]) -> str:
    """` (low-high%)`: the lowest and highest of the rounds' ratios to the ceiling's."""
    ratios = [mine / top for mine, top in zip(rounds, ceiling, strict=False) if top]
    if len(ratios) < 2:
        return ""
    return f" ({min(ratios):.0%}-{max(ratios):.0%})"
