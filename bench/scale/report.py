"""The scale table (printed, and written as the "Scale" section of bench/RESULTS.md)."""

from __future__ import annotations

from measure import Measured
from probe import STAGES

SEED_MS = 88.0
"""Seed 004's trace: `POST /api/chat/v2` accepted at +0 ms, the model prompt sent at +88 ms."""

HEADER = (
    "| agent | turn | store | tools offered | request ≈tokens | "
    + " | ".join(f"{s} ms" for s in (*STAGES, "other"))
    + " | p50 ms | p95 ms | CPU p50 ms | p50 vs 88 ms |"
)
RULE = "| --- | --- | --- | " + " | ".join(["---:"] * (len(STAGES) + 7)) + " |"


def percentile(values: list[int], share: float) -> float:
    """Nearest-rank percentile of nanosecond values, in milliseconds."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * share // 100))
    return ordered[int(rank) - 1] / 1e6


def _ms(value: float) -> str:
    return f"{value:.2f}" if value < 10 else f"{value:.1f}"


def row(m: Measured) -> str:
    """One table row: per-stage medians, then the total's median and p95."""
    stage = {k: percentile([s[k] for s in m.samples], 50) for k in (*STAGES, "other")}
    p50 = percentile([s["total"] for s in m.samples], 50)
    p95 = percentile([s["total"] for s in m.samples], 95)
    cpu = percentile([s["cpu"] for s in m.samples], 50)
    cells = [
        m.case.agent,
        m.case.scenario,
        m.case.store,
        str(m.boundary.tools),
        f"{m.boundary.tokens:,}",
        *(_ms(stage[k]) for k in (*STAGES, "other")),
        _ms(p50),
        _ms(p95),
        _ms(cpu),
        f"{p50 / SEED_MS:.2f}x",
    ]
    return "| " + " | ".join(cells) + " |"


def table(measured: list[Measured]) -> str:
    """A Markdown table, one row per case."""
    return "\n".join([HEADER, RULE, *(row(m) for m in measured)])
