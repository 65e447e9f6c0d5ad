"""Start `keel run` as a real uvicorn process on a free loopback port, for end-to-end tests."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

READY_ATTEMPTS = 600
READY_INTERVAL = 0.05
"""Readiness is polled at most READY_ATTEMPTS times, READY_INTERVAL seconds apart (30 s: a
`keel run` starting while the other test process keeps the second core busy)."""


POSTGRES_URL = os.environ.get("KEEL_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
REQUIRE_POSTGRES = os.environ.get("KEEL_REQUIRE_POSTGRES") == "1"


@contextmanager
def postgres_schema() -> Iterator[str]:
    """A URL whose search path is a fresh, migrated schema (dropped afterwards).

    Skips the test (fails it when `KEEL_REQUIRE_POSTGRES=1`) when PostgreSQL cannot be
    reached at `KEEL_TEST_POSTGRES_URL`.
    """
    import pytest

    from keel.stores.conformance import PostgresHarness

    harness = PostgresHarness(POSTGRES_URL)
    try:
        asyncio.run(asyncio.wait_for(_create(harness), 10))
    except Exception as exc:
        reason = f"PostgreSQL not reachable at {POSTGRES_URL} ({type(exc).__name__}: {exc})"
        if REQUIRE_POSTGRES:
            pytest.fail(f"{reason}; KEEL_REQUIRE_POSTGRES=1 makes it mandatory")
        pytest.skip(reason)
    separator = "&" if "?" in POSTGRES_URL else "?"
    try:
        yield f"{POSTGRES_URL}{separator}options=-csearch_path%3D{harness.schema}"
    finally:
        asyncio.run(harness.drop())


async def _create(harness: object) -> None:
    store = await harness.open()  # type: ignore[attr-defined]
    await store.close()


def free_port() -> int:
    """A TCP port that was free on 127.0.0.1 a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def keel_run_command() -> list[str]:
    """`python -m keel run` once the CLI has the command, else the command module on its own."""
    from keel.cli.main import app

    if any(command.name == "run" for command in app.registered_commands):
        return [sys.executable, "-m", "keel", "run"]
    return [sys.executable, "-c", "from keel.cli.run_cmd import main; main()"]


@contextmanager
def live_server(args: list[str], *, env: dict[str, str], cwd: Path) -> Iterator[str]:
    """Run `keel run ARGS` until the block ends; yields the base URL once /health answers."""
    port = free_port()
    command = [*keel_run_command(), *args, "--port", str(port), "--log-level", "warning"]
    log = cwd / f"server-{port}.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            command, cwd=cwd, env={**os.environ, **env}, stdout=out, stderr=subprocess.STDOUT
        )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(process, base, log)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _wait_ready(process: subprocess.Popen[bytes], base: str, log: Path) -> None:
    for _ in range(READY_ATTEMPTS):
        if process.poll() is not None:
            raise AssertionError(f"keel run exited with {process.returncode}:\n{log.read_text()}")
        try:
            if httpx.get(f"{base}/health", timeout=1.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(READY_INTERVAL)
    raise AssertionError(f"keel run did not become ready:\n{log.read_text()}")
