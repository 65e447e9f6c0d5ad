"""The cost of running a tool call in a worker thread (`keel.tools.threads`) instead of on
the event loop: the same trivial tool through `run_tool`, both ways, many times.

    python bench/tools/threads.py [--calls 3000] [--write bench/RESULTS.md]

It also runs `--concurrent` calls at once (default 8: as many as the pool has threads) to
show the threads' throughput when calls overlap. Only wall-clock time per call is measured;
the tool does nothing, so the numbers are the dispatch overhead alone.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for results_md
from results_md import write_section

from keel.tools import ToolDefinition, run_tool, tool, tool_definition

TITLE = "Tool threads"


def _definitions() -> tuple[ToolDefinition, ToolDefinition]:
    @tool(description="Answer at once, on the event loop.", blocking=False)
    async def on_loop(n: int) -> dict[str, int]:
        return {"n": n}

    @tool(description="Answer at once, in a worker thread.", blocking=True)
    async def in_thread(n: int) -> dict[str, int]:
        return {"n": n}

    loop_def, thread_def = tool_definition(on_loop), tool_definition(in_thread)
    assert loop_def is not None and thread_def is not None and thread_def.runs_in_thread
    return loop_def, thread_def


async def _per_call(definition: ToolDefinition, calls: int) -> list[float]:
    times: list[float] = []
    for n in range(calls):
        start = time.perf_counter()
        run = await run_tool(definition, {"n": n}, context=None, timeout=30)
        times.append((time.perf_counter() - start) * 1e6)
        assert not run.is_error
    return times


async def _overlapped(definition: ToolDefinition, calls: int, width: int) -> float:
    async def one(n: int) -> None:
        run = await run_tool(definition, {"n": n}, context=None, timeout=30)
        assert not run.is_error

    start = time.perf_counter()
    for first in range(0, calls, width):
        await asyncio.gather(*(one(n) for n in range(first, min(first + width, calls))))
    return calls / (time.perf_counter() - start)


def _row(name: str, times: list[float], rate: float) -> str:
    q = statistics.quantiles(times, n=100)
    return f"| {name} | {statistics.mean(times):.1f} | {q[49]:.1f} | {q[98]:.1f} | {rate:,.0f} |"


async def _main(calls: int, width: int) -> str:
    on_loop, in_thread = _definitions()
    measure: list[tuple[str, ToolDefinition]] = [
        ("on the loop", on_loop),
        ("worker thread", in_thread),
    ]
    await _per_call(in_thread, 50)  # warm-up: the pool starts its threads
    await _per_call(on_loop, 50)
    rows = []
    results: dict[str, float] = {}
    for name, definition in measure:
        times = await _per_call(definition, calls)
        rate = await _overlapped(definition, calls, width)
        results[name] = statistics.mean(times)
        rows.append(_row(name, times, rate))
    extra = results["worker thread"] - results["on the loop"]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return "\n".join(
        [
            f"Measured on {date.today().isoformat()}: {os.cpu_count()} CPU(s); Python "
            f"{platform.python_version()} on {platform.system()} {platform.release()} "
            f"(1-minute load average {load:.2f} before the run).",
            "",
            "```sh",
            f"python bench/tools/threads.py --calls {calls} --concurrent {width} "
            "--write bench/RESULTS.md",
            "```",
            "",
            f"{calls} sequential calls of a tool that returns at once, through `run_tool`, on "
            f"the event loop and in a worker thread (its own loop, `keel.tools.threads`); then "
            f"the same number of calls {width} at a time. Microseconds per call.",
            "",
            f"| where the tool runs | mean µs | p50 µs | p99 µs | calls/s, {width} at a time |",
            "| --- | ---: | ---: | ---: | ---: |",
            *rows,
            "",
            f"A worker thread adds about {extra:.0f} µs to a call (the hand-off to the thread "
            "and back to the loop): small beside a model call or a database query, and the "
            "price of a `tool_timeout` that holds for blocking code. Tools that do not block "
            "stay on the loop and pay nothing.",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--concurrent", type=int, default=8)
    parser.add_argument(
        "--write", type=Path, default=None, help="rewrite this section of RESULTS.md"
    )
    args = parser.parse_args(argv)
    body = asyncio.run(_main(args.calls, args.concurrent))
    print(body)
    if args.write is not None:
        write_section(args.write, TITLE, body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
