"""Workers of `keel run --workers N` exit when their master dies (SIGKILL included).

Orphaned workers would keep answering on the port, and the next `keel run` on it would
fail with "Address already in use". The test SIGKILLs a real master, waits (polling, with
a deadline) until its workers are gone and the port is free, then starts again there.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from crash_kit import keel_process, poll
from server_kit import EXAMPLE

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")

WORKERS = 2


def children(pid: int) -> list[int]:
    """The live (not zombie) processes whose parent is `pid`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces, so split after its ')'.
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if int(ppid) == pid and state != "Z":
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie waiting for its reaper counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def port_free(port: int) -> bool:
    """Whether a new server could listen on `port` (as uvicorn binds: SO_REUSEADDR)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


async def test_workers_exit_when_the_master_is_killed(tmp_path: Path) -> None:
    args = [str(EXAMPLE), "--workers", str(WORKERS), "--model", "none"]
    env = {"KEEL_API_KEYS": "t:chat:orphan-secret", "KEEL_DATABASE_URL": "memory://"}
    workers: list[int] = []
    try:
        with keel_process(args, env=env, cwd=tmp_path) as server:
            await server.start()
            assert server.process is not None
            master = server.process.pid

            async def started() -> bool:
                return len(children(master)) >= WORKERS

            await poll(started, f"{WORKERS} workers of {master}")
            workers = children(master)
            server.kill()

            async def gone() -> bool:
                return not any(alive(pid) for pid in workers) and port_free(server.port)

            await poll(gone, f"workers {workers} to exit and port {server.port} to be free")
            await server.start()  # the same port: nothing holds it any more
    finally:
        for pid in workers:
            if alive(pid):  # only when the test failed: leave no orphan behind
                os.kill(pid, signal.SIGKILL)


WORKER = """
import os, signal, sys, time
import keel.server.master_watch as watch
if sys.argv[1] == "poll-only":
    watch._ask_kernel = lambda sig: None  # the portable path alone
signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
watch.watch_master()
print("watching", flush=True)
while True:
    time.sleep(60)
"""
MASTER = """
import os, subprocess, sys
env = {**os.environ, "KEEL_MASTER_PID": str(os.getpid())}  # what keel run sets
command = [sys.executable, "-c", sys.argv[1], sys.argv[2]]
worker = subprocess.Popen(command, stdout=subprocess.PIPE, env=env)
print(worker.pid, worker.stdout.readline().decode().strip(), flush=True)
while True:
    input()
"""


@pytest.mark.parametrize("how", ["kernel", "poll-only"])
async def test_a_worker_leaves_when_its_master_dies(how: str) -> None:
    """`watch_master` alone: with the kernel's parent-death signal, and with only the
    `os.getppid()` watch other systems have."""
    master = subprocess.Popen(
        [sys.executable, "-c", MASTER, WORKER, how], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    worker = 0
    try:
        assert master.stdout is not None
        pid, state = master.stdout.readline().decode().split()
        worker = int(pid)
        assert state == "watching" and alive(worker)
        master.kill()
        master.wait(timeout=10)

        async def gone() -> bool:
            return not alive(worker)

        await poll(gone, f"worker {worker} to leave")
    finally:
        if master.poll() is None:
            master.kill()
        if worker and alive(worker):
            os.kill(worker, signal.SIGKILL)
