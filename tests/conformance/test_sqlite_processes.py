"""Several processes appending to one SQLite file: each has its own writer thread, and
SQLite's write lock (BEGIN IMMEDIATE, the busy timeout) serialises them."""

import subprocess
import sys
from pathlib import Path

from keel.stores.sqlite import SqliteEventStore

WRITER = """
import asyncio, sys
from keel.errors import ConcurrencyConflict
from keel.events.model import UserMessage
from keel.stores.sqlite import SqliteEventStore

async def main(path: str, tag: str, turns: int) -> None:
    store = await SqliteEventStore.open(path)
    print("ready", flush=True)
    sys.stdin.readline()  # the start signal: every writer is open, all start at once
    try:
        for turn in range(turns):
            batch = [
                UserMessage(text=f"{tag} {turn} {part}", message_id=f"{tag}-{turn}-{part}")
                for part in ("a", "b")
            ]
            while True:
                last = await store.last_seq("conv")
                try:
                    await store.append("conv", last, batch)
                    break
                except ConcurrencyConflict:
                    continue
    finally:
        await store.close()

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""

PROCESSES = 3
TURNS = 100


async def test_processes_appending_to_one_file_lose_and_interleave_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "shared.db"
    await (await SqliteEventStore.open(path)).close()  # created and migrated once
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), f"p{i}", str(TURNS)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(PROCESSES)
    ]
    for writer in writers:
        assert writer.stdout is not None
        assert writer.stdout.readline() == "ready\n"
    for writer in writers:
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.close()
    assert [writer.wait(timeout=120) for writer in writers] == [0] * PROCESSES
    store = await SqliteEventStore.open(path)
    try:
        log = await store.read("conv")
    finally:
        await store.close()
    assert [item.seq for item in log] == list(range(1, 2 * PROCESSES * TURNS + 1))
    texts = [getattr(item.event, "text", "") for item in log]
    # Each append's two events are adjacent and in order; every turn is there exactly once.
    pairs = [(texts[i], texts[i + 1]) for i in range(0, len(texts), 2)]
    assert all(a.endswith(" a") and b == a[:-1] + "b" for a, b in pairs)
    assert sorted(a[:-2] for a, _ in pairs) == sorted(
        f"p{i} {turn}" for i in range(PROCESSES) for turn in range(TURNS)
    )
