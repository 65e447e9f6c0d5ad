"""Workers of `keel run --workers N` stop when their master process dies.

uvicorn's master starts the workers and stops them when it is told to; a master killed
with SIGKILL (or the OOM killer) cannot, and its orphaned workers would go on answering
on the port, so the next `keel run` there fails with "Address already in use".

`keel run` puts the master's pid in `KEEL_MASTER_PID` when it starts several workers, and
`watch_master` (called as each worker builds its app) makes the worker leave once its
parent is no longer that master: at once on Linux (the kernel sends SIGTERM when the
parent dies, `PR_SET_PDEATHSIG`), and within `WATCH_SECONDS` everywhere (a thread
compares `os.getppid()`). Leaving is uvicorn's SIGTERM shutdown (requests in flight get
`GRACE_SECONDS`, running turns are recorded as cancelled); a worker still there
afterwards exits hard.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import signal
import sys
import threading
import time

MASTER_PID_ENV = "KEEL_MASTER_PID"
"""The pid of the `keel run` master, set for its workers."""

WATCH_SECONDS = 1.0
"""How often a worker checks that its master is still its parent."""

GRACE_SECONDS = 15.0
"""How long an orphaned worker's shutdown may take before it exits hard (longer than
`keel run`'s graceful shutdown, so that one normally finishes first)."""

_PR_SET_PDEATHSIG = 1

_log = logging.getLogger("keel.server")


def watch_master() -> None:
    """In a worker: leave when the master named by `KEEL_MASTER_PID` dies. Does nothing
    in a process started otherwise (a single `keel run` process has no master)."""
    text = os.environ.get(MASTER_PID_ENV, "")
    if not text.isdigit() or int(text) == os.getpid():
        return
    master = int(text)
    _ask_kernel(signal.SIGTERM)
    # The thread looks at once: a master that died before the kernel was asked is found.
    threading.Thread(target=_watch, args=(master,), name="keel-master-watch", daemon=True).start()


def _ask_kernel(sig: signal.Signals) -> None:
    """Linux: have the kernel send `sig` to this process when its parent dies."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
            _log.debug("prctl(PR_SET_PDEATHSIG) failed: errno %d", ctypes.get_errno())


def _watch(master: int) -> None:
    while os.getppid() == master:
        time.sleep(WATCH_SECONDS)
    _leave(master)


def _leave(master: int) -> None:
    _log.warning("the keel run master (pid %d) is gone; this worker stops", master)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(GRACE_SECONDS)
    os._exit(1)
