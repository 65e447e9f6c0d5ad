"""Timing child of `run.py`: every case side by side in one process, runs interleaved.

    bench/peers/.venv/bin/python bench/peers/timing.py [--runs 200] [--warmup 20]
        [--block 10] [--block-warmup 5] [--cases floor,keel,...] [--profile-runs 40] [--telemetry]

For each scenario, every case is built once (graph compiled, agent made, project loaded),
warmed up, then timed in blocks of `--block` runs: block after block, each block going
through all cases, so a slow spell of the (shared) machine falls on every case alike.
The orders are a balanced Latin square (`orders`): every case comes right after every
other case equally often, since a case run just after a heavy one is slower for several
runs (measured: up to +30% for the case that a rotation always put after LangGraph), and
each block starts with `--block-warmup` untimed runs of its case. The blocks are rounded
up to whole squares, so a case may get more timed runs than `--runs`. A run is one user
message handled to the final answer; `prepare` (a fresh script, and for Keel a
conversation whose session already started) is outside the timed part, and so is reading
the result. Every run's result is checked: the answer, and one tool result per scripted
tool call. Prints JSON on stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import platform
import statistics
import sys
from importlib import metadata
from pathlib import Path
from time import perf_counter_ns

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cases import CaseSpec, by_label
from scenarios import SCENARIOS, Case, Scenario, check


def build(spec: CaseSpec, scenario: Scenario) -> Case:
    """The case of `spec` for `scenario`."""
    module = importlib.import_module(spec.module)
    case: Case = module.make(scenario, **spec.options)
    return case


def summary(samples: list[int], scenario: Scenario, block: int) -> dict[str, object]:
    """Median and spread of the runs, in microseconds per run and per round trip, and the
    median of each block of `block` runs in the order they ran (one block per rotation,
    so two cases' blocks pair up by rotation: `report.telemetry_change`)."""
    ordered = sorted(samples)
    cuts = statistics.quantiles(ordered, n=10)
    median = statistics.median(ordered) / 1000
    blocks = [samples[at : at + block] for at in range(0, len(samples), block)]
    return {
        "runs": len(ordered),
        "median_us": median,
        "p10_us": cuts[0] / 1000,
        "p90_us": cuts[-1] / 1000,
        "us_per_round_trip": median / scenario.round_trips,
        "blocks_us": [statistics.median(b) / 1000 for b in blocks],
    }


def orders(count: int) -> list[list[int]]:
    """Case orders in which each case follows every other case equally often (a Williams
    design: the rows of a balanced Latin square, and their mirror images when `count` is
    odd); each case is in every position equally often too."""
    first = [0]
    low, high = 1, count - 1
    while len(first) < count:
        first.append(low)
        low += 1
        if len(first) < count:
            first.append(high)
            high -= 1
    rows = [[(case + shift) % count for case in first] for shift in range(count)]
    return rows if count % 2 == 0 else rows + [row[::-1] for row in rows]


async def time_scenario(
    specs: tuple[CaseSpec, ...], scenario: Scenario, options: argparse.Namespace
) -> dict[str, dict[str, object]]:
    """Interleaved timings of every case for one scenario."""
    cases = {spec.label: build(spec, scenario) for spec in specs}
    for label, case in cases.items():
        for _ in range(options.warmup):
            await case.prepare()
            check(label, scenario, case.outcome(await case.run()))
    samples: dict[str, list[int]] = {label: [] for label in cases}
    labels = list(cases)
    rows = orders(len(labels))
    blocks = -(-options.runs // options.block)
    blocks = -(-blocks // len(rows)) * len(rows)  # whole squares: the balance holds
    for number in range(blocks):
        for index in rows[number % len(rows)]:
            label = labels[index]
            case = cases[label]
            for _ in range(options.block_warmup):
                await case.prepare()
                check(label, scenario, case.outcome(await case.run()))
            for _ in range(options.block):
                await case.prepare()
                started = perf_counter_ns()
                result = await case.run()
                samples[label].append(perf_counter_ns() - started)
                check(label, scenario, case.outcome(result))
    for case in cases.values():
        await case.close()
    return {label: summary(values, scenario, options.block) for label, values in samples.items()}


async def keel_shares(spec: CaseSpec, scenario: Scenario, runs: int) -> dict[str, object]:
    """The profile of Keel's case `spec` for `scenario` (see keel_profile.py)."""
    from keel_profile import profile

    case = build(spec, scenario)
    for _ in range(5):
        await case.prepare()
        await case.run()
    found = await profile(case, scenario, runs)
    await case.close()
    return {
        "events_per_turn": found.events,
        "calls_per_round_trip": found.calls_per_round_trip,
        "shares": [[s.label, s.share] for s in found.shares],
    }


def versions(specs: tuple[CaseSpec, ...]) -> dict[str, str]:
    """Installed versions of the distributions the cases use."""
    found: dict[str, str] = {"python": platform.python_version()}
    for spec in specs:
        for dist in spec.dists:
            try:
                found[dist] = metadata.version(dist)
            except metadata.PackageNotFoundError:
                found[dist] = "not installed"
    return found


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200, help="timed runs per case and scenario")
    parser.add_argument("--warmup", type=int, default=20, help="untimed runs first")
    parser.add_argument("--block", type=int, default=10, help="runs in a row per case")
    parser.add_argument("--block-warmup", type=int, default=5, help="untimed runs per block")
    parser.add_argument("--cases", help="comma-separated labels (default: all)")
    parser.add_argument("--scenarios", default="support,long")
    parser.add_argument("--profile-runs", type=int, default=40, help="0: no Keel profile")
    parser.add_argument("--telemetry", action="store_true", help="add Keel, telemetry on")
    options = parser.parse_args(argv)
    specs = by_label(options.cases, options.telemetry)
    out: dict[str, object] = {"versions": versions(specs), "timings": {}, "keel_profile": {}}
    for name in options.scenarios.split(","):
        scenario = SCENARIOS[name]
        print(f"timing {name} ({scenario.round_trips} round trips)...", file=sys.stderr)
        out["timings"][name] = await time_scenario(specs, scenario, options)  # type: ignore[index]
        for spec in (s for s in specs if s.kind == "keel") if options.profile_runs else ():
            profiled = await keel_shares(spec, scenario, options.profile_runs)
            out["keel_profile"].setdefault(spec.label, {})[name] = profiled  # type: ignore[attr-defined]
    json.dump(out, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
