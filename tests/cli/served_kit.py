"""`keel run` as a real process on a free loopback port, its log read line by line.

`ServedProcess` starts `python -m keel run ...` with stdout and stderr merged into a pipe
that a thread reads into `lines`; `wait_for(pattern)` blocks on a condition until a line
matching the regular expression arrives (or the deadline passes, or the process exits),
so a test waits for the server to say what it did instead of sleeping.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

DEADLINE = 60.0
"""Seconds a test waits at most for a line (a slow shared machine, not an expectation)."""


def free_port() -> int:
    """A TCP port that was free on 127.0.0.1 a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServedProcess:
    """A running `keel run` and what it has printed so far."""

    def __init__(self, args: list[str], *, cwd: Path, env: dict[str, str]) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        command = [sys.executable, "-m", "keel", "run", *args, "--port", str(self.port)]
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self.process = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with self._changed:
                self.lines.append(line.rstrip("\n"))
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def wait_for(self, pattern: str, *, start: int = 0, deadline: float = DEADLINE) -> int:
        """The index of the first line from `start` on that matches `pattern`."""
        expression = re.compile(pattern)
        until = time.monotonic() + deadline
        with self._changed:
            while True:
                for index in range(start, len(self.lines)):
                    if expression.search(self.lines[index]):
                        return index
                left = until - time.monotonic()
                if left <= 0 or (self.process.poll() is not None and not self._reader.is_alive()):
                    raise AssertionError(f"no line matching {pattern!r}:\n{self.log()}")
                self._changed.wait(timeout=left)

    def log(self) -> str:
        """Everything printed so far."""
        with self._changed:
            return "\n".join(self.lines)

    def stop(self) -> None:
        """Terminate the server (SIGTERM) and wait for it."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self._reader.join(timeout=10)


def clean_env() -> dict[str, str]:
    """The environment without configured keys or a store URL (the local defaults apply)."""
    drop = ("KEEL_API_KEYS", "KEEL_API_KEYS_FILE", "KEEL_DATABASE_URL", "KEEL_API_KEY_SALT")
    return {k: v for k, v in os.environ.items() if k not in drop}


@contextmanager
def served(args: list[str], *, cwd: Path) -> Iterator[ServedProcess]:
    """`keel run ARGS` in `cwd` until the block ends, once it has started serving."""
    server = ServedProcess(args, cwd=cwd, env=clean_env())
    try:
        server.wait_for(r"Uvicorn running on http://127\.0\.0\.1:")
        yield server
    finally:
        server.stop()


def say(base: str, key: str, conversation: str, text: str) -> httpx.Response:
    """POST one message to the chat API."""
    return httpx.post(
        f"{base}/v1/conversations/{conversation}/messages",
        json={"text": text},
        headers={"Authorization": f"Bearer {key}"},
        timeout=30.0,
    )
