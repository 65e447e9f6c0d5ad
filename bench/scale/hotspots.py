"""Profile the pre-model path of measured turns (cProfile), for finding hot spots.

    python bench/scale/hotspots.py [--scenario active] [--store memory] [--turns 60] [--top 25]

Same agent, history and turns as `run.py`, one case, under cProfile (the measured turns,
after 5 warm-up ones); prints the functions with the most time of their own and the most
cumulative time. Profiling slows Python code down several times, so read shares, not
milliseconds; call counts are deterministic, so compare those between two trees.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import sys
import tempfile
from pathlib import Path

from catalog import HUB
from generate import DEFAULT_SEED, generate
from history import record, scale_plans
from measure import Case, Shape, Work, run_cases
from probe import PerfClock


async def _profile(options: argparse.Namespace, work: Path) -> cProfile.Profile:
    clock = PerfClock()
    made = generate(work / "agent", DEFAULT_SEED)
    plans = scale_plans(made.plan, HUB)
    template = await record(made.definition, plans, clock, {"customer_id": "NW-C-2041"})
    shape = Shape(turns=options.turns, warmup=5, work=work, postgres_url=options.postgres_url)
    case = Case(agent="scale", scenario=options.scenario, store=options.store)
    job = Work(case=case, definition=made.definition, template=template)
    profiler = cProfile.Profile()
    # Profiling starts after the warm-up, as the measures do: only measured turns count (a
    # warm-up turn is a conversation's first visit, which reads and decodes its whole log).
    await run_cases([job], shape, clock, on_measuring=profiler.enable)
    profiler.disable()
    return profiler


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", default="active")
    parser.add_argument("--store", default="memory")
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--postgres-url", default="postgresql://postgres@127.0.0.1:5432/test")
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="keel-scale-") as tmp:
        profiler = asyncio.run(_profile(options, Path(tmp)))
    stats = pstats.Stats(profiler, stream=sys.stdout).strip_dirs()
    stats.sort_stats("tottime").print_stats(options.top)
    stats.sort_stats("cumulative").print_stats(options.top)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
