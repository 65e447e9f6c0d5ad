"""Run a server module under cProfile, counting only between two signals.

    python bench/http/profiled.py OUT.prof -m keel run ... | -m uvicorn ...

The module runs as `python -m` would run it (one process: `--workers 1`). SIGUSR1 starts
the profiler on the main thread (the event loop's), SIGUSR2 stops it and writes the stats
to OUT.prof, so a caller counts exactly the calls of the requests it sends in between.
Threads (the SQLite store's, the thread pool's) are not counted.
"""

from __future__ import annotations

import cProfile
import runpy
import signal
import sys
from types import FrameType


def main(argv: list[str]) -> None:
    """Profile `-m module args...` between SIGUSR1 and SIGUSR2, writing to argv[0]."""
    out, flag, module, *rest = argv
    if flag != "-m":
        raise SystemExit("usage: profiled.py OUT.prof -m module [args...]")
    profiler = cProfile.Profile()

    def start(_signum: int, _frame: FrameType | None) -> None:
        profiler.enable()

    def stop(_signum: int, _frame: FrameType | None) -> None:
        profiler.disable()
        profiler.dump_stats(out)

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    sys.argv = [module, *rest]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
