"""Store micro-benchmark: the event store's hot path, old and new paths side by side.

    python bench/stores/run.py [--rounds 15] [--repeat 20] [--batch 1,10,44] [--read 44]
                               [--stores sqlite,postgresql] [--postgres-url URL]
                               [--write bench/RESULTS.md]

Cases, each on its own fresh database (a file in a temporary folder on the disk; a fresh
PostgreSQL schema, dropped afterwards):

* SQLite: `sqlalchemy` (the store before the sqlite3 path: SQLAlchemy async on aiosqlite,
  the default `synchronous`, which is FULL), `sqlite3 FULL` and `sqlite3 NORMAL` (the
  shipped `SqliteEventStore` with each setting);
* PostgreSQL: `sqlalchemy` (the store before asyncpg), `sqlalchemy prepared` (SQLAlchemy
  running the asyncpg store's one-statement SQL as prepared driver SQL) and `asyncpg`
  (the shipped `PostgresEventStore`).

Operations: `append N` appends a batch of N events (a mix of user and bot messages, tool
runs, memory and stack events, encoded by `keel.events.codec`) to a new conversation;
`read N` reads a conversation of N events back (decoded); `last_seq`; `lock` enters and
leaves `conversation_lock` (PostgreSQL: the advisory lock on its own connection).

Each round runs every operation `--repeat` times per case, the cases of one database
interleaved in a rotating order, so the machine's drift hits all of them alike. The table
gives the median over rounds of the mean µs per operation, and the ratio against the old
path (`sqlalchemy`) of the same database measured in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from textwrap import fill

from variants import (
    SqlalchemyPostgresStore,
    SqlalchemyPreparedPostgresStore,
    SqlalchemySqliteStore,
)

from keel.events.model import Event
from keel.stores.conformance.samples import messages, varied
from keel.stores.port import EventStore
from keel.stores.postgres import PostgresEventStore, create_postgres_engine
from keel.stores.sqlite import SqliteEventStore

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for results_md
from results_md import write_section

DEFAULT_POSTGRES = "postgresql://postgres@127.0.0.1:5432/test"
WIDTH = 92
TITLE = "Stores"


@dataclass(kw_only=True)
class Case:
    database: str
    name: str
    store: EventStore
    baseline: bool = False
    conversations: int = 0
    timings: dict[str, list[float]] = field(default_factory=dict)
    """Wall-clock µs per operation, one entry per round."""
    cpu: dict[str, list[float]] = field(default_factory=dict)
    """This process's CPU µs per operation (every thread: the loop and the store's)."""

    def fresh(self) -> str:
        self.conversations += 1
        return f"{self.name}-{self.conversations}"

    @property
    def read_id(self) -> str:
        """The conversation `read` and `last_seq` look at (cases may share a database)."""
        return f"{self.name}-read"


def events(count: int) -> list[Event]:
    """`count` events: the conformance samples (every kind of value) and user messages."""
    pool = varied() + messages("bench", 8)
    return [pool[i % len(pool)] for i in range(count)]


Op = Callable[[Case], Awaitable[None]]


def operations(batches: list[int], read_size: int) -> dict[str, Op]:
    ops: dict[str, Op] = {}
    for size in batches:
        batch = events(size)

        async def append(case: Case, batch: list[Event] = batch) -> None:
            await case.store.append(case.fresh(), 0, batch)

        ops[f"append {size}"] = append

    async def read(case: Case) -> None:
        stored = await case.store.read(case.read_id)
        assert len(stored) == read_size

    async def last_seq(case: Case) -> None:
        assert await case.store.last_seq(case.read_id) == read_size

    async def lock(case: Case) -> None:
        async with case.store.conversation_lock(f"{case.name}-lock"):
            pass

    ops[f"read {read_size}"] = read
    ops["last_seq"] = last_seq
    ops["lock"] = lock
    return ops


async def sqlite_cases(folder: Path) -> list[Case]:
    old = await SqlalchemySqliteStore.open(folder / "sqlalchemy.db")
    full = await SqliteEventStore.open(folder / "full.db", synchronous="FULL")
    normal = await SqliteEventStore.open(folder / "normal.db", synchronous="NORMAL")
    return [
        Case(database="sqlite", name="sqlalchemy", store=old, baseline=True),
        Case(database="sqlite", name="sqlite3 FULL", store=full),
        Case(database="sqlite", name="sqlite3 NORMAL", store=normal),
    ]


async def postgres_cases(url: str, schema: str) -> list[Case]:
    new = await PostgresEventStore.open(url, schema=schema)  # creates and migrates it
    old = await SqlalchemyPostgresStore.open(url, schema)
    prepared = await SqlalchemyPreparedPostgresStore.open(url, schema)
    return [
        Case(database="postgresql", name="sqlalchemy", store=old, baseline=True),
        Case(database="postgresql", name="sqlalchemy prepared", store=prepared),
        Case(database="postgresql", name="asyncpg", store=new),
    ]


async def drop_schema(url: str, schema: str) -> None:
    from sqlalchemy import text

    engine = create_postgres_engine(url, pool_size=1)
    try:
        async with engine.begin() as conn:
            await conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
    finally:
        await engine.dispose()


async def measure(cases: list[Case], ops: dict[str, Op], rounds: int, repeat: int) -> None:
    read_size = int(next(name for name in ops if name.startswith("read")).split()[1])
    for case in cases:
        await case.store.append(case.read_id, 0, events(read_size))
        for op in ops.values():  # warm-up: connections, prepared statements, caches
            for _ in range(3):
                await op(case)
    for number in range(rounds):
        for name, op in ops.items():
            shift = number % len(cases)
            for case in cases[shift:] + cases[:shift]:
                start, cpu_start = time.perf_counter_ns(), time.process_time_ns()
                for _ in range(repeat):
                    await op(case)
                elapsed = time.perf_counter_ns() - start
                cpu = time.process_time_ns() - cpu_start
                case.timings.setdefault(name, []).append(elapsed / repeat / 1000)
                case.cpu.setdefault(name, []).append(cpu / repeat / 1000)


def table(cases: list[Case], ops: list[str], *, cpu: bool = False) -> str:
    unit = "CPU µs" if cpu else "µs"
    lines = [
        "| database | path | " + " | ".join(f"{op} {unit}" for op in ops) + " |",
        "| --- | --- | " + " | ".join("---:" for _ in ops) + " |",
    ]
    for case in cases:
        base = next(c for c in cases if c.database == case.database and c.baseline)
        cells = []
        for op in ops:
            mine = statistics.median((case.cpu if cpu else case.timings)[op])
            theirs = statistics.median((base.cpu if cpu else base.timings)[op])
            cells.append(f"{mine:,.0f}" if case is base else f"{mine:,.0f} ({mine / theirs:.2f}x)")
        lines.append(f"| {case.database} | {case.name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def machine() -> str:
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


async def run(options: argparse.Namespace) -> list[Case]:
    batches = [int(size) for size in options.batch.split(",")]
    ops = operations(batches, options.read)
    stores = options.stores.split(",")
    everything: list[Case] = []
    with tempfile.TemporaryDirectory(prefix="keel-bench-stores-", dir=options.folder) as tmp:
        if "sqlite" in stores:
            cases = await sqlite_cases(Path(tmp))
            try:
                await measure(cases, ops, options.rounds, options.repeat)
            finally:
                for case in cases:
                    await case.store.close()
            everything += cases
        if "postgresql" in stores:
            schema = f"keel_bench_stores_{os.getpid()}"
            try:
                cases = await postgres_cases(options.postgres_url, schema)
                try:
                    await measure(cases, ops, options.rounds, options.repeat)
                finally:
                    for case in cases:
                        await case.store.close()
                everything += cases
            finally:
                await drop_schema(options.postgres_url, schema)
    return everything


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--repeat", type=int, default=20, help="operations per case and round")
    parser.add_argument("--batch", default="1,10,44", help="append batch sizes")
    parser.add_argument("--read", type=int, default=44, help="events of the read conversation")
    parser.add_argument("--stores", default="sqlite,postgresql")
    parser.add_argument(
        "--postgres-url", default=os.environ.get("KEEL_BENCH_POSTGRES_URL", DEFAULT_POSTGRES)
    )
    parser.add_argument("--folder", help="where the SQLite files go (default: the temp folder)")
    parser.add_argument("--write", type=Path, help="update the Stores section of this file")
    options = parser.parse_args(argv)
    load = os.getloadavg()[0]
    cases = asyncio.run(run(options))
    ops = list(cases[0].timings)
    result = table(cases, ops) + "\n\n" + table(cases, ops, cpu=True)
    print(result)
    if options.write:
        command = shlex.join(["python", "bench/stores/run.py", *argv])
        where = (
            f"Measured on {time.strftime('%Y-%m-%d')}: {machine()}; SQLite "
            f"{__import__('sqlite3').sqlite_version}, files on the local disk "
            f"(1-minute load average {load:.2f} before the run)."
        )
        how = (
            f"{options.rounds} rounds of {options.repeat} operations per case, cases "
            "interleaved; median over rounds of the mean µs per operation, and (in "
            "brackets) the ratio against the old path of the same database, `sqlalchemy`, "
            "measured in the same run. `append N`: one batch of N events to a new "
            f"conversation; `read {options.read}`: a whole conversation, decoded; `lock`: "
            "enter and leave `conversation_lock`. The first table is wall-clock time (it "
            "includes the disk's fsync and the PostgreSQL server's work); the second the "
            "CPU time of this process, all threads (what the path itself costs Keel, "
            "whatever the disk)."
        )
        body = "\n".join(
            [fill(where, WIDTH), "", "```sh", command, "```", "", fill(how, WIDTH), "", result]
        )
        write_section(options.write, TITLE, body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
