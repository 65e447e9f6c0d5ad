"""Tables of the peer benchmark, and its "Peers" section of bench/RESULTS.md.

Standard library only.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from cases import CaseSpec

SCENARIO_NAMES = ("support", "long")


@dataclass(frozen=True, kw_only=True, slots=True)
class Probe:
    """Fresh-process numbers of one framework (medians over the probe processes)."""

    import_ms: float
    build_ms: float
    max_rss_mb: float


Timings = Mapping[str, Mapping[str, Mapping[str, float]]]
"""scenario -> case label -> summary (`us_per_round_trip`, `median_us`, `p10_us`, ...)."""


def per_trip(timings: Timings, scenario: str, label: str) -> float | None:
    row = timings.get(scenario, {}).get(label)
    return None if row is None else row["us_per_round_trip"]


def fastest_peer(timings: Timings, specs: tuple[CaseSpec, ...], scenario: str) -> float | None:
    """The lowest µs per round trip among the peers (variants not counted)."""
    values = [per_trip(timings, scenario, s.label) for s in specs if s.kind == "peer"]
    present = [v for v in values if v is not None]
    return min(present) if present else None


def _ratio(value: float | None, base: float | None) -> str:
    if value is None or not base:
        return "-"
    ratio = value / base
    if ratio >= 100:
        return f"{ratio:,.0f}x"
    return f"{ratio:.2f}x" if ratio >= 0.1 else f"{ratio:.2g}x"


def _us(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


HEADER = (
    "| case | support µs/rt | long µs/rt | support vs floor | long vs floor "
    "| support vs fastest peer | long vs fastest peer | import ms | build ms | peak RSS MB |"
)
RULE = "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"


def table(timings: Timings, specs: tuple[CaseSpec, ...], probes: Mapping[str, Probe]) -> str:
    """One row per case: µs per model round trip (median), ratios, startup and memory."""
    floor = {s: per_trip(timings, s, "floor") for s in SCENARIO_NAMES}
    peer = {s: fastest_peer(timings, specs, s) for s in SCENARIO_NAMES}
    lines = [HEADER, RULE]
    for spec in specs:
        trips = {s: per_trip(timings, s, spec.label) for s in SCENARIO_NAMES}
        probe = probes.get(spec.label)
        startup = (
            [f"{probe.import_ms:,.0f}", f"{probe.build_ms:,.1f}", f"{probe.max_rss_mb:,.0f}"]
            if probe
            else ["-", "-", "-"]
        )
        cells = [
            spec.label,
            _us(trips["support"]),
            _us(trips["long"]),
            _ratio(trips["support"], floor["support"]),
            _ratio(trips["long"], floor["long"]),
            _ratio(trips["support"], peer["support"]),
            _ratio(trips["long"], peer["long"]),
            *startup,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def breakdown(profile: Mapping[str, Mapping[str, object]], timings: Timings, label: str) -> str:
    """Keel's profile shares (case `label`) applied to its unprofiled median µs per trip."""
    if not profile:
        return ""
    names = [s for s in SCENARIO_NAMES if s in profile]
    head = f"| {label}, where the time goes | " + " | ".join(
        f"{s} µs/rt | {s} share" for s in names
    )
    lines = [head + " |", "| --- |" + " ---: | ---: |" * len(names)]
    shares = {s: dict(profile[s]["shares"]) for s in names}  # type: ignore[call-overload]
    for area in shares[names[0]]:
        cells = [area]
        for s in names:
            share = float(shares[s].get(area, 0.0))
            total = per_trip(timings, s, label) or 0.0
            cells += [_us(share * total), f"{share:.0%}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


GOALS: tuple[tuple[str, str, float], ...] = (
    ("keel", "Keel in memory", 0.15),
    ("keel, sqlite", "Keel persisting to a SQLite file", 0.5),
)
"""Keel's cases, what they are called in the text, and the goal against the fastest peer
(issue 18: at most that share of the fastest peer's in-memory time per round trip)."""
CALLS_GOAL = 600
"""Python function calls per model round trip (cProfile, built-ins included), at most."""


def summary(
    timings: Timings,
    specs: tuple[CaseSpec, ...],
    profiles: Mapping[str, Mapping[str, Mapping[str, object]]],
) -> str:
    """The ratios against the fastest peer for both stores, and the calls per round trip,
    each with its goal, as sentences."""
    peer = {s: fastest_peer(timings, specs, s) for s in SCENARIO_NAMES}
    lines: list[str] = []
    for label, name, goal in GOALS:
        trips = {s: per_trip(timings, s, label) for s in SCENARIO_NAMES}
        if all(v is None for v in trips.values()):
            continue
        ratios = [_ratio(trips[s], peer[s]) for s in SCENARIO_NAMES]
        met = all(
            trips[s] is not None and peer[s] and trips[s] / peer[s] <= goal  # type: ignore[operator]
            for s in SCENARIO_NAMES
        )
        text = (
            f"{name}: {ratios[0]} (support) and {ratios[1]} (long) of the fastest peer's "
            f"in-memory time per round trip; goal at most {goal:g}x: "
            f"{'met' if met else 'not met'}."
        )
        calls = profiles.get(label, {})
        counted = [calls.get(s, {}).get("calls_per_round_trip") for s in SCENARIO_NAMES]
        if all(isinstance(c, int | float) for c in counted):
            under = all(float(c) <= CALLS_GOAL for c in counted)  # type: ignore[arg-type]
            text += (
                f" Function calls per round trip (cProfile): {float(counted[0]):,.0f} "  # type: ignore[arg-type]
                f"(support) and {float(counted[1]):,.0f} (long); goal at most "  # type: ignore[arg-type]
                f"{CALLS_GOAL}: {'met' if under else 'not met'}."
            )
        lines.append(text)
    change = telemetry_change(timings)
    if change:
        lines.append(change)
    return "\n\n".join(lines)


TELEMETRY_GOAL = 0.10
"""Issue 21: with tracing and metrics on, Keel's ratio to the fastest peer changes by less."""


def paired_change(off: Sequence[float], on: Sequence[float]) -> float:
    """The median, over rotations, of `on`'s block median over `off`'s in the same
    rotation, minus one (a slow spell longer than a rotation falls on both and cancels)."""
    return statistics.median(b / a for a, b in zip(off, on, strict=True)) - 1


def telemetry_change(timings: Timings) -> str:
    """How much Keel's ratio to the fastest peer changes with tracing and metrics on (the
    fastest peer is the same in both, so the change is Keel's own time's), as a sentence;
    empty when the run had no telemetry case. With the runs' block medians (`blocks_us`)
    it is also given paired: the median, over the run's rotations, of the ratio of the two
    cases' block medians in the same rotation (a slow spell of the machine longer than a
    rotation falls on both and cancels out). The goal holds only if both are under it:
    on this host the two differ by a few points, and neither is the whole truth."""
    changes: list[float] = []
    paired: list[float] = []
    for scenario in SCENARIO_NAMES:
        on = per_trip(timings, scenario, "keel, telemetry on")
        off = per_trip(timings, scenario, "keel")
        if on is None or not off:
            return ""
        changes.append(on / off - 1)
        blocks_on = timings[scenario]["keel, telemetry on"].get("blocks_us")
        blocks_off = timings[scenario]["keel"].get("blocks_us")
        if isinstance(blocks_on, list) and isinstance(blocks_off, list) and blocks_off:
            paired.append(paired_change(blocks_off, blocks_on))
    text = (
        f"Keel with tracing and metrics on (`keel, telemetry on`): its ratio to the fastest "
        f"peer changes by {changes[0]:+.1%} (support) and {changes[1]:+.1%} (long)"
    )
    both = len(paired) == len(changes)
    if both:
        text += (
            f" as a ratio of medians, and by {paired[0]:+.1%} and {paired[1]:+.1%} paired "
            "by rotation (the median of the per-rotation ratios of the two cases' block "
            "medians, which a slow spell of the machine cancels out of)"
        )
    met = all(abs(c) < TELEMETRY_GOAL for c in changes + paired)
    which = " (both ways)" if both else ""
    return f"{text}; goal under {TELEMETRY_GOAL:.0%}{which}: {'met' if met else 'not met'}."
