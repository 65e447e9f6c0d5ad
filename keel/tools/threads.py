"""Tool calls that block, run in worker threads so their deadline holds (docs/tools.md).

A tool that blocks inside `async def` (sqlite3, `time.sleep`, `requests`) holds the event
loop: `asyncio.timeout` cannot interrupt it, and every other conversation of the process
waits. Such calls (`ToolDefinition.runs_in_thread`, sync and blocking post-write hooks) run
here instead: each worker thread has its **own event loop** and runs one call at a time;
the caller awaits the result on its loop with the deadline, so the loop stays free.

* **Deadline.** Past it the call is reported `TimedOut` (`tool.timeout`) at once; the
  worker's coroutine is cancelled at its next `await`, but code blocked in C (a sqlite
  query) cannot be stopped: **a thread cannot be killed**. Its thread stays busy until the
  call returns; its late result (and memory it writes after the deadline) is discarded,
  and both the overrun and the late return are logged at WARNING on `keel.tools`.
* **Bounded.** At most `size` threads (`KEEL_TOOL_THREADS`, default 8), started when
  needed, daemon threads (a stuck one never blocks the process from exiting). When all are
  busy a call waits for one within its own deadline, so stuck calls make later blocking
  calls time out rather than pile up without end; a WARNING says the pool is full.
* **Cancellation** of the calling task (a cancelled turn) is passed on: the worker's
  coroutine is cancelled at its next `await`, and the caller waits for it, at most until
  the call's deadline, before the `CancelledError` propagates, so memory the tool wrote
  before the cancellation is kept as for a tool on the loop.
* The call runs in a copy of the caller's `contextvars` context.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any, Final

from keel.tools.guarded import Finished, Outcome, Raised, TimedOut, seconds

_log = logging.getLogger("keel.tools")

DEFAULT_THREADS: Final = 8
THREADS_ENV: Final = "KEEL_TOOL_THREADS"
"""Environment variable: how many worker threads blocking tools may use at most."""

Make = Callable[[], Coroutine[Any, Any, object]]


class _Skipped:
    """The call was cancelled before a worker started it."""


class _Job:
    """One call: made and run on a worker's loop, cancellable from the caller's."""

    def __init__(self, make: Make, name: str) -> None:
        self.make, self.name = make, name
        self.future: concurrent.futures.Future[object] = concurrent.futures.Future()
        self.context = contextvars.copy_context()
        self._lock = threading.Lock()
        self._cancelled = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[object] | None = None
        self.thread: str | None = None

    def run(self, loop: asyncio.AbstractEventLoop) -> None:
        """In the worker thread: run the call to its end and settle `future`."""
        if not self.future.set_running_or_notify_cancel():
            return
        with self._lock:
            if self._cancelled:
                self.future.set_result(_Skipped())
                return
            self.thread = threading.current_thread().name
            task = loop.create_task(self.make(), context=self.context)
            self._loop, self._task = loop, task
        try:
            self.future.set_result(loop.run_until_complete(task))
        except BaseException as exc:  # the tool's failure, or its cancellation
            self.future.set_exception(exc if isinstance(exc, Exception) else _Cancelled(self.name))

    def cancel(self) -> None:
        """From the caller: skip the call if it has not started, else cancel its coroutine
        at its next `await` (blocking code runs on until it returns)."""
        with self._lock:
            self._cancelled = True
            if self._task is not None and self._loop is not None and not self._loop.is_closed():
                self._loop.call_soon_threadsafe(self._task.cancel)


class _Cancelled(Exception):
    """The worker's coroutine ended cancelled (only after `_Job.cancel`, or the tool's own)."""


class ToolThreads:
    """A bounded set of worker threads, each with its own event loop."""

    def __init__(self, size: int = DEFAULT_THREADS) -> None:
        if size < 1:
            raise ValueError("a tool thread pool needs at least one thread")
        self.size = size
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._idle = 0
        self._queued = 0
        self._busy = 0

    @property
    def busy(self) -> int:
        """Threads running a call now (stuck ones included)."""
        return self._busy

    async def call(self, make: Make, timeout: float, *, name: str) -> Outcome:
        """Run `make()` in a worker thread for at most `timeout` seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        job = _Job(make, name)
        waiting = asyncio.wrap_future(self._submit(job))
        limit = asyncio.timeout_at(deadline)
        try:
            async with limit:
                value = await asyncio.shield(waiting)
        except asyncio.CancelledError:
            job.cancel()  # the turn was cancelled: pass it on, wait for the tool to stop
            await _settle(waiting, deadline)
            raise
        except Exception as exc:
            if not limit.expired():
                return Raised(error=exc)
            job.cancel()
            self._overran(job, waiting, timeout)
            return TimedOut()
        if isinstance(value, _Skipped):  # pragma: no cover - only after a cancel
            raise asyncio.CancelledError
        return Finished(value=value)

    def _submit(self, job: _Job) -> concurrent.futures.Future[object]:
        with self._lock:
            self._queued += 1
            if self._queued > self._idle and len(self._threads) < self.size:
                thread = threading.Thread(
                    target=self._work, name=f"keel-tool-{len(self._threads) + 1}", daemon=True
                )
                self._threads.append(thread)
                thread.start()
            full = self._busy >= self.size
        if full:
            _log.warning(
                "all %d tool threads are busy (calls past their deadline may be stuck); "
                "tool %s waits for a free one within its timeout",
                self.size,
                job.name,
            )
        self._jobs.put(job)
        return job.future

    def _work(self) -> None:
        loop = asyncio.new_event_loop()  # this thread's own loop, for all its calls
        asyncio.set_event_loop(loop)
        while True:
            with self._lock:
                self._idle += 1
            job = self._jobs.get()
            with self._lock:
                self._idle -= 1
                self._queued -= 1
                self._busy += 1
            try:
                job.run(loop)
            finally:
                with self._lock:
                    self._busy -= 1

    def _overran(self, job: _Job, waiting: asyncio.Future[object], timeout: float) -> None:
        started = time.monotonic()
        _log.warning(
            "tool %s overran its %s s deadline in thread %s: reported as tool.timeout; the "
            "thread cannot be stopped and stays busy until the call returns (%d of %d busy)",
            job.name,
            seconds(timeout),
            job.thread or "(not started)",
            self._busy,
            self.size,
        )

        def late(done: asyncio.Future[object]) -> None:
            if done.cancelled():
                return
            error = done.exception()  # retrieved, so asyncio does not complain
            if isinstance(done.result() if error is None else None, _Skipped):
                return
            _log.warning(
                "tool %s returned %.1f s after its deadline%s; the late result is discarded",
                job.name,
                time.monotonic() - started,
                f" (raising {type(error).__name__})" if error is not None else "",
            )

        waiting.add_done_callback(late)


async def _settle(waiting: asyncio.Future[object], deadline: float) -> None:
    """Wait for a cancelled call to stop, at most until `deadline`; its outcome is dropped."""
    try:
        async with asyncio.timeout_at(deadline):
            await asyncio.shield(waiting)
    except BaseException:
        pass


_default: ToolThreads | None = None
_default_lock = threading.Lock()


def tool_threads() -> ToolThreads:
    """The process's pool (size from `KEEL_TOOL_THREADS`, default 8), made on first use."""
    global _default
    with _default_lock:
        if _default is None:
            _default = ToolThreads(_size_from_env())
        return _default


def _size_from_env() -> int:
    raw = os.environ.get(THREADS_ENV, "").strip()
    if not raw:
        return DEFAULT_THREADS
    try:
        size = int(raw)
    except ValueError:
        size = 0
    if size < 1:
        _log.warning(
            "%s=%r is not a whole number >= 1; using %d", THREADS_ENV, raw, DEFAULT_THREADS
        )
        return DEFAULT_THREADS
    return size
