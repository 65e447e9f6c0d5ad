"""Starting the servers under test: `keel run` and the bare FastAPI ceiling, both on uvicorn.

Each runs as its own process on a free loopback port and is ready when `/health` answers.
PostgreSQL runs get a fresh schema (created first, dropped afterwards).
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
EXAMPLE = ROOT / "examples" / "support"
KEY = "bench-secret"
HEADERS = {"x-api-key": KEY}
READY_ATTEMPTS = 600
READY_INTERVAL = 0.05


class Unavailable(Exception):
    """A server (or PostgreSQL) could not be used; the message says why."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Served:
    """A server that answers: where, and its process (`--workers 1`: the one serving)."""

    base: str
    """Its base URL."""
    pid: int


def free_port() -> int:
    """A TCP port that was free on 127.0.0.1 a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def keel_command(workers: int, script: Path) -> list[str]:
    """`keel run` on the example agent with a scripted model."""
    return [
        sys.executable, "-m", "keel", "run", str(EXAMPLE),
        "--workers", str(workers), "--model", f"scripted:{script}", "--log-level", "warning",
    ]  # fmt: skip


def profiled(out: Path, command: list[str]) -> list[str]:
    """`command` (a `python -m` one) run by `profiled.py`, which counts calls between
    SIGUSR1 and SIGUSR2 and writes them to `out`."""
    python, flag, *rest = command
    assert flag == "-m", command
    return [python, str(HERE / "profiled.py"), str(out), flag, *rest]


def ceiling_command(workers: int) -> list[str]:
    """uvicorn serving the ceiling app the way `keel run` serves Keel: the h11 protocol
    (Keel's is h11 with a read timeout; uvicorn would pick httptools when installed),
    uvicorn's own choice of event loop (`auto`, as `keel run` leaves it), the access log
    on at level warning (as `keel run --log-level warning` has it)."""
    return [
        sys.executable, "-m", "uvicorn", "ceiling:app", "--app-dir", str(HERE),
        "--workers", str(workers), "--log-level", "warning", "--http", "h11", "--loop", "auto",
    ]  # fmt: skip


@contextmanager
def serving(command: list[str], *, env: dict[str, str], log: Path) -> Iterator[Served]:
    """Run `command` on a free port until the block ends; yields where it answers."""
    port = free_port()
    with log.open("w") as out:
        process = subprocess.Popen(
            [*command, "--host", "127.0.0.1", "--port", str(port)],
            env={**os.environ, **env},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(process, base, log)
        yield Served(base=base, pid=process.pid)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _wait_ready(process: subprocess.Popen[bytes], base: str, log: Path) -> None:
    for _ in range(READY_ATTEMPTS):
        if process.poll() is not None:
            raise Unavailable(f"exited with {process.returncode}:\n{log.read_text()}")
        try:
            if httpx.get(f"{base}/health", timeout=1.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(READY_INTERVAL)
    raise Unavailable(
        f"not ready after {READY_ATTEMPTS * READY_INTERVAL:.0f} s:\n{log.read_text()}"
    )


@contextmanager
def postgres_schema(url: str, name: str) -> Iterator[str]:
    """`url` with a fresh schema `name` as its search path; the schema is dropped at the end."""
    try:
        asyncio.run(asyncio.wait_for(_sql(url, f'CREATE SCHEMA "{name}"'), 10))
    except Exception as exc:
        raise Unavailable(f"PostgreSQL at {url}: {type(exc).__name__}: {exc}") from exc
    separator = "&" if "?" in url else "?"
    try:
        yield f"{url}{separator}options=-csearch_path%3D{name}"
    finally:
        asyncio.run(_sql(url, f'DROP SCHEMA IF EXISTS "{name}" CASCADE'))


async def _sql(url: str, statement: str) -> None:
    from sqlalchemy import text

    from keel.stores.postgres import create_postgres_engine

    engine = create_postgres_engine(url, pool_size=1)
    try:
        async with engine.begin() as conn:
            await conn.execute(text(statement))
    finally:
        await engine.dispose()
