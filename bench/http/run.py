"""HTTP benchmark: Keel's chat API next to a bare FastAPI endpoint (the ceiling).

    python bench/http/run.py [--requests 2000] [--concurrency 16] [--warmup 200]
                             [--workers 1,3] [--stores sqlite,postgresql] [--write bench/RESULTS.md]

For each worker count it runs, one after another with the same load generator (httpx
async client, a fixed number of requests, a fixed concurrency):

* `ceiling`: `ceiling.py`, a FastAPI endpoint doing the same JSON round trip, on uvicorn;
* `keel` on SQLite and on PostgreSQL: `keel run examples/support --model scripted:...`
  where the scripted model answers "ok" at once (zero latency), so a turn is Keel's own
  work: auth, load and fold the log, route, build the prompt, call the model, persist.

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
from dataclasses import replace
from pathlib import Path
from textwrap import fill

from load import LoadShape, Measured, measure, stage_means
from report import Row, table
from servers import (
    HEADERS,
    KEY,
    ROOT,
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
    parser.add_argument("--workers", default="1,3", help="worker counts, comma-separated")
    parser.add_argument("--stores", default="sqlite,postgresql", help="Keel's stores")
    parser.add_argument(
        "--postgres-url", default=os.environ.get("KEEL_BENCH_POSTGRES_URL", DEFAULT_POSTGRES)
    )
    parser.add_argument("--write", type=Path, help="update the HTTP section of this file")
    return parser.parse_args(argv)


def _measure(base: str, shape: LoadShape) -> Measured:
    return asyncio.run(measure(base, shape, HEADERS))


def _measure_keel(base: str, shape: LoadShape) -> tuple[Measured, dict[str, float]]:
    async def both() -> tuple[Measured, dict[str, float]]:
        measured = await measure(base, shape, HEADERS)
        return measured, await stage_means(base, shape, HEADERS)

    return asyncio.run(both())


def _keel(
    store: str, workers: int, shape: LoadShape, work: Path, postgres_url: str
) -> tuple[Measured, dict[str, float]]:
    script = work / "ok.json"
    # Every worker answers from its own copy of the script: each copy covers every request.
    script.write_text(json.dumps(["ok"] * (shape.requests + shape.warmup + 10)))
    env = {"KEEL_API_KEYS": f"bench:chat:{KEY}", "KEEL_RATE_LIMIT": "off"}
    log = work / f"keel-{store}-{workers}.log"
    if store == "sqlite":
        env["KEEL_DATABASE_URL"] = f"sqlite:///{work / f'bench-{workers}.db'}"
        with serving(keel_command(workers, script), env=env, log=log) as base:
            return _measure_keel(base, shape)
    schema = f"keel_bench_{os.getpid()}_{workers}"
    with postgres_schema(postgres_url, schema) as url:
        env["KEEL_DATABASE_URL"] = url
        with serving(keel_command(workers, script), env=env, log=log) as base:
            return _measure_keel(base, shape)


def _run_all(options: argparse.Namespace, work: Path) -> list[Row]:
    shape = LoadShape(
        requests=options.requests, concurrency=options.concurrency, warmup=options.warmup
    )
    stores = [s for s in options.stores.split(",") if s]
    rows: list[Row] = []
    for workers in (int(w) for w in options.workers.split(",")):
        log = work / f"ceiling-{workers}.log"
        with serving(ceiling_command(workers), env={}, log=log) as base:
            rows.append(
                Row(server="ceiling", store="-", workers=workers, measured=_measure(base, shape))
            )
        _progress(rows[-1])
        for store in stores:
            try:
                measured, stages = _keel(store, workers, shape, work, options.postgres_url)
            except Unavailable as exc:
                print(f"skipped keel on {store} with {workers} worker(s): {exc}", file=sys.stderr)
                continue
            row = Row(server="keel", store=store, workers=workers, measured=measured)
            rows.append(replace(row, stages=stages))
            _progress(rows[-1])
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
        f"{options.requests} measured requests after {options.warmup} warm-up ones, "
        f"{options.concurrency} in flight; each virtual user sends 10 messages to a "
        "conversation, then starts a new one (its first message also runs the session "
        'start). Keel serves examples/support with a scripted model that answers "ok" at '
        "once; the ceiling is a bare FastAPI endpoint with the same route, request "
        "validation and answer shape, no auth, store or engine, on the same uvicorn. "
        "Ratios compare with the ceiling at the same number of workers. `log load` and "
        "`persist` are Keel's own `stage_timed` means per turn (reading the log; appending "
        "to it), wall-clock inside the server."
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
