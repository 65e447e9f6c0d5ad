"""Await a tool or hook call under a deadline, turning its failures into values.

Three outcomes: it finished (`Finished`), it raised an `Exception` (`Raised`), or the deadline
passed (`TimedOut`). A cancellation of the calling task is never turned into a value: it
propagates, even when the called code swallowed the `CancelledError` it saw at its `await`
(the task's pending cancellation count tells). A `CancelledError` the called code raises
while nobody cancelled this task (it awaited something that another party cancelled) is the
tool's failure, not a cancellation of the turn, and comes back as `Raised`.
"""

from __future__ import annotations

import asyncio
import types
from collections.abc import Awaitable, Callable, Coroutine, Generator
from dataclasses import dataclass
from types import CoroutineType
from typing import Any


@dataclass(frozen=True, kw_only=True, slots=True)
class Finished:
    """The call returned `value`."""

    value: object


@dataclass(frozen=True, kw_only=True, slots=True)
class Raised:
    """The call raised `error`."""

    error: BaseException


@dataclass(frozen=True, kw_only=True, slots=True)
class TimedOut:
    """The deadline passed before the call finished (it was cancelled)."""


Outcome = Finished | Raised | TimedOut


async def guarded(call: Callable[[], Awaitable[object]], timeout: float) -> Outcome:
    """Await `call()` for at most `timeout` seconds; CancelledError of this task propagates.

    A coroutine is first run up to its first suspension: one that finishes without ever
    suspending (most tools that answer from memory) cannot be interrupted by a deadline
    anyway, and takes no timer; one that suspends goes on under the deadline, counted
    from the start."""
    task = asyncio.current_task()
    cancelling_before = task.cancelling() if task is not None else 0
    at = asyncio.get_running_loop().time() + timeout
    outcome: Outcome
    try:
        awaitable = call()
        started = type(awaitable) is CoroutineType
        first = awaitable.send(None) if started else None  # type: ignore[attr-defined]
    except StopIteration as stop:
        outcome = Finished(value=stop.value)
    except asyncio.CancelledError as exc:
        if task is None or task.cancelling() > cancelling_before:
            raise
        outcome = Raised(error=exc)
    except Exception as exc:  # no deadline yet: a TimeoutError here is the tool's own
        outcome = Raised(error=exc)
    else:
        rest = _resumed(awaitable, first) if started else awaitable  # type: ignore[arg-type]
        outcome = await _under_deadline(rest, at, task, cancelling_before)
    if task is not None and task.cancelling() > cancelling_before:
        # Someone cancelled this task and the called code swallowed it: honour the cancel.
        raise asyncio.CancelledError
    return outcome


async def _under_deadline(
    awaitable: Awaitable[object], at: float, task: asyncio.Task[Any] | None, cancelling_before: int
) -> Outcome:
    deadline = asyncio.timeout_at(at)
    try:
        async with deadline:
            value = await awaitable
    except asyncio.CancelledError as exc:
        if task is None or task.cancelling() > cancelling_before:
            raise
        return Raised(error=exc)
    except Exception as exc:
        # Whatever follows the deadline's own cancellation is the timeout; a TimeoutError
        # raised by the tool itself before the deadline is an ordinary error.
        return TimedOut() if deadline.expired() else Raised(error=exc)
    return Finished(value=value)


@types.coroutine
def _resumed(coroutine: Coroutine[Any, Any, object], first: object) -> Generator[Any, Any, object]:
    """The rest of `coroutine`, which was run up to its first suspension (where it gave
    `first` to the event loop): `first` goes to the loop, then the coroutine carries on."""
    pending = first
    while True:
        try:
            yield pending
        except GeneratorExit:
            coroutine.close()
            raise
        except BaseException as exc:  # a cancellation (or any throw) reaches the coroutine
            try:
                pending = coroutine.throw(exc)
            except StopIteration as stop:
                return stop.value
            continue
        return (yield from coroutine)  # type: ignore[func-returns-value]


def describe_exception(error: BaseException) -> str:
    """`"<ExceptionType>: <message>"` (just the type when the message is empty); no traceback."""
    try:
        text = str(error)
    except Exception:
        text = ""
    name = type(error).__name__
    return f"{name}: {text}" if text else name


def seconds(timeout: float) -> str:
    """A timeout as people write it: 10, 0.5."""
    return f"{timeout:g}"
