"""HTTP benchmark: Keel's chat API next to a bare FastAPI endpoint (the ceiling).

    python bench/http/run.py [--requests 2000] [--concurrency 16] [--warmup 200] [--rounds 5]
                             [--workers 1,3] [--stores sqlite,postgresql] [--write bench/RESULTS.md]

For each worker count it starts, side by side, with the same load generator (httpx async
client, a fixed number of requests, a fixed concurrency):

* `ceiling`: `ceiling.py`, a FastAPI endpoint doing the same JSON round trip, on uvicorn;
* `keel` on SQLite and on PostgreSQL: `keel run examples/support --model scripted:...`
  where the scripted model answers "ok" at once (zero latency), so a turn is Keel's own
  work: auth, load and fold the log, route, build the prompt, call the model, persist.

Each server is warmed up, then the measured requests are sent in `--rounds` rounds; every
round measures each server in turn (the order rotating), so a change in the machine's
other load falls on all of them alike. A server's numbers are its rounds added up; the
ratio against the ceiling is given with the range of the rounds' ratios.

It prints a table (turns per second, p50/p99 latency, ratios against the ceiling with the
same workers) and, with `--write`, puts it in the "HTTP" section of bench/RESULTS.md with
the command. PostgreSQL comes from `--postgres-url` (default `KEEL_BENCH_POSTGRES_URL`,
else `postgresql://postgres@127.0.0.1:5432/test`); each run gets a fresh schema. It is
left out, with the reason printed, when it cannot be reached.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shlex
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from textwrap import fill

from load import LoadShape, Measured, measure, merged, stage_means
from report import Row, table
from servers import (
    HEADERS,
    KEY,
    ROOT,
    Served,
    Unavailable,
    ceiling_command,
    keel_command,
    postgres_schema,
    serving,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for results_md
from results_md import write_section

DEFAULT_POSTGRES = "postgresql://postgres@127.0.0.1:5432/test"
WIDTH = 92


def _options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000, help="measured requests per run")
    parser.add_argument("--concurrency", type=int, default=16, help="requests in flight")
    parser.add_argument("--warmup", type=int, default=200, help="requests before measuring")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    parser.add_argument("--workers", default="1,3", help="worker counts, comma-separated")
    parser.add_argument("--stores", default="sqlite,postgresql", help="Keel's stores")
    parser.add_argument(
        "--postgres-url", default=os.environ.get("KEEL_BENCH_POSTGRES_URL", DEFAULT_POSTGRES)
    )
    parser.add_argument("--write", type=Path, help="update the HTTP section of this file")
    return parser.parse_args(argv)


@dataclass(kw_only=True, slots=True)
class _Target:
    server: str
    store: str
    served: Served
    rounds: list[Measured] = field(default_factory=list)


@contextmanager
def _keel(
    store: str, workers: int, script: Path, work: Path, postgres_url: str
) -> Iterator[Served]:
    env = {"KEEL_API_KEYS": f"bench:chat:{KEY}", "KEEL_RATE_LIMIT": "off"}
    log = work / f"keel-{store}-{workers}.log"
    if store == "sqlite":
        env["KEEL_DATABASE_URL"] = f"sqlite:///{work / f'bench-{workers}.db'}"
        with serving(keel_command(workers, script), env=env, log=log) as served:
            yield served
        return
    schema = f"keel_bench_{os.getpid()}_{workers}"
    with postgres_schema(postgres_url, schema) as url:
        env["KEEL_DATABASE_URL"] = url
        with serving(keel_command(workers, script), env=env, log=log) as served:
            yield served


def _targets(
    stack: ExitStack, options: argparse.Namespace, workers: int, work: Path, shape: LoadShape
) -> list[_Target]:
    log = work / f"ceiling-{workers}.log"
    ceiling = stack.enter_context(serving(ceiling_command(workers), env={}, log=log))
    targets = [_Target(server="ceiling", store="-", served=ceiling)]
    script = work / "ok.json"
    # Every worker answers from its own copy of the script: each copy covers every request.
    script.write_text(json.dumps(["ok"] * (shape.requests + shape.warmup + 10)))
    for store in (s for s in options.stores.split(",") if s):
        try:
            served = stack.enter_context(_keel(store, workers, script, work, options.postgres_url))
        except Unavailable as exc:
            print(f"skipped keel on {store} with {workers} worker(s): {exc}", file=sys.stderr)
            continue
        targets.append(_Target(server="keel", store=store, served=served))
    return targets


def _run_workers(options: argparse.Namespace, workers: int, work: Path) -> list[Row]:
    shape = LoadShape(
        requests=options.requests, concurrency=options.concurrency, warmup=options.warmup
    )
    rounds = max(1, min(options.rounds, options.requests))
    tags = [f"r{n}" for n in range(rounds)]
    with ExitStack() as stack:
        targets = _targets(stack, options, workers, work, shape)
        for target in targets:
            asyncio.run(measure(target.served.base, replace(shape, requests=0), HEADERS, "warm"))
        for n, tag in enumerate(tags):
            share = options.requests // rounds + (1 if n < options.requests % rounds else 0)
            part = replace(shape, requests=share, warmup=0)
            for target in targets[n % len(targets) :] + targets[: n % len(targets)]:
                target.rounds.append(asyncio.run(measure(target.served.base, part, HEADERS, tag)))
        rows = []
        for target in targets:
            stages: dict[str, float] = {}
            if target.server == "keel":
                stages = asyncio.run(stage_means(target.served.base, shape, HEADERS, tags))
            rows.append(
                Row(
                    server=target.server,
                    store=target.store,
                    workers=workers,
                    measured=merged(target.rounds),
                    rounds=tuple(m.per_second for m in target.rounds),
                    stages=stages,
                )
            )
            _progress(rows[-1])
    return rows


def _run_all(options: argparse.Namespace, work: Path) -> list[Row]:
    rows: list[Row] = []
    for workers in (int(w) for w in options.workers.split(",")):
        rows.extend(_run_workers(options, workers, work))
    return rows


def _progress(row: Row) -> None:
    m = row.measured
    note = f" (first error: {m.first_error})" if m.first_error else ""
    print(
        f"  {row.server:<7} {row.store:<10} workers={row.workers}: {m.per_second:,.0f} turns/s, "
        f"p50 {m.percentile(50):.1f} ms, p99 {m.percentile(99):.1f} ms, "
        f"{m.errors} errors{note}",
        file=sys.stderr,
    )


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return (
        f"{os.cpu_count()} CPU(s), {cpu}; Python {platform.python_version()} on "
        f"{platform.system()} {platform.release()}"
    )


def _section(options: argparse.Namespace, argv: list[str], rows: list[Row], load: float) -> str:
    command = shlex.join(["python", "bench/http/run.py", *argv])
    where = (
        f"Measured on {time.strftime('%Y-%m-%d')}: {_machine()}. The load generator runs on "
        f"the same machine as the servers (1-minute load average {load:.2f} just before the "
        "run: other work on the machine shows up in the numbers)."
    )
    how = (
        f"{options.requests} measured requests per server after {options.warmup} warm-up "
        f"ones, {options.concurrency} in flight, in {options.rounds} interleaved rounds (each "
        "round measures every server in turn, the order rotating; the servers run side by "
        "side); each virtual user sends 10 messages to a "
        "conversation, then starts a new one (its first message also runs the session "
        'start). Keel serves examples/support with a scripted model that answers "ok" at '
        "once; the ceiling is a bare FastAPI endpoint with the same route, request "
        "validation and answer shape, no auth, store or engine, on the same uvicorn "
        "(h11, the same event loop, the access log at level warning). "
        "Ratios compare with the ceiling at the same number of workers, all rounds added "
        "up, with the lowest and highest round's ratio in brackets. `log load` and "
        "`persist` are Keel's own stage timings, means per turn (reading the log; "
        "appending to it), wall-clock inside the server."
    )
    return "\n".join(
        [fill(where, WIDTH), "", "```sh", command, "```", "", fill(how, WIDTH), "", table(rows)]
    )


def main(argv: list[str]) -> int:
    """Run the benchmark; 1 when any request failed."""
    options = _options(argv)
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="keel-bench-") as tmp:
        rows = _run_all(options, Path(tmp))
    print(table(rows))
    if options.write is not None:
        path = options.write if options.write.is_absolute() else ROOT / options.write
        write_section(path, "HTTP", _section(options, argv, rows, load))
        print(f"wrote the HTTP section of {path}", file=sys.stderr)
    return 1 if any(row.measured.errors for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
