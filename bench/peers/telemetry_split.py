"""Process CPU per run of Keel with telemetry off, metrics on and every turn traced.

    bench/peers/.venv/bin/python bench/peers/telemetry_split.py [--blocks 10] [--per 30]

The three `case_keel` cases run side by side in one process, in interleaved blocks of
`--per` runs (a busy spell of the machine falls on all alike). Each run's cost is the
process's CPU time (`time.process_time_ns`: every thread, so the spans the exporting
thread encodes and posts are counted, which a run's wall time may not show); the median
of each case and its difference to telemetry off are printed. `prepare` is not timed.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from pathlib import Path
from time import process_time_ns

sys.path.insert(0, str(Path(__file__).resolve().parent))

from case_keel import KeelCase, make
from scenarios import SCENARIOS


async def _measure(name: str, blocks: int, per: int) -> dict[str, float]:
    cases: dict[str, KeelCase] = {
        "telemetry off": make(SCENARIOS[name]),
        "metrics on": make(SCENARIOS[name], telemetry="metrics"),
        "telemetry on": make(SCENARIOS[name], telemetry=True),
    }
    samples: dict[str, list[int]] = {label: [] for label in cases}
    for case in cases.values():  # warm up
        for _ in range(20):
            await case.prepare()
            await case.run()
    for _ in range(blocks):
        for label, case in cases.items():
            for _ in range(per):
                await case.prepare()
                started = process_time_ns()
                await case.run()
                samples[label].append(process_time_ns() - started)
    for case in cases.values():
        await case.close()
    return {label: statistics.median(values) / 1000 for label, values in samples.items()}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=10)
    parser.add_argument("--per", type=int, default=30)
    options = parser.parse_args(argv)
    print("| scenario | case | CPU µs per run | over telemetry off |")
    print("| --- | --- | ---: | ---: |")
    for name in ("support", "long"):
        got = asyncio.run(_measure(name, options.blocks, options.per))
        base = got["telemetry off"]
        for label, value in got.items():
            extra = "" if value is base else f"{value - base:+,.1f} ({value / base - 1:+.0%})"
            print(f"| {name} | {label} | {value:,.1f} | {extra} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
