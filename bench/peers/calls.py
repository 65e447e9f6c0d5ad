"""Keel per model round trip, exactly: Python function calls (cProfile) and store commits.

    bench/peers/.venv/bin/python bench/peers/calls.py [--runs 5]

For each scenario and store (in memory, SQLite file) it runs `--runs` timed runs of the
Keel case under cProfile and reports the calls per round trip (every call cProfile counts,
built-ins included: exact and noise-free, unlike timings), and the store appends (one
transaction each) and events appended per run. Standard library plus Keel.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from case_keel import KeelCase  # noqa: E402
from scenarios import SCENARIOS  # noqa: E402


class _Counting:
    """Counts the appends a store receives (wraps the case's store)."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.appends = 0
        self.events = 0

    async def append(
        self, conversation_id: str, expected_seq: int, events: object, *, durable: bool = True
    ) -> object:
        self.appends += 1
        self.events += len(events)  # type: ignore[arg-type]
        return await self.inner.append(  # type: ignore[attr-defined]
            conversation_id, expected_seq, events, durable=durable
        )

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


async def measure(store: str, name: str, runs: int) -> tuple[float, float, float]:
    scenario = SCENARIOS[name]
    case = KeelCase(scenario, store=store)
    calls = appends = events = 0
    for _ in range(runs + 1):  # the first run warms caches up and is not counted
        await case.prepare()
        assert case.engine is not None
        counting = _Counting(case.engine.store)
        case.engine.store = counting  # type: ignore[assignment]
        case.engine._log.store = counting  # type: ignore[assignment]
        profiler = cProfile.Profile()
        profiler.enable()
        await case.run()
        profiler.disable()
        if _ == 0:
            continue
        stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
        calls += sum(nc for (_cc, nc, _tt, _ct, _callers) in stats.values())
        appends += counting.appends
        events += counting.events
    await case.close()
    return calls / runs / scenario.round_trips, appends / runs, events / runs


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    print("| store | scenario | calls per round trip | appends per run | events per run |")
    print("| --- | --- | ---: | ---: | ---: |")
    for store in ("memory", "sqlite"):
        for name in SCENARIOS:
            calls, appends, events = await measure(store, name, options.runs)
            print(f"| {store} | {name} | {calls:,.0f} | {appends:.0f} | {events:.0f} |")


if __name__ == "__main__":
    asyncio.run(main())
