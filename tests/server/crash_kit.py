"""Helpers for the kill-and-restart tests: a `keel run` process a test can SIGKILL and
start again on the same database, a model server that holds a call until released, and
bounded polling (no sleeping for state).

`live_server.live_server` (a context manager that always terminates politely) cannot kill
mid-turn; `KeelProcess` can. Both use the same command and readiness check (`/health`).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from live_server import free_port, keel_run_command

from keel.llm.port import ModelRequest, ModelResponse
from keel.testing.openai_wire_server import OpenAIWireServer
from keel.testing.scripted import ReplySource, ScriptedModel

CRASHY = Path(__file__).resolve().parent / "agents" / "crashy"
"""The test agent: `/slow_work` (a tool the test holds) and `/pay` (a confirmed payment)."""

POLL_ATTEMPTS = 400
POLL_INTERVAL = 0.025
"""State is polled at most POLL_ATTEMPTS times, POLL_INTERVAL seconds apart (10 s)."""


async def poll(check: Callable[[], Awaitable[bool]], what: str) -> None:
    """Return once `check()` is true; fail after POLL_ATTEMPTS tries."""
    for _ in range(POLL_ATTEMPTS):
        if await check():
            return
        await asyncio.sleep(POLL_INTERVAL)
    raise AssertionError(f"gave up waiting for {what}")


async def file_appears(path: Path) -> None:
    """Wait until `path` exists (a tool's marker)."""

    async def exists() -> bool:
        return path.exists()

    await poll(exists, f"{path.name} to appear")


def lines(path: Path) -> int:
    """How many lines `path` has (0 when it does not exist): a tool's side-effect count."""
    return len(path.read_text().splitlines()) if path.exists() else 0


class KeelProcess:
    """One `keel run` process at a time on a fixed port; `kill()` SIGKILLs it, `start()`
    starts the next one (same arguments, environment and database)."""

    def __init__(self, args: list[str], *, env: dict[str, str], cwd: Path) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.command = [*keel_run_command(), *args, "--port", str(self.port)]
        self.command += ["--log-level", "warning"]
        self.env = {**os.environ, **env}
        self.cwd = cwd
        self.process: subprocess.Popen[bytes] | None = None
        self.generation = 0

    @property
    def log(self) -> Path:
        """The current process's output."""
        return self.cwd / f"keel-run-{self.generation}.log"

    async def start(self) -> None:
        """Start the server and wait until `/health` answers."""
        assert self.process is None, "already running"
        self.generation += 1
        with self.log.open("w") as out:
            self.process = subprocess.Popen(
                self.command, cwd=self.cwd, env=self.env, stdout=out, stderr=subprocess.STDOUT
            )
        await poll(self._healthy, f"keel run to answer /health ({self.log})")

    async def _healthy(self) -> bool:
        process = self.process
        assert process is not None
        if process.poll() is not None:
            raise AssertionError(f"keel run exited with {process.returncode}:\n{self.output()}")
        try:
            async with httpx.AsyncClient(timeout=1.0) as client:
                return (await client.get(f"{self.base}/health")).status_code == 200
        except httpx.TransportError:
            return False

    def kill(self) -> None:
        """SIGKILL the server (no shutdown hooks run) and reap it."""
        process, self.process = self.process, None
        assert process is not None, "not running"
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        assert process.returncode == -signal.SIGKILL

    def stop(self) -> None:
        """Terminate the server politely if it runs."""
        process, self.process = self.process, None
        if process is None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

    def output(self) -> str:
        """What the current (or last) process printed."""
        return self.log.read_text() if self.log.exists() else ""


@contextmanager
def keel_process(args: list[str], *, env: dict[str, str], cwd: Path) -> Iterator[KeelProcess]:
    """A `KeelProcess` (not started yet) that is stopped when the block ends."""
    server = KeelProcess(args, env=env, cwd=cwd)
    try:
        yield server
    finally:
        server.stop()


class HeldModel(ScriptedModel):
    """A scripted model whose first call is held until the test releases it.

    Special because the test must know the server is inside a model call when it kills
    it: `arrived` is set when the first request comes in. The held call never consumes a
    scripted reply (its answer goes to a dead process); later calls answer from the script.
    """

    UNDELIVERED = "(this reply was for a process that was killed)"

    def __init__(self, replies: list[ReplySource]) -> None:
        super().__init__(replies)
        self.arrived = asyncio.Event()
        self.release = asyncio.Event()
        self.held_requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Hold the first call until `release`; answer the others from the script."""
        if not self.arrived.is_set():
            self.held_requests.append(request)
            self.arrived.set()
            await self.release.wait()
            return ModelResponse(text=self.UNDELIVERED)
        return await super().complete(request)


@contextmanager
def held_model_server(model: HeldModel) -> Iterator[OpenAIWireServer]:
    """An OpenAI-compatible server answering from `model` (call inside the test's loop).

    On exit the held call is released, so no coroutine is left waiting.
    """
    with OpenAIWireServer() as server:
        server.use(model)
        try:
            yield server
        finally:
            model.release.set()
