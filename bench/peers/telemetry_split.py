"""Keel with telemetry off, metrics on and every turn traced: wall and process CPU per run.

    bench/peers/.venv/bin/python bench/peers/telemetry_split.py [--blocks 24] [--per 20]
        [--block-warmup 5]

The three `case_keel` cases run side by side in one process, in blocks of `--per` timed
runs after `--block-warmup` untimed ones, the blocks' orders a balanced Latin square (as
`timing.py` orders them), so a busy spell of the machine and the carry-over from the case
before fall on all alike. Each run is timed by the wall clock and by the process's CPU
time (`time.process_time_ns`: every thread, so the spans the exporting thread encodes and
posts are counted, which a run's wall time may not show). Printed per case: the median of
each, the change of the median wall time against telemetry off, and the paired change:
the median, over the rotations, of the case's block median over telemetry off's in the
same rotation (a slow spell longer than a rotation cancels out of it). `prepare` is not
timed. A second, identical telemetry-off case ("telemetry off, again") runs alongside: its
changes are the reading's own noise floor (two identical cases, so anything but zero is
the machine).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from pathlib import Path
from time import perf_counter_ns, process_time_ns

sys.path.insert(0, str(Path(__file__).resolve().parent))

from case_keel import KeelCase, make
from report import paired_change
from scenarios import SCENARIOS
from timing import orders

OFF = "telemetry off"


async def _measure(
    name: str, options: argparse.Namespace
) -> dict[str, tuple[list[int], list[int], list[float]]]:
    """Per case: the runs' wall and CPU nanoseconds, and each rotation's block median."""
    cases: dict[str, KeelCase] = {
        OFF: make(SCENARIOS[name]),
        "telemetry off, again": make(SCENARIOS[name]),
        "metrics on": make(SCENARIOS[name], telemetry="metrics"),
        "telemetry on": make(SCENARIOS[name], telemetry=True),
    }
    found: dict[str, tuple[list[int], list[int], list[float]]] = {
        label: ([], [], []) for label in cases
    }
    labels = list(cases)
    for case in cases.values():  # warm up
        for _ in range(20):
            await case.prepare()
            await case.run()
    rows = orders(len(labels))
    for number in range(-(-options.blocks // len(rows)) * len(rows)):
        for index in rows[number % len(rows)]:
            label = labels[index]
            case = cases[label]
            for _ in range(options.block_warmup):
                await case.prepare()
                await case.run()
            wall, cpu, medians = found[label]
            block: list[int] = []
            for _ in range(options.per):
                await case.prepare()
                started, used = perf_counter_ns(), process_time_ns()
                await case.run()
                block.append(perf_counter_ns() - started)
                cpu.append(process_time_ns() - used)
            wall += block
            medians.append(statistics.median(block))
    for case in cases.values():
        await case.close()
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=24, help="blocks per case (whole squares)")
    parser.add_argument("--per", type=int, default=20, help="timed runs per block")
    parser.add_argument("--block-warmup", type=int, default=5, help="untimed runs per block")
    options = parser.parse_args(argv)
    print(
        "| scenario | case | wall µs per run | change | paired change | CPU µs per run "
        "| over telemetry off |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for name in ("support", "long"):
        got = asyncio.run(_measure(name, options))
        base_wall = statistics.median(got[OFF][0])
        base_cpu = statistics.median(got[OFF][1])
        for label, (wall, cpu, medians) in got.items():
            wall_us, cpu_us = statistics.median(wall) / 1000, statistics.median(cpu) / 1000
            change = paired = extra = ""
            if label != OFF:
                change = f"{statistics.median(wall) / base_wall - 1:+.1%}"
                paired = f"{paired_change(got[OFF][2], medians):+.1%}"
                more = statistics.median(cpu) / base_cpu - 1
                extra = f"{cpu_us - base_cpu / 1000:+,.1f} ({more:+.0%})"
            print(
                f"| {name} | {label} | {wall_us:,.1f} | {change} | {paired} | {cpu_us:,.1f} "
                f"| {extra} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
