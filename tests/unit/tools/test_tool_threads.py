"""Blocking tools: the source scan (`tool.blocking_io_in_async`) and the worker threads that
keep a blocking call's deadline (`keel.tools.threads`). Calls block on `threading.Event`s
the test controls; nothing sleeps."""

from __future__ import annotations

import ast
import asyncio
import logging
import threading
from pathlib import Path

import pytest

from keel.tools import run_tool, tool, tool_definition
from keel.tools.blocking import BlockingCall, scan_blocking_calls
from keel.tools.guarded import Finished, Raised, TimedOut
from keel.tools.load import load_tool_file
from keel.tools.threads import ToolThreads

SOURCE = """
import sqlite3, time, requests, aiofiles
from time import sleep

def _db():
    return sqlite3.connect("x.db")

async def via_helper():
    return _db()

async def direct():
    time.sleep(1)
    requests.get("http://example.invalid")
    with open("f") as f:
        return f.read()

async def clean():
    async with aiofiles.open("f") as f:
        return await f.read()

async def hidden():
    sleep(1)

def sync_tool():
    time.sleep(1)
"""


def test_the_scan_sees_blocking_calls_in_async_defs_and_their_local_helpers() -> None:
    found = scan_blocking_calls(ast.parse(SOURCE))
    lines = {
        name: n
        for n, name in enumerate(SOURCE.splitlines(), 1)
        if name.startswith(("async def", "def"))
    }
    assert found[lines["async def via_helper():"]] == (
        BlockingCall(call="sqlite3.connect", line=6),
    )
    assert [c.call for c in found[lines["async def direct():"]]] == [
        "time.sleep",
        "requests.get",
        "open",
    ]
    # Not seen: an async library, an imported alias, and sync functions (only async defs).
    assert lines["async def clean():"] not in found
    assert lines["async def hidden():"] not in found
    assert lines["def sync_tool():"] not in found


def _module(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "tools.py"
    path.write_text("import sqlite3\nfrom keel.tools import tool\n\n" + body)
    return path


@pytest.mark.parametrize(
    ("flag", "warns", "in_thread"),
    [("", True, True), (", blocking=True", False, True), (", blocking=False", False, False)],
)
def test_the_loader_warns_with_file_and_line_unless_the_tool_says(
    tmp_path: Path, flag: str, warns: bool, in_thread: bool
) -> None:
    body = (
        f'@tool(description="Read."{flag})\n'
        "async def read() -> int:\n"
        '    c = sqlite3.connect(":memory:")\n'
        "    return 1\n"
    )
    loaded = load_tool_file(
        _module(tmp_path, body), project_root=tmp_path, module_name=f"t_{len(flag)}"
    )
    codes = [(d.code, d.file, d.line, d.severity) for d in loaded.diagnostics]
    assert codes == ([("tool.blocking_io_in_async", "tools.py", 6, "warning")] if warns else [])
    assert loaded.tools[0].runs_in_thread is in_thread


async def _blocked(gate: threading.Event, started: threading.Event) -> str:
    started.set()
    gate.wait(30)  # blocks the worker thread, not the caller's loop
    return "late"


async def test_a_call_past_its_deadline_times_out_and_its_late_result_is_discarded(
    caplog: pytest.LogCaptureFixture,
) -> None:
    threads = ToolThreads(size=1)
    gate, started = threading.Event(), threading.Event()
    with caplog.at_level(logging.WARNING, logger="keel.tools"):
        outcome = await threads.call(lambda: _blocked(gate, started), 0.05, name="slow")
        assert isinstance(outcome, TimedOut)
        assert started.is_set() and not gate.is_set()  # it timed out while still blocked
        assert threads.busy == 1
        gate.set()
        # The pool has one thread: this call runs once the blocked one has returned.
        after = await threads.call(lambda: asyncio.sleep(0, result="next"), 30, name="next")
        assert after == Finished(value="next")
        await asyncio.sleep(0)  # let the late result's callback run on this loop
    messages = [r.getMessage() for r in caplog.records]
    assert any("slow overran its 0.05 s deadline" in m for m in messages)
    assert any("slow returned" in m and "discarded" in m for m in messages)


async def test_a_full_pool_makes_later_calls_time_out_not_pile_up(
    caplog: pytest.LogCaptureFixture,
) -> None:
    threads = ToolThreads(size=1)
    gate, started = threading.Event(), threading.Event()
    try:
        with caplog.at_level(logging.WARNING, logger="keel.tools"):
            first = await threads.call(lambda: _blocked(gate, started), 0.05, name="stuck")
            second = await threads.call(lambda: asyncio.sleep(0), 0.05, name="queued")
        assert isinstance(first, TimedOut) and isinstance(second, TimedOut)
        assert any("all 1 tool threads are busy" in r.getMessage() for r in caplog.records)
    finally:
        gate.set()


async def test_errors_and_values_come_back_and_the_loop_is_the_workers_own() -> None:
    threads = ToolThreads(size=2)
    caller = asyncio.get_running_loop()

    async def where() -> bool:
        return asyncio.get_running_loop() is not caller

    async def fails() -> None:
        raise ValueError("no ledger")

    assert await threads.call(where, 30, name="where") == Finished(value=True)
    outcome = await threads.call(fails, 30, name="fails")
    assert isinstance(outcome, Raised) and str(outcome.error) == "no ledger"


async def test_a_cancelled_turn_cancels_the_call_at_its_next_await() -> None:
    threads = ToolThreads(size=1)
    started, stopped = threading.Event(), threading.Event()

    async def waits() -> None:
        started.set()
        try:
            await asyncio.Event().wait()  # never set: only a cancellation ends it
        finally:
            stopped.set()

    task = asyncio.ensure_future(threads.call(waits, 30, name="waits"))
    assert await asyncio.to_thread(started.wait, 30)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert stopped.is_set()  # the caller waited for the tool to see the cancellation


async def test_run_tool_sends_a_blocking_tool_to_a_thread() -> None:
    caller = asyncio.get_running_loop()

    @tool(description="Where do I run?", blocking=True)
    async def where() -> bool:
        return asyncio.get_running_loop() is not caller

    definition = tool_definition(where)
    assert definition is not None and definition.runs_in_thread
    run = await run_tool(definition, {}, context=None, timeout=30)
    assert (run.outcome, run.llm_response) == ("success", True)
